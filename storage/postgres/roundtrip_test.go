package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
)

// roundTrips is a pgx tracer that counts the round trips a store makes to
// PostgreSQL: each statement sent on its own, and each batch (sent in one
// go, however many statements it holds), by the first statement's text.
type roundTrips struct {
	mu    sync.Mutex
	trips []string
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.add(data.SQL)
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	var sqls []string
	for _, q := range data.Batch.QueuedQueries {
		sqls = append(sqls, q.SQL)
	}
	r.add("batch: " + strings.Join(sqls, "; "))
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (r *roundTrips) add(sql string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trips = append(r.trips, strings.Join(strings.Fields(sql), " "))
}

// take returns the round trips since the last call whose text contains
// one of marks (all of them with no marks), and forgets every one.
func (r *roundTrips) take(marks ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var got []string
	for _, t := range r.trips {
		if len(marks) == 0 {
			got = append(got, t)
			continue
		}
		for _, m := range marks {
			if strings.Contains(t, m) {
				got = append(got, t)
				break
			}
		}
	}
	r.trips = nil
	return got
}

// The statements of a write's commit name the log table as it inserts
// into it, or the revision row as they lock it; a write that fails its
// precondition may stop at the lock.
var commitMarks = []string{`INSERT INTO "`, `FOR UPDATE`, "BEGIN", "COMMIT", "ROLLBACK"}

// TestTwoRoundTripsPerCommit counts the round trips of writes made one at
// a time, so that each is a commit of its own: each costs two round trips
// to PostgreSQL, however it ends (applied: the lock and reads, then the
// writes and COMMIT; refused by its precondition: the lock and reads,
// then ROLLBACK). The writes are counted while the store holds the
// sole-writer lease, as one store alone does: until it takes it (a
// moment after it opens, later on a loaded machine) the store writes
// with the lease shared, and registers itself as a writer now and then,
// a round trip that is the lease's and not a write's.
func TestTwoRoundTripsPerCommit(t *testing.T) {
	tr := &roundTrips{}
	s := mustStore(t, freshSchema(t), postgres.WithTracer(tr))
	ctx := t.Context()
	// The first use of each statement prepares it: a round trip of its
	// own, once per connection.
	warm := func() {
		for i := range 8 {
			key := fmt.Sprintf("/warm/%d", i)
			rev, err := s.Create(ctx, key, []byte("v"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Update(ctx, key, []byte("w"), rev); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Delete(ctx, key, 0); err != nil {
				t.Fatal(err)
			}
			_, _ = s.Create(ctx, "/warm/exists", []byte("v"))
		}
	}
	warm()
	const n = 50
	var trips []string
	// A lease lost and taken again while counting (a renewal late by
	// more than the lease's margin) adds the lease's round trips: counted
	// again, up to three times.
	for attempt := 0; attempt < 3; attempt++ {
		for deadline := time.Now().Add(30 * time.Second); !s.HoldsLease(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the store did not take the sole-writer lease in 30s")
			}
		}
		tr.take()
		for i := range n {
			key := fmt.Sprintf("/k/%d/%d", attempt, i)
			rev, err := s.Create(ctx, key, []byte("v"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Update(ctx, key, []byte("w"), rev); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Update(ctx, key, []byte("x"), rev); !errors.Is(err, storage.ErrConflict) {
				t.Fatalf("an update expecting a replaced revision: %v, want ErrConflict", err)
			}
			if _, err := s.Delete(ctx, key, 0); err != nil {
				t.Fatal(err)
			}
		}
		trips = tr.take(commitMarks...)
		if len(trips) == 2*4*n || !leaseTaken(trips) {
			break
		}
		t.Logf("the lease was taken again while counting (%d round trips): counting again", len(trips))
	}
	t.Logf("%d writes, %d round trips to commit them; the first: %q", 4*n, len(trips), trips[0])
	if len(trips) != 2*4*n {
		t.Errorf("%d writes made one at a time took %d round trips to commit, want two each", 4*n, len(trips))
	}
	// And few statements in each, each a Bind and an Execute PostgreSQL
	// parses and runs: BEGIN, the lock, and the lease's check with the
	// current rows; the writes with the counter and the notification,
	// and COMMIT.
	for _, trip := range trips {
		if n := strings.Count(trip, "; ") + 1; n > 3 {
			t.Errorf("a round trip of a commit sent %d statements, want at most 3: %s", n, trip)
			break
		}
	}
}

// leaseTaken says whether trips hold the lease's own round trips: a take
// or a writer's registration.
func leaseTaken(trips []string) bool {
	for _, t := range trips {
		if strings.Contains(t, `SET mode = 'sole'`) || strings.Contains(t, `."writers" (holder`) {
			return true
		}
	}
	return false
}

// TestListAtRevisionRoundTrips counts the round trips of a list at a
// revision, a page of a relist (each page reads at the first page's
// revision): one.
func TestListAtRevisionRoundTrips(t *testing.T) {
	tr := &roundTrips{}
	s := mustStore(t, freshSchema(t), postgres.WithTracer(tr))
	ctx := t.Context()
	var rev int64
	for i := range 20 {
		var err error
		if rev, err = s.Create(ctx, fmt.Sprintf("/k/%02d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	// At the store's revision, then at an older one; each twice, the
	// first to prepare what it needs.
	for _, at := range []int64{rev, rev - 5} {
		for try := range 2 {
			tr.take()
			res, err := s.List(ctx, "/k/", storage.ListOptions{Revision: at, Limit: 5, Start: "/k/03"})
			if err != nil {
				t.Fatal(err)
			}
			var trips []string
			for _, trip := range tr.take(`"log"`, `"current"`, `"revision"`, "BEGIN", "begin", "ROLLBACK", "rollback", "COMMIT") {
				if !strings.HasPrefix(trip, "SELECT c.compacted, l.rev") { // the poller's, not the list's
					trips = append(trips, trip)
				}
			}
			if try == 1 {
				t.Logf("a page at revision %d of %d: %d round trips: %q", at, rev, len(trips), trips)
				if len(trips) != 1 {
					t.Errorf("a page at revision %d of %d took %d round trips, want 1", at, rev, len(trips))
				}
			}
			if len(res.Items) != 5 || res.Items[0].Key != "/k/03" {
				t.Errorf("the page at %d: %d items from %q", at, len(res.Items), res.Items[0].Key)
			}
		}
	}
}

// TestRemainingIsBounded: a page counts at most 1,000 keys past itself
// for Remaining, so that each page of a long list costs about its own
// rows: past that, Remaining is -1, not counted (kube-apiserver gives the
// exact remainingItemCount or none, never a lower bound); up to 1,000 it
// is exact, and 0 only on the last page. At the store's revision and at
// an older one.
func TestRemainingIsBounded(t *testing.T) {
	s := mustStore(t, freshSchema(t))
	ctx := t.Context()
	const n = 1300
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Go(func() {
			for i := w; i < n; i += 10 {
				if _, err := s.Create(ctx, fmt.Sprintf("/k/%04d", i), []byte("v")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	old, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/other", []byte("v")); err != nil { // so that old is not the latest
		t.Fatal(err)
	}
	cases := []struct {
		start     string
		remaining int64
	}{
		{"", -1},          // 1200 after the page
		{"/k/0150", -1},   // 1050
		{"/k/0199", -1},   // 1001
		{"/k/0200", 1000}, // exactly as many as it counts
		{"/k/0500", 700},
		{"/k/1200", 0},
	}
	for _, at := range []int64{0, old} {
		for _, tc := range cases {
			res, err := s.List(ctx, "/k/", storage.ListOptions{Revision: at, Start: tc.start, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Items) != 100 || res.Remaining != tc.remaining {
				t.Errorf("at %d from %q: %d items, Remaining %d; want 100, %d", at, tc.start, len(res.Items), res.Remaining, tc.remaining)
			}
		}
	}
}

// TestOwnWritesNotReadBack: the events of a store's own commits reach its
// watchers from the committer, without a read of the log per commit
// (before, the poller read each batch back: a query per commit, as much
// PostgreSQL work as the write's own statements). A write of another
// store on the schema, between two of this store's, is read from the log,
// and its events and this store's reach the watcher in revision order,
// each as the log holds it. The poll interval is an hour, so that no
// timed poll counts.
func TestOwnWritesNotReadBack(t *testing.T) {
	schema := freshSchema(t)
	tr := &roundTrips{}
	s := mustStore(t, schema, postgres.WithTracer(tr), postgres.WithPollInterval(time.Hour))
	other := mustStore(t, schema, postgres.WithPollInterval(time.Hour))
	ctx := t.Context()
	start, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events, err := s.Watch(ctx, "/k/", start)
	if err != nil {
		t.Fatal(err)
	}
	next := func() storage.Event {
		t.Helper()
		select {
		case ev := <-events:
			if ev.Err != nil {
				t.Fatal(ev.Err)
			}
			return ev
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return storage.Event{}
	}
	check := func(ev storage.Event, typ storage.EventType, key, value, prev string, rev int64) {
		t.Helper()
		if ev.Type != typ || ev.Key != key || string(ev.Value) != value || string(ev.Prev) != prev || ev.ModRevision != rev {
			t.Errorf("event %v %s=%q prev %q at %d, want %v %s=%q prev %q at %d", ev.Type, ev.Key, ev.Value, ev.Prev, ev.ModRevision, typ, key, value, prev, rev)
		}
	}
	tr.take()
	const n = 30
	for i := range n {
		key := fmt.Sprintf("/k/%d", i)
		rev, err := s.Create(ctx, key, []byte("a"))
		if err != nil {
			t.Fatal(err)
		}
		check(next(), storage.Put, key, "a", "", rev)
		if i == n/2 { // another replica's write, which this store's committer does not know
			orev, err := other.Update(ctx, key, []byte("o"), rev)
			if err != nil {
				t.Fatal(err)
			}
			check(next(), storage.Put, key, "o", "a", orev)
		}
		prev := map[bool]string{false: "a", true: "o"}[i == n/2]
		if rev, err = s.Update(ctx, key, []byte("b"), 0); err != nil {
			t.Fatal(err)
		}
		check(next(), storage.Put, key, "b", prev, rev)
		removed, err := s.Delete(ctx, key, 0)
		if err != nil {
			t.Fatal(err)
		}
		check(next(), storage.Delete, key, "b", "b", removed.ModRevision)
	}
	polls := tr.take("WHERE rev > $1 ORDER BY rev LIMIT $2")
	t.Logf("%d writes of this store's, one of another's: %d reads of the log", 3*n, len(polls))
	// The other store's write needs one; its notification, and this
	// store's own, may wake the poller now and then before the committer
	// has passed it its batch.
	if len(polls) > n/3 {
		t.Errorf("%d writes made one at a time took %d reads of the log, want few: a commit's events come from the committer", 3*n, len(polls))
	}
}
