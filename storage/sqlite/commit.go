package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/groupcommit"
)

// Writes are serialised and group-committed (storage/internal/groupcommit):
// every write is a request to one goroutine, the committer, which owns the
// file's one write connection and applies all the requests waiting when it
// begins a transaction in that one transaction, so N concurrent writers
// share one commit (and its fsync) instead of queueing for N. No other connection writes, so no writer ever
// meets SQLITE_BUSY: SQLite's write lock is never contended. A request whose
// precondition fails is answered so and changes nothing; the others in its
// transaction go ahead.
//
// Compaction has two halves. Moving the start of the window is bookkeeping
// in the meta row, done in the transaction of the write that moves it (or
// of Compact): from that commit on, reads below it fail with ErrExpired.
// Deleting the log rows that left the window is done afterwards: two rows
// for each write in a batch's transaction (which keeps up with the window,
// one revision per write), and purgeChunk rows in transactions of its own
// while no writer is waiting, so that no write waits for more than a small
// delete (a write arriving meanwhile waits for one chunk).

// defaultPurgeChunk is the most log rows a transaction of the purge's own
// deletes.
const defaultPurgeChunk = 64

// opCompact is a request's op for Compact (the log's ops are the others).
const opCompact = 4

type request struct {
	op     int64
	key    string
	value  []byte
	expect int64 // Update and Delete: the precondition; Compact: the revision

	// Set by the committer before it closes done.
	rev     int64
	removed storage.KeyValue
	err     error
	event   storage.Event // the change made, if any, for watchers
}

