package etcd

import (
	"context"
	"fmt"
	"sync"
)

// revisionReads joins the reads of the store's revision: a consistent
// read (a GET or LIST with no resourceVersion) needs it, from etcd, and
// one read serves every caller waiting when it starts. One is in flight at
// a time; those who ask meanwhile join the next, which starts when it
// ends. A caller never takes the answer of a read that started before it
// asked (that could miss a write it saw acknowledged): only of the next.
// So N concurrent consistent reads cost two etcd round trips, not N, as
// kube-apiserver's consistent reads from its cache share their progress
// requests.
type revisionReads struct {
	mu       sync.Mutex
	inFlight bool
	next     *revisionRead // the read the next callers join; nil: none yet
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
	b := r.next
	if b == nil {
		b = &revisionRead{done: make(chan struct{})}
		b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
		r.next = b
	}
	b.waiting++
	if !r.inFlight {
		r.inFlight, r.next = true, nil
		go s.readRevisions(b)
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
// the last was in flight, until none was.
func (s *Store) readRevisions(b *revisionRead) {
	r := &s.revisions
	for b != nil {
		b.rev, b.err = s.readRevision(b.ctx)
		b.cancel()
		close(b.done)
		r.mu.Lock()
		b, r.next = r.next, nil
		r.inFlight = b != nil
		r.mu.Unlock()
	}
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
