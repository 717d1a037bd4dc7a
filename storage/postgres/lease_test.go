package postgres_test

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage/postgres"
)

// waitFor polls cond until it holds, failing the test after a minute (a
// bound for a stuck store, not a measure of speed).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after a minute", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSoleWriterReadsWithoutQuery: a store alone on its schema takes the
// sole-writer lease, and then answers Revision from its own commits,
// without a round trip, with the revision of its last write.
func TestSoleWriterReadsWithoutQuery(t *testing.T) {
	tr := &roundTrips{}
	s := mustStore(t, freshSchema(t), postgres.WithTracer(tr))
	ctx := t.Context()
	waitFor(t, "holding the lease", s.HoldsLease)
	for i := range 20 {
		rev, err := s.Create(ctx, "/k/"+string(rune('a'+i)), []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		tr.take()
		got, err := s.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != rev {
			t.Errorf("Revision after the write at %d: %d", rev, got)
		}
		if trips := tr.take(`SELECT r.rev, c.compacted`); len(trips) != 0 {
			t.Errorf("Revision on the lease's holder queried PostgreSQL: %q", trips)
		}
	}
}

// leaseHolder returns a store on schema that has written and holds the
// lease (of a second).
func leaseHolder(t *testing.T, schema string) *postgres.Store {
	t.Helper()
	a := mustStore(t, schema, postgres.WithWriterLease(time.Second))
	if _, err := a.Create(t.Context(), "/k/a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "holding the lease", a.HoldsLease)
	return a
}

// staleRead writes through store b while a holds the lease, and says
// whether a's Revision, asked after b's write was acknowledged, missed it.
func staleRead(t *testing.T, bOpts ...postgres.Option) bool {
	schema := freshSchema(t)
	a := leaseHolder(t, schema)
	ctx := t.Context()
	// b never takes the lease itself: a keeps it.
	b := mustStore(t, schema, append([]postgres.Option{postgres.WithWriterLease(-1)}, bOpts...)...)
	rev, err := b.Create(ctx, "/k/b", []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("b wrote at %d; a's Revision after: %d", rev, got)
	return got < rev
}

// TestLeaseStopsStaleConsistentReads: a write of another store waits out
// the holder's lease, so the holder no longer answers from its own
// commits once that write is acknowledged. With the other store's check
// of the lease left out, its write commits at once, and the holder's
// Revision misses it: the test that must catch that does.
func TestLeaseStopsStaleConsistentReads(t *testing.T) {
	if staleRead(t) {
		t.Error("the lease's holder answered a consistent read without another store's acknowledged write")
	}
	t.Run("WithoutLeaseCheck", func(t *testing.T) {
		if !staleRead(t, postgres.WithoutLeaseCheck()) {
			t.Error("a store whose writes skip the lease's check went unnoticed")
		}
	})
}

// TestLeaseTakeover: a holder that stops renewing (hung, or killed) holds
// the others' writes up for at most its lease; then the other store
// writes, the lease is shared, the old holder's Revision asks PostgreSQL,
// and the new writer, alone, takes the lease.
func TestLeaseTakeover(t *testing.T) {
	schema := freshSchema(t)
	a := leaseHolder(t, schema)
	ctx := t.Context()
	a.StallLease(true)
	b := mustStore(t, schema, postgres.WithWriterLease(time.Second))
	if b.HoldsLease() {
		t.Fatal("b holds the lease a holds")
	}
	rev, err := b.Create(ctx, "/k/b", []byte("b"))
	if err != nil {
		t.Fatalf("b's write after a stopped renewing: %v", err)
	}
	if a.HoldsLease() {
		t.Error("a still holds the lease after b wrote")
	}
	got, err := a.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got < rev {
		t.Errorf("a's Revision after b's write at %d: %d", rev, got)
	}
	// b writes alone: it takes the lease, and a's writes then wait for
	// it once, and succeed.
	waitFor(t, "b holding the lease", b.HoldsLease)
	a.StallLease(false)
	rev, err = a.Update(ctx, "/k/a", []byte("a2"), 0)
	if err != nil {
		t.Fatalf("a's write while b holds the lease: %v", err)
	}
	if got, err := b.Revision(ctx); err != nil || got < rev {
		t.Errorf("b's Revision after a's write at %d: %d, %v", rev, got, err)
	}
}
