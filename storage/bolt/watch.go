package bolt

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/watchfeed"
)

const (
	// watchBatch is the most events a watcher reads from the file at a
	// time, and so the most it can hold when it falls out of the window.
	watchBatch = 64
	// watchScan is the most log entries a watcher looks at in one read
	// transaction, so that watchers of rarely written prefixes keep their
	// transactions short.
	watchScan = 1024
)

// Watch delivers every change to keys with the given prefix whose revision
// is greater than rev, until ctx ends. rev 0 is no exception: it replays
// every change since the file was created, and so fails with
// [storage.ErrExpired] once the history window no longer reaches back that
// far; to see only new changes, watch from [Store.Revision]. The channel is
// unbuffered; the goroutine feeding it reads the file's log at its own pace
// and exits when ctx ends or after the stream's final error event has been
// received.
func (s *Store) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rev < 0 {
		return nil, negativeRevision(rev)
	}
	rev = max(rev, initialRevision) // nothing happened at or before it
	err := s.view(func(_ *bbolt.Tx, m meta) error {
		if rev < m.compacted {
			return expired(rev, m.compacted)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(chan storage.Event)
	go watchfeed.Serve(ctx, rev+1, out, func(next int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error) {
		return s.readLog(prefix, next, batch)
	})
	return out, nil
}

// readLog appends to batch the events for prefix from revision next on,
// and returns the revision to read from next time. When it found nothing
// left to read it also returns the channel to wait on; when the stream must
// end, the error to end it with.
func (s *Store) readLog(prefix string, next int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error) {
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
	err := s.view(func(tx *bbolt.Tx, m meta) error {
		last = m.rev
		if next <= m.compacted {
			return watchfeed.FellBehind(next, m.compacted)
		}
		history := tx.Bucket(historyBucket).Cursor()
		lc := tx.Bucket(logBucket).Cursor()
		k, v := lc.Seek(be64(next))
		for scanned := 0; next <= m.rev && scanned < watchScan && len(batch) < watchBatch; scanned++ {
			if k == nil || unbe64(k) != next {
				return fmt.Errorf("%w: revision %d is missing from the log", errCorrupt, next)
			}
			if key := string(v); strings.HasPrefix(key, prefix) {
				ev, err := eventAt(history, key, next)
				if err != nil {
					return err
				}
				batch = append(batch, ev)
			}
			next++
			k, v = lc.Next()
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

// eventAt rebuilds the event of revision rev, which wrote key, from the
// version it wrote and the version before.
func eventAt(c *bbolt.Cursor, key string, rev int64) (storage.Event, error) {
	want := versionKey(key, rev)
	k, v := c.Seek(want)
	if !bytes.Equal(k, want) {
		return storage.Event{}, fmt.Errorf("%w: the version of %q at %d is missing", errCorrupt, key, rev)
	}
	rec, err := decodeRecord(rev, v)
	if err != nil {
		return storage.Event{}, err
	}
	ev := storage.Event{Type: storage.Put, KeyValue: rec.keyValue(key)}
	// The version before, if the key was live: compaction keeps it, since
	// it is the newest at or below any compaction point before rev.
	if k, v = c.Prev(); k != nil && bytes.HasPrefix(k, want[:len(want)-revLen]) {
		_, r := splitVersionKey(k)
		prev, err := decodeRecord(r, v)
		if err != nil {
			return storage.Event{}, err
		}
		if !prev.deleted {
			ev.Prev = append([]byte{}, prev.value...) // non-nil even if empty
		}
	}
	if rec.deleted {
		if ev.Prev == nil {
			return storage.Event{}, fmt.Errorf("%w: the deletion of %q at %d follows no version", errCorrupt, key, rev)
		}
		ev.Type, ev.Value = storage.Delete, ev.Prev
	}
	return ev, nil
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
