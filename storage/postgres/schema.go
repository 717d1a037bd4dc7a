package postgres

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
)

// statements are the SQL the store runs, with its schema's name in them.
type statements struct {
	schema []string // creates the tables, idempotently
	// channel is the LISTEN/NOTIFY channel of the schema, quoted.
	channel, channelName string

	window     string // the store's revision and the start of its window
	getLatest  string
	getAt      string
	listLatest string
	listAt     string

	lockRevision  string
	readCurrent   string
	writeBatch    string
	nextRevisions string
	// The test switch's sequence, its revisions.
	createSequence string

	pollLog   string
	watchLog  string
	compactTo string
	lockPrune string
	prune     string
	setPruned string

	lease leaseStatements // lease.go's
}

// The tables (see doc.go):
//
//   - revision: one row, the store's revision, which every write
//     transaction increments under the row's lock.
//   - compaction: one row, the start of the history window (compacted) and
//     how far the log has been pruned to it (pruned).
//   - current: the latest version of every live key: a List at the
//     latest revision is a scan of it.
//   - log: every version a read or watch in the window may need, keyed by
//     the revision that wrote it: values, tombstones (value NULL), the
//     key's creation and the revision of the version it replaced.
//
// Keys are bytea, so that they compare byte by byte as Go strings do,
// whatever the database's collation, and may hold any byte.
func newStatements(schema string, unordered bool) statements {
	q := func(table string) string { return pgx.Identifier{schema, table}.Sanitize() }
	revision, compaction, current, log := q("revision"), q("compaction"), q("current"), q("log")
	// A channel name is an identifier, at most 63 bytes: a long schema's
	// is a hash of its name (schemas that share one only wake each
	// other's pollers for nothing).
	channelName := "kapi." + schema
	if len(channelName) > 63 {
		h := fnv.New64a()
		h.Write([]byte(schema))
		channelName = fmt.Sprintf("kapi.%016x", h.Sum64())
	}
	st := statements{
		channel:     pgx.Identifier{channelName}.Sanitize(),
		channelName: channelName,
	}
	st.schema = []string{
		fmt.Sprintf(`CREATE SCHEMA IF NOT EXISTS %s`, pgx.Identifier{schema}.Sanitize()),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (one boolean PRIMARY KEY DEFAULT true CHECK (one), rev bigint NOT NULL)`, revision),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (one boolean PRIMARY KEY DEFAULT true CHECK (one), compacted bigint NOT NULL, pruned bigint NOT NULL)`, compaction),
		// Room in each page for the new version of an updated row, so
		// that updates, which change no indexed column, stay on the page.
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (key bytea PRIMARY KEY, value bytea NOT NULL, create_rev bigint NOT NULL, mod_rev bigint NOT NULL) WITH (fillfactor = 80)`, current),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (rev bigint PRIMARY KEY, key bytea NOT NULL, value bytea, create_rev bigint NOT NULL, prev_rev bigint NOT NULL, deleted boolean NOT NULL)`, log),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS log_key_rev ON %s (key, rev)`, log),
		fmt.Sprintf(`INSERT INTO %s (rev) VALUES (%d) ON CONFLICT DO NOTHING`, revision, initialRevision),
		fmt.Sprintf(`INSERT INTO %s (compacted, pruned) VALUES (%d, %d) ON CONFLICT DO NOTHING`, compaction, initialRevision, initialRevision),
		// The planner's guess for a table never analyzed is thousands of
		// rows; these have one each.
		fmt.Sprintf(`ANALYZE %s, %s`, revision, compaction),
	}
	st.lease = newLeaseStatements(q)
	st.schema = append(st.schema, st.lease.schema...)
	// Every read that depends on the window reads it in the same
	// statement, and so in the same snapshot, as its data.
	st.window = fmt.Sprintf(`SELECT r.rev, c.compacted FROM %s r CROSS JOIN %s c`, revision, compaction)
	st.getLatest = fmt.Sprintf(`SELECT value, create_rev, mod_rev FROM %s WHERE key = $1`, current)
	st.getAt = fmt.Sprintf(`SELECT r.rev, c.compacted, l.value, l.create_rev, l.rev, l.deleted
