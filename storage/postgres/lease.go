package postgres

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kapi-dev/kapi/storage"
)

// The sole-writer lease (see doc.go, "Consistent reads without a query"):
// while one store is the only one whose writes the database accepts, it
// knows every committed revision from its own commits, and Revision
// answers from them without a query.

const (
	// defaultLease is how long a sole-writer lease lasts unrenewed: how
	// long another replica's first write waits when the holder vanished.
	defaultLease = 2 * time.Second
	// minLease is the shortest lease a store takes: its goroutine renews
	// every quarter of it, and PostgreSQL is sent it in milliseconds.
	minLease = 100 * time.Millisecond
	// writerMemory is how many leases long a store that wrote while the
	// lease was shared keeps it shared: so that replicas that all write,
	// however seldom, do not make each other wait out a lease again and
	// again.
	writerMemory = 10
)

// WithWriterLease sets how long the sole-writer lease lasts unrenewed (2s
// by default): how long another replica's first write may wait for a
// holder that vanished. d below 0 makes the store never take the lease
// (its writes still honour another store's); a store then asks PostgreSQL
// for the revision on every consistent read, as all do while several write.
// A duration is clamped to at least 100ms and at most half the store's
// [WithTimeout], so that a write waiting out a vanished holder's lease
// still commits within its timeout; give every store on a schema the same
// lease and timeout (a write waits out the holder's lease, whatever its
// own store's, and fails with a timeout if its own timeout is shorter).
func WithWriterLease(d time.Duration) Option {
	return func(c *config) {
		if d != 0 {
			c.lease = d
		}
	}
}

// leaseDuration is the lease a store with config c takes (or, if it never
// takes one, registers by).
func leaseDuration(c config) time.Duration {
	d := c.lease
	if d <= 0 {
		d = defaultLease
	}
	return max(minLease, min(d, c.timeout/2))
}

// errLeaseRefused is a batch's first round trip finding another store's
// sole-writer lease: it rolled back, and is sent again once the lease is
// shared.
var errLeaseRefused = fmt.Errorf("%w: postgres: another store holds the sole-writer lease", storage.ErrUnavailable)

// The lease's row holds no time: term counts every take, renewal, share
// and release, and lease_ms is the duration its last one granted. A store
// that would take or share another's lease watches the term for that
// duration on its own monotonic clock (see doc.go); PostgreSQL's clock
// only dates the writers' registrations, which decide who tries, not who
// may.
type leaseStatements struct {
	schema []string
	check  string // may a write of $1 commit: mode shared, or held by $1
	// check's answer on each of the current rows of keys $2, or on one
	// row of NULLs if there is none
	checkAndRead string
	state        string // mode, holder, term, lease_ms, and whether another ($1) writes
	take         string // $1 takes it for $2 ms if the term is still $3, under the revision lock
	renew        string
	share        string // turn another's lease to shared if its term is still $3
	register     string // $1 writes while shared
	forget       string // the registrations that ran out, but $1's
	release      string
	leave        string // $1's registration
}

func newLeaseStatements(q func(string) string) leaseStatements {
	lease, writers, current := q("writer_lease"), q("writers"), q("current")
	othersWrite := fmt.Sprintf(`EXISTS (SELECT 1 FROM %s WHERE holder <> $1 AND until > now())`, writers)
	ms := `$2::bigint`
	return leaseStatements{
		schema: []string{
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (one boolean PRIMARY KEY DEFAULT true CHECK (one), mode text NOT NULL CHECK (mode IN ('sole', 'shared')), holder text NOT NULL, term bigint NOT NULL, lease_ms bigint NOT NULL)`, lease),
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (holder text PRIMARY KEY, until timestamptz NOT NULL)`, writers),
			fmt.Sprintf(`INSERT INTO %s (mode, holder, term, lease_ms) VALUES ('shared', '', 0, 0) ON CONFLICT DO NOTHING`, lease),
		},
		check: fmt.Sprintf(`SELECT mode = 'shared' OR holder = $1, mode = 'shared' FROM %s`, lease),
		// The read is a subquery of its own, planned as it would be
		// alone (the join's planner otherwise takes the lease table,
		// never analyzed, for hundreds of rows, and materializes the
		// read's rows for each).
		checkAndRead: fmt.Sprintf(`SELECT l.allowed, l.shared, c.key, c.value, coalesce(c.create_rev, 0), coalesce(c.mod_rev, 0)
FROM (SELECT mode = 'shared' OR holder = $1 AS allowed, mode = 'shared' AS shared FROM %s LIMIT 1) l
LEFT JOIN LATERAL (SELECT key, value, create_rev, mod_rev FROM %s WHERE key = ANY ($2)) c ON true`, lease, current),
		state: fmt.Sprintf(`SELECT mode, holder, term, lease_ms, %s FROM %s`, othersWrite, lease),
		take: fmt.Sprintf(`UPDATE %s SET mode = 'sole', holder = $1, term = term + 1, lease_ms = %s WHERE term = $3 AND NOT %s`,
			lease, ms, othersWrite),
		// A holder stops renewing once another store says it writes, so
		// that its writes wait out the lease once.
		renew: fmt.Sprintf(`UPDATE %s SET term = term + 1, lease_ms = %s WHERE mode = 'sole' AND holder = $1 AND NOT %s`,
			lease, ms, othersWrite),
		share: fmt.Sprintf(`UPDATE %s SET mode = 'shared', holder = '', term = term + 1, lease_ms = %s WHERE mode = 'sole' AND holder <> $1 AND term = $3`,
			lease, ms),
		register: fmt.Sprintf(`INSERT INTO %s (holder, until) VALUES ($1, now() + $2 * interval '1 millisecond') ON CONFLICT (holder) DO UPDATE SET until = excluded.until`, writers),
		forget:   fmt.Sprintf(`DELETE FROM %s WHERE until < now() AND holder <> $1`, writers),
		// A lease given up can be taken at once: there is no holder to
		// wait out.
		release: fmt.Sprintf(`UPDATE %s SET mode = 'shared', holder = '', term = term + 1, lease_ms = 0 WHERE mode = 'sole' AND holder = $1`, lease),
		leave:   fmt.Sprintf(`DELETE FROM %s WHERE holder = $1`, writers),
	}
}

