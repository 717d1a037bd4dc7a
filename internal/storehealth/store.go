package storehealth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// guardedStore is the store as requests see it (Health.Store).
type guardedStore struct {
	inner  storage.Interface
	health *Health
}

var _ storage.Interface = (*guardedStore)(nil)

// guarded runs one call of a request to the store. write says whether it
// may change the store: released while in flight, its outcome is unknown.
func guarded[T any](g *guardedStore, ctx context.Context, write bool, call func(context.Context) (T, error)) (T, error) {
	h := g.health
	if h.isDown.Load() {
		var zero T
		return zero, fmt.Errorf("%w: %w", storage.ErrUnavailable, ErrStoreDown)
	}
	released := *h.released.Load()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(released, func() { cancel(ErrStoreDown) })
	defer stop()
	slow := time.AfterFunc(CheckTimeout, h.Suspect)
	defer slow.Stop()

	v, err := call(ctx)
	if err == nil {
		return v, nil
	}
	if errors.Is(context.Cause(ctx), ErrStoreDown) && !answered(err) {
		if write {
			return v, fmt.Errorf("%w: %w: %w", storage.ErrUnavailable, storage.ErrOutcomeUnknown, ErrStoreDown)
		}
		return v, fmt.Errorf("%w: %w", storage.ErrUnavailable, ErrStoreDown)
	}
	if errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		h.Suspect()
	}
	return v, err
}

func (g *guardedStore) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	return guarded(g, ctx, false, func(ctx context.Context) (storage.KeyValue, error) { return g.inner.Get(ctx, key, rev) })
}

func (g *guardedStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	return guarded(g, ctx, false, func(ctx context.Context) (storage.ListResult, error) { return g.inner.List(ctx, prefix, opts) })
}

func (g *guardedStore) Revision(ctx context.Context) (int64, error) {
	return guarded(g, ctx, false, g.inner.Revision)
}

func (g *guardedStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	return guarded(g, ctx, true, func(ctx context.Context) (int64, error) { return g.inner.Create(ctx, key, value) })
}

func (g *guardedStore) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	return guarded(g, ctx, true, func(ctx context.Context) (int64, error) { return g.inner.Update(ctx, key, value, expect) })
}

func (g *guardedStore) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	return guarded(g, ctx, true, func(ctx context.Context) (storage.KeyValue, error) { return g.inner.Delete(ctx, key, expect) })
}

// Watch is the store's: the watch cache is what watches the store, and it
// retries on its own.
func (g *guardedStore) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	return g.inner.Watch(ctx, prefix, rev)
}

// answered says whether err is the store's answer to the call rather than
// its failure to give one: such an answer stands even if the call was
// released at the same moment.
func answered(err error) bool {
	for _, e := range []error{storage.ErrNotFound, storage.ErrExists, storage.ErrConflict, storage.ErrExpired, storage.ErrFutureRevision, storage.ErrTooLarge, storage.ErrNoSpace} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
