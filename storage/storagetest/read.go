package storagetest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

func testRevision(t *testing.T, s storage.Interface) {
	if start := mustRevision(t, s); start < 1 {
		t.Errorf("revision of an empty store = %d, want at least 1", start)
	}
	for i := range 3 {
		rev := mustCreate(t, s, fmt.Sprintf("/r/%d", i), "v")
		wantRevision(t, s, rev, "after Create")
	}
	rev := mustUpdate(t, s, "/r/0", "v2", 0)
	wantRevision(t, s, rev, "after Update")
	rev = mustDelete(t, s, "/r/1", 0)
	wantRevision(t, s, rev, "after Delete")
	if _, err := s.Create(t.Context(), "/r/2", nil); err == nil {
		t.Fatal("Create of an existing key succeeded")
	}
	wantRevision(t, s, rev, "after a failed Create")
}

func testGetAtRevision(t *testing.T, s storage.Interface) {
	r1 := mustCreate(t, s, "/k", "v1")
	r2 := mustUpdate(t, s, "/k", "v2", r1)
	r3 := mustCreate(t, s, "/other", "o")
	r4 := mustDelete(t, s, "/k", r2)
	r5 := mustCreate(t, s, "/k", "v3")
	checkGets(t, s, "", []getCase{
		{"FirstVersion", "/k", r1, kv("/k", "v1", r1, r1), nil},
		{"SecondVersion", "/k", r2, kv("/k", "v2", r1, r2), nil},
		{"UnchangedSince", "/k", r3, kv("/k", "v2", r1, r2), nil},
		{"Deleted", "/k", r4, storage.KeyValue{}, storage.ErrNotFound},
		{"Recreated", "/k", r5, kv("/k", "v3", r5, r5), nil},
		{"Latest", "/k", 0, kv("/k", "v3", r5, r5), nil},
		{"BeforeCreation", "/other", r2, storage.KeyValue{}, storage.ErrNotFound},
		{"AtCreation", "/other", r3, kv("/other", "o", r3, r3), nil},
		{"Future", "/k", r5 + 1, storage.KeyValue{}, storage.ErrFutureRevision},
		{"FarFuture", "/k", r5 + 1000, storage.KeyValue{}, storage.ErrFutureRevision},
	})
}

func testList(t *testing.T, s storage.Interface) {
	// Created out of order; "/ab/x" and "/a" must not match the prefix "/a/".
	revs := map[string]int64{}
	for _, key := range []string{"/a/3", "/ab/x", "/a/1", "/b/x", "/a/4", "/a", "/a/2"} {
		revs[key] = mustCreate(t, s, key, "value of "+key)
	}
	cur := mustRevision(t, s)
	underA := []string{"/a/1", "/a/2", "/a/3", "/a/4"}
	cases := []struct {
		name      string
		prefix    string
		opts      storage.ListOptions
		want      []string
		remaining int64
	}{
		{"Prefix", "/a/", storage.ListOptions{}, underA, 0},
		{"PrefixOfSibling", "/ab/", storage.ListOptions{}, []string{"/ab/x"}, 0},
		{"EmptyPrefix", "", storage.ListOptions{}, []string{"/a", "/a/1", "/a/2", "/a/3", "/a/4", "/ab/x", "/b/x"}, 0},
		{"NoMatch", "/c/", storage.ListOptions{}, nil, 0},
		{"Limit", "/a/", storage.ListOptions{Limit: 2}, underA[:2], 2},
		{"LimitEqualToCount", "/a/", storage.ListOptions{Limit: 4}, underA, 0},
		{"LimitAboveCount", "/a/", storage.ListOptions{Limit: 10}, underA, 0},
		{"StartInclusive", "/a/", storage.ListOptions{Start: "/a/2"}, underA[1:], 0},
		{"StartAndLimit", "/a/", storage.ListOptions{Start: "/a/2", Limit: 1}, underA[1:2], 2},
		{"StartAfterKey", "/a/", storage.ListOptions{Start: "/a/2\x00"}, underA[2:], 0},
		{"StartAtAbsentKey", "/a/", storage.ListOptions{Start: "/a/25"}, underA[2:], 0},
		{"StartBeforePrefix", "/a/", storage.ListOptions{Start: "/0"}, underA, 0},
		{"StartAfterPrefix", "/a/", storage.ListOptions{Start: "/b"}, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := mustList(t, s, tc.prefix, tc.opts)
			if got := keysOf(res.Items); !slices.Equal(got, tc.want) {
				t.Errorf("keys %q, want %q", got, tc.want)
			}
			for _, item := range res.Items {
				rev := revs[item.Key]
				checkKV(t, "item", item, kv(item.Key, "value of "+item.Key, rev, rev))
			}
			if res.Remaining != tc.remaining {
				t.Errorf("Remaining %d, want %d", res.Remaining, tc.remaining)
			}
			if res.Revision != cur {
				t.Errorf("Revision %d, want the current %d", res.Revision, cur)
			}
		})
	}
}