FROM %s r CROSS JOIN %s c
LEFT JOIN LATERAL (SELECT value, create_rev, rev, deleted FROM %s WHERE key = $1 AND rev <= $2 ORDER BY rev DESC LIMIT 1) l ON true`,
		revision, compaction, log)
	inRange := `key >= $1 AND ($2::bytea IS NULL OR key < $2)`
	// A page with a limit counts what follows it, for Remaining: at
	// most storage.RemainingCountCap + 1 keys past the page, so that each
	// page of a long list costs its own rows and a bounded count, not a
	// count of the whole rest of the range; the one more tells "the cap
	// remain" from "more than the cap remain".
	countLimit := fmt.Sprintf(`$3 + %d`, storage.RemainingCountCap+1)
	st.listLatest = fmt.Sprintf(`SELECT r.rev, 0::bigint,
  CASE WHEN $3::bigint IS NULL THEN 0 ELSE (SELECT count(*) FROM (SELECT FROM %[2]s WHERE %[3]s LIMIT %[4]s) n) END,
  i.key, i.value, i.create_rev, i.mod_rev
FROM %[1]s r LEFT JOIN LATERAL (SELECT key, value, create_rev, mod_rev FROM %[2]s WHERE %[3]s ORDER BY key LIMIT $3) i ON true`, revision, current, inRange, countLimit)
	// A list at revision $4, in one statement, so in one snapshot with
	// the window it is checked against: while the store is still at $4,
	// as it is for every page of a relist on a quiet store, the current
	// rows are the state at it, an index range scan of the page; otherwise
	// the newest log row at or below $4 of each key in the range. The
	// comparison with the counter is a subquery of its own, so that the
	// planner makes it a test done once, before either branch runs.
	st.listAt = fmt.Sprintf(`WITH old AS NOT MATERIALIZED (
  SELECT key, value, create_rev, rev FROM (
    SELECT DISTINCT ON (key) key, value, create_rev, rev, deleted FROM %[3]s
    WHERE %[5]s AND rev <= $4 AND $4 <> (SELECT rev FROM %[1]s) ORDER BY key, rev DESC
  ) v WHERE NOT deleted),
now AS NOT MATERIALIZED (
  SELECT key, value, create_rev, mod_rev AS rev FROM %[4]s WHERE %[5]s AND $4 = (SELECT rev FROM %[1]s))
SELECT r.rev, c.compacted,
  CASE WHEN $3::bigint IS NULL THEN 0 ELSE (SELECT count(*) FROM (
    (SELECT FROM old LIMIT %[6]s) UNION ALL (SELECT FROM now LIMIT %[6]s)) n) END,
  i.key, i.value, i.create_rev, i.rev
FROM %[1]s r CROSS JOIN %[2]s c LEFT JOIN LATERAL (
  (SELECT * FROM old ORDER BY key LIMIT $3) UNION ALL (SELECT * FROM now ORDER BY key LIMIT $3)) i ON true`,
		revision, compaction, log, current, inRange, countLimit)

	// A commit (see commit.go): the lock and the current versions of the
	// batch's keys, then the writes. The test switch locks the current
	// rows instead, and takes its revisions from a sequence.
	st.lockRevision = fmt.Sprintf(`SELECT rev FROM %s FOR UPDATE`, revision)
	st.readCurrent = fmt.Sprintf(`SELECT key, value, create_rev, mod_rev FROM %s WHERE key = ANY($1)`, current)
	// The second round trip's writes, in one statement (one Bind, one
	// Execute and one plan instead of four, measured in BENCHMARKS.md):
	// the batch's log rows, each flagged final if it is its key's last
	// in the batch, which then sets the key's current row (deleting it
	// for a deletion; the final rows' keys are distinct, so the DELETE
	// and the upsert never touch one row twice); the counter; and the
	// notification. The DELETE joins b, so that its plan is an index
	// lookup per deletion, none without: as key = ANY (ARRAY(SELECT ...))
	// its generic plan scanned the whole table of a small store, at every
	// batch. The notification carries the store's revision after
	// the commit, so that a poller that has read that far already does
	// not read again (the test switch's, nothing: it leaves the counter,
	// whose lock would order its commits, alone).
	counter := fmt.Sprintf(`,
