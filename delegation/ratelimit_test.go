package delegation_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kapi-dev/kapi/delegation"
)

// TestRateLimiter: a bucket gives its burst at once, then makes the next
// call wait, which a context that ends stops; qps 0 never waits.
func TestRateLimiter(t *testing.T) {
	l := delegation.NewRateLimiter(0.001, 3) // one token every 1000s
	for i := range 3 {
		if err := l.Wait(context.Background()); err != nil {
			t.Fatalf("token %d of the burst: %v", i, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("past the burst: %v, want to wait until the context ends", err)
	}
	unlimited := delegation.NewRateLimiter(0, 1)
	for range 1000 {
		if err := unlimited.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