// lease is a store's side of the sole-writer lease.
type lease struct {
	id       string // the store's name in the lease table
	duration time.Duration
	// margin is taken off the holder's own reckoning of the lease, for
	// the drift of its clock's rate against PostgreSQL's.
	margin time.Duration

	mu sync.Mutex
	// holder: the store took the lease (and has not learnt it lost
	// it); until when, by its own monotonic clock, it may answer
	// consistent reads itself.
	holder     bool
	validUntil time.Time
	// known is the highest revision the store knows committed: of its
	// own commits, and the revision when it took the lease.
	known int64
	// inflight, while a commit's second round trip is under way, is
	// closed when its answer is in.
	inflight chan struct{}
	// suspect: a commit's outcome is unknown (it may have committed a
	// revision above known); cleared by the next commit's lock.
	suspect bool

	// registered is when the store last said, in the writers table,
	// that it writes while the lease is shared: the committer sets it
	// (shareLease), the lease's goroutine reads and sets it (keepLease).
	registered time.Time

	// sharedWrite is when (unix nanoseconds) the store last wrote while
	// the lease was shared.
	sharedWrite atomic.Int64
	// seen is the lease's goroutine's own: the term it last read of a
	// lease it does not hold, and when (by its monotonic clock) the
	// answer came.
	seen observation

	stalled atomic.Bool // the tests' stalled holder: no renewals
}

func newLease(d time.Duration) lease {
	var b [8]byte
	rand.Read(b[:])
	return lease{id: hex.EncodeToString(b[:]), duration: d, margin: d / 8}
}

// leaseState is the lease's row as a store read it.
type leaseState struct {
	mode, holder string
	term, ms     int64
	othersWrite  bool
}

func (st *leaseState) scan(row pgx.Row) error {
	return row.Scan(&st.mode, &st.holder, &st.term, &st.ms, &st.othersWrite)
}

// observation is a store watching another's lease (or a shared one) for
// a change of term: the lease may be shared or taken once the term has
// stayed the same for its duration since the answer that showed it came.
// The holder counted its lease from before it sent the renewal that
// set that term, which ran on the server before the answer was sent: so
// by then, clock rates apart, the holder's reckoning has run out.
type observation struct {
	term int64
	at   time.Time // zero: none yet
	wait time.Duration
}

// update records st, read by an answer that came at at; over says whether
// the term has now stayed the same for its duration.
func (o *observation) update(st leaseState, at time.Time) (over bool) {
	if o.at.IsZero() || st.term != o.term {
		*o = observation{term: st.term, at: at, wait: time.Duration(st.ms) * time.Millisecond}
		return false
	}
	return time.Since(o.at) >= o.wait
}

// left is how long until the term may be acted on.
func (o *observation) left() time.Duration { return o.wait - time.Since(o.at) }

// revision is the store's revision for a consistent read, if the store
// holds the lease: every revision committed when the read began is the
// store's own or below the one it took the lease at, so once the commit
// under way (if any) is answered, known is at least the last.
func (l *lease) revision(ctx context.Context) (int64, bool) {
	l.mu.Lock()
	if !l.holder || l.suspect || !time.Now().Before(l.validUntil) {
		l.mu.Unlock()
		return 0, false
	}
	wait := l.inflight
	l.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return 0, false
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.known, !l.suspect
}

