package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/groupcommit"
)

const (
	defaultSchema       = "kapi"
	defaultHistory      = 10000
	defaultPollInterval = time.Second
	defaultTimeout      = 10 * time.Second
	// initialRevision is a new store's revision, as etcd's: no
	// resourceVersion is ever "0", which clients send to mean "any".
	initialRevision = 1
)

// Option configures a [Store].
type Option func(*config)

type config struct {
	schema       string
	history      int64
	pollInterval time.Duration
	timeout      time.Duration
	maxConns     int32
	lease        time.Duration // the sole-writer lease's (lease.go), below 0 never taken

	// For the tests of this package only (export_test.go): revisions from
	// a sequence, without the counter's lock, so that transactions can
	// commit out of revision order; and a hook called after a batch's
	// revisions are assigned, before it commits.
	unorderedRevisions bool
	beforeCommit       func(revs []int64)
	// And one called once a commit's statements are sent, before their
	// answer is read.
	afterSend func()
	// And one called after each pruning transaction that deleted rows;
	// and a switch that makes the store listen on a channel of its own.
	onPrune         func(began time.Time, took time.Duration, deleted int64)
	listenElsewhere bool
	// And a tracer of the pool's statements, for counting round trips;
	// and a switch that makes writes skip the lease's check.
	tracer         pgx.QueryTracer
	skipLeaseCheck bool
}

// WithSchema sets the PostgreSQL schema the store's tables live in,
// created if absent ("kapi" by default). Stores on one database with the
// same schema are one store; stores with different schemas do not see each
// other.
func WithSchema(name string) Option {
	return func(c *config) { c.schema = name }
}

// WithHistory sets how many revisions of history the store keeps: with the
// store at revision r, reads at r-n and later, and watches from them, work;
// older ones fail with [storage.ErrExpired]. n below 1 counts as 1; the
// default is 10000, as the bolt backend's.
func WithHistory(n int) Option {
	return func(c *config) { c.history = int64(max(n, 1)) }
}

// WithPollInterval sets how often the store reads the log for writes made
// by other processes when no notification has told it of one (1s by
// default). Notifications make watches prompt; the poll makes them
// correct when a notification is lost.
func WithPollInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.pollInterval = d
		}
	}
}

// WithTimeout bounds every call to PostgreSQL: waiting for a pooled
// connection, each statement (as the session's statement_timeout), and a
// write's transaction (10s by default). A call that takes longer fails
// with [storage.ErrTimeout].
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithMaxConns sets the size of the store's connection pool (pgxpool's
// default, the larger of 4 and the number of CPUs, otherwise). The store
// holds one more connection of its own, for LISTEN.
func WithMaxConns(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxConns = int32(n)
		}
	}
}

// Store is a [storage.Interface] on a PostgreSQL database. Any number of
// Stores, in any number of processes, may use the same database and
// schema: they are one store. Its methods are safe for concurrent use. The
// zero value is not usable: call [Open].
type Store struct {
	pool   *pgxpool.Pool
	listen *pgx.ConnConfig // for the LISTEN connection, outside the pool
	config config
	sql    statements

	// bg is the context of the store's goroutines, cancelled by Close
	// after they have been told to stop.
	bg     context.Context
	stopBG context.CancelFunc

	// queue carries writes to the committer; closing is closed by
	// Close; goroutines counts the store's goroutines.
	queue      *groupcommit.Queue[*request]
	closing    chan struct{}
	closeOnce  sync.Once
	closed     atomic.Bool
	goroutines sync.WaitGroup

	// pollNow wakes the poller, compactNow the compactor (both buffered:
	// a wake-up while one is pending is the same wake-up).
	pollNow    chan struct{}
	compactNow chan struct{}

	// recent is the log as the poller has read it, for the watchers;
	// changed is closed when it moves on (or by Close).
	recent  recent
	changed atomic.Pointer[chan struct{}]

	// revisions batches the reads of the store's revision (see Revision).
	revisions revisionReads

	// suspect is set when a call finds PostgreSQL unreachable, and
	// cleared by the next commit: while it is set, the committer pings
	// its connection before sending a write on it (see commitBatch).
	suspect atomic.Bool

	// committing is the last revision of the batch the committer has
	// sent: a notification up to it is of this store's own commit, whose
	// events the committer gives the watchers (see listenOnce).
	committing atomic.Int64

	// lease is the store's side of the sole-writer lease (lease.go).
	lease lease

	// batch is the committer's (commit.go).
	batch batch
}

var _ storage.Interface = (*Store)(nil)

