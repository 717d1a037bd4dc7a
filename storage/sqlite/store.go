package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	_ "modernc.org/sqlite" // the driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/groupcommit"
	"github.com/kapi-dev/kapi/storage/internal/watchfeed"
)

const (
	defaultHistory      = 10000
	defaultHistoryBytes = 256 << 20
	// maxBatch bounds the writes one transaction commits, so that a burst
	// of writers is acknowledged in several commits rather than one long
	// one.
	maxBatch = 512
	// maxKeyLen and maxValueLen keep a log row, which holds a value and
	// the one it replaced, well under SQLite's limit of a billion bytes.
	maxKeyLen   = 64 << 10
	maxValueLen = 256 << 20
	// busyTimeout is how long a reader waits for a lock SQLite holds for a
	// moment (while a checkpoint resets the WAL, say) before giving up.
	busyTimeout = 5000 // milliseconds
)

// Option configures a [Store].
type Option func(*config)

type config struct {
	history      int64
	historyBytes int64
	synchronous  string
	purgeChunk   int64
	writePragmas []string // for tests: more pragmas of the write connection
}

// WithHistory sets how many revisions of history the store keeps: with the
// store at revision r, reads at revisions r-n and later, and watches from
// them, work; older ones fail with [storage.ErrExpired]. It also bounds how
// far a watcher may fall behind. n below 1 counts as 1; the default is
// 10000, as the other backends'. [WithHistoryBytes] may keep the window
// shorter.
func WithHistory(n int) Option {
	return func(c *config) { c.history = int64(max(n, 1)) }
}

// WithHistoryBytes bounds the bytes of values the history keeps (each
// write's value and the value it replaced): when a write takes them over n,
// the window moves forward, ahead of [WithHistory]'s count, until they fit
// again. The last write is always kept, so a watcher that has caught up
// never expires. n below 0 counts as 0; the default is 256 MiB.
func WithHistoryBytes(n int64) Option {
	return func(c *config) { c.historyBytes = max(n, 0) }
}

// Store is a [storage.Interface] kept in one SQLite file. Its methods are
// safe for concurrent use. The zero value is not usable: call [Open].
type Store struct {
	path   string
	config config
	lock   *os.File // held for the life of the store: one process per file

	// writeDB has one connection, the committer's; readDB is the readers'
	// pool, whose connections refuse to write.
	writeDB *sql.DB
	readDB  *sql.DB
	stmts   stmtCache // the readers'

	// queue carries writes to the committer goroutine, which owns the
	// write connection; closing tells it to stop, and it closes
	// committerDone when it has.
	queue         *groupcommit.Queue[*request]
	closing       chan struct{}
	committerDone chan struct{}

	closeMu sync.Mutex
	closed  atomic.Bool

	// rev is the revision of the last commit, set before its writers are
	// answered.
	rev atomic.Int64

	// changed is closed after the next commit or by Close, waking the
	// watchers that have read everything.
	changed atomic.Pointer[chan struct{}]

	// recent holds the last commits' events for watchers.
	recent watchfeed.Recent

	// For tests and measurements: commits made, the longest commit, the
	// log rows purged and the longest purge (its DELETE).
	commits      atomic.Int64
	longest      atomic.Int64 // nanoseconds
	purgedTotal  atomic.Int64
	longestPurge atomic.Int64 // nanoseconds
	// The committer's count of the log's bytes in the window, and of the
	// revisions it has their sizes of, as of the last commit.
	held, window atomic.Int64
}

var _ storage.Interface = (*Store)(nil)

