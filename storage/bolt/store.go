package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/groupcommit"
	"github.com/kapi-dev/kapi/storage/internal/watchfeed"
)

const (
	defaultHistory      = 10000
	defaultHistoryBytes = 256 << 20
	// maxBatch bounds the writes one transaction commits, so that a burst
	// of writers is acknowledged in several fsyncs rather than one long one.
	maxBatch = 512
)

// Option configures a [Store].
type Option func(*config)

type config struct {
	history      int64
	historyBytes int64
	lockTimeout  time.Duration

	// For tests of batching: a fixed time commits linger for the writers
	// they expect, and a function called with each batch's size before it
	// commits.
	linger       time.Duration
	beforeCommit func(n int)
}

// WithHistory sets how many revisions of history the store keeps: with the
// store at revision r, reads at revisions r-n and later, and watches from
// them, work; older ones fail with [storage.ErrExpired]. It also bounds how
// far a watcher may fall behind. n below 1 counts as 1; the default is 10000.
// [WithHistoryBytes] may keep the window shorter.
func WithHistory(n int) Option {
	return func(c *config) { c.history = int64(max(n, 1)) }
}

// WithHistoryBytes bounds the bytes of the values the file keeps only for
// history (values since updated or deleted): when a write takes them over
// n, the window moves forward, ahead of [WithHistory]'s count, until they
// fit again. The last write's previous value is always kept, so a watcher
// that has caught up never expires. n below 0 counts as 0; the default is
// 256 MiB.
func WithHistoryBytes(n int64) Option {
	return func(c *config) { c.historyBytes = max(n, 0) }
}

// WithLockTimeout sets how long [Open] waits for another process to release
// the file (bbolt locks it for the life of the store); the default is one
// second.
func WithLockTimeout(d time.Duration) Option {
	return func(c *config) { c.lockTimeout = d }
}

// Store is a [storage.Interface] kept in one bbolt file. Its methods are
// safe for concurrent use. The zero value is not usable: call [Open].
type Store struct {
	db     *bbolt.DB
	config config

	// queue carries writes to the committer goroutine, which owns the
	// write transactions; closing tells it to stop, and it closes
	// committerDone when it has.
	queue         *groupcommit.Queue[*request]
	closing       chan struct{}
	committerDone chan struct{}

	closeMu sync.Mutex
	closed  atomic.Bool

	// changed is closed after the next commit or by Close, waking the
	// watchers that have read everything.
	changed atomic.Pointer[chan struct{}]

	// commits counts the commits, for tests of batching.
	commits atomic.Int64

	// recent holds the last commits' events for watchers; events is the
	// committer's buffer for them.
	recent watchfeed.Recent
	events []storage.Event

	prealloc *prealloc // the committer's; nil if the file refused
}

var _ storage.Interface = (*Store)(nil)

// initialRevision is where a new file starts, as etcd does: no
// resourceVersion is ever "0", which clients send to mean "any".
const initialRevision = 1

