package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The file holds three tables:
//
//	meta     one row: the schema's format, the store's revision (that of its
//	         last write) and the start of its history window
//	current  every live key: its value, CreateRevision and ModRevision; a
//	         List at the latest revision is a scan of it in key order
//	log      one row per revision in the window: the key written, what was
//	         done (create, update, delete), the value written (NULL for a
//	         delete), and the version it replaced (value and ModRevision;
//	         NULL and 0 after a create)
//
// Keys are BLOBs, which SQLite compares byte by byte as Go compares
// strings, so key order is Go's and any byte, NUL included, may appear.
//
// Each log row carries the version it replaced, so the rows of the window
// are all that reads at older revisions need: a key's version at revision r
// is the one replaced by its first write after r, or, if it has none, its
// current row. No version older than the window has to be kept, and
// compaction is deleting log rows by revision, nothing else.
const schema = `
CREATE TABLE meta (
	id        INTEGER PRIMARY KEY CHECK (id = 1),
	format    INTEGER NOT NULL,
	rev       INTEGER NOT NULL,
	compacted INTEGER NOT NULL
);
CREATE TABLE current (
	key        BLOB NOT NULL PRIMARY KEY,
	create_rev INTEGER NOT NULL,
	mod_rev    INTEGER NOT NULL,
	value      BLOB NOT NULL
);
CREATE TABLE log (
	rev        INTEGER PRIMARY KEY,
	key        BLOB NOT NULL,
	op         INTEGER NOT NULL,
	create_rev INTEGER NOT NULL,
	value      BLOB,
	prev_rev   INTEGER NOT NULL,
	prev       BLOB
);
CREATE INDEX log_key ON log (key, rev);
`

// format is the schema's version, stored in meta; Open refuses others.
const format = 1

// initialRevision is where a new store starts, as etcd does: no
// resourceVersion is ever "0", which clients send to mean "any".
const initialRevision = 1

// The ops of the log.
const (
	opCreate = 1
	opUpdate = 2
	opDelete = 3
)

// errCorrupt reports a file whose tables disagree with each other.
var errCorrupt = errors.New("sqlite: the file is inconsistent")

// meta is the store's bookkeeping.
type meta struct {
	rev       int64 // revision of the last write
	compacted int64 // oldest revision reads may ask for
}

// querier is what reads need: a connection, a transaction or the pool.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// snapshot is a read transaction whose statements come from the store's
// cache, prepared once per connection rather than once per query.
type snapshot struct {
	tx    *sql.Tx
	cache *stmtCache
}

func (r snapshot) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := r.cache.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return r.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
}

func (r snapshot) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := r.cache.get(ctx, query)
	if err != nil {
		return r.tx.QueryRowContext(ctx, query, args...) // fails the same way
	}
	return r.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

// stmtCache holds the readers' statements, prepared on their pool when
// the store opens: all of them then, since a reader in a transaction that
// prepared one on the pool would want a second connection, and readers
// holding every connection so would wait for each other for ever.
type stmtCache struct {
	m map[string]*sql.Stmt // written before the store is shared
}

func (c *stmtCache) prepare(ctx context.Context, db *sql.DB) error {
	c.m = map[string]*sql.Stmt{}
	for _, q := range readQueries() {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		c.m[q] = st
	}
	return nil
}

func (c *stmtCache) get(_ context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	return nil, fmt.Errorf("sqlite: a query not prepared: %s", query)
}

func (c *stmtCache) close() {
	for _, st := range c.m {
		st.Close()
	}
}

func readMeta(ctx context.Context, q querier) (meta, error) {
	var m meta
	var f int64
	err := q.QueryRowContext(ctx, qMeta).Scan(&f, &m.rev, &m.compacted)
	if errors.Is(err, sql.ErrNoRows) {
		return meta{}, fmt.Errorf("%w: the meta row is missing", errCorrupt)
	}
	if err != nil {
		return meta{}, err
	}
	if f != format {
		return meta{}, fmt.Errorf("not a kapi store of format %d (format %d)", format, f)
	}
	return m, nil
}

// initialize creates the tables of a new file, or checks an existing
// file's format, and returns its meta. It runs in the write connection's
// first transaction.
func initialize(ctx context.Context, conn *sql.Conn) (meta, error) {
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'meta'`).Scan(&n); err != nil {
		return meta{}, err
	}
	if n == 1 {
		return readMeta(ctx, conn)
	}
	var other int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&other); err != nil {
		return meta{}, err
	}
	if other > 0 {
		return meta{}, errors.New("not a kapi store: the database holds other tables")
	}
	if _, err := conn.ExecContext(ctx, schema); err != nil {
		return meta{}, err
	}
	m := meta{rev: initialRevision, compacted: initialRevision}
	_, err := conn.ExecContext(ctx, `INSERT INTO meta (id, format, rev, compacted) VALUES (1, ?, ?, ?)`, format, m.rev, m.compacted)
	return m, err
}

// The readers' queries, prepared when the store opens. cond is a keyRange.
const (
	qMeta    = `SELECT format, rev, compacted FROM meta WHERE id = 1`
	qCurrent = `SELECT create_rev, mod_rev, value FROM current WHERE key = ?`
	// The version of a key that its first write after a revision replaced.
	qVersionAfter = `SELECT op, create_rev, prev_rev, prev FROM log WHERE key = ? AND rev > ? ORDER BY rev LIMIT 1`
)

func qCurrentRange(cond string) string {
	return `SELECT key, create_rev, mod_rev, value FROM current WHERE ` + cond + ` ORDER BY key`
}

// qCount counts the keys in range up to a limit, its last argument.
func qCount(cond string) string {
	return `SELECT count(*) FROM (SELECT 1 FROM current WHERE ` + cond + ` LIMIT ?)`
}

func qKeys(cond string) string { return `SELECT key FROM current WHERE ` + cond }

// qFirstChanges: the first write after a revision of each key in range.
func qFirstChanges(cond string) string {
	return `SELECT key, op, create_rev, prev_rev, prev FROM log WHERE rev IN (
		SELECT min(rev) FROM log WHERE rev > ? AND ` + cond + ` GROUP BY key) ORDER BY key`
}

// qLogRange: a watcher's read of the log.
func qLogRange(cond string) string {
	return `SELECT rev, key, op, create_rev, value, prev_rev, prev FROM log
		WHERE rev >= ? AND rev <= ? AND ` + cond + ` ORDER BY rev LIMIT ?`
}

// readQueries lists every query the readers make.
func readQueries() []string {
	q := []string{qMeta, qCurrent, qVersionAfter}
	for _, cond := range []string{condBounded, condFrom} {
		q = append(q, qCurrentRange(cond), qCount(cond), qKeys(cond), qFirstChanges(cond), qLogRange(cond))
	}
	return q
}

const (
	condBounded = "key >= ? AND key < ?"
	condFrom    = "key >= ?"
)

// keyRange is the SQL condition and arguments for the keys from lo
// (inclusive) that begin with prefix.
func keyRange(prefix, lo string) (string, []any) {
	if end, ok := prefixEnd(prefix); ok {
		return condBounded, []any{[]byte(lo), []byte(end)}
	}
	return condFrom, []any{[]byte(lo)}
}

// prefixEnd is the first key after every key that begins with prefix;
// false if there is none (the prefix is empty or all 0xFF).
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xFF {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