// Open opens the store in the SQLite file at path, creating the file if it
// does not exist. Only one Store, in one process, can have a file open at a
// time: Open takes a lock on path+"-lock" and fails at once if another
// store holds it.
func Open(path string, opts ...Option) (*Store, error) {
	c := config{history: defaultHistory, historyBytes: defaultHistoryBytes, synchronous: "FULL", purgeChunk: defaultPurgeChunk}
	for _, opt := range opts {
		opt(&c)
	}
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite: %q: a path with '?' is not supported", path)
	}
	lock, err := lockFile(path + "-lock")
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	s := &Store{
		path:          path,
		config:        c,
		lock:          lock,
		closing:       make(chan struct{}),
		committerDone: make(chan struct{}),
	}
	w, err := s.openCommitter()
	if err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	if err := s.prepareReads(); err != nil {
		w.close()
		s.closeDBs()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	s.queue = groupcommit.New(groupcommit.Config[*request]{
		MaxBatch: maxBatch,
		Commit:   func(batch []*request) { w.purging = s.commit(w, batch) },
		// Rows to delete: only while no writer waits, and after a failure
		// not again until a write commits.
		Pending: func() bool { return w.purged < w.meta.compacted && w.purging },
		Idle:    func() { w.purging = s.commit(w, nil) },
	}, s.closing)
	go func() {
		defer close(s.committerDone)
		defer w.close()
		s.queue.Run()
	}()
	return s, nil
}

// dsn is the data source name of a connection to path with the given
// pragmas, busy_timeout first.
func dsn(path string, pragmas ...string) string {
	var b strings.Builder
	b.WriteString(path)
	b.WriteString("?_pragma=busy_timeout(" + fmt.Sprint(busyTimeout) + ")")
	for _, p := range pragmas {
		b.WriteString("&_pragma=" + p)
	}
	return b.String()
}

// openDBs opens the write connection and the readers' pool.
func (s *Store) openDBs() error {
	var err error
	// The write connection sets the file to WAL, where readers never wait
	// for the writer nor it for them.
	s.writeDB, err = sql.Open("sqlite", dsn(s.path, append([]string{"journal_mode(WAL)", "synchronous(" + s.config.synchronous + ")"}, s.config.writePragmas...)...))
	if err != nil {
		return err
	}
	s.writeDB.SetMaxOpenConns(1)
	s.writeDB.SetMaxIdleConns(1)
	s.writeDB.SetConnMaxLifetime(0)
	s.writeDB.SetConnMaxIdleTime(0)
	s.readDB, err = sql.Open("sqlite", dsn(s.path, "query_only(1)"))
	if err != nil {
		return err
	}
	readers := max(4, 2*runtime.GOMAXPROCS(0))
	s.readDB.SetMaxOpenConns(readers)
	s.readDB.SetMaxIdleConns(readers)
	return nil
}

// prepareReads prepares the readers' statements, once the file has its
// tables.
func (s *Store) prepareReads() error {
	return s.stmts.prepare(context.Background(), s.readDB)
}

// closeDBs closes what Open opened, the lock last.
func (s *Store) closeDBs() error {
	var errs []error
	s.stmts.close()
	for _, db := range []*sql.DB{s.readDB, s.writeDB} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	errs = append(errs, s.lock.Close()) // releases the lock
	return errors.Join(errs...)
}

// Get returns the key's value at rev (0: the latest).
func (s *Store) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	if err := s.check(ctx, rev); err != nil {
		return storage.KeyValue{}, err
	}
	if rev == 0 { // one statement: its own snapshot
		st, err := s.stmts.get(ctx, qCurrent)
		if err != nil {
			return storage.KeyValue{}, s.readError(err)
		}
		kv, err := scanCurrent(st.QueryRowContext(ctx, []byte(key)), key)
		return kv, s.readError(err)
	}
	var kv storage.KeyValue
	err := s.view(ctx, func(tx snapshot, m meta) error {
		r, err := readRevision(m, rev)
		if err != nil {
			return err
		}
		if r == m.rev {
			kv, err = getCurrent(ctx, tx, key)
			return err
		}
		// The version r sees is the one the key's first write after r
		// replaced, if it was written since.
		var (
			op, create, prevRev int64
			prev                []byte
		)
		err = tx.QueryRowContext(ctx, qVersionAfter,
			[]byte(key), r).Scan(&op, &create, &prevRev, &prev)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			kv, err = getCurrent(ctx, tx, key)
			return err
		case err != nil:
			return err
		case op == opCreate:
			return storage.ErrNotFound
		}
		kv = storage.KeyValue{Key: key, Value: nonNil(prev), CreateRevision: create, ModRevision: prevRev}
		return nil
	})
	return kv, err
}

