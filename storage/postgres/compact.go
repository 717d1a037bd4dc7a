package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
)

// pruneChunk is how many revisions of the log one pruning transaction
// goes through: it deletes at most twice as many rows, by primary key, in
// a few milliseconds, and writers never wait for it (see doc.go).
const pruneChunk = 500

// Compact discards the history before rev: reads at revisions below it,
// and watches from them, fail with [storage.ErrExpired] from now on, and
// the log rows that only they could read are deleted, in short
// transactions, before Compact returns. A rev newer than the store's is
// [storage.ErrFutureRevision]; one at or below an earlier compaction
// changes nothing. The store compacts itself to keep its window (see
// [WithHistory]); Compact is for doing so sooner.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	if err := s.check(ctx, rev); err != nil {
		return err
	}
	if err := s.compactTo(ctx, rev); err != nil {
		return err
	}
	return s.prune(ctx)
}

// compactTo moves the window's start to rev.
func (s *Store) compactTo(ctx context.Context, rev int64) error {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	var cur, moved int64
	if err := s.pool.QueryRow(ctx, s.sql.compactTo, rev).Scan(&cur, &moved); err != nil {
		return s.fail(ctx, err)
	}
	if rev > cur {
		return fmt.Errorf("%w: compact at %d, store at %d", storage.ErrFutureRevision, rev, cur)
	}
	if moved > 0 {
		s.recent.setCompacted(rev)
		s.wake() // the watchers behind it end
	}
	return nil
}

// prune deletes what the window no longer needs, one chunk of revisions
// per transaction, until the log is pruned to the window's start.
func (s *Store) prune(ctx context.Context) error {
	for {
		done, err := s.pruneOnce(ctx)
		if err != nil || done {
			return err
		}
	}
}

// pruneOnce prunes one chunk and says whether the log is pruned to the
// window's start. Pruners of several replicas take turns on the
// compaction row's lock; writers do not take it.
func (s *Store) pruneOnce(ctx context.Context) (done bool, err error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	began := time.Now()
	var deleted int64
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Losing a pruning transaction in a crash loses nothing (it is
		// done again), so it need not wait for its WAL to reach the disk,
		// nor make the writers' commits wait behind that.
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit TO off"); err != nil {
			return err
		}
		var compacted, pruned int64
		if err := tx.QueryRow(ctx, s.sql.lockPrune).Scan(&compacted, &pruned); err != nil {
			return err
		}
		if pruned >= compacted {
			done = true
			return nil
		}
		to := min(compacted, pruned+pruneChunk)
		tag, err := tx.Exec(ctx, s.sql.prune, pruned, to)
		if err != nil {
			return err
		}
		deleted = tag.RowsAffected()
		_, err = tx.Exec(ctx, s.sql.setPruned, to)
		done = to == compacted
		return err
	})
	if err == nil && deleted > 0 && s.config.onPrune != nil {
		s.config.onPrune(began, time.Since(began), deleted)
	}
	return done, s.fail(ctx, err)
}

// compactionSlack is how far past the window the store lets the log grow
// before it compacts, so that it compacts in steps rather than after
// every write.
func (s *Store) compactionSlack() int64 {
	return max(s.config.history/10, 100)
}

// compactLoop is the compactor: when a commit takes the store past its
// window and slack, and every so often for the writes of other replicas,
// it compacts to the window and prunes. It runs from Open until Close.
func (s *Store) compactLoop() {
	ticker := time.NewTicker(10 * s.config.pollInterval)
	defer ticker.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-s.compactNow:
		case <-ticker.C:
		}
		_ = s.autoCompact(s.bg) // tried again next time
	}
}

func (s *Store) autoCompact(ctx context.Context) error {
	qctx, cancel := s.opContext(ctx)
	var rev, compacted int64
	err := s.pool.QueryRow(qctx, s.sql.window).Scan(&rev, &compacted)
	cancel()
	if err != nil {
		return err
	}
	s.recent.setCompacted(compacted)
	if rev-compacted > s.config.history {
		if err := s.compactTo(ctx, rev-s.config.history); err != nil {
			return err
		}
	}
	return s.prune(ctx)
}

func (s *Store) compactSoon() {
	select {
	case s.compactNow <- struct{}{}:
	default:
	}
}