func testListAtRevision(t *testing.T, s storage.Interface) {
	ra := mustCreate(t, s, "/l/a", "a1")
	rb := mustCreate(t, s, "/l/b", "b1")
	rc := mustCreate(t, s, "/l/c", "c1")
	snap := rc
	ua := mustUpdate(t, s, "/l/a", "a2", 0)
	mustDelete(t, s, "/l/b", 0)
	rd := mustCreate(t, s, "/l/d", "d1")
	r0 := mustCreate(t, s, "/l/0", "01")
	cur := r0
	atSnap := []storage.KeyValue{kv("/l/a", "a1", ra, ra), kv("/l/b", "b1", rb, rb), kv("/l/c", "c1", rc, rc)}
	latest := []storage.KeyValue{kv("/l/0", "01", r0, r0), kv("/l/a", "a2", ra, ua), kv("/l/c", "c1", rc, rc), kv("/l/d", "d1", rd, rd)}
	cases := []struct {
		name      string
		opts      storage.ListOptions
		want      []storage.KeyValue
		remaining int64
		revision  int64
	}{
		{"Snapshot", storage.ListOptions{Revision: snap}, atSnap, 0, snap},
		{"SnapshotLimit", storage.ListOptions{Revision: snap, Limit: 1}, atSnap[:1], 2, snap},
		{"SnapshotStart", storage.ListOptions{Revision: snap, Start: "/l/b"}, atSnap[1:], 0, snap},
		{"Latest", storage.ListOptions{}, latest, 0, cur},
		{"LatestLimit", storage.ListOptions{Limit: 2}, latest[:2], 2, cur},
		{"CurrentRevision", storage.ListOptions{Revision: cur}, latest, 0, cur},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := mustList(t, s, "/l/", tc.opts)
			checkKVs(t, "items", res.Items, tc.want)
			if res.Remaining != tc.remaining {
				t.Errorf("Remaining %d, want %d", res.Remaining, tc.remaining)
			}
			if res.Revision != tc.revision {
				t.Errorf("Revision %d, want %d", res.Revision, tc.revision)
			}
		})
	}
	t.Run("Future", func(t *testing.T) {
		_, err := s.List(t.Context(), "/l/", storage.ListOptions{Revision: cur + 1})
		wantErr(t, "List at a future revision", err, storage.ErrFutureRevision)
	})
}

func testListPaging(t *testing.T, s storage.Interface) {
	for i := range 10 {
		mustCreate(t, s, fmt.Sprintf("/p/%02d", i), "v1")
	}
	mustCreate(t, s, "/q/x", "outside")
	want := mustList(t, s, "/p/", storage.ListOptions{})

	// Writes between pages, on keys already read, not yet read, and new
	// keys on both sides of the cursor; none may show in the pages.
	between := []func(){
		func() {
			mustUpdate(t, s, "/p/05", "v2", 0)
			mustCreate(t, s, "/p/035", "new")
			mustUpdate(t, s, "/p/01", "v2", 0)
		},
		func() {
			mustDelete(t, s, "/p/07", 0)
			mustCreate(t, s, "/p/000", "new")
			mustCreate(t, s, "/p/99", "new")
		},
		func() {
			mustUpdate(t, s, "/p/09", "v2", 0)
			mustDelete(t, s, "/p/00", 0)
		},
	}
	wantRemaining := []int64{7, 4, 1, 0}
	var got []storage.KeyValue
	opts := storage.ListOptions{Limit: 3}
	for page := 0; ; page++ {
		if page == len(wantRemaining) {
			t.Fatalf("more than %d pages", page)
		}
		res := mustList(t, s, "/p/", opts)
		if page == 0 {
			opts.Revision = res.Revision
		}
		if res.Revision != want.Revision {
			t.Errorf("page %d: revision %d, want %d", page, res.Revision, want.Revision)
		}
		if res.Remaining != wantRemaining[page] {
			t.Errorf("page %d: Remaining %d, want %d", page, res.Remaining, wantRemaining[page])
		}
		got = append(got, res.Items...)
		if res.Remaining == 0 || len(res.Items) == 0 {
			break
		}
		opts.Start = res.Items[len(res.Items)-1].Key + "\x00"
		if page < len(between) {
			between[page]()
		}
	}
	checkKVs(t, "pages", got, want.Items)
}

