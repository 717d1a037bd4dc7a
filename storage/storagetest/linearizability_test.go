package storagetest

import (
	"context"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Histories written by hand: what the checker must accept and reject.
func TestLinearizableChecker(t *testing.T) {
	get := func(begin, end int64, key int, value string, create, mod int64) linCall {
		return linCall{kind: linGet, key: key, begin: begin, end: end,
			kv: storage.KeyValue{Value: []byte(value), CreateRevision: create, ModRevision: mod}}
	}
	getMissing := func(begin, end int64, key int) linCall {
		return linCall{kind: linGet, key: key, begin: begin, end: end, outcome: linNotFound}
	}
	create := func(begin, end int64, key int, value string, rev int64) linCall {
		return linCall{kind: linCreate, key: key, value: value, begin: begin, end: end, rev: rev}
	}
	update := func(begin, end int64, key int, value string, expect, rev int64) linCall {
		return linCall{kind: linUpdate, key: key, value: value, expect: expect, begin: begin, end: end, rev: rev}
	}
	failed := func(c linCall, o linOutcome) linCall { c.outcome, c.rev = o, 0; return c }
	cases := []struct {
		name  string
		calls []linCall
		want  bool
	}{
		{"Sequential", []linCall{
			create(1, 2, 0, "a", 11), get(3, 4, 0, "a", 11, 11), update(5, 6, 0, "b", 11, 12), get(7, 8, 0, "b", 11, 12),
		}, true},
		{"ReadAfterWriteMissesIt", []linCall{
			create(1, 2, 0, "a", 11), getMissing(3, 4, 0),
		}, false},
		{"ConcurrentReadMayMissIt", []linCall{
			create(1, 3, 0, "a", 11), getMissing(2, 4, 0),
		}, true},
		{"StaleReadAfterUpdate", []linCall{
			create(1, 2, 0, "a", 11), update(3, 4, 0, "b", 0, 12), get(5, 6, 0, "a", 11, 11),
		}, false},
		{"ReadsGoBackInTime", []linCall{
			// The update overlaps both reads, but once one read saw it a
			// later read cannot miss it.
			create(1, 2, 0, "a", 11), update(3, 10, 0, "b", 0, 12), get(4, 5, 0, "b", 11, 12), get(6, 7, 0, "a", 11, 11),
		}, false},
		{"ConcurrentWritesInEitherOrder", []linCall{
			create(1, 4, 0, "a", 12), create(2, 3, 1, "b", 11), get(5, 6, 0, "a", 12, 12), get(5, 6, 1, "b", 11, 11),
		}, true},
		{"RevisionsOutOfRealTimeOrder", []linCall{
			// The first create returned before the second began, yet got
			// the later revision.
			create(1, 2, 0, "a", 12), create(3, 4, 1, "b", 11),
		}, false},
		{"RevisionSkipped", []linCall{
			create(1, 2, 0, "a", 11), create(3, 4, 1, "b", 13),
		}, false},
		{"TwoCreatesBothSucceed", []linCall{
			create(1, 3, 0, "a", 11), create(2, 4, 0, "b", 12),
		}, false},
		{"OneCreateLoses", []linCall{
			create(1, 3, 0, "a", 11), failed(create(2, 4, 0, "b", 0), linExists),
		}, true},
		{"ConflictThatWasNot", []linCall{
			create(1, 2, 0, "a", 11), failed(update(3, 4, 0, "b", 11, 0), linConflict),
		}, false},
		{"StalePreconditionPassed", []linCall{
			create(1, 2, 0, "a", 11), update(3, 4, 0, "b", 11, 12), update(5, 6, 0, "c", 11, 13),
		}, false},
		{"LostUpdate", []linCall{
			// Two conditional updates from the same revision, concurrent:
			// only one may succeed.
			create(1, 2, 0, "a", 11), update(3, 5, 0, "b", 11, 12), update(4, 6, 0, "c", 11, 13),
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := linearizable(tc.calls, 10); got != tc.want {
				t.Errorf("linearizable = %v, want %v\n%s", got, tc.want, explainHistory(tc.calls, nil))
			}
		})
	}
}

// staleReads is a store whose Get answers, now and then, from the revision
// before the latest: the kind of bug a read served from a lagging cache or
// replica has.
type staleReads struct {
	*memory.Store
	mu sync.Mutex
	n  int
}

func (s *staleReads) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	s.mu.Lock()
	s.n++
	stale := s.n%3 == 0
	s.mu.Unlock()
	if cur, err := s.Revision(ctx); err == nil && stale && rev == 0 && cur > 1 {
		rev = cur - 1
	}
	return s.Store.Get(ctx, key, rev)
}

// TestLinearizableCatchesStaleReads: histories recorded on a store with
// stale reads are found not linearizable, and those on a correct store
// linearizable, by the same code the suite runs.
func TestLinearizableCatchesStaleReads(t *testing.T) {
	const rounds = 10
	caught := 0
	for round := range rounds {
		for _, stale := range []bool{false, true} {
			var s storage.Interface = memory.New()
			if stale {
				s = &staleReads{Store: s.(*memory.Store)}
			}
			start, _ := s.Revision(t.Context())
			calls, err := recordHistory(t.Context(), s, "/lin/", 4, 25, uint64(round))
			if err != nil {
				t.Fatal(err)
			}
			ok, longest := linearizable(calls, start)
			if !stale && !ok {
				t.Fatalf("round %d: a history of the memory store is not linearizable:\n%s", round, explainHistory(calls, longest))
			}
			if stale && !ok {
				caught++
			}
		}
	}
	t.Logf("stale reads caught in %d of %d histories", caught, rounds)
	if caught < rounds/2 {
		t.Errorf("stale reads caught in only %d of %d histories", caught, rounds)
	}
}
