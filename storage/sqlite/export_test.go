package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Commits reports how many write transactions s has committed: with
// concurrent writers, fewer than the writes.
func Commits(s *Store) int64 { return s.commits.Load() }

// LongestCommit reports the longest transaction s's committer has taken.
func LongestCommit(s *Store) time.Duration { return time.Duration(s.longest.Load()) }

// Purged reports how many log rows s has deleted, and the longest any
// transaction's DELETE of them took.
func Purged(s *Store) (int64, time.Duration) {
	return s.purgedTotal.Load(), time.Duration(s.longestPurge.Load())
}

// WithSynchronous sets SQLite's synchronous pragma of the write
// connection, for benchmarks of what FULL costs.
func WithSynchronous(mode string) Option { return func(c *config) { c.synchronous = mode } }

// WithWritePragma adds a pragma to the write connection's, such as
// max_page_count(N), which makes the file full at N pages.
func WithWritePragma(p string) Option {
	return func(c *config) { c.writePragmas = append(c.writePragmas, p) }
}

// Rows counts the rows of the tables current and log.
func Rows(s *Store) (current, log int64, err error) {
	err = s.view(context.Background(), func(tx snapshot, _ meta) error {
		return errors.Join(
			tx.tx.QueryRow(`SELECT count(*) FROM current`).Scan(&current),
			tx.tx.QueryRow(`SELECT count(*) FROM log`).Scan(&log))
	})
	return current, log, err
}

// Compacted reports the oldest revision reads at s may ask for.
func Compacted(s *Store) (int64, error) {
	var c int64
	err := s.view(context.Background(), func(_ snapshot, m meta) error {
		c = m.compacted
		return nil
	})
	return c, err
}

// Check verifies the file: SQLite's integrity check, then the schema's
// invariants, and the committer's count of the window's bytes (which s
// must not be writing meanwhile). The log holds every revision after the compaction point
// (and perhaps some at or below it, not yet purged), none after the store's;
// every current row is the last write of its key in the log, if the log
// has one, and no key whose last logged write is a deletion is current.
func Check(s *Store) error {
	return s.view(context.Background(), func(tx snapshot, m meta) error {
		var ok string
		if err := tx.tx.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
			return fmt.Errorf("integrity check: %q, %v", ok, err)
		}
		if m.compacted < initialRevision || m.compacted > m.rev {
			return fmt.Errorf("compacted %d outside [1, %d]", m.compacted, m.rev)
		}
		var n, lo, hi sql.NullInt64
		if err := tx.tx.QueryRow(`SELECT count(*), min(rev), max(rev) FROM log WHERE rev > ?`, m.compacted).Scan(&n, &lo, &hi); err != nil {
			return err
		}
		if want := m.rev - m.compacted; n.Int64 != want || want > 0 && (lo.Int64 != m.compacted+1 || hi.Int64 != m.rev) {
			return fmt.Errorf("the window (%d, %d] has %d log rows from %d to %d", m.compacted, m.rev, n.Int64, lo.Int64, hi.Int64)
		}
		var held int64
		if err := tx.tx.QueryRow(`SELECT coalesce(sum(coalesce(length(value), 0) + coalesce(length(prev), 0)), 0) FROM log WHERE rev > ?`, m.compacted).Scan(&held); err != nil {
			return err
		}
		if got, window := s.held.Load(), s.window.Load(); got != held || window != m.rev-m.compacted {
			return fmt.Errorf("the committer counts %d bytes in %d revisions, the window (%d, %d] holds %d bytes", got, window, m.compacted, m.rev, held)
		}
		var bad int64
		err := tx.tx.QueryRow(`SELECT count(*) FROM log l WHERE l.rev = (SELECT max(rev) FROM log WHERE key = l.key) AND (
			(l.op = 3 AND EXISTS (SELECT 1 FROM current c WHERE c.key = l.key)) OR
			(l.op <> 3 AND NOT EXISTS (SELECT 1 FROM current c WHERE c.key = l.key AND c.mod_rev = l.rev AND c.create_rev = l.create_rev AND c.value = l.value)))`).Scan(&bad)
		if err != nil {
			return err
		}
		if bad > 0 {
			return fmt.Errorf("%d keys' current rows disagree with their last write in the log", bad)
		}
		return nil
	})
}

// CommitError is how a failed commit is classified.
var CommitError = commitError
