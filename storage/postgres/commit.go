package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/groupcommit"
)

// Writes are group-committed (storage/internal/groupcommit), as the bolt
// backend's are: every write is a request to one goroutine of the store,
// the committer, which applies all the requests waiting when it begins a
// transaction in that one transaction, in two round trips.
//
// The first is BEGIN, the revision counter's row lock (SELECT ... FOR
// UPDATE), which every writer of the database takes first, and the current
// versions of the batch's keys with the sole-writer lease's check (one
// statement, see checkAndRead), read after the lock is held and so in a
// snapshot no other writer can change. The committer then checks each
// request's precondition, in the requests' order, against the versions
// the earlier ones left (a failed one is that request's answer, and uses
// no revision; a key written twice sees its first write, as if the
// requests had come one at a time), and numbers the others from the
// counter. The second round trip is one statement that writes the log
// rows and the current rows, sets the counter and notifies (see
// writeBatch in schema.go), and COMMIT, in one pipeline. The lock is held
// until the commit, so transactions commit in the order of their
// revisions, on every replica (see doc.go).
//
// One-round-trip commits, in which one statement per round of the batch
// checked, numbered and wrote on the server, were slower: measured side
// by side, the statement took about twice the time of these two round
// trips on a local server (see the commit that brought these back).

// maxLinger bounds a commit's wait for the writers it expects, however
// long commits take: it is for writers busy between two writes (an API
// server decoding the next request), not for a slow database.
const maxLinger = 5 * time.Millisecond

// lingerFor is how long a commit waits for the writers it expects, given
// the commits' average duration (see groupcommit): a commit, which holds
// the database's one revision lock, is better shared.
func lingerFor(took time.Duration) time.Duration { return min(took, maxLinger) }

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

	// state says whether the request was sent, or withdrawn by its
	// writer before it could be: whoever moves it from pending first
	// decides.
	state atomic.Int32

	// Set by the committer before it closes done.
	rev     int64
	removed storage.KeyValue
	err     error
}

const (
	pending int32 = iota
	sent
	withdrawn
)

// write hands r to the committer and waits for its outcome. If ctx ends
// before the committer sends r to PostgreSQL, r is withdrawn, and the
// error says the store did not take it in time (ErrUnavailable: it was
// not applied, and may be sent again); if it ends after, the write may yet
// be applied, and the error says so (ErrOutcomeUnknown).
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
		return 0, storage.KeyValue{}, notSent(ctx, err)
	}
	// Waiting asks ctx for Done only once the batch is slow (see
	// groupcommit.Queue.Wait): kapi's store guard arms a timer and a
	// derived context when it is asked, which no write answered in time
	// needs. A caller whose context ends meanwhile is told so that much
	// later, 100 ms at most.
	if s.queue.Wait(ctx, done) {
		return r.rev, r.removed, r.err
	}
	if r.state.CompareAndSwap(pending, withdrawn) || r.state.Load() == withdrawn {
		return 0, storage.KeyValue{}, notSent(ctx, ctx.Err())
	}
	return 0, storage.KeyValue{}, fmt.Errorf("postgres: %w (%w)", ctx.Err(), storage.ErrOutcomeUnknown)
}

// notSent is the error of a write its caller gave up on before the
// committer sent it: while the committer was busy with earlier writes, or
// PostgreSQL slow to take them. It was not applied, and certainly is not a
// write that may have been applied. If the caller's deadline passed, the
// store was too slow, which is ErrUnavailable (a 503 with Retry-After at
// the HTTP layer), not the caller's own timeout. If the caller cancelled
// (a client that disconnected), the store is not to blame: the error is
// the cancellation, recognisable with errors.Is(err, context.Canceled),
// and no fault, so that storehealth does not suspect the store for it.
func notSent(ctx context.Context, err error) error {
	switch {
	case ctx.Err() == nil: // refused for another reason: the store closed
		return err
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("postgres: the write was not sent, its caller cancelled it first: %w", ctx.Err())
	}
	return fmt.Errorf("%w: postgres: the write was not sent, the store had not taken it when its caller stopped waiting (%v)", storage.ErrUnavailable, err)
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
	last, fed, err := s.commitBatch(ctx, batch)
	for try := 0; errors.Is(err, errLeaseRefused) && try < 3; try++ {
		if err = s.shareLease(ctx); err == nil {
			last, fed, err = s.commitBatch(ctx, batch)
		}
	}
	if err != nil {
		for _, r := range batch {
			if r.state.Load() != withdrawn { // whose writer has its own error
				r.rev, r.removed, r.err = 0, storage.KeyValue{}, err
			}
		}
		// The batch's revisions may now be another replica's: the
		// listener must not pass over their notifications as this
		// store's own. Then a poll, for what it passed over while the
		// batch was under way (see listenOnce), and the batch itself if
		// it may have committed.
		s.committing.Store(0)
		s.pollSoon()
		return
	}
	s.suspect.Store(false)
	if last != 0 {
		if fed {
			s.wake()
		} else {
			s.pollSoon()
		}
		if last-s.recent.compactedAt() > s.config.history+s.compactionSlack() {
			s.compactSoon()
		}
	}
}