// Open connects to the PostgreSQL database at url (a libpq connection
// string or URL, as pgx parses it), creates the store's schema and tables
// there if this is the first store on them, and starts the store's
// goroutines: the committer, the log's poller, its listener, the
// compactor and the readers of the revision for Revision. Close the store to stop them and close its connections.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	c := config{schema: defaultSchema, history: defaultHistory, lease: defaultLease, pollInterval: defaultPollInterval, timeout: defaultTimeout}
	for _, opt := range opts {
		opt(&c)
	}
	if c.schema == "" {
		return nil, errors.New("postgres: empty schema name")
	}
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if c.maxConns > 0 {
		pc.MaxConns = c.maxConns
	}
	// The server bounds what the client might not: a statement running
	// past the store's timeout, and a transaction left open by a client
	// that vanished while holding the revision counter's lock.
	pc.ConnConfig.Tracer = c.tracer
	params := pc.ConnConfig.RuntimeParams
	params["statement_timeout"] = fmt.Sprint(c.timeout.Milliseconds())
	params["idle_in_transaction_session_timeout"] = fmt.Sprint((2 * c.timeout).Milliseconds())
	// A write waiting for the revision lock gives up before the store
	// does, so that the server says it rolled back: a write that timed
	// out waiting for the lock was not applied, where one the store gave
	// up on after sending may have been.
	params["lock_timeout"] = fmt.Sprint((c.timeout * 3 / 4).Milliseconds())
	params["application_name"] = cmp.Or(params["application_name"], "kapi")
	// Commits take the revision lock and then update the row it guards;
	// under REPEATABLE READ or SERIALIZABLE (a database's or role's
	// default) every contended commit would fail with a serialization
	// error, so the sessions ask for READ COMMITTED whatever the default.
	params["default_transaction_isolation"] = "read committed"
	// A take or renewal of the sole-writer lease PostgreSQL acknowledged
	// must survive its crash (doc.go): a take lost while its holder
	// answers reads would let other stores write unseen. So the sessions
	// ask for synchronous commits whatever the database's or role's
	// default.
	params["synchronous_commit"] = "on"
	// The store's statements are short; JIT compiling them, which the
	// planner's estimates for its one-row tables can trigger, takes far
	// longer than running them.
	params["jit"] = "off"
	// Nor are parallel workers worth starting for them: a list at a
	// revision otherwise starts one for the branch it does not run.
	params["max_parallel_workers_per_gather"] = "0"
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres: %w", storage.ErrUnavailable, err)
	}
	s := &Store{
		pool:       pool,
		listen:     pc.ConnConfig.Copy(),
		config:     c,
		sql:        newStatements(c.schema, c.unorderedRevisions),
		closing:    make(chan struct{}),
		pollNow:    make(chan struct{}, 1),
		compactNow: make(chan struct{}, 1),
		lease:      newLease(leaseDuration(c)),
	}
	rev, compacted, err := s.setUp(ctx)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.recent.reset(rev, compacted)
	s.bg, s.stopBG = context.WithCancel(context.Background())
	s.queue = groupcommit.New(groupcommit.Config[*request]{MaxBatch: maxBatch, Commit: s.commit, Linger: lingerFor}, s.closing)
	s.revisions.wake = make(chan struct{}, 1)
	for _, loop := range []func(){s.queue.Run, s.pollLoop, s.listenLoop, s.compactLoop, s.leaseLoop} {
		s.goroutines.Go(loop)
	}
	for range revisionReaders {
		s.goroutines.Go(s.readRevisions)
	}
	return s, nil
}

// setUp creates the schema's tables if they are missing and returns the
// store's revision and the start of its window.
func (s *Store) setUp(ctx context.Context) (rev, compacted int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.config.timeout)
	defer cancel()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Stores opening at once on a new schema take turns: CREATE
		// ... IF NOT EXISTS is not safe against a concurrent one.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('kapi schema ' || $1))`, s.config.schema); err != nil {
			return err
		}
		stmts := s.sql.schema
		if s.config.unorderedRevisions {
			stmts = append(stmts[:len(stmts):len(stmts)], s.sql.createSequence)
		}
		for _, stmt := range stmts {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", strings.Join(strings.Fields(stmt)[:3], " "), err)
			}
		}
		return tx.QueryRow(ctx, s.sql.window).Scan(&rev, &compacted)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: setting up schema %q: %w", s.config.schema, s.fail(ctx, err))
	}
	return rev, compacted, nil
}