r AS (UPDATE %s SET rev = $10)`, revision)
	if unordered {
		counter = ""
	}
	st.writeBatch = fmt.Sprintf(`WITH b AS (
  SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bigint[], $5::bigint[], $6::boolean[], $7::boolean[])
    AS b (rev, key, value, create_rev, prev_rev, deleted, final)),
l AS (INSERT INTO %[1]s (rev, key, value, create_rev, prev_rev, deleted)
  SELECT rev, key, value, create_rev, prev_rev, deleted FROM b),
d AS (DELETE FROM %[2]s c USING b WHERE b.final AND b.deleted AND c.key = b.key),
u AS (INSERT INTO %[2]s (key, value, create_rev, mod_rev)
  SELECT key, value, create_rev, rev FROM b WHERE final AND NOT deleted
  ON CONFLICT (key) DO UPDATE SET value = excluded.value, create_rev = excluded.create_rev, mod_rev = excluded.mod_rev)%[3]s
SELECT pg_notify($8, $9)`, log, current, counter)
	sequence := q("unordered_revision")
	if unordered {
		st.readCurrent += " FOR UPDATE"
	}
	st.nextRevisions = fmt.Sprintf(`SELECT nextval('%s') FROM generate_series(1, $1)`, strings.ReplaceAll(sequence, "'", "''"))
	st.createSequence = fmt.Sprintf(`CREATE SEQUENCE IF NOT EXISTS %s START %d`, sequence, initialRevision+1)

	// The poller's read: the log after a revision, each row with the value
	// it replaced, and the window, in one snapshot. A row after the
	// window's start never lacks its previous version (see prune).
	st.pollLog = fmt.Sprintf(`SELECT c.compacted, l.rev, l.key, l.value, l.create_rev, l.prev_rev, l.deleted, p.value
FROM %[1]s c
LEFT JOIN LATERAL (SELECT * FROM %[2]s WHERE rev > $1 ORDER BY rev LIMIT $2) l ON true
LEFT JOIN %[2]s p ON p.rev = l.prev_rev AND l.prev_rev > 0
ORDER BY l.rev`, compaction, log)
	// A watcher's read of the log behind what the poller keeps, for its
	// prefix, between two revisions.
	st.watchLog = fmt.Sprintf(`SELECT c.compacted, l.rev, l.key, l.value, l.create_rev, l.prev_rev, l.deleted, p.value
FROM %[1]s c
LEFT JOIN LATERAL (SELECT * FROM %[2]s WHERE rev >= $3 AND rev <= $4 AND %[3]s ORDER BY rev LIMIT $5) l ON true
LEFT JOIN %[2]s p ON p.rev = l.prev_rev AND l.prev_rev > 0
ORDER BY l.rev`, compaction, log, inRange)

	st.compactTo = fmt.Sprintf(`WITH r AS (SELECT rev FROM %[1]s),
u AS (UPDATE %[2]s SET compacted = $1 WHERE compacted < $1 AND $1 <= (SELECT rev FROM r) RETURNING compacted)
SELECT (SELECT rev FROM r), (SELECT count(*) FROM u)`, revision, compaction)
	st.lockPrune = fmt.Sprintf(`SELECT compacted, pruned FROM %s FOR UPDATE`, compaction)
	// The log rows of revisions (a, b], all at or below the window's
	// start, make these unreadable: the versions they replaced, and
	// themselves if they are tombstones. Nothing else becomes so.
	st.prune = fmt.Sprintf(`DELETE FROM %[1]s WHERE rev IN (
  SELECT prev_rev FROM %[1]s WHERE rev > $1 AND rev <= $2 AND prev_rev > 0
  UNION ALL
  SELECT rev FROM %[1]s WHERE rev > $1 AND rev <= $2 AND deleted)`, log)
	st.setPruned = fmt.Sprintf(`UPDATE %s SET pruned = $1`, compaction)
	return st
}
