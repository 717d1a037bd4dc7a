package storagetest

import (
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

func testEmpty(t *testing.T, s storage.Interface) {
	start := mustRevision(t, s)
	if start < 1 {
		t.Errorf("revision of an empty store = %d, want at least 1", start)
	}
	_, err := s.Get(t.Context(), "/k", 0)
	wantErr(t, "Get on an empty store", err, storage.ErrNotFound)
	res := mustList(t, s, "", storage.ListOptions{})
	if len(res.Items) != 0 || res.Remaining != 0 || res.Revision != start {
		t.Errorf("List of an empty store = %d items, remaining %d, revision %d; want none, 0, %d",
			len(res.Items), res.Remaining, res.Revision, start)
	}
}

func testCreateGet(t *testing.T, s storage.Interface) {
	start := mustRevision(t, s)
	rev := mustCreate(t, s, "/k", "v1")
	if rev != start+1 {
		t.Errorf("revision of the first write = %d, want %d", rev, start+1)
	}
	want := kv("/k", "v1", rev, rev)
	checkKV(t, "Get latest", mustGet(t, s, "/k", 0), want)
	checkKV(t, "Get at the write's revision", mustGet(t, s, "/k", rev), want)
	wantRevision(t, s, rev, "after Create")
}

func testCreateExisting(t *testing.T, s storage.Interface) {
	c := mustCreate(t, s, "/k", "v1")
	_, err := s.Create(t.Context(), "/k", []byte("v2"))
	wantErr(t, "second Create", err, storage.ErrExists)
	wantRevision(t, s, c, "after a failed Create")
	checkKV(t, "Get after a failed Create", mustGet(t, s, "/k", 0), kv("/k", "v1", c, c))

	d := mustDelete(t, s, "/k", 0)
	r := mustCreate(t, s, "/k", "v3")
	if r != d+1 {
		t.Errorf("Create after Delete: revision %d, want %d", r, d+1)
	}
	checkKV(t, "Get after re-creation", mustGet(t, s, "/k", 0), kv("/k", "v3", r, r))
}

func testUpdate(t *testing.T, s storage.Interface) {
	c := mustCreate(t, s, "/k", "v1")
	u1 := mustUpdate(t, s, "/k", "v2", 0)
	if u1 != c+1 {
		t.Errorf("Update: revision %d, want %d", u1, c+1)
	}
	checkKV(t, "Get after Update", mustGet(t, s, "/k", 0), kv("/k", "v2", c, u1))
	u2 := mustUpdate(t, s, "/k", "v3", u1)
	if u2 != u1+1 {
		t.Errorf("second Update: revision %d, want %d", u2, u1+1)
	}
	checkKV(t, "Get after second Update", mustGet(t, s, "/k", 0), kv("/k", "v3", c, u2))
	wantRevision(t, s, u2, "after Update")
}

func testDelete(t *testing.T, s storage.Interface) {
	c := mustCreate(t, s, "/k", "v1")
	u := mustUpdate(t, s, "/k", "v2", 0)
	got, err := s.Delete(t.Context(), "/k", 0)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	checkKV(t, "Delete's result", got, kv("/k", "v2", c, u+1))
	wantRevision(t, s, u+1, "after Delete")
	_, err = s.Get(t.Context(), "/k", 0)
	wantErr(t, "Get after Delete", err, storage.ErrNotFound)
	if res := mustList(t, s, "/", storage.ListOptions{}); len(res.Items) != 0 {
		t.Errorf("List after Delete: %s, want nothing", fmtKVs(res.Items))
	}
}

func testNotFound(t *testing.T, s storage.Interface) {
	mustCreate(t, s, "/gone", "v")
	mustDelete(t, s, "/gone", 0)
	before := mustRevision(t, s)
	ops := []struct {
		name string
		do   func(key string) error
	}{
		{"Get", func(key string) error { _, err := s.Get(t.Context(), key, 0); return err }},
		{"Update", func(key string) error { _, err := s.Update(t.Context(), key, []byte("x"), 0); return err }},
		{"Delete", func(key string) error { _, err := s.Delete(t.Context(), key, 0); return err }},
	}
	keys := []struct{ name, key string }{{"Missing", "/missing"}, {"Deleted", "/gone"}}
	for _, op := range ops {
		for _, k := range keys {
			t.Run(op.name+k.name, func(t *testing.T) {
				wantErr(t, fmt.Sprintf("%s(%q)", op.name, k.key), op.do(k.key), storage.ErrNotFound)
				wantRevision(t, s, before, "after a failed "+op.name)
			})
		}
	}
}

func testStoreWideRevisions(t *testing.T, s storage.Interface) {
	last := mustRevision(t, s)
	step := func(what string, rev int64) int64 {
		t.Helper()
		if rev != last+1 {
			t.Errorf("%s: revision %d, want %d, the next of the whole store", what, rev, last+1)
		}
		last = rev
		return rev
	}
	a := step("create /a", mustCreate(t, s, "/a", "1"))
	b := step("create /b", mustCreate(t, s, "/b", "1"))
	a2 := step("update /a", mustUpdate(t, s, "/a", "2", a))
	c := step("create /c/x", mustCreate(t, s, "/c/x", "1"))
	step("delete /b", mustDelete(t, s, "/b", b))
	c2 := step("update /c/x", mustUpdate(t, s, "/c/x", "2", 0))
	wantRevision(t, s, last, "after the writes")
	checkKV(t, "Get /a", mustGet(t, s, "/a", 0), kv("/a", "2", a, a2))
	checkKV(t, "Get /c/x", mustGet(t, s, "/c/x", 0), kv("/c/x", "2", c, c2))
}

func testPreconditions(t *testing.T, s storage.Interface) {
	// Each case writes its own key twice, so that it has a stale revision
	// (its creation) and a current one.
	cases := []struct {
		name    string
		delete  bool
		expect  func(created, current int64) int64
		wantErr error
	}{
		{"UpdateCurrent", false, func(_, cur int64) int64 { return cur }, nil},
		{"UpdateStale", false, func(c, _ int64) int64 { return c }, storage.ErrConflict},
		{"UpdateFuture", false, func(_, cur int64) int64 { return cur + 1000 }, storage.ErrConflict},
		{"UpdateUnconditional", false, func(_, _ int64) int64 { return 0 }, nil},
		{"DeleteCurrent", true, func(_, cur int64) int64 { return cur }, nil},
		{"DeleteStale", true, func(c, _ int64) int64 { return c }, storage.ErrConflict},
		{"DeleteFuture", true, func(_, cur int64) int64 { return cur + 1000 }, storage.ErrConflict},
		{"DeleteUnconditional", true, func(_, _ int64) int64 { return 0 }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := "/pre/" + tc.name
			c := mustCreate(t, s, key, "v1")
			cur := mustUpdate(t, s, key, "v2", 0)
			expect := tc.expect(c, cur)
			var (
				rev int64
				err error
			)
			if tc.delete {
				var removed storage.KeyValue
				removed, err = s.Delete(t.Context(), key, expect)
				rev = removed.ModRevision
			} else {
				rev, err = s.Update(t.Context(), key, []byte("v3"), expect)
			}
			if tc.wantErr != nil {
				wantErr(t, fmt.Sprintf("expect %d, current %d", expect, cur), err, tc.wantErr)
				wantRevision(t, s, cur, "after a failed precondition")
				checkKV(t, "Get after a failed precondition", mustGet(t, s, key, 0), kv(key, "v2", c, cur))
				return
			}
			if err != nil {
				t.Fatalf("expect %d, current %d: %v", expect, cur, err)
			}
			if rev != cur+1 {
				t.Errorf("write's revision %d, want %d", rev, cur+1)
			}
			if tc.delete {
				_, err := s.Get(t.Context(), key, 0)
				wantErr(t, "Get after Delete", err, storage.ErrNotFound)
			} else {
				checkKV(t, "Get after Update", mustGet(t, s, key, 0), kv(key, "v3", c, rev))
			}
		})
	}
}
