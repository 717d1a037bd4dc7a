package storehealth_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/storehealth"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// givingUpStore's Create waits for its caller to give up and then answers
// as the PostgreSQL store answers a write its caller gave up on before it
// was sent: a fault wrapping the context's error. Its Revision counts the
// readiness checks.
type givingUpStore struct {
	storage.Interface
	checks atomic.Int64
}

func (s *givingUpStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	<-ctx.Done()
	return 0, fmt.Errorf("%w: the write was not sent: %w", storage.ErrUnavailable, ctx.Err())
}

func (s *givingUpStore) Revision(ctx context.Context) (int64, error) {
	s.checks.Add(1)
	return s.Interface.Revision(ctx)
}

// TestCallerCancelIsNoFault: a call its caller cancels (a client that
// disconnected) does not make the store suspect, though the store wraps
// the cancellation in ErrUnavailable; a call whose deadline passes does
// (the store was slow).
func TestCallerCancelIsNoFault(t *testing.T) {
	for _, cancelled := range []bool{true, false} {
		name := map[bool]string{true: "cancelled", false: "deadline"}[cancelled]
		t.Run(name, func(t *testing.T) {
			mem := memory.New()
			defer mem.Close()
			store := &givingUpStore{Interface: mem}
			serverCtx, stop := context.WithCancel(context.Background())
			h := storehealth.New(serverCtx, store, quiet)

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			if cancelled {
				ctx, cancel = context.WithCancel(context.Background())
				time.AfterFunc(20*time.Millisecond, cancel)
			}
			_, err := h.Store().Create(ctx, "/a", []byte("1"))
			cancel()
			if cancelled && !errors.Is(err, context.Canceled) {
				t.Errorf("Create cancelled = %v, want it to say context.Canceled", err)
			}
			// A probe the call started (before it returned) has made its
			// check by the time Close returns.
			stop()
			h.Close()
			checks := store.checks.Load()
			if cancelled && checks != 0 {
				t.Errorf("a call its caller cancelled made the store suspect: %d readiness checks", checks)
			}
			if !cancelled && checks == 0 {
				t.Errorf("a call whose deadline passed did not make the store suspect")
			}
		})
	}
}
