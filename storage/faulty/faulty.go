package faulty

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// Op is a set of the store's operations.
type Op uint8

// The operations a fault may strike.
const (
	Get Op = 1 << iota
	List
	Revision
	Create
	Update
	Delete
	Watch

	Reads  = Get | List | Revision
	Writes = Create | Update | Delete
)

// Fault says what happens to the calls it strikes.
type Fault struct {
	// Ops are the operations struck.
	Ops Op
	// Key, if set, limits the fault to the calls whose key (or prefix)
	// begins with it.
	Key string
	// Count is how many calls are struck; 0 strikes every call until the
	// fault is cleared.
	Count int
	// Delay is waited before the call goes on (or fails); the wait ends
	// early, with the context's error, if the caller's context ends.
	Delay time.Duration
	// Hang waits until the caller's context ends, then fails with its
	// error.
	Hang bool
	// Err is the error a struck call returns (after Delay). With neither
	// Err nor Hang the call goes on after Delay.
	Err error
	// AfterWrite applies a struck write to the wrapped store first, then
	// fails it: with Err or, with Hang, the context's error, marked
	// storage.ErrOutcomeUnknown.
	AfterWrite bool
}

// Store is a storage.Interface that passes calls to another, except those
// an injected fault strikes. Its methods are safe for concurrent use.
type Store struct {
	inner storage.Interface

	mu      sync.Mutex
	faults  []*armed
	watches map[*watch]struct{}
}

type armed struct {
	Fault
	left int // calls left to strike when Count > 0
}

var _ storage.Interface = (*Store)(nil)

// New wraps inner. Close the wrapped store, not the wrapper.
func New(inner storage.Interface) *Store {
	return &Store{inner: inner, watches: map[*watch]struct{}{}}
}

// Inject arms f and returns the function that clears it. Faults armed
// together all apply to a call, in the order they were armed.
func (s *Store) Inject(f Fault) (clear func()) {
	a := &armed{Fault: f, left: f.Count}
	s.mu.Lock()
	s.faults = append(s.faults, a)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, b := range s.faults {
			if b == a {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
				return
			}
		}
	}
}

// Watches reports how many watches are open through the store: a test
// can wait until its server watches before breaking the watch.
func (s *Store) Watches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watches)
}

// BreakWatches ends every watch open through the store with one event
// whose Err is err, and reports how many it ended.
func (s *Store) BreakWatches(err error) int {
	s.mu.Lock()
	ws := make([]*watch, 0, len(s.watches))
	for w := range s.watches {
		ws = append(ws, w)
	}
	s.mu.Unlock()
	for _, w := range ws {
		w.breakWith(err)
	}
	return len(ws)
}

// strikes returns the faults that strike a call of op on key, using up
// one call of each counted one.
func (s *Store) strikes(op Op, key string) []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Fault
	kept := s.faults[:0]
	for _, a := range s.faults {
		hit := a.Ops&op != 0 && len(key) >= len(a.Key) && key[:len(a.Key)] == a.Key
		if hit {
			out = append(out, a.Fault)
			if a.Count > 0 {
				a.left--
			}
		}
		if a.Count == 0 || a.left > 0 {
			kept = append(kept, a)
		}
	}
	s.faults = kept
	return out
}

// before runs the part of the faults that comes before the call: the
// delays, and the failures of faults that are not AfterWrite. It returns
// the faults left for after the call.
func before(ctx context.Context, faults []Fault) (after []Fault, err error) {
	for _, f := range faults {
		if f.AfterWrite {
			after = append(after, f)
			continue
		}
		if err := strike(ctx, f); err != nil {
			return nil, err
		}
	}
	return after, nil
}

// strike waits as f says and returns its error, if any.
func strike(ctx context.Context, f Fault) error {
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	if f.Hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return f.Err
}

