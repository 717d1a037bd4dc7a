// Package serve runs the example programs' HTTP servers: until a signal,
// then kapi and the HTTP server shut down in that order, so that watches end
// cleanly and requests in flight finish.
package serve

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
)

// Run calls listen (server.ListenAndServe, or its TLS form) and serves until
// ctx ends. Then api.Shutdown answers new requests 503, ends the watches so
// clients reconnect (to another replica, if any) and waits for requests in
// flight; then the HTTP server closes. Run returns once both have, so the
// caller may then close the store.
func Run(ctx context.Context, server *http.Server, api *apiserver.Server, listen func() error) error {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = api.Shutdown(shutdown)
		_ = server.Shutdown(shutdown)
	}()
	if err := listen(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-stopped
	return nil
}
