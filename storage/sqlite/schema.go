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

func readMeta(ctx context.Context, q querier) (meta, error) {
	var m meta
	var f int64
	err := q.QueryRowContext(ctx, `SELECT format, rev, compacted FROM meta WHERE id = 1`).Scan(&f, &m.rev, &m.compacted)
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

// keyRange is the SQL condition and arguments for the keys from lo
// (inclusive) that begin with prefix.
func keyRange(prefix, lo string) (string, []any) {
	if end, ok := prefixEnd(prefix); ok {
		return "key >= ? AND key < ?", []any{[]byte(lo), []byte(end)}
	}
	return "key >= ?", []any{[]byte(lo)}
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