// afterWrite fails a write that has been applied, as the first of the
// after faults says.
func afterWrite(ctx context.Context, after []Fault) error {
	for _, f := range after {
		if err := strike(ctx, f); err != nil {
			return fmt.Errorf("%w (%w)", err, storage.ErrOutcomeUnknown)
		}
	}
	return nil
}

// read runs a call that writes nothing: AfterWrite faults strike it after
// it ran, like any other.
func read[T any](s *Store, ctx context.Context, op Op, key string, call func() (T, error)) (T, error) {
	var zero T
	faults := s.strikes(op, key)
	for _, f := range faults {
		if !f.AfterWrite {
			if err := strike(ctx, f); err != nil {
				return zero, err
			}
		}
	}
	v, err := call()
	for _, f := range faults {
		if f.AfterWrite && err == nil {
			if err := strike(ctx, f); err != nil {
				return zero, err
			}
		}
	}
	return v, err
}

func write[T any](s *Store, ctx context.Context, op Op, key string, call func() (T, error)) (T, error) {
	var zero T
	after, err := before(ctx, s.strikes(op, key))
	if err != nil {
		return zero, err
	}
	v, err := call()
	if err != nil {
		return v, err
	}
	if err := afterWrite(ctx, after); err != nil {
		return zero, err
	}
	return v, nil
}

// Get implements storage.Interface.
func (s *Store) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	return read(s, ctx, Get, key, func() (storage.KeyValue, error) { return s.inner.Get(ctx, key, rev) })
}

// List implements storage.Interface.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	return read(s, ctx, List, prefix, func() (storage.ListResult, error) { return s.inner.List(ctx, prefix, opts) })
}

// Revision implements storage.Interface.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	return read(s, ctx, Revision, "", func() (int64, error) { return s.inner.Revision(ctx) })
}

// Create implements storage.Interface.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	return write(s, ctx, Create, key, func() (int64, error) { return s.inner.Create(ctx, key, value) })
}

// Update implements storage.Interface.
func (s *Store) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	return write(s, ctx, Update, key, func() (int64, error) { return s.inner.Update(ctx, key, value, expect) })
}

// Delete implements storage.Interface.
func (s *Store) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	return write(s, ctx, Delete, key, func() (storage.KeyValue, error) { return s.inner.Delete(ctx, key, expect) })
}

// Compact forwards to the wrapped store's Compact, if it has one.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	c, ok := s.inner.(interface {
		Compact(ctx context.Context, rev int64) error
	})
	if !ok {
		return errors.New("faulty: the wrapped store cannot compact")
	}
	return c.Compact(ctx, rev)
}

// Watch implements storage.Interface. A struck Watch fails as the fault
// says; the others are relayed, so that BreakWatches can end them.
func (s *Store) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	if _, err := before(ctx, s.strikes(Watch, prefix)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	in, err := s.inner.Watch(ctx, prefix, rev)
	if err != nil {
		cancel()
		return nil, err
	}
	w := &watch{out: make(chan storage.Event), broken: make(chan error, 1)}
	s.mu.Lock()
	s.watches[w] = struct{}{}
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.watches, w)
			s.mu.Unlock()
			cancel()
			close(w.out)
		}()
		w.relay(ctx, in)
	}()
	return w.out, nil
}

// watch relays one watch of the wrapped store.
type watch struct {
	out    chan storage.Event
	broken chan error
}

func (w *watch) breakWith(err error) {
	select {
	case w.broken <- err:
	default: // already breaking
	}
}

func (w *watch) relay(ctx context.Context, in <-chan storage.Event) {
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			select {
			case w.out <- ev:
			case err := <-w.broken:
				w.end(ctx, err)
				return
			case <-ctx.Done():
				return
			}
			if ev.Err != nil {
				return
			}
		case err := <-w.broken:
			w.end(ctx, err)
			return
		case <-ctx.Done():
			return
		}
	}
}

func (w *watch) end(ctx context.Context, err error) {
	select {
	case w.out <- storage.Event{Err: err}:
	case <-ctx.Done():
	}
}
