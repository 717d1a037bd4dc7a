package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/sqlite"
)

func mustWrite(t testing.TB, s storage.Interface, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(context.Background(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	return rev
}

func mustCheck(t testing.TB, s *sqlite.Store) {
	t.Helper()
	if err := sqlite.Check(s); err != nil {
		t.Fatal(err)
	}
}

// TestReopen: everything a store held, history and revision included, is
// there after Close and Open, and writes go on from the same revision.
func TestReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kapi.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a := mustWrite(t, s, "/a", "a1")
	a2, err := s.Update(ctx, "/a", []byte("a2"), a)
	if err != nil {
		t.Fatal(err)
	}
	b := mustWrite(t, s, "/b", "b1")
	bd, err := s.Delete(ctx, "/b", b)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, path)
	mustCheck(t, s)
	if rev, err := s.Revision(ctx); err != nil || rev != bd.ModRevision {
		t.Fatalf("Revision after reopening = %d, %v; want %d", rev, err, bd.ModRevision)
	}
	for _, tc := range []struct {
		name, key, want string
		rev             int64
	}{
		{"Latest", "/a", "a2", 0},
		{"Older", "/a", "a1", a},
		{"Deleted", "/b", "b1", b},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if kv, err := s.Get(ctx, tc.key, tc.rev); err != nil || string(kv.Value) != tc.want {
				t.Errorf("Get %s at %d = %+v, %v; want %q", tc.key, tc.rev, kv, err, tc.want)
			}
		})
	}
	if kv, err := s.Get(ctx, "/a", 0); err != nil || kv.ModRevision != a2 || kv.CreateRevision != a {
		t.Errorf("Get /a = %+v, %v", kv, err)
	}
	if _, err := s.Get(ctx, "/b", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Get deleted /b: %v", err)
	}
	events, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	c := mustWrite(t, s, "/c", "c1")
	if c != bd.ModRevision+1 {
		t.Errorf("first write after reopening at %d, want %d", c, bd.ModRevision+1)
	}
	var got []string
	for range 5 {
		ev := <-events
		got = append(got, fmt.Sprintf("%v %s %s %d", ev.Type, ev.Key, ev.Value, ev.ModRevision))
	}
	want := []string{
		fmt.Sprintf("PUT /a a1 %d", a), fmt.Sprintf("PUT /a a2 %d", a2), fmt.Sprintf("PUT /b b1 %d", b),
		fmt.Sprintf("DELETE /b b1 %d", bd.ModRevision), fmt.Sprintf("PUT /c c1 %d", c),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("watch from 0 after reopening:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAgainstMemory runs the same random history of writes, compactions,
// reads and watches on an SQLite store and on a memory store with the same
// history bounds, closing and reopening the SQLite store now and then:
// every result, error and window boundary must be the same. The byte
// budget is left large: the two count history bytes differently.
func TestAgainstMemory(t *testing.T) {
	const ops = 3000
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kapi.db")
	opts := []sqlite.Option{sqlite.WithHistory(200)}
	q := mustOpen(t, path, opts...)
	m := memory.New(memory.WithHistory(200))
	defer m.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"/k", "/k\x00", "/k\x00a", "/ka", "/k/a", "/k/b", "/k/a/x", "/l", "/k\xff", "/", "/k/", "/kz", "/k\xff\xff"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	same := func(what string, qv, mv any, qerr, merr error) {
		t.Helper()
		if fmt.Sprint(qv) != fmt.Sprint(mv) || (qerr == nil) != (merr == nil) ||
			qerr != nil && !sameSentinel(qerr, merr) {
			t.Fatalf("%s: sqlite %v, %v; memory %v, %v", what, qv, qerr, mv, merr)
		}
	}
	for i := range ops {
		rev, _ := m.Revision(ctx)
		qrev, _ := q.Revision(ctx)
		same(fmt.Sprintf("op %d: Revision", i), qrev, rev, nil, nil)
		switch n := rng.IntN(100); {
		case n < 25:
			k, v := key(), randomValue(rng)
			qr, qerr := q.Create(ctx, k, v)
			mr, merr := m.Create(ctx, k, v)
			same(fmt.Sprintf("op %d: Create(%q)", i, k), qr, mr, qerr, merr)
		case n < 55:
			k, v, expect := key(), randomValue(rng), anyExpect(rng, rev)
			qr, qerr := q.Update(ctx, k, v, expect)
			mr, merr := m.Update(ctx, k, v, expect)
			same(fmt.Sprintf("op %d: Update(%q, %d)", i, k, expect), qr, mr, qerr, merr)
		case n < 65:
			k, expect := key(), anyExpect(rng, rev)
			qkv, qerr := q.Delete(ctx, k, expect)
			mkv, merr := m.Delete(ctx, k, expect)
			same(fmt.Sprintf("op %d: Delete(%q, %d)", i, k, expect), fmtKV(qkv), fmtKV(mkv), qerr, merr)
		case n < 78:
			k, at := key(), rng.Int64N(rev+2)
			qkv, qerr := q.Get(ctx, k, at)
			mkv, merr := m.Get(ctx, k, at)
			same(fmt.Sprintf("op %d: Get(%q, %d)", i, k, at), fmtKV(qkv), fmtKV(mkv), qerr, merr)
		case n < 93:
			prefix := key()
			prefix = prefix[:min(len(prefix), rng.IntN(4))]
			lo := storage.ListOptions{Revision: rng.Int64N(rev + 2), Limit: rng.Int64N(4)}
			if rng.IntN(2) == 0 {
				lo.Start = key()
			}
			ql, qerr := q.List(ctx, prefix, lo)
			ml, merr := m.List(ctx, prefix, lo)
			same(fmt.Sprintf("op %d: List(%q, %+v)", i, prefix, lo), fmtList(ql), fmtList(ml), qerr, merr)
		case n < 96:
			from := rng.Int64N(rev + 1)
			qe, qerr := watchUntil(ctx, q, from, rev)
			me, merr := watchUntil(ctx, m, from, rev)
			same(fmt.Sprintf("op %d: Watch from %d", i, from), fmtEvents(qe), fmtEvents(me), qerr, merr)
		case n < 98:
			at := rng.Int64N(rev + 2)
			same(fmt.Sprintf("op %d: Compact(%d)", i, at), nil, nil, q.Compact(ctx, at), m.Compact(ctx, at))
		default:
			mustCheck(t, q)
			if err := q.Close(); err != nil {
				t.Fatal(err)
			}
			q = mustOpen(t, path, opts...)
		}
	}
	mustCheck(t, q)
}

// watchUntil collects the events of a watch of every key from rev until
// the one at to, the store's revision: one per revision, or an error.
func watchUntil(ctx context.Context, s storage.Interface, from, to int64) ([]storage.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ch, err := s.Watch(ctx, "", from)
	if err != nil {
		return nil, err
	}
	var evs []storage.Event
	for next := max(from, 1) + 1; next <= to; next++ {
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return evs, ev.Err
			}
			evs = append(evs, ev)
		case <-ctx.Done():
			return evs, fmt.Errorf("no event at %d: %w", next, ctx.Err())
		}
	}
	return evs, nil
}

