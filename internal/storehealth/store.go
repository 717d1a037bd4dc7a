package storehealth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// guardedStore is the store as requests see it (Health.Store).
type guardedStore struct {
	inner  storage.Interface
	health *Health
}

var _ storage.Interface = (*guardedStore)(nil)

// callCtx is the context of one call through the guard: the request's,
// also ended when the store is found down (the call is released), and
// watched by a timer that makes the store suspect when the call has
// waited CheckTimeout.
//
// Both cost (a context, a registration with the release, a timer: about a
// microsecond, seven allocations) and are needed only by a call that
// waits: so they are set up (armed) the first time the store asks for
// Done, as every store that waits on a network, a lock or a commit does,
// directly or by deriving a context (bolt's and sqlite's writes, through
// storage/internal/groupcommit, ask once their commit has taken 100 ms,
// so a hung commit is suspected that much later). A call that only asks
// Err (the memory store; bolt's reads) costs one allocation, and is
// released through Err, which reports the release as the cancellation it
// is.
type callCtx struct {
	context.Context // the request's
	h               *Health
	released        context.Context // ended when the store is found down

	once  sync.Once
	armed atomic.Pointer[armedCall] // nil until armed; finished once the call returned
}

// armedCall is what a call that waits has.
type armedCall struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   func() bool // the registration with released
	slow   *time.Timer
}

// finished is the state of a call that returned without being armed: a
// late Done (from a goroutine of the store's) finds it ended, as the
// context of a returned call always was.
var finished = func() *armedCall {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(nil)
	return &armedCall{ctx: ctx}
}()

func (c *callCtx) arm() *armedCall {
	c.once.Do(func() {
		ctx, cancel := context.WithCancelCause(c.Context)
		a := &armedCall{ctx: ctx, cancel: cancel}
		a.stop = context.AfterFunc(c.released, func() { cancel(ErrStoreDown) })
		a.slow = time.AfterFunc(CheckTimeout, c.h.Suspect)
		c.armed.Store(a)
	})
	return c.armed.Load()
}

func (c *callCtx) Done() <-chan struct{} { return c.arm().ctx.Done() }

func (c *callCtx) Err() error {
	if a := c.armed.Load(); a != nil {
		return a.ctx.Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.released.Err() != nil {
		return context.Canceled
	}
	return nil
}

// Value is the request's, but for the context package's own lookup of
// the cancellation to register a derived context with, which must find
// the armed context.
func (c *callCtx) Value(key any) any {
	if a := c.armed.Load(); a != nil && a != finished {
		return a.ctx.Value(key)
	}
	return c.Context.Value(key)
}

// wasReleased says whether the call was released: the store was found
// down before the call returned, and before the request's own context
// ended.
func (c *callCtx) wasReleased() bool {
	if a := c.armed.Load(); a != nil {
		return errors.Is(context.Cause(a.ctx), ErrStoreDown)
	}
	return c.released.Err() != nil && c.Context.Err() == nil
}

// finish ends the call's context, its timer and its registration.
func (c *callCtx) finish() {
	c.once.Do(func() { c.armed.Store(finished) })
	if a := c.armed.Load(); a != finished {
		a.slow.Stop()
		a.stop()
		a.cancel(nil)
	}
}

// begin starts a call: refused at once while the store is down.
func (g *guardedStore) begin(ctx context.Context) (*callCtx, error) {
	h := g.health
	if h.isDown.Load() {
		return nil, fmt.Errorf("%w: %w", storage.ErrUnavailable, ErrStoreDown)
	}
	return &callCtx{Context: ctx, h: h, released: *h.released.Load()}, nil
}

// end ends a call that returned err. write says whether it may have
// changed the store: released while in flight, its outcome is unknown.
// A fault or a timeout makes the store suspect, but not a call its caller
// cancelled (a client that disconnected), even if the store wraps the
// cancellation in a fault: that says nothing of the store.
func (g *guardedStore) end(c *callCtx, write bool, err error) error {
	released := err != nil && c.wasReleased()
	c.finish()
	if err == nil {
		return nil
	}
	if released && !answered(err) {
		if write {
			return fmt.Errorf("%w: %w: %w", storage.ErrUnavailable, storage.ErrOutcomeUnknown, ErrStoreDown)
		}
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, ErrStoreDown)
	}
	if errors.Is(err, context.Canceled) && errors.Is(c.Context.Err(), context.Canceled) {
		return err
	}
	if errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		g.health.Suspect()
	}
	return err
}

func (g *guardedStore) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	c, err := g.begin(ctx)
	if err != nil {
		return storage.KeyValue{}, err
	}
	kv, err := g.inner.Get(c, key, rev)
	return kv, g.end(c, false, err)
}

func (g *guardedStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	c, err := g.begin(ctx)
	if err != nil {
		return storage.ListResult{}, err
	}
	res, err := g.inner.List(c, prefix, opts)
	return res, g.end(c, false, err)
}

func (g *guardedStore) Revision(ctx context.Context) (int64, error) {
	c, err := g.begin(ctx)
	if err != nil {
		return 0, err
	}
	rev, err := g.inner.Revision(c)
	return rev, g.end(c, false, err)
}

func (g *guardedStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	c, err := g.begin(ctx)
	if err != nil {
		return 0, err
	}
	rev, err := g.inner.Create(c, key, value)
	return rev, g.end(c, true, err)
}

func (g *guardedStore) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	c, err := g.begin(ctx)
	if err != nil {
		return 0, err
	}
	rev, err := g.inner.Update(c, key, value, expect)
	return rev, g.end(c, true, err)
}

func (g *guardedStore) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	c, err := g.begin(ctx)
	if err != nil {
		return storage.KeyValue{}, err
	}
	kv, err := g.inner.Delete(c, key, expect)
	return kv, g.end(c, true, err)
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
