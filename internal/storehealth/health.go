package storehealth

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

// CheckTimeout bounds the readiness check's read of the store: an
// unreachable store must make /readyz fail, not hang the probe. A call to
// the store that has not returned within it makes the store suspect.
const CheckTimeout = 2 * time.Second

// ProbeInterval is how often the store is checked while it is down: how
// long, at most, the server goes on refusing once it is back.
const ProbeInterval = 250 * time.Millisecond

// ProbeTimeout bounds each check of a store known down: a store that is
// back answers a revision in milliseconds, and a check that waits less
// sees it sooner.
const ProbeTimeout = 500 * time.Millisecond

// ErrStoreDown is the cause of the failures of calls refused or released
// because the store is down. They also match storage.ErrUnavailable.
var ErrStoreDown = errors.New("the readiness check finds the store unreachable")

// Health is what a server knows of its store's reachability. Its methods
// are safe for concurrent use.
type Health struct {
	store  storage.Interface // the store itself, unguarded
	ctx    context.Context   // the server's: probes end with it
	logger *slog.Logger
	guard  guardedStore

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

// New starts knowing store reachable. ctx is the server's: the probes
// stop when it ends, after which Close waits for them. logger is told when
// the store is found down and when it is back.
func New(ctx context.Context, store storage.Interface, logger *slog.Logger) *Health {
	h := &Health{store: store, ctx: ctx, logger: logger}
	h.guard = guardedStore{inner: store, health: h}
	h.renew()
	return h
}

// Store is the store as requests must see it: refused at once while it is
// down, and released when it is found down. Its Watch is the store's own:
// the watch cache, which watches the store, retries on its own.
func (h *Health) Store() storage.Interface { return &h.guard }

// renew makes the context whose cancellation releases the calls in flight.
func (h *Health) renew() {
	ctx, cancel := context.WithCancelCause(context.Background())
	h.released.Store(&ctx)
	h.release = cancel
}

// check reads the store's revision within timeout. Its outcome is what
// the server knows of the store from then on.
func (h *Health) check(ctx context.Context, timeout time.Duration) error {
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

// ReadyCheck is the storage check of /readyz. It always asks the store, as
// kube-apiserver's etcd check does, so that /readyz recovers the moment the
// store does, and a success lets calls through at once; a store known down
// is given only ProbeTimeout, so that probes stay quick.
func (h *Health) ReadyCheck(ctx context.Context) error {
	h.mu.Lock()
	down := h.down
	h.mu.Unlock()
	if down == nil {
		return h.check(ctx, CheckTimeout)
	}
	if err := h.check(ctx, ProbeTimeout); err != nil {
		return fmt.Errorf("%w since %s: %w", ErrStoreDown, down.since.Format(time.RFC3339), err)
	}
	return nil
}

// learn records the outcome of a check that started at started; a failure
// starts the probe loop. A success of a check older than the failure that
// found the store down says nothing new.
func (h *Health) learn(err error, started time.Time) {
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
		h.release(ErrStoreDown)
		h.startProbe()
	}
}

// Suspect checks the store in the background, unless a check is already
// running. A server calls it when something other than a call through
// Store, such as its watch cache's watch of the store, fails.
func (h *Health) Suspect() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.startProbe()
}

// startProbe starts the probe loop, with h.mu held: it checks the store
// until a check passes.
func (h *Health) startProbe() {
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
		timeout := CheckTimeout
		for h.check(h.ctx, timeout) != nil {
			timeout = ProbeTimeout
			select {
			case <-h.ctx.Done():
				return
			case <-time.After(ProbeInterval):
			}
		}
	})
}

// Close waits for the probes, once the server's context has ended, and
// starts no more.
func (h *Health) Close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.probes.Wait()
}