// version is a key's version as a batch's transaction sees it.
type version struct {
	value       []byte
	create, mod int64
	live        bool
	// key is the key's bytes, for the statements' arguments.
	key []byte
	// last is 1 + the index of the batch's last log row for the key, 0
	// if the batch does not write it.
	last int
}

// batch is the committer's working state for one transaction, kept
// between transactions so that a commit allocates little (only the
// committer uses it).
type batch struct {
	reqs  []*request
	keys  bytesArray // the batch's keys, each once
	state map[string]version
	log   logRows
	// The batch's events, as the poller would read them back from the
	// log (see recent.follow), which copies them.
	events []storage.Event
}

// reset empties b for a batch of n requests, letting go of the last
// batch's values.
func (b *batch) reset(n int) {
	clear(b.reqs)
	clear(b.keys)
	clear(b.events)
	b.reqs, b.keys, b.events = b.reqs[:0], b.keys[:0], b.events[:0]
	if b.state == nil {
		b.state = make(map[string]version, n)
	}
	clear(b.state)
	b.log.reset()
}

// logRows are the columns of the log rows a batch inserts, and whether
// each is the last of its key in the batch.
type logRows struct {
	revs, creates, prevs int64Array
	keys, values         bytesArray
	deleted, final       []bool
}

func (l *logRows) reset() {
	clear(l.keys)
	clear(l.values)
	l.revs, l.creates, l.prevs = l.revs[:0], l.creates[:0], l.prevs[:0]
	l.keys, l.values, l.deleted, l.final = l.keys[:0], l.values[:0], l.deleted[:0], l.final[:0]
}

func (l *logRows) add(rev int64, key, value []byte, create, prev int64, deleted bool) {
	l.revs, l.keys, l.values = append(l.revs, rev), append(l.keys, key), append(l.values, value)
	l.creates, l.prevs = append(l.creates, create), append(l.prevs, prev)
	l.deleted, l.final = append(l.deleted, deleted), append(l.final, false)
}

