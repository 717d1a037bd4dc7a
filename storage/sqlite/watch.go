package sqlite

import (
	"context"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/watchfeed"
)

const (
	// watchBatch is the most events a watcher reads from the log at a
	// time, and so the most it can hold when it falls out of the window.
	watchBatch = 64
	// watchScan is the most revisions a watcher looks at in one read, so
	// that watchers of rarely written prefixes keep their reads short.
	watchScan = 1024
)

// Watch delivers every change to keys with the given prefix whose revision
// is greater than rev, until ctx ends. rev 0 is no exception: it replays
// every change since the file was created, and so fails with
// [storage.ErrExpired] once the history window no longer reaches back that
// far; to see only new changes, watch from [Store.Revision]. The channel is
// unbuffered; the goroutine feeding it takes the last commits' events from
// memory, or reads the log when it is further behind, at its own pace, and
// exits when ctx ends or after the stream's final error event has been
// received. A watcher that falls out of the window ends with ErrExpired.
func (s *Store) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	if err := s.check(ctx, rev); err != nil {
		return nil, err
	}
	rev = max(rev, initialRevision) // nothing happened at or before it
	if _, compacted := s.recent.Window(); rev < compacted {
		return nil, expired(rev, compacted)
	}
	out := make(chan storage.Event)
	go watchfeed.Serve(ctx, rev+1, out, func(next int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error) {
		return s.readLog(ctx, prefix, next, batch)
	})
	return out, nil
}

// readLog appends to batch the events for prefix from revision next on,
// and returns the revision to read from next time. When it found nothing
// left to read it also returns the channel to wait on; when the stream must
// end, the error to end it with.
func (s *Store) readLog(ctx context.Context, prefix string, next int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error) {
	// Taken before reading, so that a commit the read misses closes it.
	wait := s.waitChannel()
	if s.closed.Load() {
		return batch, next, nil, storage.ErrClosed
	}
	if batch, next, held, caughtUp, err := s.recent.Read(prefix, next, batch, watchScan, watchBatch); held {
		if caughtUp {
			return batch, next, wait, nil
		}
		return batch, next, nil, err
	}
	var last int64
	err := s.view(ctx, func(tx snapshot, m meta) error {
		last = m.rev
		if next <= m.compacted {
			return watchfeed.FellBehind(next, m.compacted)
		}
		to := min(next+watchScan-1, m.rev)
		cond, args := keyRange(prefix, prefix)
		rows, err := tx.QueryContext(ctx, qLogRange(cond), append(append([]any{next, to}, args...), watchBatch-len(batch))...)
		if err != nil {
			return err
		}
		defer rows.Close()
		full := false
		for rows.Next() {
			var (
				ev          storage.Event
				key         []byte
				op, prevRev int64
			)
			if err := rows.Scan(&ev.ModRevision, &key, &op, &ev.CreateRevision, &ev.Value, &prevRev, &ev.Prev); err != nil {
				return err
			}
			ev.Key = string(key)
			switch op {
			case opCreate:
				ev.Type, ev.Value, ev.Prev = storage.Put, nonNil(ev.Value), nil
			case opUpdate:
				ev.Type, ev.Value, ev.Prev = storage.Put, nonNil(ev.Value), nonNil(ev.Prev)
			default:
				ev.Prev = nonNil(ev.Prev)
				ev.Type, ev.Value = storage.Delete, ev.Prev
			}
			batch = append(batch, ev)
			next = ev.ModRevision + 1
			full = len(batch) == watchBatch
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !full {
			next = to + 1
		}
		return nil
	})
	if err != nil {
		return batch, next, nil, err
	}
	if len(batch) == 0 && next > last {
		return batch, next, wait, nil
	}
	return batch, next, nil, nil
}

// wake wakes the watchers waiting for a commit.
func (s *Store) wake() {
	if ch := s.changed.Swap(nil); ch != nil {
		close(*ch)
	}
}

// waitChannel returns the channel the next commit (or Close) closes.
func (s *Store) waitChannel() <-chan struct{} {
	for {
		if ch := s.changed.Load(); ch != nil {
			return *ch
		}
		ch := make(chan struct{})
		if s.changed.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}
