package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/internal/leakcheck"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
)

// TestRevisionNeverPredatesACall checks the batching of Revision: calls
// share queries, but none may get an answer from a query that started
// before it was made. Writers record each acknowledged revision; a reader
// notes the highest acknowledged before its call (and now and then makes
// a write of its own first), and the call must answer at least that.
func TestRevisionNeverPredatesACall(t *testing.T) {
	s := mustStore(t, freshSchema(t))
	ctx := t.Context()
	var acked atomic.Int64
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				rev, err := s.Create(ctx, fmt.Sprintf("/k/%d/%d", w, i), []byte("v"))
				if err != nil {
					t.Error(err)
					return
				}
				for cur := acked.Load(); rev > cur && !acked.CompareAndSwap(cur, rev); cur = acked.Load() {
				}
			}
		})
	}
	var readers sync.WaitGroup
	var calls atomic.Int64
	for r := range 16 {
		readers.Go(func() {
			for i := range 100 {
				before := acked.Load()
				if i%10 == 0 { // a write of its own, then a read that must see it
					rev, err := s.Create(ctx, fmt.Sprintf("/r/%d/%d", r, i), []byte("v"))
					if err != nil {
						t.Error(err)
						return
					}
					before = max(before, rev)
				}
				rev, err := s.Revision(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if rev < before {
					t.Errorf("Revision answered %d after a write was acknowledged at %d", rev, before)
					return
				}
				calls.Add(1)
			}
		})
	}
	readers.Wait()
	close(stop)
	writers.Wait()
	if calls.Load() != 1600 {
		t.Errorf("%d calls answered, want 1600", calls.Load())
	}
}

// TestRevisionCallerGivesUp checks that a call whose context ends returns
// at once with the context's error, and that the store answers the next.
func TestRevisionCallerGivesUp(t *testing.T) {
	s := mustStore(t, freshSchema(t))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Revision(ctx); err == nil {
		t.Error("Revision with an ended context succeeded")
	}
	if rev, err := s.Revision(t.Context()); err != nil || rev < 1 {
		t.Errorf("Revision after: %d, %v", rev, err)
	}
}

// TestCloseWaitsForRevisionReads: the goroutine that reads the revision
// for Revision's callers is the store's, started by Open and ended by
// Close, which waits for it: right after Close returns, while callers were
// still asking, it is gone; every call ends, with a revision or
// ErrClosed, none waits for its context.
func TestCloseWaitsForRevisionReads(t *testing.T) {
	needDatabase(t)
	s, err := postgres.Open(t.Context(), baseURL, postgres.WithSchema(freshSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang fails below
	defer cancel()
	var (
		callers  sync.WaitGroup
		answered atomic.Int64
		started  = make(chan struct{})
		once     sync.Once
	)
	for range 8 {
		callers.Go(func() {
			for {
				_, err := s.Revision(ctx)
				switch {
				case err == nil:
					if answered.Add(1) == 50 {
						once.Do(func() { close(started) })
					}
					continue
				case !errors.Is(err, storage.ErrClosed):
					t.Errorf("Revision while the store closes: %v, want a revision or ErrClosed", err)
				}
				return
			}
		})
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("Revision never answered 50 calls")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, stack := range leakcheck.Take() {
		if strings.Contains(stack, "readRevisions") {
			t.Errorf("the revision reader outlived Close:\n%s", stack)
		}
	}
	callers.Wait()
	if _, err := s.Revision(t.Context()); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Revision after Close: %v, want ErrClosed", err)
	}
}

// blockFirstRead is a tracer that holds the first revision query it sees,
// before it is sent, until a second one starts.
type blockFirstRead struct {
	armed   atomic.Bool
	started atomic.Int32
	first   chan struct{} // closed when the first is held
	second  chan struct{} // closed when a second starts
}

func (b *blockFirstRead) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !b.armed.Load() || !strings.Contains(data.SQL, "CROSS JOIN") {
		return ctx
	}
	switch b.started.Add(1) {
	case 1:
		close(b.first)
		select {
		case <-b.second:
		case <-ctx.Done():
		}
	case 2:
		close(b.second)
	}
	return ctx
}

func (b *blockFirstRead) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestRevisionReadsOverlap: a call of Revision made while a query is under
// way does not wait for it to end (it may not take its answer, which may
// predate the call): a query of its own starts at once, up to a few at a
// time. Before, a single reader made one query at a time, and a call made
// during one waited for it and then for its own: twice the round trip. The
// first query is held before it is sent until a second starts; with one
// query at a time the second never would, and the first call would wait
// until its context ended.
func TestRevisionReadsOverlap(t *testing.T) {
	tr := &blockFirstRead{first: make(chan struct{}), second: make(chan struct{})}
	// A store that never takes the sole-writer lease, which would answer
	// without a query.
	s := mustStore(t, freshSchema(t), postgres.WithTracer(tr), postgres.WithWriterLease(-1))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang fails below
	defer cancel()
	tr.armed.Store(true)
	firstDone := make(chan error, 1)
	go func() {
		_, err := s.Revision(ctx)
		firstDone <- err
	}()
	select {
	case <-tr.first:
	case <-ctx.Done():
		t.Fatal("no revision query started")
	}
	// The first call's query is under way (held); this call needs a query
	// of its own.
	if _, err := s.Revision(ctx); err != nil {
		t.Fatalf("a call made while a query was under way: %v (it waited for that query)", err)
	}
	if err := <-firstDone; err != nil {
		t.Fatalf("the first call: %v (its query was held until a second started: none did while it was under way)", err)
	}
}