// Open opens the store in the bbolt file at path, creating the file if it
// does not exist. Only one Store, in one process, can have a file open at a
// time.
func Open(path string, opts ...Option) (*Store, error) {
	c := config{history: defaultHistory, historyBytes: defaultHistoryBytes, lockTimeout: time.Second}
	for _, opt := range opts {
		opt(&c)
	}
	// As etcd opens its bbolt file on Linux: the freelist is not written
	// with every commit (one page fewer per fsync'd transaction) but
	// rebuilt from the pages when the file is opened. A file written
	// either way opens either way.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:        c.lockTimeout,
		FreelistType:   bbolt.FreelistMapType,
		NoFreelistSync: true,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("bolt: %s is in use by another store: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("bolt: %w", err)
	}
	var (
		m   meta
		hwm int64
	)
	err = db.Update(func(tx *bbolt.Tx) (err error) {
		m, err = initialize(tx)
		hwm = tx.Size()
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("bolt: %s: %w", path, err)
	}
	s := &Store{
		db:            db,
		config:        c,
		closing:       make(chan struct{}),
		committerDone: make(chan struct{}),
	}
	s.queue = groupcommit.New(groupcommit.Config[*request]{
		MaxBatch:    maxBatch,
		Commit:      s.commit,
		AfterAnswer: s.preallocate,
		Linger:      s.lingerFor,
	}, s.closing)
	s.recent.Reset(m.rev, m.compacted)
	s.prealloc = openPrealloc(path, hwm)
	go func() {
		defer close(s.committerDone)
		s.queue.Run()
	}()
	return s, nil
}

// initialize creates the buckets of a new file, or checks an existing
// file's format, and returns its meta.
func initialize(tx *bbolt.Tx) (meta, error) {
	if b := tx.Bucket(metaBucket); b != nil {
		if v := b.Get(formatKey); len(v) != 8 || unbe64(v) != format {
			return meta{}, fmt.Errorf("not a kapi store of format %d (format %x)", format, v)
		}
		return readMeta(tx)
	}
	for _, name := range [][]byte{metaBucket, historyBucket, logBucket} {
		if _, err := tx.CreateBucket(name); err != nil {
			return meta{}, err
		}
	}
	m := meta{rev: initialRevision, compacted: initialRevision}
	return m, errors.Join(tx.Bucket(metaBucket).Put(formatKey, be64(format)), writeMeta(tx, m))
}

// Get returns the key's value at rev (0: the latest).
func (s *Store) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	if err := ctx.Err(); err != nil {
		return storage.KeyValue{}, err
	}
	var kv storage.KeyValue
	err := s.view(func(tx *bbolt.Tx, m meta) error {
		rev, err := readRevision(m, rev)
		if err != nil {
			return err
		}
		rec, ok, err := versionAt(tx.Bucket(historyBucket).Cursor(), keyPrefix(key), rev)
		if err != nil {
			return err
		}
		if !ok || rec.deleted {
			return storage.ErrNotFound
		}
		kv = rec.keyValue(key)
		return nil
	})
	return kv, err
}

// List returns the keys with the given prefix as they were at
// opts.Revision (0: the latest), in key order. A page's Remaining counts
// at most 1,000 keys; a longer rest is -1.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if err := ctx.Err(); err != nil {
		return storage.ListResult{}, err
	}
	var res storage.ListResult
	err := s.view(func(tx *bbolt.Tx, m meta) error {
		rev, err := readRevision(m, opts.Revision)
		if err != nil {
			return err
		}
		res = storage.ListResult{Revision: rev}
		escPrefix := escapeKey(nil, prefix)
		c := tx.Bucket(historyBucket).Cursor()
		k, v := c.Seek(escapeKey(nil, max(prefix, opts.Start)))
		for k != nil && bytes.HasPrefix(k, escPrefix) {
			var (
				rec     record
				kprefix []byte
				ok      bool
			)
			if rec, kprefix, ok, k, v, err = visibleVersion(c, k, v, rev); err != nil {
				return err
			}
			switch {
			case !ok:
			case opts.Limit > 0 && int64(len(res.Items)) == opts.Limit:
				if res.Remaining == storage.RemainingCountCap {
					res.Remaining = -1 // more than the cap: not counted
					return nil
				}
				res.Remaining++
			default:
				res.Items = append(res.Items, rec.keyValue(unescapeKey(kprefix)))
			}
		}
		return nil
	})
	return res, err
}

// versionScan is how many versions of one key List steps through before
// it seeks to the one it wants instead.
const versionScan = 4

