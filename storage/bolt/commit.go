package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/groupcommit"
)

// Writes are group-committed through storage/internal/groupcommit: every
// write is a request to one goroutine, the committer, which applies all
// the requests waiting when it starts a transaction in that one
// transaction, and so acknowledges them all with one fsync. A lone writer
// waits for one fsync, as with a transaction of its own; concurrent writers
// share them. (bbolt's DB.Batch does the like, but waits up to a delay for
// the batch to fill, which a lone writer pays for every write, and reruns
// the whole batch when one request fails its precondition.) The committer
// lingers for the writers it expects, at most about one commit's time (see
// the groupcommit package).

type op int

const (
	opCreate op = iota + 1
	opUpdate
	opDelete
	opCompact
)

type request struct {
	op     op
	key    string
	value  []byte
	expect int64 // Update and Delete: the precondition; Compact: the revision

	// Set by the committer before it closes done.
	rev     int64
	removed storage.KeyValue
	err     error
	event   storage.Event // the change made, if any, for watchers
}

// write hands r to the committer and waits until it is on disk. Once
// handed over, a write is waited for even if ctx ends, so that its error
// says whether it happened.
func (s *Store) write(ctx context.Context, r *request) (*request, error) {
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if r.op != opCompact && len(r.key) > maxKeyLen {
		return r, fmt.Errorf("%w: bolt: key of %d bytes, the most is %d", storage.ErrTooLarge, len(r.key), maxKeyLen)
	}
	if r.op != opCompact && len(r.value) > bbolt.MaxValueSize-recordHeader {
		return r, fmt.Errorf("%w: bolt: value of %d bytes, the most is %d", storage.ErrTooLarge, len(r.value), bbolt.MaxValueSize-recordHeader)
	}
	if s.closed.Load() {
		return r, storage.ErrClosed
	}
	if err := s.queue.Do(ctx, r); err != nil {
		if errors.Is(err, groupcommit.ErrClosed) {
			err = storage.ErrClosed
		}
		return r, err
	}
	return r, r.err
}

// preallocate grows the file's preallocation past bbolt's high-water mark,
// after the writers are answered.
func (s *Store) preallocate() {
	if s.prealloc != nil {
		if hwm, err := s.highWater(); err == nil && !s.prealloc.ensure(hwm) {
			s.prealloc.close()
			s.prealloc = nil
		}
	}
}

// maxLinger bounds a commit's wait for writers, however long commits take:
// it is for writers busy between two writes, not for a slow disk.
const maxLinger = 5 * time.Millisecond

// highWater is the end of the pages bbolt has allocated in the file.
func (s *Store) highWater() (int64, error) {
	tx, err := s.db.Begin(false)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	return tx.Size(), nil
}

// lingerFor is how long a commit waits for the writers it expects, given
// the commits' average duration.
func (s *Store) lingerFor(took time.Duration) time.Duration {
	if s.config.linger > 0 {
		return s.config.linger
	}
	return min(took, maxLinger)
}

// commit applies batch in one transaction and sets each request's outcome,
// for the caller to answer.
func (s *Store) commit(batch []*request) {
	if s.config.beforeCommit != nil {
		s.config.beforeCommit(len(batch))
	}
	var after meta
	err := s.db.Update(func(tx *bbolt.Tx) error {
		m, err := readMeta(tx)
		if err != nil {
			return err
		}
		w := writer{meta: m, history: tx.Bucket(historyBucket), log: tx.Bucket(logBucket)}
		for _, r := range batch {
			if r.op == opCompact {
				continue
			}
			if err := w.apply(r); err != nil {
				return err
			}
		}
		// Compactions last (see compact).
		for _, r := range batch {
			if r.op == opCompact {
				if err := w.apply(r); err != nil {
					return err
				}
			}
		}
		if err := w.bound(s.config.history, s.config.historyBytes); err != nil {
			return err
		}
		after = w.meta
		return writeMeta(tx, w.meta)
	})
	if err != nil {
		err = commitError(err)
		for _, r := range batch {
			r.rev, r.removed, r.err, r.event = 0, storage.KeyValue{}, err, storage.Event{}
		}
		return
	}
	s.commits.Add(1)
	events := s.events[:0]
	for _, r := range batch {
		if r.rev != 0 && r.op != opCompact {
			events = append(events, r.event)
			r.event = storage.Event{}
		}
	}
	s.recent.Add(events, after.rev, after.compacted)
	clear(events)
	s.events = events
	s.wake()
}

// commitError classifies the failure of a commit. bbolt rolls the
// transaction back, but a write that failed syncing the file may be on
// disk all the same after a restart; a full disk fails before the meta
// page, which makes a transaction count, is written.
func commitError(err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("%w: bolt: commit: %w", storage.ErrNoSpace, err)
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return storage.ErrClosed
	}
	var pathErr *fs.PathError
	var errno syscall.Errno
	if errors.As(err, &pathErr) || errors.As(err, &errno) {
		return fmt.Errorf("%w: bolt: commit: %w (%w)", storage.ErrUnavailable, err, storage.ErrOutcomeUnknown)
	}
	return fmt.Errorf("bolt: commit: %w", err)
}

