package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
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