// commitBatch runs commit's transaction and returns its last revision, 0
// if it wrote nothing.
func (s *Store) commitBatch(ctx context.Context, reqs []*request) (last int64, fed bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, false, s.fail(ctx, err)
	}
	// A connection left in a transaction by an error is not reused: the
	// pool closes it, which rolls the transaction back.
	defer conn.Release()
	// A write sent on a connection the server has dropped may seem to
	// leave, and its failure then says nothing of its outcome. While
	// PostgreSQL has lately been found away, and so a pooled connection
	// may be dead, a round trip first makes sure this one is not: so
	// that a write made while it is down fails as not applied.
	if s.suspect.Load() {
		if err := conn.Ping(ctx); err != nil {
			return 0, false, s.fail(ctx, err)
		}
	}

	// A request whose caller has gone is not sent.
	bt := &s.batch
	bt.reset(len(reqs))
	defer bt.reset(0)
	for _, r := range reqs {
		if r.ctx.Err() != nil && r.state.CompareAndSwap(pending, withdrawn) {
			r.err = notSent(r.ctx, r.ctx.Err())
			continue
		}
		if !r.state.CompareAndSwap(pending, sent) {
			continue // withdrawn by its writer
		}
		bt.reqs = append(bt.reqs, r)
		if _, ok := bt.state[r.key]; !ok {
			key := []byte(r.key)
			bt.state[r.key] = version{key: key}
			bt.keys = append(bt.keys, key)
		}
	}
	if len(bt.reqs) == 0 {
		return 0, false, nil
	}

	var (
		rev  int64
		revs []int64 // the unordered switch's
		b    pgx.Batch
	)
	// The first round trip: BEGIN, the lock and the reads. Nothing of it
	// can commit: if it fails, no write was applied.
	b.Queue("BEGIN")
	if s.config.unorderedRevisions {
		b.Queue(s.sql.nextRevisions, len(bt.reqs)).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var r int64
				if err := rows.Scan(&r); err != nil {
					return err
				}
				revs = append(revs, r)
			}
			return rows.Err()
		})
	} else {
		b.Queue(s.sql.lockRevision).QueryRow(func(row pgx.Row) error { return row.Scan(&rev) })
	}
	var allowed bool
	s.checkAndRead(&b, bt.keys, &allowed, func(v version) { bt.state[string(v.key)] = v })
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return 0, false, s.fail(ctx, err)
	}
	if !allowed {
		return 0, false, s.refused(ctx, conn, bt.reqs)
	}
	if revs == nil {
		s.lease.locked(rev)
	}

	// The requests in their order, each against the versions the earlier
	// ones left: a failed precondition is its own request's answer, and
	// uses no revision.
	log := &bt.log
	for _, r := range bt.reqs {
		cur := bt.state[r.key]
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
			rev = revs[len(log.revs)]
		} else {
			rev++
		}
		r.rev = rev
		key := cur.key
		switch r.op {
		case opCreate:
			log.add(rev, key, r.value, rev, 0, false)
			cur = version{value: r.value, create: rev, mod: rev, live: true}
			bt.events = append(bt.events, storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: r.key, Value: r.value, CreateRevision: rev, ModRevision: rev}})
		case opUpdate:
			log.add(rev, key, r.value, cur.create, cur.mod, false)
			bt.events = append(bt.events, storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: r.key, Value: r.value, CreateRevision: cur.create, ModRevision: rev}, Prev: cur.value})
			cur = version{value: r.value, create: cur.create, mod: rev, live: true}
		case opDelete:
			log.add(rev, key, nil, cur.create, cur.mod, true)
			r.removed = storage.KeyValue{Key: r.key, Value: cur.value, CreateRevision: cur.create, ModRevision: rev}
			bt.events = append(bt.events, storage.Event{Type: storage.Delete, KeyValue: storage.KeyValue{Key: r.key, Value: cur.value, CreateRevision: cur.create, ModRevision: rev}, Prev: cur.value})
			cur = version{}
		}
		cur.key, cur.last = key, len(log.revs)
		bt.state[r.key] = cur
	}
	if len(log.revs) == 0 {
		if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
			return 0, false, s.fail(ctx, err)
		}
		return 0, false, nil
	}
	for _, v := range bt.state {
		if v.last > 0 {
			log.final[v.last-1] = true
		}
	}

	// The second round trip: the writes, the counter and the
	// notification in one statement, and COMMIT.
	b = pgx.Batch{}
	args := []any{log.revs, log.keys, log.values, log.creates, log.prevs, log.deleted, log.final, s.sql.channelName, ""}
	if revs == nil { // the test switch leaves the counter alone: its lock would order the commits
		args[8] = strconv.FormatInt(rev, 10)
		args = append(args, rev)
		last = rev
	} else {
		last = slices.Max(log.revs)
	}
	b.Queue(s.sql.writeBatch, args...)
	if hook := s.config.beforeCommit; hook != nil {
		hook(slices.Sorted(slices.Values(log.revs)))
	}
	b.Queue("COMMIT")
	// The statements and the COMMIT go out together: once they are sent,
	// only the server's refusal of one of them (an error, after which it
	// skips the rest) says the transaction did not commit.
	if revs == nil {
		s.committing.Store(rev)
	}
	s.lease.sending()
	results := conn.SendBatch(ctx, &b)
	if s.config.afterSend != nil {
		s.config.afterSend()
	}
	err = results.Close()
	s.lease.sent(last, err)
	if err != nil {
		return 0, false, outcomeUnknown(s.fail(ctx, err))
	}
	// The batch's revisions follow every revision before them, all
	// committed (see doc.go): if the poller has read up to the first of
	// them, they are what its next read would bring, and the watchers
	// have them at once, without that read. (Not so for the test switch's
	// revisions, which need not follow the last one read.)
	return last, revs == nil && s.recent.follow(bt.events), nil
}