// testEveryRevision makes a random history of creates, updates and deletes
// on a few keys, then reads the store at every revision of it: each List
// and Get gives the state after exactly the writes up to that revision.
func testEveryRevision(t *testing.T, s storage.Interface) {
	const writes, keys = 60, 4
	rng := rand.New(rand.NewPCG(5, 5))
	type state = map[string]storage.KeyValue
	start := mustRevision(t, s)
	states := []state{{}} // states[i]: after revision start+i
	for i := range writes {
		cur := maps.Clone(states[len(states)-1])
		key := fmt.Sprintf("/e/%d", rng.IntN(keys))
		value := fmt.Sprintf("v%d", i)
		old, live := cur[key]
		switch {
		case !live:
			rev := mustCreate(t, s, key, value)
			cur[key] = kv(key, value, rev, rev)
		case rng.IntN(3) == 0:
			mustDelete(t, s, key, old.ModRevision)
			delete(cur, key)
		default:
			rev := mustUpdate(t, s, key, value, old.ModRevision)
			cur[key] = kv(key, value, old.CreateRevision, rev)
		}
		states = append(states, cur)
	}
	wantRevision(t, s, start+writes, "after the writes")
	for i, st := range states {
		rev := start + int64(i)
		want := slices.SortedFunc(maps.Values(st), func(a, b storage.KeyValue) int { return strings.Compare(a.Key, b.Key) })
		res := mustList(t, s, "/e/", storage.ListOptions{Revision: rev})
		checkKVs(t, fmt.Sprintf("List at %d", rev), res.Items, want)
		if res.Revision != rev {
			t.Errorf("List at %d: revision %d", rev, res.Revision)
		}
		for k := range keys {
			key := fmt.Sprintf("/e/%d", k)
			got, err := s.Get(t.Context(), key, rev)
			if w, live := st[key]; live {
				if err != nil {
					t.Errorf("Get(%q) at %d: %v, want %s", key, rev, err, fmtKV(w))
				} else {
					checkKV(t, fmt.Sprintf("Get(%q) at %d", key, rev), got, w)
				}
			} else {
				wantErr(t, fmt.Sprintf("Get(%q) at %d", key, rev), err, storage.ErrNotFound)
			}
		}
	}
}

// testRemainingBeyondTheCap writes RemainingCountCap+2 keys and reads pages
// of one from three places: Remaining is the exact count of the keys after
// the page, or -1 where more than RemainingCountCap remain (a backend may
// stop counting there), both at the current revision and at an earlier
// one with a key changed since; a list paged through to its end still
// ends with 0 and reads every key.
func testRemainingBeyondTheCap(t *testing.T, s storage.Interface) {
	const n = storage.RemainingCountCap + 2
	var wg sync.WaitGroup
	for w := range 16 { // concurrent, for few commits where the backend batches them
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if _, err := s.Create(t.Context(), fmt.Sprintf("/rc/%05d", i), []byte("v")); err != nil {
					t.Errorf("Create: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	rev := mustRevision(t, s)
	mustUpdate(t, s, fmt.Sprintf("/rc/%05d", n-2), "w", 0) // a key changed since rev
	for _, at := range []int64{0, rev} {
		for _, tc := range []struct {
			start string
			after int64 // keys after the page
		}{
			{"", n - 1},
			{"/rc/00001", n - 2},
			{fmt.Sprintf("/rc/%05d", n-2), 1},
		} {
			res := mustList(t, s, "/rc/", storage.ListOptions{Start: tc.start, Limit: 1, Revision: at})
			ok := res.Remaining == tc.after || res.Remaining == -1 && tc.after > storage.RemainingCountCap
			if len(res.Items) != 1 || !ok {
				t.Errorf("at %d from %q: %d items and Remaining %d, want 1 item and %d more (or -1 past %d)",
					at, tc.start, len(res.Items), res.Remaining, tc.after, storage.RemainingCountCap)
			}
		}
	}
	read, opts := 0, storage.ListOptions{Limit: 100}
	for page := 0; ; page++ {
		if page > n/100+1 {
			t.Fatalf("more than %d pages", page)
		}
		res := mustList(t, s, "/rc/", opts)
		read += len(res.Items)
		if res.Remaining == 0 || len(res.Items) == 0 {
			break
		}
		opts.Revision, opts.Start = res.Revision, res.Items[len(res.Items)-1].Key+"\x00"
	}
	if read != n {
		t.Errorf("paged through %d keys, want %d", read, n)
	}
}