func randomValue(rng *rand.Rand) []byte {
	if rng.IntN(10) == 0 {
		return []byte{}
	}
	return []byte(strings.Repeat("v", rng.IntN(200)) + fmt.Sprint(rng.Uint32()))
}

// anyExpect returns no precondition, or a revision that may or may not be
// the key's.
func anyExpect(rng *rand.Rand, rev int64) int64 {
	if rng.IntN(3) == 0 {
		return 0
	}
	return rng.Int64N(rev + 1)
}

func sameSentinel(a, b error) bool {
	for _, s := range []error{storage.ErrNotFound, storage.ErrExists, storage.ErrConflict, storage.ErrExpired, storage.ErrFutureRevision} {
		if errors.Is(a, s) != errors.Is(b, s) {
			return false
		}
	}
	return true
}

func fmtKV(kv storage.KeyValue) string {
	return fmt.Sprintf("{%q=%q %d %d}", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision)
}

func fmtList(l storage.ListResult) string {
	var b strings.Builder
	for _, kv := range l.Items {
		b.WriteString(fmtKV(kv))
	}
	return fmt.Sprintf("[%s] at %d, %d more", b.String(), l.Revision, l.Remaining)
}

func fmtEvents(evs []storage.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		prev := "nil"
		if ev.Prev != nil {
			prev = fmt.Sprintf("%q", ev.Prev)
		}
		fmt.Fprintf(&b, "%v %s prev=%s err=%v\n", ev.Type, fmtKV(ev.KeyValue), prev, ev.Err)
	}
	return b.String()
}