func getCurrent(ctx context.Context, q querier, key string) (storage.KeyValue, error) {
	return scanCurrent(q.QueryRowContext(ctx, qCurrent, []byte(key)), key)
}

func scanCurrent(row *sql.Row, key string) (storage.KeyValue, error) {
	kv := storage.KeyValue{Key: key}
	err := row.Scan(&kv.CreateRevision, &kv.ModRevision, &kv.Value)
	if errors.Is(err, sql.ErrNoRows) {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	kv.Value = nonNil(kv.Value)
	return kv, err
}

// List returns the keys with the given prefix as they were at
// opts.Revision (0: the latest), in key order.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if err := s.check(ctx, opts.Revision); err != nil {
		return storage.ListResult{}, err
	}
	var res storage.ListResult
	err := s.view(ctx, func(tx snapshot, m meta) error {
		rev, err := readRevision(m, opts.Revision)
		if err != nil {
			return err
		}
		res, err = list(ctx, tx, prefix, opts, rev, rev < m.rev)
		return err
	})
	return res, err
}

// list reads a page at rev. If the keys were written since (older), the
// versions rev sees of the keys written after it are those their first
// writes after it replaced, merged in key order with the current rows of
// the keys not written since.
func list(ctx context.Context, tx querier, prefix string, opts storage.ListOptions, rev int64, older bool) (storage.ListResult, error) {
	res := storage.ListResult{Revision: rev}
	cond, args := keyRange(prefix, max(prefix, opts.Start))
	var (
		changed map[string]bool    // keys written after rev
		before  []storage.KeyValue // their versions at rev, in key order
	)
	if older {
		changed = map[string]bool{}
		rows, err := tx.QueryContext(ctx, qFirstChanges(cond), append([]any{rev}, args...)...)
		if err != nil {
			return res, err
		}
		for rows.Next() {
			var (
				key  []byte
				op   int64
				kv   storage.KeyValue
				prev []byte
			)
			if err := rows.Scan(&key, &op, &kv.CreateRevision, &kv.ModRevision, &prev); err != nil {
				rows.Close()
				return res, err
			}
			kv.Key = string(key)
			changed[kv.Key] = true
			if op != opCreate {
				kv.Value = nonNil(prev)
				before = append(before, kv)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return res, err
		}
	}
	add := func(kv storage.KeyValue) {
		if opts.Limit > 0 && int64(len(res.Items)) >= opts.Limit {
			res.Remaining++
			return
		}
		res.Items = append(res.Items, kv)
	}
	full := func() bool { return opts.Limit > 0 && int64(len(res.Items)) >= opts.Limit }
	rows, err := tx.QueryContext(ctx, qCurrentRange(cond), args...)
	if err != nil {
		return res, err
	}
	var resume []byte // the first current key past a full page
	for rows.Next() {
		var (
			key []byte
			kv  storage.KeyValue
		)
		if err := rows.Scan(&key, &kv.CreateRevision, &kv.ModRevision, &kv.Value); err != nil {
			rows.Close()
			return res, err
		}
		for len(before) > 0 && before[0].Key < string(key) {
			add(before[0])
			before = before[1:]
		}
		if changed[string(key)] {
			continue
		}
		if full() {
			resume = key
			break
		}
		kv.Key, kv.Value = string(key), nonNil(kv.Value)
		add(kv)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return res, err
	}
	if resume != nil { // count the rest of the current keys, not their values
		n, err := countFrom(ctx, tx, prefix, resume, changed)
		if err != nil {
			return res, err
		}
		res.Remaining += n
	}
	for _, kv := range before {
		add(kv)
	}
	if res.Remaining > storage.RemainingCountCap {
		res.Remaining = -1 // more than the cap: not counted
	}
	return res, nil
}

// countFrom counts the current keys from start on that begin with prefix
// and are not in skip, up to one more than storage.RemainingCountCap.
func countFrom(ctx context.Context, tx querier, prefix string, start []byte, skip map[string]bool) (int64, error) {
	cond, args := keyRange(prefix, string(start))
	if len(skip) == 0 {
		var n int64
		err := tx.QueryRowContext(ctx, qCount(cond), append(args, storage.RemainingCountCap+1)...).Scan(&n)
		return n, err
	}
	rows, err := tx.QueryContext(ctx, qKeys(cond), args...)
	if err != nil {
		return 0, err
	}
	var n int64
	for n <= storage.RemainingCountCap && rows.Next() {
		var key []byte
		if err := rows.Scan(&key); err != nil {
			rows.Close()
			return 0, err
		}
		if !skip[string(key)] {
			n++
		}
	}
	return n, errors.Join(rows.Err(), rows.Close())
}

// Revision returns the revision of the last write, 1 if there was none.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	if err := s.check(ctx, 0); err != nil {
		return 0, err
	}
	return s.rev.Load(), nil
}