// Get returns the key's value at rev (0: the latest).
func (s *Store) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	if err := s.check(ctx, rev); err != nil {
		return storage.KeyValue{}, err
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	kv := storage.KeyValue{Key: key}
	if rev == 0 {
		err := s.pool.QueryRow(ctx, s.sql.getLatest, []byte(key)).Scan(&kv.Value, &kv.CreateRevision, &kv.ModRevision)
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.KeyValue{}, storage.ErrNotFound
		}
		if err != nil {
			return storage.KeyValue{}, s.fail(ctx, err)
		}
		return kv, nil
	}
	var (
		cur, compacted int64
		create, mod    *int64
		deleted        *bool
	)
	err := s.pool.QueryRow(ctx, s.sql.getAt, []byte(key), rev).Scan(&cur, &compacted, &kv.Value, &create, &mod, &deleted)
	if err != nil {
		return storage.KeyValue{}, s.fail(ctx, err)
	}
	if err := readable(rev, cur, compacted); err != nil {
		return storage.KeyValue{}, err
	}
	if mod == nil || *deleted {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	kv.CreateRevision, kv.ModRevision = *create, *mod
	if kv.Value == nil {
		kv.Value = []byte{}
	}
	return kv, nil
}

// readable says whether a read at rev can be served with the store at
// cur and its window starting at compacted.
func readable(rev, cur, compacted int64) error {
	switch {
	case rev > cur:
		return fmt.Errorf("%w: revision %d, store at %d", storage.ErrFutureRevision, rev, cur)
	case rev < compacted:
		return expired(rev, compacted)
	}
	return nil
}

func expired(rev, compacted int64) error {
	return fmt.Errorf("%w: revision %d, the history window starts at %d", storage.ErrExpired, rev, compacted)
}

// List returns the keys with the given prefix as they were at
// opts.Revision (0: the latest), in key order, in one statement. The
// latest revision, or the one the store is still at, is a scan of the
// current table; an older one reads the log. Remaining counts at most
// 1,000 keys past the page: when more remain it is -1 (some remain, how
// many is not counted), and the server leaves remainingItemCount unset,
// as kube-apiserver does when it cannot give the exact count.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if err := s.check(ctx, opts.Revision); err != nil {
		return storage.ListResult{}, err
	}
	if opts.Limit < 0 {
		return storage.ListResult{}, fmt.Errorf("postgres: negative limit %d", opts.Limit)
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	from, to := []byte(max(prefix, opts.Start)), prefixEnd(prefix)
	var limit *int64
	if opts.Limit > 0 {
		limit = &opts.Limit
	}
	var (
		rows pgx.Rows
		err  error
	)
	if opts.Revision == 0 {
		rows, err = s.pool.Query(ctx, s.sql.listLatest, from, to, limit)
	} else {
		rows, err = s.pool.Query(ctx, s.sql.listAt, from, to, limit, opts.Revision)
	}
	if err != nil {
		return storage.ListResult{}, s.fail(ctx, err)
	}
	defer rows.Close()
	var (
		res              storage.ListResult
		compacted, total int64
	)
	for rows.Next() {
		var (
			key         []byte
			value       []byte
			create, mod *int64
		)
		if err := rows.Scan(&res.Revision, &compacted, &total, &key, &value, &create, &mod); err != nil {
			return storage.ListResult{}, s.fail(ctx, err)
		}
		if key == nil { // no item: the row only carries the revisions
			continue
		}
		if value == nil {
			value = []byte{}
		}
		res.Items = append(res.Items, storage.KeyValue{Key: string(key), Value: value, CreateRevision: *create, ModRevision: *mod})
	}
	if err := rows.Err(); err != nil {
		return storage.ListResult{}, s.fail(ctx, err)
	}
	// The page comes in key order from its subquery; the statement's
	// join does not promise to keep it, so make sure (in linear time when
	// it did).
	slices.SortFunc(res.Items, func(a, b storage.KeyValue) int { return strings.Compare(a.Key, b.Key) })
	if opts.Revision != 0 {
		if err := readable(opts.Revision, res.Revision, compacted); err != nil {
			return storage.ListResult{}, err
		}
		res.Revision = opts.Revision
	}
	if limit != nil {
		if res.Remaining = total - int64(len(res.Items)); res.Remaining > storage.RemainingCountCap {
			res.Remaining = -1
		}
	}
	return res, nil
}

