package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// Commits reports how many write transactions s has committed: with
// concurrent writers, fewer than the writes.
func Commits(s *Store) int64 { return s.commits.Load() }

// Lingers reports how many times s's committer waited for more writers
// before committing.
func Lingers(s *Store) int64 { return s.queue.Lingers() }

// Queued reports how many writers are handing a write to s's committer.
func Queued(s *Store) int64 { return s.queue.Queued() }

// WithLinger makes commits wait up to d for the writers they expect,
// whatever the commits take.
func WithLinger(d time.Duration) Option {
	return func(c *config) { c.linger = d }
}

// WithBeforeCommit has the committer call f with each batch's size before
// it commits the batch.
func WithBeforeCommit(f func(n int)) Option {
	return func(c *config) { c.beforeCommit = f }
}

// Compacted reports the oldest revision reads at s may ask for.
func Compacted(s *Store) (int64, error) {
	var c int64
	err := s.view(func(_ *bbolt.Tx, m meta) error {
		c = m.compacted
		return nil
	})
	return c, err
}

// HeldBytes reports what s counts against its byte budget.
func HeldBytes(s *Store) (int64, error) {
	var held int64
	err := s.view(func(_ *bbolt.Tx, m meta) error {
		held = m.held
		return nil
	})
	return held, err
}

// Check verifies the file: bbolt's own check of its pages, then the
// layout's invariants. The log holds exactly the revisions after the
// compaction point, each naming a key whose history has a version at that
// revision; every version in the history is either one of those or the
// newest at or below the compaction point of a key live there; the held
// bytes are the values of the versions that are not their key's newest.
func Check(s *Store) error {
	return s.view(func(tx *bbolt.Tx, m meta) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return fmt.Errorf("bbolt check: %w", errors.Join(errs...))
		}
		if m.compacted < initialRevision || m.compacted > m.rev {
			return fmt.Errorf("compacted %d outside [1, %d]", m.compacted, m.rev)
		}
		logged := map[string]bool{} // history keys the log points at
		want := m.compacted + 1
		lc := tx.Bucket(logBucket).Cursor()
		for k, v := lc.First(); k != nil; k, v = lc.Next() {
			if rev := unbe64(k); rev != want {
				return fmt.Errorf("log has revision %d, want %d", rev, want)
			}
			logged[string(versionKey(string(v), want))] = true
			want++
		}
		if want != m.rev+1 {
			return fmt.Errorf("log ends at %d, store at %d", want-1, m.rev)
		}
		var (
			held       int64
			lastPrefix []byte
			lastRev    int64
			lastValue  int64
		)
		hc := tx.Bucket(historyBucket).Cursor()
		for k, v := hc.First(); k != nil; k, v = hc.Next() {
			prefix, rev := splitVersionKey(k)
			rec, err := decodeRecord(rev, v)
			if err != nil {
				return err
			}
			if bytes.Equal(prefix, lastPrefix) {
				held += lastValue // superseded by this version
			}
			switch {
			case rev > m.rev:
				return fmt.Errorf("version of %q at %d, after the store's revision", unescapeKey(prefix), rev)
			case rev > m.compacted && !logged[string(k)]:
				return fmt.Errorf("version of %q at %d is not in the log", unescapeKey(prefix), rev)
			case rev <= m.compacted && rec.deleted:
				return fmt.Errorf("tombstone of %q at %d survived compaction at %d", unescapeKey(prefix), rev, m.compacted)
			case rev <= m.compacted && bytes.Equal(prefix, lastPrefix) && lastRev <= m.compacted:
				// Only the newest version at or below the compaction point
				// survives it.
				return fmt.Errorf("versions of %q at %d and %d, both at or below the compaction point %d",
					unescapeKey(prefix), lastRev, rev, m.compacted)
			}
			delete(logged, string(k))
			lastPrefix, lastRev, lastValue = bytes.Clone(prefix), rev, int64(len(rec.value))
		}
		if len(logged) > 0 {
			return fmt.Errorf("%d logged revisions have no version in the history", len(logged))
		}
		if held != m.held {
			return fmt.Errorf("held bytes %d, the history holds %d", m.held, held)
		}
		return nil
	})
}

// CommitError is how a failed commit is classified.
var CommitError = commitError

// HighWater reports the end of the pages bbolt has allocated in s's file.
func HighWater(s *Store) (int64, error) { return s.highWater() }

// PreallocAhead is how far past the high-water mark the file is written.
const PreallocAhead = preallocAhead