// Create stores value under key if the key is absent. It returns once the
// write is committed.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	r, err := s.write(ctx, &request{op: opCreate, key: key, value: value})
	return r.rev, err
}

// Update replaces the value of an existing key, if its ModRevision is
// expect or expect is 0. It returns once the write is committed.
func (s *Store) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	r, err := s.write(ctx, &request{op: opUpdate, key: key, value: value, expect: expect})
	return r.rev, err
}

// Delete removes an existing key, if its ModRevision is expect or expect
// is 0, and returns the value removed with ModRevision set to the
// deletion's revision. It returns once the deletion is committed.
func (s *Store) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	r, err := s.write(ctx, &request{op: opDelete, key: key, expect: expect})
	return r.removed, err
}

// Compact discards the history before rev: reads at revisions below it and
// watches from them fail with [storage.ErrExpired] from now on. A rev newer
// than the store's is [storage.ErrFutureRevision]; one at or below an
// earlier compaction changes nothing. The log rows are deleted afterwards,
// a few hundred at a time, between the writes.
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
	s.closed.Store(true)
	s.wake()
	return s.closeDBs() // waits for the reads under way
}

// check fails a call on a closed store, with an ended context or with a
// negative revision.
func (s *Store) check(ctx context.Context, rev int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if rev < 0 {
		return negativeRevision(rev)
	}
	return nil
}

// view runs fn in a read transaction, one snapshot of the file, with the
// store's meta as of it.
func (s *Store) view(ctx context.Context, fn func(tx snapshot, m meta) error) error {
	tx, err := s.readDB.BeginTx(ctx, nil)
	if err != nil {
		return s.readError(err)
	}
	defer tx.Rollback()
	snap := snapshot{tx: tx, cache: &s.stmts}
	m, err := readMeta(ctx, snap)
	if err != nil {
		return s.readError(err)
	}
	return s.readError(fn(snap, m))
}

// readError classifies an error of a read: the storage sentinels pass, a
// closed store is ErrClosed, SQLite's faults are the storage faults.
func (s *Store) readError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrConnDone), err.Error() == "sql: database is closed":
		if s.closed.Load() {
			return storage.ErrClosed
		}
	}
	if isSentinel(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if fault := faultOf(err); fault != nil {
		return fmt.Errorf("%w: sqlite: %w", fault, err)
	}
	return fmt.Errorf("sqlite: %w", err)
}

func isSentinel(err error) bool {
	for _, s := range []error{storage.ErrNotFound, storage.ErrExpired, storage.ErrFutureRevision, storage.ErrClosed} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// faultOf classifies an SQLite error as one of the storage faults, or nil
// if it is none.
func faultOf(err error) error {
	var se interface{ Code() int } // *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code() & 0xFF { // the primary code of an extended one
	case sqlite3.SQLITE_FULL:
		return storage.ErrNoSpace
	case sqlite3.SQLITE_TOOBIG:
		return storage.ErrTooLarge
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return storage.ErrTimeout
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_PROTOCOL:
		return storage.ErrUnavailable
	}
	return nil
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

func expired(rev, compacted int64) error {
	return fmt.Errorf("%w: revision %d, history starts at %d", storage.ErrExpired, rev, compacted)
}

func negativeRevision(rev int64) error {
	return fmt.Errorf("sqlite: negative revision %d", rev)
}

// nonNil is b, or an empty slice for nil: SQLite gives an empty BLOB back
// as nil, and a value, even an empty one, is never nil.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
