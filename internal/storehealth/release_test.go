package storehealth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/storehealth"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// stuckStore's Create waits in one of two ways a store may: blocked on
// something other than its context, looking at the context only with Err
// once unblocked (as the memory store does); or on a context derived from
// the call's with a timeout (as network clients do). Its Revision fails
// while down is set.
type stuckStore struct {
	storage.Interface
	derive  bool
	in      chan struct{} // closed once Create waits
	unblock chan struct{}
	down    chan struct{} // closed: Revision fails
}

func (s *stuckStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	close(s.in)
	if s.derive {
		ctx, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		<-ctx.Done()
		return 0, ctx.Err()
	}
	<-s.unblock
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return s.Interface.Create(ctx, key, value)
}

func (s *stuckStore) Revision(ctx context.Context) (int64, error) {
	select {
	case <-s.down:
		return 0, storage.ErrUnavailable
	default:
		return s.Interface.Revision(ctx)
	}
}

// TestReleasedEitherWay: a call is released when the store is found down
// whether the store waits on a context derived from the call's or only
// asks the call's context for Err after waiting on something else.
func TestReleasedEitherWay(t *testing.T) {
	for _, derive := range []bool{false, true} {
		name := map[bool]string{false: "err", true: "derived"}[derive]
		t.Run(name, func(t *testing.T) {
			mem := memory.New()
			defer mem.Close()
			store := &stuckStore{Interface: mem, derive: derive, in: make(chan struct{}), unblock: make(chan struct{}), down: make(chan struct{})}
			ctx, cancel := context.WithCancel(context.Background())
			h := storehealth.New(ctx, store, quiet)
			defer func() { cancel(); h.Close() }()

			done := make(chan error)
			go func() {
				_, err := h.Store().Create(context.Background(), "/a", []byte("1"))
				done <- err
			}()
			<-store.in
			close(store.down)
			if err := h.ReadyCheck(context.Background()); err == nil {
				t.Fatal("ReadyCheck passed with the store down")
			}
			close(store.unblock)
			err := <-done
			if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, storage.ErrOutcomeUnknown) || !errors.Is(err, storehealth.ErrStoreDown) {
				t.Fatalf("Create released = %v, want ErrUnavailable, ErrOutcomeUnknown and ErrStoreDown", err)
			}
			if _, err := mem.Get(context.Background(), "/a", 0); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("the released create reached the store: %v", err)
			}
		})
	}
}