// visibleVersion reads the key whose first version the cursor is on (k, v):
// its key prefix, and its version at rev if the key existed then. It leaves
// the cursor on the next key's first version and returns that. The record
// points into the transaction's memory.
func visibleVersion(c *bbolt.Cursor, k, v []byte, rev int64) (rec record, prefix []byte, ok bool, nextK, nextV []byte, err error) {
	prefix, _ = splitVersionKey(k)
	// k points into the file's memory: copy before appending to it.
	prefix = bytes.Clone(prefix)
	found := false
	for steps := 0; k != nil && bytes.HasPrefix(k, prefix); steps++ {
		_, r := splitVersionKey(k)
		if r > rev {
			break
		}
		if steps == versionScan { // a key written often: seek
			if rec, found, err = versionAt(c, prefix, rev); err != nil {
				return rec, nil, false, nil, nil, err
			}
			k, v = c.Next()
			break
		}
		if rec, err = decodeRecord(r, v); err != nil {
			return rec, nil, false, nil, nil, err
		}
		found = true
		k, v = c.Next()
	}
	ok = found && !rec.deleted
	if k != nil && bytes.HasPrefix(k, prefix) { // versions after rev: skip them
		k, v = c.Seek(append(prefix, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF))
	}
	return rec, prefix, ok, k, v, nil
}

// Revision returns the revision of the last write, 1 if there was none.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var rev int64
	err := s.view(func(_ *bbolt.Tx, m meta) error {
		rev = m.rev
		return nil
	})
	return rev, err
}

// Create stores value under key if the key is absent. It returns once the
// write is on disk.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	r, err := s.write(ctx, &request{op: opCreate, key: key, value: value})
	return r.rev, err
}

// Update replaces the value of an existing key, if its ModRevision is
// expect or expect is 0. It returns once the write is on disk.
func (s *Store) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	r, err := s.write(ctx, &request{op: opUpdate, key: key, value: value, expect: expect})
	return r.rev, err
}

// Delete removes an existing key, if its ModRevision is expect or expect
// is 0, and returns the value removed with ModRevision set to the
// deletion's revision. It returns once the deletion is on disk.
func (s *Store) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	r, err := s.write(ctx, &request{op: opDelete, key: key, expect: expect})
	return r.removed, err
}

// Compact discards the history before rev: reads at revisions below it and
// watches from them fail with [storage.ErrExpired] from now on. A rev newer
// than the store's is [storage.ErrFutureRevision]; one at or below an
// earlier compaction changes nothing.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	_, err := s.write(ctx, &request{op: opCompact, expect: rev})
	return err
}

// Close ends every watch with a final [storage.ErrClosed] event, waits for
// the writes under way, and closes the file. Every later call, Close
// included, returns [storage.ErrClosed].
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed.Load() {
		return storage.ErrClosed
	}
	close(s.closing)
	<-s.committerDone
	if s.prealloc != nil {
		s.prealloc.close()
	}
	s.closed.Store(true)
	s.wake()
	return s.db.Close() // waits for the read transactions under way
}

// view runs fn in a read transaction, with the store's meta.
func (s *Store) view(fn func(tx *bbolt.Tx, m meta) error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	err := s.db.View(func(tx *bbolt.Tx) error {
		m, err := readMeta(tx)
		if err != nil {
			return err
		}
		return fn(tx, m)
	})
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return storage.ErrClosed
	}
	return err
}

// readRevision resolves a read's revision (0: the latest) and checks that
// it is in the window.
func readRevision(m meta, rev int64) (int64, error) {
	switch {
	case rev < 0:
		return 0, negativeRevision(rev)
	case rev == 0:
		return m.rev, nil
	case rev > m.rev:
		return 0, fmt.Errorf("%w: revision %d, store at %d", storage.ErrFutureRevision, rev, m.rev)
	case rev < m.compacted:
		return 0, expired(rev, m.compacted)
	}
	return rev, nil
}

func (r record) keyValue(key string) storage.KeyValue {
	return storage.KeyValue{Key: key, Value: bytes.Clone(r.value), CreateRevision: r.create, ModRevision: r.rev}
}

func expired(rev, compacted int64) error {
	return fmt.Errorf("%w: revision %d, history starts at %d", storage.ErrExpired, rev, compacted)
}

func negativeRevision(rev int64) error {
	return fmt.Errorf("bolt: negative revision %d", rev)
}
