package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var _ storagetest.Compactor = (*bolt.Store)(nil)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"))
		t.Cleanup(func() {
			if err := bolt.Check(s); err != nil && !errors.Is(err, storage.ErrClosed) {
				t.Errorf("after the case, the file is inconsistent: %v", err)
			}
		})
		return s
	})
}

// mustOpen opens the store at path, closed when the test ends.
func mustOpen(t testing.TB, path string, opts ...bolt.Option) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, opts...)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustWrite(t testing.TB, s storage.Interface, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(context.Background(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	return rev
}

// TestReopen: everything a store held, history and revision included, is
// there after Close and Open, and writes go on from the same revision.
func TestReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kapi.db")
	s, err := bolt.Open(path)
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
	if rev, err := s.Revision(ctx); err != nil || rev != bd.ModRevision {
		t.Fatalf("Revision after reopening = %d, %v; want %d", rev, err, bd.ModRevision)
	}
	if kv, err := s.Get(ctx, "/a", 0); err != nil || string(kv.Value) != "a2" || kv.ModRevision != a2 || kv.CreateRevision != a {
		t.Errorf("Get /a = %+v, %v", kv, err)
	}
	if kv, err := s.Get(ctx, "/a", a); err != nil || string(kv.Value) != "a1" {
		t.Errorf("Get /a at %d = %+v, %v", a, kv, err)
	}
	if kv, err := s.Get(ctx, "/b", b); err != nil || string(kv.Value) != "b1" {
		t.Errorf("Get /b at %d = %+v, %v", b, kv, err)
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

// TestAgainstMemory runs the same random history of writes, compactions
// and reads on a bolt store and on a memory store with the same history
// bounds, closing and reopening the bolt store now and then: every result,
// error and window boundary must be the same. The byte budget moves the
// window only if both count the bytes alike.
func TestAgainstMemory(t *testing.T) {
	const ops, keys = 3000, 12
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kapi.db")
	opts := []bolt.Option{bolt.WithHistory(200), bolt.WithHistoryBytes(4 << 10)}
	b := mustOpen(t, path, opts...)
	m := memory.New(memory.WithHistory(200), memory.WithHistoryBytes(4<<10))
	defer m.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() string {
		// Keys that sort around each other, NUL bytes included.
		return [...]string{"/k", "/k\x00", "/k\x00a", "/ka", "/k/a", "/k/b", "/k/a/x", "/l", "/k\xff", "/", "/k/", "/kz"}[rng.IntN(keys)]
	}
	same := func(what string, bv, mv any, berr, merr error) {
		t.Helper()
		if fmt.Sprint(bv) != fmt.Sprint(mv) || (berr == nil) != (merr == nil) ||
			berr != nil && !sameSentinel(berr, merr) {
			t.Fatalf("%s: bolt %v, %v; memory %v, %v", what, bv, berr, mv, merr)
		}
	}
	for i := range ops {
		rev, _ := m.Revision(ctx)
		switch n := rng.IntN(100); {
		case n < 25:
			k, v := key(), randomValue(rng)
			br, berr := b.Create(ctx, k, v)
			mr, merr := m.Create(ctx, k, v)
			same(fmt.Sprintf("op %d: Create(%q)", i, k), br, mr, berr, merr)
		case n < 55:
			k, v, expect := key(), randomValue(rng), anyExpect(rng, rev)
			br, berr := b.Update(ctx, k, v, expect)
			mr, merr := m.Update(ctx, k, v, expect)
			same(fmt.Sprintf("op %d: Update(%q, %d)", i, k, expect), br, mr, berr, merr)
		case n < 65:
			k, expect := key(), anyExpect(rng, rev)
			bkv, berr := b.Delete(ctx, k, expect)
			mkv, merr := m.Delete(ctx, k, expect)
			same(fmt.Sprintf("op %d: Delete(%q, %d)", i, k, expect), fmtKV(bkv), fmtKV(mkv), berr, merr)
		case n < 80:
			k, at := key(), rng.Int64N(rev+2)
			bkv, berr := b.Get(ctx, k, at)
			mkv, merr := m.Get(ctx, k, at)
			same(fmt.Sprintf("op %d: Get(%q, %d)", i, k, at), fmtKV(bkv), fmtKV(mkv), berr, merr)
		case n < 95:
			prefix := key()
			prefix = prefix[:min(len(prefix), rng.IntN(4))]
			lo := storage.ListOptions{Revision: rng.Int64N(rev + 2), Limit: rng.Int64N(4)}
			if rng.IntN(2) == 0 {
				lo.Start = key()
			}
			bl, berr := b.List(ctx, prefix, lo)
			ml, merr := m.List(ctx, prefix, lo)
			same(fmt.Sprintf("op %d: List(%q, %+v)", i, prefix, lo), fmtList(bl), fmtList(ml), berr, merr)
		case n < 97:
			at := rng.Int64N(rev + 2)
			same(fmt.Sprintf("op %d: Compact(%d)", i, at), nil, nil, b.Compact(ctx, at), m.Compact(ctx, at))
		default:
			if err := bolt.Check(b); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			b = mustOpen(t, path, opts...)
		}
	}
	if err := bolt.Check(b); err != nil {
		t.Fatal(err)
	}
}

func randomValue(rng *rand.Rand) []byte {
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

// TestGroupCommit: concurrent writers share commits, so there are fewer
// commits than writes.
func TestGroupCommit(t *testing.T) {
	const writers, perWriter = 8, 50
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"))
	before := bolt.Commits(s)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				mustWrite(t, s, fmt.Sprintf("/g/%d/%d", w, i), "v")
			}
		})
	}
	wg.Wait()
	commits := bolt.Commits(s) - before
	t.Logf("%d writes in %d commits", writers*perWriter, commits)
	if commits >= writers*perWriter {
		t.Errorf("%d writes took %d commits: none was shared", writers*perWriter, commits)
	}
}

