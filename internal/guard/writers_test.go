package guard_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/guard"
)

// TestHeadersAfterDeadline: a handler that goes on setting its headers
// while the guard answers 504 for it sets them in a map of its own: the
// answer's headers are the guard's alone, and the two never touch one
// map at once (which the race detector, or the runtime's check of
// concurrent map writes, would report). Handing the handler the
// response's own header map, to spare the copy of its headers into it,
// would break this. So on either path, a runner's (HTTP/2) or the
// request's goroutine (HTTP/1). A header set on the response before the
// guard (an embedder's middleware's: CORS, a request id) stays in the 504.
func TestHeadersAfterDeadline(t *testing.T) {
	for _, proto := range protos {
		t.Run(proto.name, func(t *testing.T) { testHeadersAfterDeadline(t, proto.major) })
	}
}

func testHeadersAfterDeadline(t *testing.T, major int) {
	f := newFlow(t, guard.Limits{RequestTimeout: time.Millisecond}, new(any))
	answered := make(chan struct{})
	h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Early", "1")
		<-r.Context().Done()
		for {
			select {
			case <-answered:
				w.Header().Set("X-After", "1")
				return
			default:
				w.Header().Set("X-Late", "1")
			}
		}
	}), nil)
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Outer", "1")
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.ProtoMajor = major
	h.ServeHTTP(headerSignal{rec, answered}, r)
	if rec.Code != http.StatusGatewayTimeout {
		t.Fatalf("HTTP %d, want 504", rec.Code)
	}
	for _, name := range []string{"X-Early", "X-Late", "X-After"} {
		if rec.Header().Get(name) != "" || rec.Result().Header.Get(name) != "" {
			t.Errorf("the 504 carries the handler's header %s", name)
		}
	}
	if got := rec.Result().Header.Get("X-Outer"); got != "1" {
		t.Errorf("the 504 lost the header set before the guard: X-Outer %q", got)
	}
}
