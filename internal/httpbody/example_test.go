package httpbody_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/kapi-dev/kapi/internal/httpbody"
)

// A small body is written with its length, not compressed.
func ExampleWrite() {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	httpbody.Write(rec, r, http.StatusOK, "application/json", []byte(`{}`))
	fmt.Println(rec.Header().Get("Content-Length"), rec.Header().Get("Content-Encoding") == "")
	// Output: 2 true
}
