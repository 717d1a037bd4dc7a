package etcd

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// revisionTimeout bounds a shared read of the revision: it outlives the
// callers that give up only while one waits, and a caller with no deadline
// (context.Background) must not hold every later consistent read behind a
// read that hangs, as on an etcd that does not answer. A minute:
// kube-apiserver's default --request-timeout.
const revisionTimeout = time.Minute

// revisionReads joins the reads of the store's revision: a consistent
// read (a GET or LIST with no resourceVersion) needs it, from etcd, and
// one read serves every caller waiting when it starts. One is in flight at
// a time; those who ask meanwhile join the next, which starts when it
// ends. A caller never takes the answer of a read that started before it
// asked (that could miss a write it saw acknowledged): only of the next.
// So N concurrent consistent reads cost two etcd round trips, not N
// (kube-apiserver's make one each).
type revisionReads struct {
	mu       sync.Mutex
	inFlight bool
	next     *revisionRead // the read the next callers join; nil: none yet
	// closed is set by Close, which waits for idle, made when a reader
	// goroutine starts and closed when it ends, to be closed.
	closed bool
	idle   chan struct{}
}

// revisionRead is one read of the revision marker and those waiting for it.
type revisionRead struct {
	done chan struct{} // closed once rev and err are set
	rev  int64
	err  error
	// ctx is the read's: the first caller's values, but it ends only
	// when every caller has given up (waiting, guarded by mu).
	ctx     context.Context
	cancel  context.CancelFunc
	waiting int
}

// revision is the store's revision, read from etcd after the call began.
func (s *Store) revision(ctx context.Context) (int64, error) {
	r := &s.revisions
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return 0, storage.ErrClosed
	}
	b := r.next
	if b == nil {
		b = &revisionRead{done: make(chan struct{})}
		b.ctx, b.cancel = context.WithTimeout(context.WithoutCancel(ctx), s.revisionTimeout)
		r.next = b
	}
	b.waiting++
	if !r.inFlight {
		r.inFlight, r.next, r.idle = true, nil, make(chan struct{})
		go s.readRevisions(b, r.idle)
	}
	r.mu.Unlock()
	select {
	case <-b.done:
		return b.rev, b.err
	case <-ctx.Done():
		r.mu.Lock()
		if b.waiting--; b.waiting == 0 { // nobody wants it any more
			b.cancel()
			if r.next == b {
				r.next = nil // not started: nobody else may join it
			}
		}
		r.mu.Unlock()
		return 0, ctx.Err()
	}
}

// readRevisions reads the revision for b, then for each read joined while
// the last was in flight, until none was; then it closes idle. Close ends
// the read in flight.
func (s *Store) readRevisions(b *revisionRead, idle chan struct{}) {
	defer close(idle)
	r := &s.revisions
	for b != nil {
		s.gather(b)
		stop := context.AfterFunc(s.closed, b.cancel)
		b.rev, b.err = s.readRevision(b.ctx)
		stop()
		b.cancel()
		close(b.done)
		r.mu.Lock()
		b, r.next = r.next, nil
		r.inFlight = b != nil
		r.mu.Unlock()
	}
}

// gatherRounds bounds how often gather lets others run.
const gatherRounds = 4

// gather lets the goroutines ready to run (requests just arrived, about to
// ask for the revision) run before b's read starts, b open to them, for as
// long as some of them join it, gatherRounds times at most: one read then
// serves more of them. They asked before the read starts, so it is theirs
// to take. It costs no time when nothing else is ready to run.
func (s *Store) gather(b *revisionRead) {
	r := &s.revisions
	r.mu.Lock()
	if r.next != nil || b.waiting == 0 { // others have asked already, for the next read; or b's callers left, its read cancelled
		r.mu.Unlock()
		return
	}
	r.next = b
	n := b.waiting
	r.mu.Unlock()
	for range gatherRounds {
		runtime.Gosched()
		r.mu.Lock()
		m := b.waiting
		r.mu.Unlock()
		if m == n {
			break
		}
		n = m
	}
	r.mu.Lock()
	if r.next == b {
		r.next = nil
	}
	r.mu.Unlock()
}

// readRevision is one read of the revision marker's ModRevision.
func (s *Store) readRevision(ctx context.Context) (int64, error) {
	resp, err := s.client.Get(ctx, s.marker)
	if err != nil {
		return 0, mapError(err)
	}
	if len(resp.Kvs) == 0 {
		return 0, fmt.Errorf("etcd: the revision marker %q is missing", s.marker)
	}
	return resp.Kvs[0].ModRevision, nil
}

// revisionWaiters is how many callers wait for the next read, not yet
// started.
func (s *Store) revisionWaiters() int {
	s.revisions.mu.Lock()
	defer s.revisions.mu.Unlock()
	if s.revisions.next == nil {
		return 0
	}
	return s.revisions.next.waiting
}

// closeRevisions ends the read of the revision in flight, if any, and
// waits for its goroutine to end; later calls get storage.ErrClosed.
func (s *Store) closeRevisions() {
	r := &s.revisions
	r.mu.Lock()
	r.closed = true
	idle := r.idle
	if r.next != nil {
		r.next.cancel() // never to start
	}
	r.mu.Unlock()
	if idle != nil {
		<-idle
	}
}
