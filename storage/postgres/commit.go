package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/groupcommit"
)

// Writes are group-committed (storage/internal/groupcommit), as the bolt
// backend's are: every write is a
// request to one goroutine of the store, the committer, which applies all
// the requests waiting when it begins a transaction in that one
// transaction. The transaction first takes the revision counter's row lock
// (SELECT ... FOR UPDATE), which every writer of the database takes first,
// so the current versions it then reads cannot change under it; it checks
// each request's precondition against them in Go, one after the other, as
// if the requests had come one at a time (a failed one is that request's
// answer, and uses no revision), writes the log rows and the current rows
// of the others, sets the counter to its last revision, and notifies the
// store's channel. It holds the lock until it commits, so transactions
// commit in the order of their revisions, on every replica (see doc.go).

type op int

const (
	opCreate op = iota + 1
	opUpdate
	opDelete
)

const (
	// maxBatch bounds the writes of one transaction.
	maxBatch = 256
	// maxKeyLen is the longest key the store takes: PostgreSQL's B-trees
	// refuse entries of more than about 2700 bytes, and a refusal in a
	// transaction would fail every write of its batch.
	maxKeyLen = 2048
)

type request struct {
	ctx    context.Context
	op     op
	key    string
	value  []byte
	expect int64

	// Set by the committer before it closes done.
	rev     int64
	removed storage.KeyValue
	err     error
}

// write hands r to the committer and waits for its outcome. If ctx ends
// after the committer has it, the write may yet be applied: the error says
// so.
func (s *Store) write(ctx context.Context, r *request) (int64, storage.KeyValue, error) {
	if err := s.check(ctx, r.expect); err != nil {
		return 0, storage.KeyValue{}, err
	}
	if len(r.key) > maxKeyLen {
		return 0, storage.KeyValue{}, fmt.Errorf("%w: postgres: key of %d bytes, the most is %d", storage.ErrTooLarge, len(r.key), maxKeyLen)
	}
	if r.value == nil && r.op != opDelete {
		r.value = []byte{}
	}
	r.ctx = ctx
	done, err := s.queue.Submit(ctx, r)
	if err != nil {
		if errors.Is(err, groupcommit.ErrClosed) {
			err = storage.ErrClosed
		}
		return 0, storage.KeyValue{}, err
	}
	select {
	case <-done:
		return r.rev, r.removed, r.err
	case <-ctx.Done():
		return 0, storage.KeyValue{}, fmt.Errorf("postgres: %w (%w)", ctx.Err(), storage.ErrOutcomeUnknown)
	}
}

// version is a key's version while a batch is applied.
type version struct {
	value       []byte
	create, mod int64
	live        bool
}

// logRows are the columns of the log rows a batch inserts.
type logRows struct {
	revs, creates, prevs []int64
	keys, values         [][]byte
	deleted              []bool
}

func (l *logRows) add(rev int64, key string, value []byte, create, prev int64, deleted bool) {
	l.revs, l.keys, l.values = append(l.revs, rev), append(l.keys, []byte(key)), append(l.values, value)
	l.creates, l.prevs, l.deleted = append(l.creates, create), append(l.prevs, prev), append(l.deleted, deleted)
}

// commit applies batch in one transaction and sets each request's outcome.
// If the transaction fails, every request fails with its error, even one
// whose precondition failed: that may have been against a write of the
// same batch.
func (s *Store) commit(batch []*request) {
	// The committer's own time, not a caller's: a caller that stops
	// waiting is told the outcome is unknown.
	ctx, cancel := context.WithTimeoutCause(context.Background(), s.config.timeout, errStoreTimeout)
	defer cancel()
	last, err := s.commitBatch(ctx, batch)
	if err != nil {
		for _, r := range batch {
			r.rev, r.removed, r.err = 0, storage.KeyValue{}, err
		}
		return
	}
	if last != 0 {
		s.pollSoon()
		if last-s.recent.compactedAt() > s.config.history+s.compactionSlack() {
			s.compactSoon()
		}
	}
}

