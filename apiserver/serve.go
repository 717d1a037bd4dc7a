package apiserver

import (
	"context"
	"errors"
	"net/http"
)

// Run serves hs until ctx ends, then shuts down gracefully, in the order a
// host must: first kapi (Shutdown: new requests 503, watches end cleanly so
// that clients watch again, at another replica if there is one, requests
// in flight finish), then hs, whose Shutdown waits for its connections.
//
// hs is the host's http.Server; its Handler is s, or a mux that mounts s
// beside the service's own routes. listen starts it: hs.ListenAndServe,
// func() error { return hs.ListenAndServeTLS("", "") } for a server whose
// TLSConfig holds its certificate, or hs.Serve of a listener.
//
// Requests in flight are given as long as a request may run (the request
// timeout, 60 s unless WithRequestTimeout says otherwise); a host whose
// supervisor kills it sooner (Kubernetes: terminationGracePeriodSeconds,
// 30 s by default) sets a shorter request timeout.
//
// Run returns listen's error if hs could not serve (a port in use), else
// nil once both have stopped: the caller may then close the storage it
// passed to New. Run is a convenience; a host with its own life cycle
// calls Shutdown and hs.Shutdown itself, in that order.
func (s *Server) Run(ctx context.Context, hs *http.Server, listen func() error) error {
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-stop.Done()
		// The shutdown's own deadline: ctx is already done.
		grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.config.limits.requestTimeout)
		defer cancel()
		_ = s.Shutdown(grace)
		_ = hs.Shutdown(grace)
	}()
	err := listen()
	cancel() // listen failed at once: shut down what was started
	<-stopped
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