// write hands r to the committer and waits until it is committed. Once
// handed over, a write is waited for even if ctx ends, so that its error
// says whether it happened.
func (s *Store) write(ctx context.Context, r *request) (*request, error) {
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if r.op != opCompact && len(r.key) > maxKeyLen {
		return r, fmt.Errorf("%w: sqlite: key of %d bytes, the most is %d", storage.ErrTooLarge, len(r.key), maxKeyLen)
	}
	if r.op != opCompact && len(r.value) > maxValueLen {
		return r, fmt.Errorf("%w: sqlite: value of %d bytes, the most is %d", storage.ErrTooLarge, len(r.value), maxValueLen)
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

// committer is the committer goroutine's state: the write connection, its
// statements, and the store's bookkeeping as of the last commit.
type committer struct {
	conn  *sql.Conn
	stmts struct {
		get, insertCurrent, updateCurrent, deleteCurrent, insertLog, setMeta, purge *sql.Stmt
	}
	meta meta
	// unsure: a commit failed and the bookkeeping could not be read back
	// from the file since.
	unsure bool
	// purged: the log rows at or below it are deleted (those between it and
	// meta.compacted are still to be).
	purged int64
	// sizes holds the bytes of values of the log rows in the window,
	// revisions meta.compacted+1 to meta.rev; held is their sum.
	sizes []int64
	held  int64
	// purging: the purge may go on between writes; a failed commit stops
	// it until a write commits. events is the buffer of a commit's events.
	purging bool
	events  []storage.Event
}

// openCommitter opens the file and prepares the committer: it creates the
// tables of a new file, and reads the bookkeeping of an existing one.
func (s *Store) openCommitter() (*committer, error) {
	if err := s.openDBs(); err != nil {
		return nil, err
	}
	ctx := context.Background()
	conn, err := s.writeDB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	c := &committer{conn: conn, purging: true}
	err = c.inTransaction(ctx, func() (err error) {
		if c.meta, err = initialize(ctx, conn); err != nil {
			return err
		}
		return c.load(ctx)
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&c.stmts.get, `SELECT create_rev, mod_rev, value FROM current WHERE key = ?`},
		{&c.stmts.insertCurrent, `INSERT INTO current (key, create_rev, mod_rev, value) VALUES (?, ?, ?, ?)`},
		{&c.stmts.updateCurrent, `UPDATE current SET mod_rev = ?, value = ? WHERE key = ?`},
		{&c.stmts.deleteCurrent, `DELETE FROM current WHERE key = ?`},
		{&c.stmts.insertLog, `INSERT INTO log (rev, key, op, create_rev, value, prev_rev, prev) VALUES (?, ?, ?, ?, ?, ?, ?)`},
		{&c.stmts.setMeta, `UPDATE meta SET rev = ?, compacted = ? WHERE id = 1`},
		{&c.stmts.purge, `DELETE FROM log WHERE rev > ? AND rev <= ?`},
	} {
		if *p.dst, err = conn.PrepareContext(ctx, p.sql); err != nil {
			c.close()
			return nil, err
		}
	}
	s.rev.Store(c.meta.rev)
	s.held.Store(c.held)
	s.window.Store(int64(len(c.sizes)))
	s.recent.Reset(c.meta.rev, c.meta.compacted)
	return c, nil
}

// load reads the bookkeeping kept in memory: how far the log is purged, and
// the sizes of the rows in the window, which must be every revision in it.
func (c *committer) load(ctx context.Context) error {
	var first sql.NullInt64
	if err := c.conn.QueryRowContext(ctx, `SELECT min(rev) FROM log`).Scan(&first); err != nil {
		return err
	}
	c.purged = c.meta.compacted
	if first.Valid {
		c.purged = min(first.Int64-1, c.meta.compacted)
	}
	rows, err := c.conn.QueryContext(ctx, `SELECT rev, coalesce(length(value), 0) + coalesce(length(prev), 0) FROM log WHERE rev > ? ORDER BY rev`, c.meta.compacted)
	if err != nil {
		return err
	}
	defer rows.Close()
	want := c.meta.compacted + 1
	for rows.Next() {
		var rev, size int64
		if err := rows.Scan(&rev, &size); err != nil {
			return err
		}
		if rev != want {
			return fmt.Errorf("%w: the log has revision %d, want %d", errCorrupt, rev, want)
		}
		c.sizes = append(c.sizes, size)
		c.held += size
		want++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if want != c.meta.rev+1 {
		return fmt.Errorf("%w: the log ends at %d, the store at %d", errCorrupt, want-1, c.meta.rev)
	}
	return nil
}

func (c *committer) close() {
	for _, st := range []*sql.Stmt{c.stmts.get, c.stmts.insertCurrent, c.stmts.updateCurrent, c.stmts.deleteCurrent, c.stmts.insertLog, c.stmts.setMeta, c.stmts.purge} {
		if st != nil {
			st.Close()
		}
	}
	c.conn.Close()
}

// inTransaction runs fn in a write transaction: committed if fn returns
// nil, rolled back otherwise.
func (c *committer) inTransaction(ctx context.Context, fn func() error) error {
	if _, err := c.conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	err := fn()
	if err == nil {
		if _, err = c.conn.ExecContext(ctx, `COMMIT`); err == nil {
			return nil
		}
	}
	// A failed COMMIT may have rolled back already; then this fails, and
	// says nothing new.
	_, _ = c.conn.ExecContext(ctx, `ROLLBACK`)
	return err
}

// commit applies batch in one transaction, with a chunk of the log's
// purge, and sets each request's outcome for the caller to answer. After
// the commit it hands the events to the watchers. It returns whether the
// transaction committed.
func (s *Store) commit(c *committer, batch []*request) bool {
	ctx := context.Background()
	if c.unsure && !s.reload(c) {
		err := fmt.Errorf("%w: sqlite: the file cannot be read after a failed commit", storage.ErrUnavailable)
		for _, r := range batch {
			r.rev, r.removed, r.err, r.event = 0, storage.KeyValue{}, err, storage.Event{}
		}
		return false
	}
	start := time.Now()
	t := txn{c: c, meta: c.meta, sizes: c.sizes, held: c.held}
	err := c.inTransaction(ctx, func() error {
		for _, r := range batch {
			if err := t.apply(ctx, r); err != nil {
				return err
			}
		}
		t.bound(s.config.history, s.config.historyBytes)
		// A batch of writes deletes two rows for each of its writes, which
		// keeps up with the window they move (one row each) and costs them
		// time in proportion to their own; a transaction of the purge's own,
		// between writes, deletes a chunk.
		chunk := s.config.purgeChunk
		if len(batch) > 0 {
			chunk = 2 * int64(len(batch))
		}
		if err := t.purge(ctx, chunk); err != nil {
			return err
		}
		if t.meta == c.meta {
			return nil
		}
		_, err := c.stmts.setMeta.ExecContext(ctx, t.meta.rev, t.meta.compacted)
		return err
	})
	if took := time.Since(start); int64(took) > s.longest.Load() {
		s.longest.Store(int64(took))
	}
	if err != nil {
		err = commitError(err)
		for _, r := range batch {
			r.rev, r.removed, r.err, r.event = 0, storage.KeyValue{}, err, storage.Event{}
		}
		s.reload(c)
		return false
	}
	s.commits.Add(1)
	s.purgedTotal.Add(t.purged - c.purged)
	if int64(t.took) > s.longestPurge.Load() {
		s.longestPurge.Store(int64(t.took))
	}
	// Trimmed before c.meta moves: t.base() is c.meta.compacted.
	c.sizes = t.sizes[t.meta.compacted-t.base():]
	if len(c.sizes) == 0 {
		c.sizes = nil // let the array go
	}
	c.meta, c.purged, c.held = t.meta, t.purged, t.held
	s.held.Store(c.held)
	s.window.Store(int64(len(c.sizes)))
	events := c.events[:0]
	for _, r := range batch {
		if r.rev != 0 && r.op != opCompact {
			events = append(events, r.event)
			r.event = storage.Event{}
		}
	}
	s.rev.Store(c.meta.rev)
	s.recent.Add(events, c.meta.rev, c.meta.compacted)
	clear(events)
	c.events = events
	s.wake()
	return true
}

// reload reads the committer's bookkeeping from the file again after a
// failed commit, which may have reached the file all the same (an fsync
// that failed). If it did, the watchers find its events in the log.
// It returns false if the file cannot tell now; the committer then tries
// again before its next commit, and keeps its bookkeeping meanwhile.
func (s *Store) reload(c *committer) bool {
	ctx := context.Background()
	before, sizes, held := c.meta, c.sizes, c.held
	c.sizes, c.held = nil, 0
	err := c.inTransaction(ctx, func() (err error) {
		if c.meta, err = readMeta(ctx, c.conn); err != nil {
			return err
		}
		return c.load(ctx)
	})
	if err != nil {
		c.meta, c.sizes, c.held = before, sizes, held
		c.unsure = true
		return false
	}
	c.unsure = false
	s.held.Store(c.held)
	s.window.Store(int64(len(c.sizes)))
	if c.meta != before {
		s.rev.Store(c.meta.rev)
		s.recent.Reset(c.meta.rev, c.meta.compacted)
		s.wake()
	}
	return true
}

// commitError classifies the failure of a commit: a full disk writes
// nothing; another fault of the file (an I/O error, most likely in the
// WAL's fsync) may leave the write on disk all the same.
func commitError(err error) error {
	fault := faultOf(err)
	switch {
	case errors.Is(err, sql.ErrConnDone):
		return storage.ErrClosed
	case fault == nil:
		return fmt.Errorf("sqlite: commit: %w", err)
	case errors.Is(fault, storage.ErrNoSpace), errors.Is(fault, storage.ErrTooLarge):
		return fmt.Errorf("%w: sqlite: commit: %w", fault, err)
	}
	return fmt.Errorf("%w: sqlite: commit: %w (%w)", fault, err, storage.ErrOutcomeUnknown)
}

// txn is one transaction's changes to the committer's bookkeeping, adopted
// only if it commits.
type txn struct {
	c      *committer
	meta   meta
	sizes  []int64 // revisions c.meta.compacted+1 to meta.rev
	held   int64
	purged int64
	took   time.Duration // the purge's DELETE
}

// base is the revision of sizes[0], less one.
func (t *txn) base() int64 { return t.c.meta.compacted }

// apply makes one request. A failed precondition is the request's error,
// and changes nothing; a returned error fails the transaction.
func (t *txn) apply(ctx context.Context, r *request) error {
	if r.op == opCompact {
		switch {
		case r.expect > t.meta.rev:
			r.err = fmt.Errorf("%w: compact at %d, store at %d", storage.ErrFutureRevision, r.expect, t.meta.rev)
		case r.expect > t.meta.compacted:
			t.compact(r.expect)
		}
		return nil
	}
	var (
		create, mod int64
		cur         []byte
	)
	key := []byte(r.key)
	err := t.c.stmts.get.QueryRowContext(ctx, key).Scan(&create, &mod, &cur)
	live := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	switch {
	case r.op == opCreate && live:
		r.err = storage.ErrExists
		return nil
	case r.op != opCreate && !live:
		r.err = storage.ErrNotFound
		return nil
	case r.op != opCreate && r.expect != 0 && r.expect != mod:
		r.err = storage.ErrConflict
		return nil
	}
	rev := t.meta.rev + 1
	value := nonNil(r.value) // NULL is for deletions
	switch r.op {
	case opCreate:
		_, err = t.c.stmts.insertCurrent.ExecContext(ctx, key, rev, rev, value)
		if err == nil {
			_, err = t.c.stmts.insertLog.ExecContext(ctx, rev, key, opCreate, rev, value, 0, nil)
		}
		r.event = storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: r.key, Value: value, CreateRevision: rev, ModRevision: rev}}
	case opUpdate:
		cur = nonNil(cur)
		_, err = t.c.stmts.updateCurrent.ExecContext(ctx, rev, value, key)
		if err == nil {
			_, err = t.c.stmts.insertLog.ExecContext(ctx, rev, key, opUpdate, create, value, mod, cur)
		}
		r.event = storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: r.key, Value: value, CreateRevision: create, ModRevision: rev}, Prev: cur}
	case opDelete:
		cur = nonNil(cur)
		value = nil
		_, err = t.c.stmts.deleteCurrent.ExecContext(ctx, key)
		if err == nil {
			_, err = t.c.stmts.insertLog.ExecContext(ctx, rev, key, opDelete, create, nil, mod, cur)
		}
		r.removed = storage.KeyValue{Key: r.key, Value: cur, CreateRevision: create, ModRevision: rev}
		r.event = storage.Event{Type: storage.Delete, KeyValue: r.removed, Prev: cur}
	}
	if err != nil {
		return err
	}
	size := int64(len(value) + len(cur))
	t.sizes = append(t.sizes, size)
	t.held += size
	t.meta.rev, r.rev = rev, rev
	return nil
}

// compact moves the start of the window to c, in (compacted, rev]. The
// rows that left it are deleted later, by purge.
func (t *txn) compact(c int64) {
	for r := t.meta.compacted + 1; r <= c; r++ {
		t.held -= t.sizes[r-1-t.base()]
	}
	t.meta.compacted = c
}

// bound moves the start of the window forward as far as the history limits
// require.
func (t *txn) bound(history, historyBytes int64) {
	if t.meta.rev-t.meta.compacted > history {
		t.compact(t.meta.rev - history)
	}
	c := t.meta.compacted
	held := t.held
	for held > historyBytes && c < t.meta.rev-1 {
		c++
		held -= t.sizes[c-1-t.base()]
	}
	if c > t.meta.compacted {
		t.compact(c)
	}
}

// purge deletes up to chunk of the log rows that have left the window.
func (t *txn) purge(ctx context.Context, chunk int64) error {
	t.purged = t.c.purged
	to := min(t.meta.compacted, t.purged+chunk)
	if to <= t.purged {
		return nil
	}
	start := time.Now()
	if _, err := t.c.stmts.purge.ExecContext(ctx, t.purged, to); err != nil {
		return err
	}
	t.took = time.Since(start)
	t.purged = to
	return nil
}