// locked is a commit's first round trip, under the revision lock: rev
// is the store's revision then, so known is at least it.
func (l *lease) locked(rev int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.known, l.suspect = max(l.known, rev), false
}

// sending is a commit's second round trip about to be sent.
func (l *lease) sending() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight = make(chan struct{})
}

// sent is its answer: committed at last, or an error after which it may
// have committed.
func (l *lease) sent(last int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.known = max(l.known, last)
	} else {
		l.suspect = true
	}
	if l.inflight != nil {
		close(l.inflight)
		l.inflight = nil
	}
}

// lost is the store learning another holds the lease or it is shared.
func (l *lease) lost() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holder, l.validUntil = false, time.Time{}
}

// checkAndRead queues, in a commit's first round trip after the revision
// lock, the lease's check (allowed says whether the batch may commit) and
// the read of the current rows of the batch's keys (add is called with
// each).
//
// The check is in a statement after the lock's, and must stay so: a
// statement under READ COMMITTED reads in a snapshot taken when it
// starts, so this one sees the lease as the lock's previous holder (a
// take, a share) left it. Joined into the lock's SELECT ... FOR UPDATE it
// would save PostgreSQL one statement a batch, but a SELECT that waited
// for the lock reads the newest version of the row it locks only: the
// lease row would come from its snapshot of before the wait, and a write
// could commit under a lease another store took meanwhile.
//
// The read must come after the lock as well, for the same reason, and so
// the check and the read are one statement (one Bind and Execute less a
// batch), but for the tests' switches: without the check, and with
// unordered revisions, whose read locks the current rows (FOR UPDATE,
// which a LEFT JOIN cannot take on its nullable side).
func (s *Store) checkAndRead(b *pgx.Batch, keys bytesArray, allowed *bool, add func(v version)) {
	if s.config.skipLeaseCheck || s.config.unorderedRevisions {
		s.leaseCheck(b, allowed)
		b.Queue(s.sql.readCurrent, keys).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				v := version{live: true}
				if err := rows.Scan(&v.key, &v.value, &v.create, &v.mod); err != nil {
					return err
				}
				add(v)
			}
			return rows.Err()
		})
		return
	}
	b.Queue(s.sql.lease.checkAndRead, s.lease.id, keys).Query(func(rows pgx.Rows) error {
		var (
			shared bool
			n      int
		)
		for ; rows.Next(); n++ {
			v := version{live: true}
			if err := rows.Scan(allowed, &shared, &v.key, &v.value, &v.create, &v.mod); err != nil {
				return err
			}
			if v.key != nil { // not the row of NULLs
				add(v)
			}
		}
		if err := rows.Err(); err != nil || n == 0 { // no lease row: as leaseCheck's QueryRow
			return cmp.Or(err, pgx.ErrNoRows)
		}
		if shared {
			s.lease.sharedWrite.Store(time.Now().UnixNano())
		}
		return nil
	})
}

// leaseCheck queues the lease's check alone (see checkAndRead).
func (s *Store) leaseCheck(b *pgx.Batch, allowed *bool) {
	if s.config.skipLeaseCheck {
		*allowed = true
		return
	}
	b.Queue(s.sql.lease.check, s.lease.id).QueryRow(func(row pgx.Row) error {
		var shared bool
		if err := row.Scan(allowed, &shared); err != nil {
			return err
		}
		if shared {
			s.lease.sharedWrite.Store(time.Now().UnixNano())
		}
		return nil
	})
}

// leaseLoop keeps the lease: renews it while held, takes it when it may,
// and says the store writes while it is shared.
func (s *Store) leaseLoop() {
	tick := time.NewTicker(s.lease.duration / 4)
	defer tick.Stop()
	for {
		s.keepLease()
		select {
		case <-s.closing:
			return
		case <-tick.C:
		}
	}
}

