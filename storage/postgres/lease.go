package postgres

import (
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
func WithWriterLease(d time.Duration) Option {
	return func(c *config) {
		if d != 0 {
			c.lease = d
		}
	}
}

// errLeaseRefused is a batch's first round trip finding another store's
// sole-writer lease: it rolled back, and is sent again once the lease is
// shared.
var errLeaseRefused = fmt.Errorf("%w: postgres: another store holds the sole-writer lease", storage.ErrUnavailable)

type leaseStatements struct {
	schema   []string
	check    string // may a write of $1 commit: mode shared, or held by $1
	canTake  string // could $1 take the lease now
	take     string // take it, under the revision lock
	renew    string
	share    string // turn an expired lease of another to shared
	state    string // mode, holder, and the milliseconds left of it
	register string // $1 writes while shared
	forget   string // the registrations that ran out
	release  string
}

func newLeaseStatements(q func(string) string) leaseStatements {
	lease, writers := q("writer_lease"), q("writers")
	// A store may take the lease if no other store has said lately that
	// it writes, and the lease's time is up, or the store holds it. The
	// time of a shared lease is a duration after it was shared, so that
	// the old holder, which has not said it writes (it had no need to),
	// may say so first.
	takeable := fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM %s WHERE holder <> $1 AND until > now())
AND ((mode = 'sole' AND holder = $1) OR expires_at < now())`, writers)
	return leaseStatements{
		schema: []string{
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (one boolean PRIMARY KEY DEFAULT true CHECK (one), mode text NOT NULL CHECK (mode IN ('sole', 'shared')), holder text NOT NULL, expires_at timestamptz NOT NULL)`, lease),
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (holder text PRIMARY KEY, until timestamptz NOT NULL)`, writers),
			fmt.Sprintf(`INSERT INTO %s (mode, holder, expires_at) VALUES ('shared', '', '-infinity') ON CONFLICT DO NOTHING`, lease),
		},
		check:   fmt.Sprintf(`SELECT mode = 'shared' OR holder = $1, mode = 'shared' FROM %s`, lease),
		canTake: fmt.Sprintf(`SELECT %s FROM %s`, takeable, lease),
		take:    fmt.Sprintf(`UPDATE %s SET mode = 'sole', holder = $1, expires_at = now() + $2 * interval '1 millisecond' WHERE %s`, lease, takeable),
		// A holder stops renewing once another store says it writes, so
		// that its writes wait out the lease once.
		renew: fmt.Sprintf(`UPDATE %s SET expires_at = now() + $2 * interval '1 millisecond'
WHERE mode = 'sole' AND holder = $1 AND NOT EXISTS (SELECT 1 FROM %s WHERE holder <> $1 AND until > now())`, lease, writers),
		share:    fmt.Sprintf(`UPDATE %s SET mode = 'shared', holder = '', expires_at = now() + $2 * interval '1 millisecond' WHERE mode = 'sole' AND holder <> $1 AND expires_at < now()`, lease),
		state:    fmt.Sprintf(`SELECT mode, holder, CASE WHEN mode = 'sole' THEN extract(epoch FROM expires_at - now()) * 1000 ELSE 0 END FROM %s`, lease),
		register: fmt.Sprintf(`INSERT INTO %s (holder, until) VALUES ($1, now() + $2 * interval '1 millisecond') ON CONFLICT (holder) DO UPDATE SET until = excluded.until`, writers),
		forget:   fmt.Sprintf(`DELETE FROM %s WHERE until < now()`, writers),
		release:  fmt.Sprintf(`UPDATE %s SET mode = 'shared', holder = '', expires_at = '-infinity' WHERE mode = 'sole' AND holder = $1`, lease),
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

	// sharedWrite is when (unix nanoseconds) the store last wrote while
	// the lease was shared; registered, when it last said so in the
	// writers table.
	sharedWrite atomic.Int64
	registered  time.Time

	stalled atomic.Bool // the tests' stalled holder: no renewals
}

func newLease(d time.Duration) lease {
	var b [8]byte
	rand.Read(b[:])
	return lease{id: hex.EncodeToString(b[:]), duration: d, margin: d / 8}
}

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

// leaseCheck queues, in a commit's first round trip after the revision
// lock, the lease's check: allowed says whether the batch may commit.
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
	holder := l.holder
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
	if w := l.sharedWrite.Load(); w != 0 && time.Unix(0, w).After(l.registered) && time.Since(l.registered) > l.duration {
		if _, err := s.pool.Exec(ctx, s.sql.lease.register, l.id, writerMemory*ms); err == nil {
			l.registered = time.Now()
		}
	}
	if s.config.lease < 0 { // a store that never takes it
		return
	}
	var may bool
	if err := s.pool.QueryRow(ctx, s.sql.lease.canTake, l.id).Scan(&may); err != nil || !may {
		return
	}
	s.takeLease(ctx)
}

// takeLease takes the lease, under the revision lock: every write
// committed before is at or below the revision read under it, and every
// write of another store after finds the lease taken.
func (s *Store) takeLease(ctx context.Context) {
	l := &s.lease
	var (
		rev int64
		b   pgx.Batch
		tag int64
	)
	b.Queue("BEGIN")
	b.Queue(s.sql.lockRevision).QueryRow(func(row pgx.Row) error { return row.Scan(&rev) })
	b.Queue(s.sql.lease.take, l.id, l.duration.Milliseconds()).Exec(func(ct pgconn.CommandTag) error {
		tag = ct.RowsAffected()
		return nil
	})
	// Each store opened has a name of its own: the registrations of
	// those gone are deleted as the lease is taken, now and then.
	b.Queue(s.sql.lease.forget)
	b.Queue("COMMIT")
	sent := time.Now()
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil || tag != 1 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holder, l.validUntil, l.known = true, sent.Add(l.duration-l.margin), max(l.known, rev)
}

// shareLease turns another store's lease to shared once PostgreSQL's
// clock is past its end, waiting for that, and registers the store as a
// writer: its batch was refused, and is sent again after.
func (s *Store) shareLease(ctx context.Context) error {
	l := &s.lease
	l.lost()
	for {
		var (
			b      pgx.Batch
			mode   string
			holder string
			left   float64
		)
		b.Queue("BEGIN")
		b.Queue(s.sql.lockRevision)
		b.Queue(s.sql.lease.share, l.id, l.duration.Milliseconds())
		b.Queue(s.sql.lease.state).QueryRow(func(row pgx.Row) error { return row.Scan(&mode, &holder, &left) })
		b.Queue(s.sql.lease.register, l.id, writerMemory*l.duration.Milliseconds())
		b.Queue("COMMIT")
		if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
			return s.fail(ctx, err)
		}
		l.registered = time.Now()
		if mode == "shared" || holder == l.id {
			return nil
		}
		wait := min(max(time.Duration(left*float64(time.Millisecond)), time.Millisecond), l.duration)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return s.fail(ctx, ctx.Err())
		}
	}
}

// releaseLease gives the lease up as the store closes, so that another
// store's writes need not wait it out.
func (s *Store) releaseLease() {
	s.lease.lost()
	ctx, cancel := context.WithTimeout(context.Background(), min(s.config.timeout, time.Second))
	defer cancel()
	s.pool.Exec(ctx, s.sql.lease.release, s.lease.id)
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
