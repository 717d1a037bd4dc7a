package apiserver_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/fairness"
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

// Clients share the server by user, as kube-apiserver's API Priority and
// Fairness shares it: one client's flood waits in its own queue and is
// refused 429 when that is full, while the others are served in turn.
// Every answer names the flow schema and priority level it was classified
// into by their UIDs.
func ExampleWithFairness() {
	srv, err := apiserver.New(
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"alice-token": {Name: "alice"}})),
		apiserver.WithFairness(fairness.Default(600)), // kube-apiserver's 400 + 200 seats
	)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	req := httptest.NewRequest(http.MethodGet, "/version", nil)
	req.Header.Set("Authorization", "Bearer alice-token")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	fmt.Println(w.Code, w.Header().Get("X-Kubernetes-PF-FlowSchema-UID") != "", w.Header().Get("X-Kubernetes-PF-PriorityLevel-UID") != "")
	// Output: 200 true true
}
