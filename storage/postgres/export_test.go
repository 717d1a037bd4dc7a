package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
)

// WithUnorderedRevisions breaks the store on purpose, for the test that
// must catch it: revisions come from a sequence, taken without the revision
// counter's lock, so that transactions may commit out of the order of their
// revisions, as kine's may. (The counter is then left alone, its lock being
// what orders commits: the broken store's Revision stays where it began.)
// delay, if not nil, is called between a transaction's revisions being
// assigned and its commit.
func WithUnorderedRevisions(delay func(revs []int64)) Option {
	return func(c *config) {
		c.unorderedRevisions = true
		c.beforeCommit = delay
	}
}

// WithBeforeCommit calls f between a transaction's revisions being
// assigned and its commit, without breaking anything.
func WithBeforeCommit(f func(revs []int64)) Option {
	return func(c *config) { c.beforeCommit = f }
}

// WithAfterSend calls f once each commit's writes and COMMIT are sent
// (its second round trip), before their answer is read: the server may be
// committing them meanwhile.
func WithAfterSend(f func()) Option {
	return func(c *config) { c.afterSend = f }
}

// WithPruneObserver calls f after each pruning transaction that deleted
// rows, with when it began, how long it took and how many rows it deleted.
func WithPruneObserver(f func(began time.Time, took time.Duration, deleted int64)) Option {
	return func(c *config) { c.onPrune = f }
}

// WithoutNotifications makes the store listen on a channel nobody
// notifies, so that only its poll tells it of other stores' writes.
func WithoutNotifications() Option {
	return func(c *config) { c.listenElsewhere = true }
}

// WithTracer traces every statement and batch of the store's pool, for the
// tests that count round trips.
func WithTracer(tr pgx.QueryTracer) Option {
	return func(c *config) { c.tracer = tr }
}

// WithoutLeaseCheck breaks the store on purpose, for the test that must
// catch it: its writes skip the sole-writer lease's check, and so commit
// while another store holds the lease.
func WithoutLeaseCheck() Option {
	return func(c *config) { c.skipLeaseCheck = true }
}

// HoldsLease says whether the store holds the sole-writer lease and may
// answer consistent reads itself now.
func (s *Store) HoldsLease() bool {
	s.lease.mu.Lock()
	defer s.lease.mu.Unlock()
	return s.lease.holder && time.Now().Before(s.lease.validUntil)
}

// StallLease stops (or resumes) the store's renewals of its lease, as a
// holder that hangs would.
func (s *Store) StallLease(stall bool) { s.lease.stalled.Store(stall) }

// FollowCommits hands the poller's log the events of commits batches of
// eight updates of value, as the committer hands it its own (recent.follow),
// starting from an empty log, so that most find it full. With check, it
// checks the log after each: the latest recentEvents revisions, in order,
// and nothing left in its array outside them.
func FollowCommits(commits int, value []byte, check bool) error {
	var r recent
	r.reset(0, 0)
	evs := make([]storage.Event, 8)
	rev := int64(0)
	for c := range commits {
		for i := range evs {
			rev++
			evs[i] = storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: "/w/k", Value: value, CreateRevision: 1, ModRevision: rev}, Prev: value}
		}
		if !r.follow(evs) {
			return fmt.Errorf("commit %d: the events did not follow the log", c)
		}
		if !check {
			continue
		}
		if want := min(rev, recentEvents); int64(len(r.events)) != want || r.first != rev-want+1 {
			return fmt.Errorf("commit %d: %d events from %d, want %d from %d", c, len(r.events), r.first, want, rev-want+1)
		}
		for i, ev := range r.events {
			if ev.ModRevision != r.first+int64(i) {
				return fmt.Errorf("commit %d: event %d at revision %d, want %d", c, i, ev.ModRevision, r.first+int64(i))
			}
		}
		start := cap(r.buf) - cap(r.events)
		for i, ev := range r.buf[:cap(r.buf)] {
			if (i < start || i >= start+len(r.events)) && (ev.Value != nil || ev.Key != "") {
				return fmt.Errorf("commit %d: the array holds revision %d at %d, outside the window [%d, %d)", c, ev.ModRevision, i, start, start+len(r.events))
			}
		}
	}
	return nil
}

// ArrayArgs returns the committer's array arguments (args.go) holding b
// and i, as pgx encodes them.
func ArrayArgs(b [][]byte, i []int64) (bytes, ints any) { return bytesArray(b), int64Array(i) }

// WriteBatchStatement returns the SQL of a commit's writes on schema
// (see commit.go).
func WriteBatchStatement(schema string) string { return newStatements(schema, false).writeBatch }
