package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/groupcommit"
)

// Writes are group-committed (storage/internal/groupcommit), as the bolt
// backend's are: every write is a request to one goroutine of the store,
// the committer, which applies all the requests waiting when it begins a
// transaction in that one transaction, sent to PostgreSQL in one round
// trip: a pipeline of statements with one Sync, which the server runs as
// one implicit transaction and commits at the Sync, or rolls back whole at
// the first error.
//
// The first statement takes the revision counter's row lock (SELECT ...
// FOR UPDATE), which every writer of the database takes first, and keeps
// the counter in a transaction-local setting. Each next statement, begun
// after the lock is held and so with a snapshot no other writer can
// change, applies a round of the requests: it reads the current versions
// of their keys, checks each request's precondition against them (a
// failed one is that request's answer, and uses no revision), writes the
// log rows and the current rows of the others, numbers them from the
// setting in the requests' order, moves the setting to the last, and
// returns each request's outcome. A round holds each key once; a key
// written twice in a batch is in as many rounds, so that its second write
// sees its first, as if the requests had come one at a time. The last
// statement sets the counter's row to the setting and notifies the
// store's channel: the row is read twice per commit, as when the
// statements went one round trip at a time, not once more per round
// (each read of a row updated by every commit walks its dead versions,
// which made one-round-trip commits slower than two round trips). The
// lock is held until
// the commit, so transactions commit in the order of their revisions, on
// every replica (see doc.go); and since nothing in the transaction waits
// for the client, a client that stalls never holds it.

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
	select {
	case <-done:
		return r.rev, r.removed, r.err
	case <-ctx.Done():
		if r.state.CompareAndSwap(pending, withdrawn) || r.state.Load() == withdrawn {
			return 0, storage.KeyValue{}, notSent(ctx, ctx.Err())
		}
		return 0, storage.KeyValue{}, fmt.Errorf("postgres: %w (%w)", ctx.Err(), storage.ErrOutcomeUnknown)
	}
}

// notSent is the error of a write its caller gave up on before the
// committer sent it: while the committer was busy with earlier writes, or
// PostgreSQL slow to take them. It was not applied; the store was too
// slow, which is ErrUnavailable (a 503 with Retry-After at the HTTP
// layer), not the caller's own timeout, and certainly not a write that
// may have been applied.
func notSent(ctx context.Context, err error) error {
	if ctx.Err() == nil { // refused for another reason: the store closed
		return err
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
	last, err := s.commitBatch(ctx, batch)
	if err != nil {
		for _, r := range batch {
			if r.state.Load() != withdrawn { // whose writer has its own error
				r.rev, r.removed, r.err = 0, storage.KeyValue{}, err
			}
		}
		return
	}
	s.suspect.Store(false)
	if last != 0 {
		s.pollSoon()
		if last-s.recent.compactedAt() > s.config.history+s.compactionSlack() {
			s.compactSoon()
		}
	}
}

// The failures of a request's precondition, as a round's statement
// returns them.
const (
	applied = iota
	failExists
	failNotFound
	failConflict
)

// round is the columns of the requests of one round: each key once.
type round struct {
	reqs    []*request
	at      []int32 // each request's place in the round
	ops     []int16
	keys    [][]byte
	values  [][]byte
	expects []int64
}

func (rd *round) add(r *request) {
	rd.at = append(rd.at, int32(len(rd.reqs)))
	rd.reqs = append(rd.reqs, r)
	rd.ops, rd.keys = append(rd.ops, int16(r.op)), append(rd.keys, []byte(r.key))
	rd.values, rd.expects = append(rd.values, r.value), append(rd.expects, r.expect)
}

// outcome is what a round's statement says of one request.
type outcome struct {
	fail    int16
	rev     int64
	removed storage.KeyValue
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
	// A write sent on a connection the server has dropped may seem to
	// leave, and its failure then says nothing of its outcome. While
	// PostgreSQL has lately been found away, and so a pooled connection
	// may be dead, a round trip first makes sure this one is not: so
	// that a write made while it is down fails as not applied.
	if s.suspect.Load() {
		if err := conn.Ping(ctx); err != nil {
			return 0, s.fail(ctx, err)
		}
	}

	// Each key's n-th write of the batch goes in round n. A request whose
	// caller has gone is not sent.
	var rounds []*round
	seen := make(map[string]int, len(batch))
	for _, r := range batch {
		if r.ctx.Err() != nil && r.state.CompareAndSwap(pending, withdrawn) {
			r.err = notSent(r.ctx, r.ctx.Err())
			continue
		}
		if !r.state.CompareAndSwap(pending, sent) {
			continue // withdrawn by its writer
		}
		n := seen[r.key]
		seen[r.key] = n + 1
		if n == len(rounds) {
			rounds = append(rounds, &round{})
		}
		rounds[n].add(r)
	}
	if len(rounds) == 0 {
		return 0, nil
	}

	var (
		b        pgx.Batch
		outcomes = make(map[*request]outcome, len(batch))
		revs     []int64
	)
	// With the test hook, the same statements in an explicit
	// transaction, whose COMMIT waits for the hook.
	hook := s.config.beforeCommit
	if hook != nil {
		b.Queue("BEGIN")
	}
	if !s.config.unorderedRevisions { // the test switch takes no lock
		b.Queue(s.sql.lockRevision)
	}
	for _, rd := range rounds {
		b.Queue(s.sql.commitRound, rd.at, rd.ops, rd.keys, rd.values, rd.expects).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var (
					at     int32
					o      outcome
					rev    *int64
					create *int64
					old    []byte
				)
				if err := rows.Scan(&at, &o.fail, &rev, &old, &create); err != nil {
					return err
				}
				r := rd.reqs[at]
				if o.fail == applied {
					o.rev = *rev
					revs = append(revs, o.rev)
					if r.op == opDelete {
						o.removed = storage.KeyValue{Key: r.key, Value: old, CreateRevision: *create, ModRevision: o.rev}
					}
				}
				outcomes[r] = o
			}
			return rows.Err()
		})
	}
	b.Queue(s.sql.notify, s.sql.channelName)
	// Once the pipeline is sent, only the server's refusal of one of its
	// statements (an error, after which it skips the rest and rolls back)
	// says the transaction did not commit.
	results := conn.SendBatch(ctx, &b)
	if s.config.afterSend != nil {
		s.config.afterSend()
	}
	if err := results.Close(); err != nil {
		return 0, outcomeUnknown(s.fail(ctx, err))
	}
	if hook != nil {
		slices.Sort(revs)
		hook(revs)
		if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
			return 0, outcomeUnknown(s.fail(ctx, err))
		}
	}
	var last int64
	for _, rd := range rounds {
		for _, r := range rd.reqs {
			o, ok := outcomes[r]
			switch {
			case !ok:
				r.err = fmt.Errorf("postgres: no outcome for the write of %q", r.key)
			case o.fail == failExists:
				r.err = storage.ErrExists
			case o.fail == failNotFound:
				r.err = storage.ErrNotFound
			case o.fail == failConflict:
				r.err = storage.ErrConflict
			default:
				r.rev, r.removed = o.rev, o.removed
				last = max(last, o.rev)
			}
		}
	}
	return last, nil
}
