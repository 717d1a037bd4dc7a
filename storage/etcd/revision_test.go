package etcd_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd"
)

// markerReads is a client of the test server that counts its reads of
// marker and holds each at hold, if set, until it is closed, having said
// so on held.
type markerReads struct {
	marker string
	n      atomic.Int64
	hold   atomic.Pointer[chan struct{}]
	held   chan struct{}
}

func (m *markerReads) client(t testing.TB) *clientv3.Client {
	t.Helper()
	intercept := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := req.(*pb.RangeRequest); ok && string(r.Key) == m.marker {
			m.n.Add(1)
			if hold := m.hold.Load(); hold != nil {
				m.held <- struct{}{}
				select {
				case <-*hold:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	return interceptedClient(t, intercept)
}

// heldStore is a store under a fresh prefix whose reads of its revision
// marker m counts, with one Revision call in flight, its read held until
// release is closed; first says how that call ended.
func heldStore(t *testing.T, opts ...etcd.Option) (s *etcd.Store, m *markerReads, release chan struct{}, first <-chan error) {
	t.Helper()
	prefix := freshPrefix()
	m = &markerReads{marker: prefix + "revision", held: make(chan struct{}, 1)}
	s, err := etcd.New(t.Context(), m.client(t), append(opts, etcd.WithPrefix(prefix))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	release = make(chan struct{})
	m.hold.Store(&release)
	done := make(chan error, 1)
	go func() {
		_, err := s.Revision(context.Background()) // no deadline of its own
		done <- err
	}()
	<-m.held
	m.hold.Store(nil)
	return s, m, release, done
}

// TestRevisionReadsJoined: while one read of the store's revision is in
// flight, N concurrent Revision calls wait for the next read, one for all
// of them, which starts after each of them began: it sees the write
// acknowledged before they called.
func TestRevisionReadsJoined(t *testing.T) {
	ctx := t.Context()
	s, m, release, first := heldStore(t) // the first read, held in flight
	if got := m.n.Load(); got != 1 {
		t.Fatalf("one Revision: %d reads of the marker", got)
	}
	// A write acknowledged while it is in flight, before the others ask.
	written, err := mustStore(t, strings.TrimSuffix(m.marker, "revision")).Create(ctx, "/k", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	revs := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	var answered atomic.Int64
	for i := range n {
		wg.Go(func() {
			revs[i], errs[i] = s.Revision(ctx)
			answered.Add(1)
		})
	}
	// Until all have joined the next read (or, a bug, been answered).
	for s.RevisionWaiters()+int(answered.Load()) < n {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if errs[i] != nil || revs[i] != written {
			t.Fatalf("Revision %d: %d, %v; want %d, the write acknowledged before it was called", i, revs[i], errs[i], written)
		}
	}
	if got := m.n.Load(); got != 2 {
		t.Errorf("%d concurrent Revision calls behind one in flight made %d reads of the marker, want 1", n, got-1)
	}
}

// TestRevisionReadAbandoned: callers that give up leave the read to those
// still waiting, and a read they all gave up before it started is not
// joined by the next caller, who gets an answer of its own.
func TestRevisionReadAbandoned(t *testing.T) {
	ctx := t.Context()
	s, m, release, first := heldStore(t)
	// Two callers join the next read; both give up before it starts.
	gone, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := s.Revision(gone); !errors.Is(err, context.Canceled) {
				t.Errorf("a Revision whose context ended: %v", err)
			}
		})
	}
	for s.RevisionWaiters() < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	if w := s.RevisionWaiters(); w != 0 {
		t.Errorf("%d waiting after both gave up", w)
	}
	// A later caller is answered, by a read of its own.
	later := make(chan error, 1)
	go func() {
		_, err := s.Revision(ctx)
		later <- err
	}()
	for s.RevisionWaiters() < 1 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	for _, c := range []<-chan error{first, later} {
		if err := <-c; err != nil {
			t.Error(err)
		}
	}
	if got := m.n.Load(); got != 2 {
		t.Errorf("%d reads of the marker, want 2 (the first and the later caller's)", got)
	}
}

// answerOf is what c says, or a failure if it says nothing for long: a
// bound on a hang, not a measure of time.
func answerOf(t *testing.T, what string, c <-chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer", what)
		return nil
	}
}

// TestRevisionReadBounded: a read of the revision that etcd does not
// answer ends at the store's bound, though its caller has no deadline, and
// the callers after it are answered by a read of their own.
func TestRevisionReadBounded(t *testing.T) {
	s, m, _, first := heldStore(t, etcd.WithRevisionTimeout(100*time.Millisecond)) // never released
	if err := answerOf(t, "a Revision with no deadline while etcd hangs", first); err == nil {
		t.Fatal("a Revision whose read etcd never answered: no error")
	}
	rev, err := s.Revision(t.Context())
	if err != nil || rev == 0 {
		t.Fatalf("a Revision once etcd answers: %d, %v", rev, err)
	}
	if got := m.n.Load(); got != 2 {
		t.Errorf("%d reads of the marker, want 2", got)
	}
}

// TestCloseEndsRevisionRead: Close ends a read of the revision in flight,
// and those waiting for the next, and waits for its goroutine; a later
// call gets ErrClosed.
func TestCloseEndsRevisionRead(t *testing.T) {
	s, _, _, first := heldStore(t) // never released
	next := make(chan error, 1)
	go func() {
		_, err := s.Revision(context.Background())
		next <- err
	}()
	for s.RevisionWaiters() < 1 {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	if err := answerOf(t, "Close with a read of the revision in flight", closed); err != nil {
		t.Fatal(err)
	}
	for _, c := range []<-chan error{first, next} {
		if err := answerOf(t, "a Revision when the store closed", c); err == nil {
			t.Error("a Revision whose read the store's Close ended: no error")
		}
	}
	if _, err := s.Revision(t.Context()); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("a Revision after Close: %v, want ErrClosed", err)
	}
}

// A read whose only caller gave up before it started is not opened to
// later callers: they would get its cancellation though their contexts
// are live. Tried many times: the caller that gives up must do so between
// asking and the read's start.
func TestRevisionReadLeftIsNotJoined(t *testing.T) {
	s := mustStore(t, freshPrefix())
	ctx := t.Context()
	for i := range 2000 {
		var wg sync.WaitGroup
		var err error
		wg.Go(func() { _, _ = s.Revision(&goneAfterAsking{Context: ctx}) })
		wg.Go(func() { _, err = s.Revision(ctx) })
		wg.Wait()
		if err != nil {
			t.Fatalf("try %d: a Revision with a live context: %v", i, err)
		}
	}
}

// goneAfterAsking is a context its caller cancels just after the store
// looked at it: its first Err is nil, its Done already closed.
type goneAfterAsking struct {
	context.Context
	errs atomic.Int64
}

var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *goneAfterAsking) Done() <-chan struct{} { return closedDone }

func (c *goneAfterAsking) Err() error {
	if c.errs.Add(1) == 1 {
		return nil
	}
	return context.Canceled
}
