package guard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/internal/guard"
)

// TestRequestContextCauseReachesHandler: an embedding user's middleware
// that ends the request's context with a cause (context.WithCancelCause,
// say "the tenant was evicted") must have that cause reach the handler's
// context, as it did while the deadline's context was a child of the
// request's: context.Cause of a child is its parent's cause. The handler
// (and storage below it) reads context.Cause to tell why it stopped.
func TestRequestContextCauseReachesHandler(t *testing.T) {
	f := newFlow(t, guard.Limits{RequestTimeout: 1 << 40}, new(any))
	entered := make(chan struct{}, 1)
	seen := make(chan error, 1)
	h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-r.Context().Done()
		seen <- context.Cause(r.Context())
	}), nil)
	errEvicted := errors.New("tenant evicted")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil).WithContext(ctx))
	}()
	<-entered
	cancel(errEvicted)
	if err := <-seen; !errors.Is(err, errEvicted) {
		t.Errorf("context.Cause in the handler is %v, want the request context's cause %v", err, errEvicted)
	}
	<-done
}