// prefixEnd is the least key greater than every key with the prefix, or
// nil if there is none (an empty prefix, or one of 0xff bytes only).
func prefixEnd(prefix string) []byte {
	end := []byte(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Revision returns the revision of the store's last write.
//
// A store that holds the sole-writer lease (lease.go, doc.go) answers it
// from its own commits, without a query. Otherwise:
//
// Every consistent read of a kapi server asks for it, so concurrent calls
// share queries: a call joins the next query that starts after it was made
// (never one already under way, whose answer may predate the call: a
// write acknowledged, by any replica, after that query's snapshot and
// before the call would be missed), and every call waiting when a query
// starts gets its answer. Up to revisionReaders queries are under way at
// once, so that a call made during one starts its own at once instead of
// waiting for it to end first; once that many are, the calls made
// meanwhile wait for the first to end and share the next. Under load that
// is one round trip for all the reads waiting at that moment, as
// kube-apiserver's consistent reads from its cache share their progress
// requests to etcd.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	if err := s.check(ctx, 0); err != nil {
		return 0, err
	}
	if rev, ok := s.lease.revision(ctx); ok {
		return rev, nil
	}
	answer := make(chan revisionAnswer, 1)
	s.revisions.mu.Lock()
	s.revisions.waiting = append(s.revisions.waiting, answer)
	s.revisions.mu.Unlock()
	select {
	case s.revisions.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
	select {
	case a := <-answer:
		return a.rev, a.err
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-s.closing: // readRevisions may have answered its last
		return 0, storage.ErrClosed
	}
}

// revisionReaders is how many revision queries may be under way at once:
// each a goroutine of readRevisions. Measured in alternated rounds of
// consistent GETs (8 connections; 1, 2 and 4 beside the memory backend,
// load 10-12): 4 served 3,226-3,540 GETs/s at a median of 1.2-1.3 ms,
// against 2,335-2,921/s at 1.9-2.2 ms for one at a time, for 66-71 µs
// of PostgreSQL's CPU per GET against 28-32.
const revisionReaders = 4

// revisionReads are the calls of Revision waiting for the next query.
type revisionReads struct {
	mu      sync.Mutex
	waiting []chan revisionAnswer
	// wake (buffered) tells readRevisions that calls wait.
	wake chan struct{}
}

// take returns the calls waiting, and forgets them.
func (r *revisionReads) take() []chan revisionAnswer {
	r.mu.Lock()
	defer r.mu.Unlock()
	batch := r.waiting
	r.waiting = nil
	return batch
}

type revisionAnswer struct {
	rev int64
	err error
}

// readRevisions reads the revision for the calls waiting, whenever some
// are; revisionReaders of them run, each one query at a time. Each runs from Open until Close, and answers the calls still waiting
// then with ErrClosed. Its queries are bounded by the store's timeout, not
// by any one caller's context: a caller that stops waiting leaves the
// others theirs.
func (s *Store) readRevisions() {
	for {
		select {
		case <-s.closing:
			for _, ch := range s.revisions.take() {
				ch <- revisionAnswer{err: storage.ErrClosed}
			}
			return
		case <-s.revisions.wake:
		}
		batch := s.revisions.take()
		if len(batch) == 0 {
			continue
		}
		var a revisionAnswer
		ctx, cancel := s.opContext(s.bg)
		var compacted int64
		if err := s.pool.QueryRow(ctx, s.sql.window).Scan(&a.rev, &compacted); err != nil {
			if a.err = s.fail(ctx, err); s.closed.Load() { // Close cancelled s.bg
				a.err = storage.ErrClosed
			}
			a.rev = 0
		}
		cancel()
		for _, ch := range batch {
			ch <- a
		}
	}
}

// Create stores value under key if the key is absent.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	rev, _, err := s.write(ctx, &request{op: opCreate, key: key, value: value})
	return rev, err
}

// Update replaces the value of an existing key, if its ModRevision is
// expect or expect is 0.
func (s *Store) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	rev, _, err := s.write(ctx, &request{op: opUpdate, key: key, value: value, expect: expect})
	return rev, err
}

// Delete removes an existing key, if its ModRevision is expect or expect
// is 0, and returns the value removed with ModRevision set to the
// deletion's revision.
func (s *Store) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	_, removed, err := s.write(ctx, &request{op: opDelete, key: key, expect: expect})
	return removed, err
}

// Close stops the store's goroutines, ends every watch with a final
// [storage.ErrClosed] event, and closes the store's connections. A write
// already being committed is waited for. Every later call, Close included,
// returns [storage.ErrClosed].
func (s *Store) Close() error {
	err := storage.ErrClosed
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.closing)
		s.stopBG() // ends the listener's wait and the poller's reads
		s.goroutines.Wait()
		s.releaseLease()
		s.wake()
		s.pool.Close()
		err = nil
	})
	return err
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
		return fmt.Errorf("postgres: negative revision %d", rev)
	}
	return nil
}

// opContext bounds one call to PostgreSQL by the store's timeout.
func (s *Store) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, s.config.timeout, errStoreTimeout)
}

var errStoreTimeout = errors.New("postgres: the store's timeout passed")
