package requestinfo

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
)

// TestAPIOr: the paths under /api/ and /apis/ are the API's, as a router
// routes them: a parent chi router's path left to route, else the path.
func TestAPIOr(t *testing.T) {
	var got string
	h := APIOr(func(http.ResponseWriter, *http.Request) { got = "api" }, func(http.ResponseWriter, *http.Request) { got = "other" })
	for target, want := range map[string]string{
		"/api/v1/namespaces/a/pods": "api", "/apis/example.com/v1/widgets": "api", "/api/": "api", "/apis/": "api",
		"/api": "other", "/apis": "other", "/apisx/v1": "other", "/healthz": "other", "/": "other", "/x/api/v1": "other",
	} {
		got = ""
		h(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
		if got != want {
			t.Errorf("%s: served by %s, want %s", target, got, want)
		}
	}
	// Mounted at /kapi in a parent router, which leaves the rest to route.
	parent := chi.NewRouter()
	parent.Mount("/kapi", h)
	for target, want := range map[string]string{"/kapi/apis/example.com/v1/widgets": "api", "/kapi/healthz": "other"} {
		got = ""
		parent.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
		if got != want {
			t.Errorf("mounted, %s: served by %s, want %s", target, got, want)
		}
	}
}