// writer applies requests inside one write transaction.
type writer struct {
	meta    meta
	history *bbolt.Bucket
	log     *bbolt.Bucket
}

// apply makes one request. A failed precondition is the request's error,
// and changes nothing; a returned error fails the transaction.
func (w *writer) apply(r *request) error {
	if r.op == opCompact {
		switch {
		case r.expect > w.meta.rev:
			r.err = fmt.Errorf("%w: compact at %d, store at %d", storage.ErrFutureRevision, r.expect, w.meta.rev)
		case r.expect > w.meta.compacted:
			return w.compact(r.expect)
		}
		return nil
	}
	cur, live, err := latest(w.history.Cursor(), r.key)
	if err != nil {
		return err
	}
	live = live && !cur.deleted
	switch {
	case r.op == opCreate && live:
		r.err = storage.ErrExists
		return nil
	case r.op != opCreate && !live:
		r.err = storage.ErrNotFound
		return nil
	case r.op != opCreate && r.expect != 0 && r.expect != cur.rev:
		r.err = storage.ErrConflict
		return nil
	}
	rev := w.meta.rev + 1
	var rec []byte
	// The event shares the record's value (bbolt copies it into its pages
	// and never changes it) and copies the previous one, since cur.value
	// points into the transaction's pages, which the puts below may change.
	switch r.op {
	case opCreate:
		rec = encodeRecord(rev, r.value, false)
		r.event = storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: r.key, Value: rec[recordHeader:], CreateRevision: rev, ModRevision: rev}}
	case opUpdate:
		rec = encodeRecord(cur.create, r.value, false)
		w.meta.held += int64(len(cur.value))
		r.event = storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: r.key, Value: rec[recordHeader:], CreateRevision: cur.create, ModRevision: rev},
			Prev: append([]byte{}, cur.value...)} // non-nil even if empty
	case opDelete:
		rec = encodeRecord(cur.create, nil, true)
		w.meta.held += int64(len(cur.value))
		r.removed = storage.KeyValue{Key: r.key, Value: append([]byte{}, cur.value...), CreateRevision: cur.create, ModRevision: rev}
		r.event = storage.Event{Type: storage.Delete, KeyValue: r.removed, Prev: r.removed.Value}
	}
	if err := w.history.Put(versionKey(r.key, rev), rec); err != nil {
		return err
	}
	if err := w.log.Put(be64(rev), []byte(r.key)); err != nil {
		return err
	}
	w.meta.rev, r.rev = rev, rev
	return nil
}

// bound moves the start of the window forward as far as the history limits
// require.
func (w *writer) bound(history, historyBytes int64) error {
	if w.meta.rev-w.meta.compacted > history {
		if err := w.compact(w.meta.rev - history); err != nil {
			return err
		}
	}
	// One revision at a time: each step drops at least one version.
	for w.meta.held > historyBytes && w.meta.compacted < w.meta.rev-1 {
		if err := w.compact(w.meta.compacted + 1); err != nil {
			return err
		}
	}
	return nil
}

// compact moves the start of the window to c, in (compacted, rev]: it
// drops the log entries up to c and the versions that no read at c or later
// can see. Only the keys written by the revisions leaving the window are
// visited, so the cost is proportional to the history discarded.
//
// No write may follow a compaction in its transaction: the deletions can
// leave pages empty until the commit rebalances them, and bbolt's cursor,
// stepping back into an empty page, finds nothing, so latest would miss a
// live key. Seeking and stepping forward, which compact and prune do, skip
// empty pages.
func (w *writer) compact(c int64) error {
	var leaving [][]byte
	lc := w.log.Cursor()
	for k, v := lc.Seek(be64(w.meta.compacted + 1)); k != nil && unbe64(k) <= c; k, v = lc.Next() {
		leaving = append(leaving, bytes.Clone(k), bytes.Clone(v))
	}
	pruned := map[string]bool{}
	for i := 0; i < len(leaving); i += 2 {
		key := string(leaving[i+1])
		if !pruned[key] {
			pruned[key] = true
			if err := w.prune(key, c); err != nil {
				return err
			}
		}
		if err := w.log.Delete(leaving[i]); err != nil {
			return err
		}
	}
	w.meta.compacted = c
	return nil
}

// prune drops key's versions that no read at c or later can see: all but
// the newest at or below c, and that one too if it is a tombstone. Every
// version dropped was superseded, so its value leaves the held bytes.
func (w *writer) prune(key string, c int64) error {
	type version struct {
		key  []byte
		size int64
	}
	var (
		drop          []version
		newest        version
		newestDeleted bool
	)
	prefix := keyPrefix(key)
	cur := w.history.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		_, r := splitVersionKey(k)
		if r > c {
			break
		}
		rec, err := decodeRecord(r, v)
		if err != nil {
			return err
		}
		if newest.key != nil {
			drop = append(drop, newest)
		}
		newest, newestDeleted = version{bytes.Clone(k), int64(len(rec.value))}, rec.deleted
	}
	if newestDeleted {
		drop = append(drop, newest)
	}
	// Deleting after the scan: bbolt cursors may skip a key after a delete.
	for _, d := range drop {
		if err := w.history.Delete(d.key); err != nil {
			return err
		}
		w.meta.held -= d.size
	}
	return nil
}