// TestLoneWriterNeverLingers: one writer at a time is never known to have
// company, so its writes never wait for others: each is a commit of its
// own, made at once.
func TestLoneWriterNeverLingers(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"), bolt.WithLinger(10*time.Millisecond))
	const writes = 50
	for i := range writes {
		mustWrite(t, s, fmt.Sprintf("/l/%d", i), "v")
	}
	if commits, lingers := bolt.Commits(s), bolt.Lingers(s); commits != writes || lingers != 0 {
		t.Errorf("%d writes, one after another: %d commits, %d of them waited for more writers; want %d and none",
			writes, commits, lingers, writes)
	}
}

// TestCommitWaitsForKnownWriters: a commit waits for the writers it knows
// of. Writer A's first write is held in its commit while seven others queue
// up behind it; once it is committed, the seven are known to be writing
// alongside A, so their commit waits for A's next write, which A sends only
// once that commit is waiting (or, were it not to wait, made): two commits
// in all, not three.
func TestCommitWaitsForKnownWriters(t *testing.T) {
	const others = 7
	hold := make(chan struct{})
	var commits atomic.Int32
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"), bolt.WithLinger(time.Hour),
		bolt.WithBeforeCommit(func(int) {
			if commits.Add(1) == 1 {
				<-hold
			}
		}))
	ctx := t.Context()
	errs := make(chan error, others+1)
	create := func(key string) {
		_, err := s.Create(ctx, key, []byte("v"))
		errs <- err
	}
	go create("/a/1")
	for commits.Load() == 0 { // A's commit is held
		time.Sleep(time.Millisecond)
	}
	for i := range others {
		go create(fmt.Sprintf("/b/%d", i))
	}
	for bolt.Queued(s) < others {
		time.Sleep(time.Millisecond)
	}
	close(hold)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	for bolt.Lingers(s) == 0 && commits.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	go create("/a/2")
	for range others + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := bolt.Commits(s); n != 2 {
		t.Errorf("%d commits, want 2: the seven writers queued behind A did not wait for A's next write", n)
	}
}

