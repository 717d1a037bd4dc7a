package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// While the store is down the server fails fast instead of queueing: what
// /readyz's storage check finds is remembered, and while it finds the store
// unreachable every request's call to the store fails at once with
// storage.ErrUnavailable: a write is answered 503 with Retry-After, its
// outcome known (not applied), a consistent read 503 likewise, and neither
// holds an in-flight slot for the whole request timeout. What the watch
// cache serves (resourceVersion=0 lists and gets, watches), /version and the
// probes do not touch the store and go on being served.
//
// The store is thought down only when the readiness check fails, never on
// one request's error. A check runs when /readyz asks, when the watch cache
// reports an error, and when a request's call to the store fails with a
// fault or has not returned within storageCheckTimeout (an unreachable etcd
// makes calls hang rather than fail). While the store is down the check is
// repeated every storeProbeInterval; the first that passes lets calls
// through again (within storeProbeInterval + storeProbeTimeout of the
// store's return). A call already waiting on the store when it is found down
// is released then, answered as if it had come after.
//
// kube-apiserver has no such switch: its requests wait on etcd until their
// timeout, each holding an in-flight slot, so that under load even the
// reads its cache could serve are refused with 429.

// storeProbeInterval is how often the store is checked while it is down:
// how long, at most, the server goes on refusing once it is back.
const storeProbeInterval = 250 * time.Millisecond

// storeProbeTimeout bounds each check of a store known down.
const storeProbeTimeout = 500 * time.Millisecond

// errStoreDown is the cause of the failures of calls refused or released
// because the store is down.
var errStoreDown = errors.New("the readiness check finds the store unreachable")

// storeHealth is what the server knows of its store's reachability.
type storeHealth struct {
	store  storage.Interface // the store itself, unguarded
	ctx    context.Context   // the server's: probes end with it
	logger *slog.Logger

	mu      sync.Mutex
	down    *downState // nil while the store is reachable
	probing bool       // a check is running, or the probe loop is
	closed  bool
	probes  sync.WaitGroup

	// released is cancelled when the store is found down, releasing the
	// calls waiting on it; replaced when it is back.
	released atomic.Pointer[context.Context]
	release  context.CancelCauseFunc
	isDown   atomic.Bool // mirrors down != nil, for the calls' fast path
}

type downState struct {
	since time.Time
	err   error
}

func newStoreHealth(ctx context.Context, store storage.Interface, logger *slog.Logger) *storeHealth {
	h := &storeHealth{store: store, ctx: ctx, logger: logger}
	h.renew()
	return h
}

// renew makes the context whose cancellation releases the calls in flight.
func (h *storeHealth) renew() {
	ctx, cancel := context.WithCancelCause(context.Background())
	h.released.Store(&ctx)
	h.release = cancel
}

// check is /readyz's storage check: the store's revision, read within
// storageCheckTimeout. Its outcome is what the server knows of the store
// from then on.
func (h *storeHealth) check(ctx context.Context) error {
	return h.checkWithin(ctx, storageCheckTimeout)
}

// checkWithin is check with a timeout of its own.
func (h *storeHealth) checkWithin(ctx context.Context, timeout time.Duration) error {
	started := time.Now()
	checkCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := h.store.Revision(checkCtx)
	if err != nil && ctx.Err() != nil {
		return err // the caller gave up: that says nothing of the store
	}
	h.learn(err, started)
	return err
}

// readyCheck is the storage check of /readyz: known down, it says so at
// once (the probe loop is checking); otherwise it checks.
func (h *storeHealth) readyCheck(ctx context.Context) error {
	h.mu.Lock()
	down := h.down
	h.mu.Unlock()
	if down != nil {
		return fmt.Errorf("%w since %s: %w", errStoreDown, down.since.Format(time.RFC3339), down.err)
	}
	return h.check(ctx)
}

// learn records the outcome of a check that started at started; a failure
// starts the probe loop. A success of a check older than the failure that
// found the store down says nothing new.
func (h *storeHealth) learn(err error, started time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil && h.down != nil && started.After(h.down.since):
		h.logger.Warn("kapi: the store is reachable again", "after", time.Since(h.down.since).Round(time.Millisecond))
		h.down = nil
		h.renew() // first: a call let through must not find the old one released
		h.isDown.Store(false)
	case err != nil && h.down == nil:
		h.logger.Warn("kapi: the store is unreachable: writes and consistent reads are refused until it is back", "err", err)
		h.down = &downState{since: time.Now(), err: err}
		h.isDown.Store(true)
		h.release(errStoreDown)
		h.startProbe()
	}
}

// suspect checks the store in the background, unless a check is already
// running.
func (h *storeHealth) suspect() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.startProbe()
}

// startProbe starts the probe loop, with h.mu held: it checks the store
// until a check passes.
func (h *storeHealth) startProbe() {
	if h.probing || h.closed || h.ctx.Err() != nil {
		return
	}
	h.probing = true
	h.probes.Go(func() {
		defer func() {
			h.mu.Lock()
			h.probing = false
			h.mu.Unlock()
		}()
		timeout := storageCheckTimeout
		for h.checkWithin(h.ctx, timeout) != nil {
			// Down: a store that is back answers a revision in
			// milliseconds; a check that waits less sees it sooner.
			timeout = storeProbeTimeout
			select {
			case <-h.ctx.Done():
				return
			case <-time.After(storeProbeInterval):
			}
		}
	})
}

// close waits for the probes, once the server's context has ended.
func (h *storeHealth) close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.probes.Wait()
}

// guardedStore is the store as requests see it: refused at once while the
// store is down, and released when it is found down.
type guardedStore struct {
	inner  storage.Interface
	health *storeHealth
}

var _ storage.Interface = (*guardedStore)(nil)

// call runs one call of a request to the store. write says whether it may
// change the store: released while in flight, its outcome is unknown.
func guarded[T any](g *guardedStore, ctx context.Context, write bool, call func(context.Context) (T, error)) (T, error) {
	h := g.health
	if h.isDown.Load() {
		var zero T
		return zero, fmt.Errorf("%w: %w", storage.ErrUnavailable, errStoreDown)
	}
	released := *h.released.Load()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(released, func() { cancel(errStoreDown) })
	defer stop()
	slow := time.AfterFunc(storageCheckTimeout, h.suspect)
	defer slow.Stop()

	v, err := call(ctx)
	if err == nil {
		return v, nil
	}
	if errors.Is(context.Cause(ctx), errStoreDown) && !answered(err) {
		if write {
			return v, fmt.Errorf("%w: %w: %w", storage.ErrUnavailable, storage.ErrOutcomeUnknown, errStoreDown)
		}
		return v, fmt.Errorf("%w: %w", storage.ErrUnavailable, errStoreDown)
	}
	if errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		h.suspect()
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