func (s *Store) keepLease() {
	if s.lease.stalled.Load() {
		return
	}
	ctx, cancel := s.opContext(s.bg)
	defer cancel()
	l := &s.lease
	l.mu.Lock()
	holder, registered := l.holder, l.registered
	l.mu.Unlock()
	ms := l.duration.Milliseconds()
	if holder {
		sent := time.Now()
		tag, err := s.pool.Exec(ctx, s.sql.lease.renew, l.id, ms)
		if err != nil {
			return // it runs out by itself
		}
		l.mu.Lock()
		if tag.RowsAffected() == 1 && l.holder {
			l.validUntil = sent.Add(l.duration - l.margin)
		} else {
			l.holder, l.validUntil = false, time.Time{}
		}
		l.mu.Unlock()
		return
	}
	if w := l.sharedWrite.Load(); w != 0 && time.Unix(0, w).After(registered) && time.Since(registered) > l.duration {
		// The registrations of stores gone (each store opened has a
		// name of its own) go as the live ones are renewed, so that
		// the table stays as small as the stores that write, however
		// long the lease stays shared.
		var b pgx.Batch
		b.Queue(s.sql.lease.register, l.id, writerMemory*ms)
		b.Queue(s.sql.lease.forget, l.id)
		if err := s.pool.SendBatch(ctx, &b).Close(); err == nil {
			l.setRegistered(time.Now())
		}
	}
	if s.config.lease < 0 { // a store that never takes it
		return
	}
	var st leaseState
	if err := st.scan(s.pool.QueryRow(ctx, s.sql.lease.state, l.id)); err != nil {
		return
	}
	at := time.Now()
	if st.othersWrite {
		l.seen = observation{}
		return
	}
	if (st.mode != "sole" || st.holder != l.id) && !l.seen.update(st, at) {
		return
	}
	s.takeLease(ctx, st.term)
}

// setRegistered records the store's registration as a writer, made at
// (the committer's and the lease goroutine's both make them).
func (l *lease) setRegistered(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if at.After(l.registered) {
		l.registered = at
	}
}

// takeLease takes the lease if its term is still term, under the revision
// lock: every write committed before is at or below the revision read
// under it, and every write of another store after finds the lease taken.
func (s *Store) takeLease(ctx context.Context, term int64) {
	l := &s.lease
	l.seen = observation{}
	var (
		rev int64
		b   pgx.Batch
		tag int64
	)
	b.Queue("BEGIN")
	b.Queue(s.sql.lockRevision).QueryRow(func(row pgx.Row) error { return row.Scan(&rev) })
	b.Queue(s.sql.lease.take, l.id, l.duration.Milliseconds(), term).Exec(func(ct pgconn.CommandTag) error {
		tag = ct.RowsAffected()
		return nil
	})
	b.Queue(s.sql.lease.forget, l.id)
	b.Queue("COMMIT")
	sent := time.Now()
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil || tag != 1 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holder, l.validUntil, l.known = true, sent.Add(l.duration-l.margin), max(l.known, rev)
}

// shareLease registers the store as a writer (which stops the holder's
// renewals) and turns another store's lease to shared, under the revision
// lock, once its term has stayed the same for its duration by this
// store's clock, waiting for that: its batch was refused, and is sent
// again after.
func (s *Store) shareLease(ctx context.Context) error {
	l := &s.lease
	l.lost()
	var seen observation
	share := int64(-1) // the term to share, once waited out
	for {
		var (
			b  pgx.Batch
			st leaseState
		)
		b.Queue("BEGIN")
		b.Queue(s.sql.lockRevision)
		if share >= 0 {
			b.Queue(s.sql.lease.share, l.id, l.duration.Milliseconds(), share)
		}
		b.Queue(s.sql.lease.register, l.id, writerMemory*l.duration.Milliseconds())
		b.Queue(s.sql.lease.forget, l.id)
		b.Queue(s.sql.lease.state, l.id).QueryRow(st.scan)
		b.Queue("COMMIT")
		err := s.pool.SendBatch(ctx, &b).Close()
		at := time.Now()
		if err != nil {
			return s.fail(ctx, err)
		}
		l.setRegistered(at)
		if st.mode == "shared" || st.holder == l.id {
			return nil
		}
		seen.update(st, at)
		select {
		case <-time.After(max(seen.left(), 0)):
		case <-ctx.Done():
			return s.fail(ctx, ctx.Err())
		}
		share = seen.term
	}
}

// releaseLease gives the lease up as the store closes, so that another
// store's writes need not wait it out, and removes the store's
// registration as a writer.
func (s *Store) releaseLease() {
	s.lease.lost()
	ctx, cancel := context.WithTimeout(context.Background(), min(s.config.timeout, time.Second))
	defer cancel()
	var b pgx.Batch
	b.Queue(s.sql.lease.release, s.lease.id)
	b.Queue(s.sql.lease.leave, s.lease.id)
	s.pool.SendBatch(ctx, &b).Close()
}

// refused rolls back a batch the lease refused, and puts its requests
// back as not sent: they are sent again once the lease is shared.
func (s *Store) refused(ctx context.Context, conn *pgxpool.Conn, reqs []*request) error {
	for _, r := range reqs {
		r.state.CompareAndSwap(sent, pending)
	}
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		return s.fail(ctx, err)
	}
	return errLeaseRefused
}