// TestHistoryBoundsFile rewrites one key with large values far more often
// than the byte budget holds: the file stops growing.
func TestHistoryBoundsFile(t *testing.T) {
	const budget, size, updates = 1 << 20, 64 << 10, 400
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kapi.db")
	s := mustOpen(t, path, bolt.WithHistoryBytes(budget))
	mustWrite(t, s, "/k", "")
	value := make([]byte, size)
	var sizes []int64
	for i := range updates {
		if _, err := s.Update(ctx, "/k", value, 0); err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
		if held, _ := bolt.HeldBytes(s); held > budget+size {
			t.Fatalf("after update %d the file holds %d bytes of history, budget %d", i, held, budget)
		}
		if i%100 == 99 {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, fi.Size())
		}
	}
	t.Logf("file size after each 100 updates of %d KiB: %v", size>>10, sizes)
	// Written: 25 MiB. Kept: the budget and the latest value, in pages
	// bbolt reuses, in a file bbolt grows by doubling: a few MiB, however
	// long the updates go on.
	if largest := slices.Max(sizes); largest > 8*budget {
		t.Errorf("the file grew to %d bytes (sizes %v) with a %d-byte budget", largest, sizes, budget)
	}
	if err := bolt.Check(s); err != nil {
		t.Fatal(err)
	}
}

func TestHistoryWindow(t *testing.T) {
	ctx := t.Context()
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"), bolt.WithHistory(3))
	for i := range 10 {
		mustWrite(t, s, fmt.Sprintf("/k/%d", i), "v")
	}
	// Writes at 2..11; with 3 revisions of history, 8 is the oldest readable.
	if _, err := s.Get(ctx, "/k/0", 7); !errors.Is(err, storage.ErrExpired) {
		t.Errorf("Get at 7: %v, want ErrExpired", err)
	}
	if _, err := s.Watch(ctx, "/k/", 7); !errors.Is(err, storage.ErrExpired) {
		t.Errorf("Watch from 7: %v, want ErrExpired", err)
	}
	if res, err := s.List(ctx, "/k/", storage.ListOptions{Revision: 8}); err != nil || len(res.Items) != 7 {
		t.Errorf("List at 8: %d items, %v; want 7", len(res.Items), err)
	}
	if c, _ := bolt.Compacted(s); c != 8 {
		t.Errorf("window starts at %d, want 8", c)
	}
}

// TestSlowWatcherExpires: a watcher that reads nothing while the history
// window passes it does not hold the writers up, and ends with ErrExpired.
func TestSlowWatcherExpires(t *testing.T) {
	const history, writes = 16, 300
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"), bolt.WithHistory(history))
	ch, err := s.Watch(t.Context(), "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range writes {
		mustWrite(t, s, fmt.Sprintf("/k/%04d", i), "v")
	}
	n := 0
	var last storage.Event
	for ev := range ch {
		if last = ev; ev.Err == nil {
			n++
		}
	}
	if !errors.Is(last.Err, storage.ErrExpired) {
		t.Errorf("final event %+v, want ErrExpired", last)
	}
	if n >= writes-history {
		t.Errorf("the watcher read %d events, more than it can hold when the window passes it", n)
	}
}

func TestCloseEndsWatchesAndCalls(t *testing.T) {
	ctx := t.Context()
	baseline := runtime.NumGoroutine()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "kapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, "/a", "a")
	caughtUp, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-caughtUp; ev.Key != "/a" {
		t.Fatalf("event %+v, want /a", ev)
	}
	behind, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for name, ch := range map[string]<-chan storage.Event{"caught up": caughtUp, "behind": behind} {
		var last storage.Event
		for ev := range ch {
			last = ev
		}
		if !errors.Is(last.Err, storage.ErrClosed) {
			t.Errorf("%s watcher's final event %+v, want ErrClosed", name, last)
		}
	}
	// What every method answers after Close is the suite's Close case.
	waitGoroutines(t, baseline)
}

