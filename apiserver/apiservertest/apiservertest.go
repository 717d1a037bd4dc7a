package apiservertest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
)

// Server is a kapi server listening on loopback.
type Server struct {
	// URL is the base URL, http://127.0.0.1:port: what kubectl's --server and
	// client-go's rest.Config.Host take.
	URL string
	// API is the kapi server itself.
	API  *apiserver.Server
	http *httptest.Server
}

// New starts a server with the resources register adds. It fails the test on
// any error and stops the server when the test ends.
func New(t testing.TB, register func(*apiserver.Server) error, opts ...apiserver.Option) *Server {
	t.Helper()
	api, err := apiserver.New(opts...)
	if err != nil {
		t.Fatalf("apiservertest: %v", err)
	}
	if register != nil {
		if err := register(api); err != nil {
			t.Fatalf("apiservertest: %v", err)
		}
	}
	if err := api.Complete(); err != nil { // here, rather than as a 503 to every request
		t.Fatalf("apiservertest: %v", err)
	}
	hs := httptest.NewServer(api)
	t.Cleanup(func() {
		_ = api.Close() // first: it ends the watches that Close below would wait for
		hs.Close()
	})
	// Ready once the watch cache has synced: a test's first writes are then
	// in the cache's history, and a watch from their resourceVersions works.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := hs.Client().Get(hs.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("apiservertest: the server is not ready after 10s (last: %v)", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return &Server{URL: hs.URL, API: api, http: hs}
}

// Client is an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.http.Client() }