// commitBatch runs commit's transaction and returns its last revision, 0
// if it wrote nothing.
func (s *Store) commitBatch(ctx context.Context, batch []*request) (int64, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, s.fail(ctx, err)
	}
	// A connection left in a transaction by an error is not reused: the
	// pool closes it, which rolls the transaction back.
	defer conn.Release()

	keys := make([][]byte, 0, len(batch))
	state := make(map[string]version, len(batch))
	for _, r := range batch {
		if _, ok := state[r.key]; !ok {
			state[r.key] = version{}
			keys = append(keys, []byte(r.key))
		}
	}
	var (
		rev  int64
		revs []int64 // the unordered switch's
		b    pgx.Batch
	)
	// Two round trips: BEGIN, the lock and the reads; then the writes and
	// COMMIT.
	b.Queue("BEGIN")
	readCurrent := s.sql.readCurrent
	if s.config.unorderedRevisions {
		// Test-only: no counter lock, so the current rows are locked
		// instead, and revisions come from a sequence.
		readCurrent += " FOR UPDATE"
	} else {
		b.Queue(s.sql.lockRevision).QueryRow(func(row pgx.Row) error { return row.Scan(&rev) })
	}
	b.Queue(readCurrent, keys).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var (
				key []byte
				v   = version{live: true}
			)
			if err := rows.Scan(&key, &v.value, &v.create, &v.mod); err != nil {
				return err
			}
			state[string(key)] = v
		}
		return rows.Err()
	})
	if s.config.unorderedRevisions {
		b.Queue(s.sql.nextRevisions, len(batch)).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var r int64
				if err := rows.Scan(&r); err != nil {
					return err
				}
				revs = append(revs, r)
			}
			return rows.Err()
		})
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return 0, s.fail(ctx, err)
	}

	var (
		log     logRows
		applied int
		written = make(map[string]bool, len(batch))
	)
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil { // the caller is gone: skip it
			r.err = err
			continue
		}
		cur := state[r.key]
		switch {
		case r.op == opCreate && cur.live:
			r.err = storage.ErrExists
			continue
		case r.op != opCreate && !cur.live:
			r.err = storage.ErrNotFound
			continue
		case r.op != opCreate && r.expect != 0 && r.expect != cur.mod:
			r.err = storage.ErrConflict
			continue
		}
		if revs != nil {
			rev = revs[applied]
		} else {
			rev++
		}
		applied++
		r.rev, written[r.key] = rev, true
		switch r.op {
		case opCreate:
			log.add(rev, r.key, r.value, rev, 0, false)
			state[r.key] = version{value: r.value, create: rev, mod: rev, live: true}
		case opUpdate:
			log.add(rev, r.key, r.value, cur.create, cur.mod, false)
			state[r.key] = version{value: r.value, create: cur.create, mod: rev, live: true}
		case opDelete:
			log.add(rev, r.key, nil, cur.create, cur.mod, true)
			r.removed = storage.KeyValue{Key: r.key, Value: cur.value, CreateRevision: cur.create, ModRevision: rev}
			state[r.key] = version{}
		}
	}
	if applied == 0 {
		if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
			return 0, s.fail(ctx, err)
		}
		return 0, nil
	}

	var (
		gone                  [][]byte
		liveKeys, liveValues  [][]byte
		liveCreates, liveMods []int64
	)
	for _, key := range keys {
		if !written[string(key)] {
			continue
		}
		switch v := state[string(key)]; {
		case v.live:
			liveKeys, liveValues = append(liveKeys, key), append(liveValues, v.value)
			liveCreates, liveMods = append(liveCreates, v.create), append(liveMods, v.mod)
		default:
			gone = append(gone, key)
		}
	}
	b = pgx.Batch{}
	b.Queue(s.sql.insertLog, log.revs, log.keys, log.values, log.creates, log.prevs, log.deleted)
	if len(gone) > 0 {
		b.Queue(s.sql.deleteCurrent, gone)
	}
	if len(liveKeys) > 0 {
		b.Queue(s.sql.upsertCurrent, liveKeys, liveValues, liveCreates, liveMods)
	}
	if !s.config.unorderedRevisions { // which leaves the counter alone: its lock would order the commits
		b.Queue(s.sql.setRevision, rev)
	}
	b.Queue(s.sql.notify, s.sql.channelName, fmt.Sprint(rev))
	b.Queue("COMMIT")
	if s.config.beforeCommit != nil {
		s.config.beforeCommit(log.revs)
	}
	// The statements and the COMMIT go out together: once they are sent,
	// only the server's refusal of one of them (an error, after which it
	// skips the rest) says the transaction did not commit.
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return 0, outcomeUnknown(s.fail(ctx, err))
	}
	return rev, nil
}
