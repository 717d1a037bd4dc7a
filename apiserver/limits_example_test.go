package apiserver_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
)

// A server sized for a small service: fewer requests in flight than
// kube-apiserver allows, and a shorter deadline. Clients over a cap get 429
// with Retry-After and retry; the ones past the deadline get 504.
func ExampleWithMaxRequestsInFlight() {
	srv, err := apiserver.New(
		apiserver.WithMaxRequestsInFlight(100),
		apiserver.WithMaxMutatingRequestsInFlight(50),
		apiserver.WithMaxWatches(200),
		apiserver.WithRequestTimeout(30*time.Second),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	fmt.Println("configured")
	// Output: configured
}

// A host stops kapi first, so that its watches end and its requests
// finish, then its own http.Server, which waits for the connections.
func ExampleServer_Shutdown() {
	api, err := apiserver.New()
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Handler: api}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	// On SIGTERM:
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := api.Shutdown(ctx); err != nil {
		fmt.Println("requests still running:", err)
	}
	if err := hs.Shutdown(ctx); err != nil {
		fmt.Println("connections still open:", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		fmt.Println(err)
	}
	fmt.Println("stopped")
	// Output: stopped
}