// TestCloseDuringWrites closes the store under concurrent writers: each
// write either succeeds, and is there after reopening, or fails with
// ErrClosed.
func TestCloseDuringWrites(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kapi.db")
	s, err := bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	done := map[string]int64{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("/w/%d/%d", w, i)
				rev, err := s.Create(ctx, key, []byte("v"))
				if errors.Is(err, storage.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Create: %v", err)
					return
				}
				mu.Lock()
				done[key] = rev
				mu.Unlock()
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s = mustOpen(t, path)
	for key, rev := range done {
		if kv, err := s.Get(ctx, key, 0); err != nil || kv.ModRevision != rev {
			t.Errorf("acknowledged %s at %d: %+v, %v", key, rev, kv, err)
		}
	}
	t.Logf("%d writes before Close", len(done))
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	t.Run("NotBolt", func(t *testing.T) {
		path := filepath.Join(dir, "text")
		if err := os.WriteFile(path, []byte(strings.Repeat("not a database\n", 1000)), 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := bolt.Open(path); err == nil {
			s.Close()
			t.Error("Open of a text file succeeded")
		}
	})
	t.Run("Locked", func(t *testing.T) {
		path := filepath.Join(dir, "locked.db")
		mustOpen(t, path)
		if s, err := bolt.Open(path, bolt.WithLockTimeout(50*time.Millisecond)); err == nil {
			s.Close()
			t.Error("a second Open of an open file succeeded")
		}
	})
	t.Run("MissingDirectory", func(t *testing.T) {
		if s, err := bolt.Open(filepath.Join(dir, "no", "such", "dir", "kapi.db")); err == nil {
			s.Close()
			t.Error("Open in a missing directory succeeded")
		}
	})
}

func TestKeyTooLong(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"))
	if _, err := s.Create(t.Context(), "/"+strings.Repeat("\x00", 20000), nil); err == nil {
		t.Error("Create of a 20001-byte key of NULs succeeded")
	}
	if _, err := s.Create(t.Context(), "/"+strings.Repeat("k", 10000), []byte("v")); err != nil {
		t.Errorf("Create of a 10001-byte key: %v", err)
	}
}

// TestValuesAreCopied: the store keeps no reference to the caller's slices,
// and hands each reader its own.
// TestWatchFromMemoryIsTheFile: watchers that keep up take the last
// commits' events from memory; a watch of the same changes after the store
// is opened again reads them all from the file. Both see the same events,
// values, previous values (nil for a creation, empty but not nil for an
// empty one) and revisions, past the events memory holds.
func TestWatchFromMemoryIsTheFile(t *testing.T) {
	const ops, last = 1500, "/k/end"
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "kapi.db")
	s := mustOpen(t, path)
	start, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prefixes := []string{"/", "/k/"}
	collect := func(s *bolt.Store, prefix string) <-chan []storage.Event {
		ch, err := s.Watch(ctx, prefix, start)
		if err != nil {
			t.Fatal(err)
		}
		out := make(chan []storage.Event, 1)
		go func() {
			var evs []storage.Event
			for ev := range ch {
				if evs = append(evs, ev); ev.Err != nil || ev.Key == last {
					break
				}
			}
			out <- evs
		}()
		return out
	}
	var live []<-chan []storage.Event
	for _, p := range prefixes {
		live = append(live, collect(s, p))
	}
	keys := []string{"/k/a", "/k/b", "/k\x00", "/l", "/k/a/x", "/m/k/"}
	var wg sync.WaitGroup
	for w := range 4 { // concurrent writers, so that commits hold several
		rng := rand.New(rand.NewPCG(uint64(w), 5))
		wg.Go(func() {
			for range ops / 4 {
				k := keys[rng.IntN(len(keys))]
				var v []byte
				if rng.IntN(5) > 0 {
					v = randomValue(rng)
				}
				switch rng.IntN(3) {
				case 0:
					s.Create(ctx, k, v)
				case 1:
					s.Update(ctx, k, v, 0)
				default:
					s.Delete(ctx, k, 0)
				}
			}
		})
	}
	wg.Wait()
	mustWrite(t, s, last, "")
	var fromMemory [][]storage.Event
	for _, ch := range live {
		fromMemory = append(fromMemory, <-ch)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path)
	for i, p := range prefixes {
		fromFile := <-collect(s, p)
		if got, want := fmtEvents(fromMemory[i]), fmtEvents(fromFile); got != want {
			t.Errorf("watch of %q: kept up:\n%s\nread from the file:\n%s", p, got, want)
		}
		if n := len(fromFile); n < 2 {
			t.Errorf("watch of %q: %d events", p, n)
		}
	}
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

func TestValuesAreCopied(t *testing.T) {
	ctx := t.Context()
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"))
	v := []byte("original")
	if _, err := s.Create(ctx, "/k", v); err != nil {
		t.Fatal(err)
	}
	copy(v, "mutated!")
	a, _ := s.Get(ctx, "/k", 0)
	copy(a.Value, "changed!")
	if b, _ := s.Get(ctx, "/k", 0); string(b.Value) != "original" {
		t.Errorf("Get = %q, want the value as written", b.Value)
	}
}

func waitGoroutines(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWriteAfterCompactionInOneCommit: a compaction and later writes share
// a commit, and the compaction empties the pages between a key's newest
// version and the next key. bbolt's cursor, stepping back into a page
// emptied earlier in the same transaction, finds nothing (pages are
// rebalanced only on commit), so a write applied after the compaction
// found its key absent: an update failed with ErrNotFound, a create
// succeeded over a live key.
func TestWriteAfterCompactionInOneCommit(t *testing.T) {
	ctx := t.Context()
	var (
		holding atomic.Bool // the next commit waits for hold
		hold    = make(chan struct{})
		commits atomic.Int32 // since holding was set
	)
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"), bolt.WithBeforeCommit(func(int) {
		if holding.Load() && commits.Add(1) == 1 {
			<-hold
		}
	}))
	b := mustWrite(t, s, "/b", "v")
	// "/bb" fills pages of its own with versions, then goes: once the
	// window passes them, every one of them is dropped.
	mustWrite(t, s, "/bb", "")
	big := []byte(strings.Repeat("x", 1500))
	for i := range 40 {
		if _, err := s.Update(ctx, "/bb", big, 0); err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
	}
	if _, err := s.Delete(ctx, "/bb", 0); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, "/c", "v")
	rev, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The next commit is held while a compaction, then an update of "/b"
	// and a create of "/b", queue up behind it, in that order.
	holding.Store(true)
	errs := make(chan error, 1)
	go func() { _, err := s.Create(ctx, "/d", nil); errs <- err }()
	for commits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	type result struct {
		op  string
		err error
	}
	results := make(chan result, 3)
	queue := func(op string, f func() error) {
		n := bolt.Queued(s)
		go func() { results <- result{op, f()} }()
		for bolt.Queued(s) == n {
			time.Sleep(time.Millisecond)
		}
	}
	queue("compact", func() error { return s.Compact(ctx, rev) })
	queue("update", func() error { _, err := s.Update(ctx, "/b", []byte("w"), b); return err })
	queue("create", func() error { _, err := s.Create(ctx, "/b", []byte("again")); return err })
	close(hold)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r := <-results
		switch {
		case r.op == "create" && !errors.Is(r.err, storage.ErrExists):
			t.Errorf("create of the live key /b: %v, want %v", r.err, storage.ErrExists)
		case r.op != "create" && r.err != nil:
			t.Errorf("%s: %v", r.op, r.err)
		}
	}
	if n := commits.Load(); n != 2 {
		t.Errorf("%d commits after the held one's, want 1: the three writes were not in one", n-1)
	}
	kv, err := s.Get(ctx, "/b", 0)
	if err != nil || string(kv.Value) != "w" || kv.CreateRevision != b {
		t.Errorf("/b: %+v, %v; want the update, created at %d", kv, err, b)
	}
}
