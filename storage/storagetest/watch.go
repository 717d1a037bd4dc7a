package storagetest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

func testWatchEvents(t *testing.T, s storage.Interface) {
	ch := mustWatch(t, s, "/w/", mustRevision(t, s))
	c := mustCreate(t, s, "/w/a", "v1")
	mustCreate(t, s, "/x/a", "other prefix")
	mustCreate(t, s, "/wx", "sibling, not under /w/")
	u := mustUpdate(t, s, "/w/a", "v2", c)
	d := mustDelete(t, s, "/w/a", u)
	z := mustCreate(t, s, "/w/z", "last")
	want := []storage.Event{
		created("/w/a", "v1", c),
		updated("/w/a", "v2", c, u, "v1"),
		deleted("/w/a", "v2", c, d),
		created("/w/z", "last", z),
	}
	checkEvents(t, recvN(t, ch, len(want)), want)
}

func testWatchFromRevision(t *testing.T, s storage.Interface) {
	type started struct {
		from int64
		ch   <-chan storage.Event
	}
	// Watching from 0 before the first write sees everything.
	watches := []started{{0, mustWatch(t, s, "/w/", 0)}}

	var want []storage.Event // the changes under /w/
	a := mustCreate(t, s, "/w/a", "a1")
	want = append(want, created("/w/a", "a1", a))
	mustCreate(t, s, "/v/a", "other prefix")
	b := mustCreate(t, s, "/w/b", "b1")
	want = append(want, created("/w/b", "b1", b))
	a2 := mustUpdate(t, s, "/w/a", "a2", a)
	want = append(want, updated("/w/a", "a2", a, a2, "a1"))
	mustUpdate(t, s, "/v/a", "other prefix 2", 0)
	bd := mustDelete(t, s, "/w/b", b)
	want = append(want, deleted("/w/b", "b1", b, bd))
	b2 := mustCreate(t, s, "/w/b", "b2")
	want = append(want, created("/w/b", "b2", b2))
	last := mustRevision(t, s)

	// From every revision of the test's writes, and from 1 for all those
	// before them: a store that shares its revisions with earlier writes
	// (etcd) would otherwise have thousands of watches here.
	watches = append(watches, started{1, mustWatch(t, s, "/w/", 1)})
	for from := max(2, a-1); from <= last; from++ {
		watches = append(watches, started{from, mustWatch(t, s, "/w/", from)})
	}
	// The change after the history ends every stream: receiving it right
	// after the expected events shows nothing else came in between.
	z := mustCreate(t, s, "/w/z", "sentinel")
	for _, w := range watches {
		t.Run(fmt.Sprintf("From%d", w.from), func(t *testing.T) {
			var exp []storage.Event
			for _, ev := range want {
				if ev.ModRevision > w.from {
					exp = append(exp, ev)
				}
			}
			exp = append(exp, created("/w/z", "sentinel", z))
			checkEvents(t, recvN(t, w.ch, len(exp)), exp)
		})
	}
}

// testWatchFromZero checks that watching from revision 0 delivers every
// change since the store began, those before the watch started included:
// "after rev" has no exception for 0.
func testWatchFromZero(t *testing.T, s storage.Interface) {
	a := mustCreate(t, s, "/w/a", "1")
	b := mustCreate(t, s, "/w/b", "1")
	ch := mustWatch(t, s, "/w/", 0)
	u := mustUpdate(t, s, "/w/a", "2", 0)
	checkEvents(t, recvN(t, ch, 3), []storage.Event{
		created("/w/a", "1", a), created("/w/b", "1", b), updated("/w/a", "2", a, u, "1"),
	})
}

func testWatchCancel(t *testing.T, s storage.Interface) {
	baseline := runtime.NumGoroutine()
	// Watches in each state one can be in when its context ends: behind
	// with events nobody reads, started at an older revision, caught up and
	// waiting, on a prefix nobody writes.
	type started struct {
		name   string
		ch     <-chan storage.Event
		cancel context.CancelFunc
	}
	var watches []started
	add := func(name, prefix string, rev int64) {
		ch, cancel := watch(t, s, prefix, rev)
		watches = append(watches, started{name, ch, cancel})
	}
	add("Behind", "/w/", 0)
	for i := range 5 {
		mustCreate(t, s, fmt.Sprintf("/w/%d", i), "v")
	}
	add("FromOlderRevision", "/w/", 1)
	add("CaughtUp", "/w/", 0)
	add("QuietPrefix", "/quiet/", 0)

	// Nobody reads before the goroutines are gone: a backend whose sends
	// do not also wait for the context to end would leak them.
	for _, w := range watches {
		w.cancel()
	}
	waitGoroutines(t, baseline)
	for _, w := range watches {
		t.Run(w.name, func(t *testing.T) {
			// Events already buffered may still come; then the channel is closed.
			drain(t, w.ch)
		})
	}
}

// testWatchInterleaved alternates one write and receiving its event, so
// that the watcher has caught up, and waits for the next write, each time.
func testWatchInterleaved(t *testing.T, s storage.Interface) {
	ch := mustWatch(t, s, "/w/", 0)
	for i := range 100 {
		key := fmt.Sprintf("/w/%03d", i)
		rev := mustCreate(t, s, key, "v")
		checkEvents(t, recvN(t, ch, 1), []storage.Event{created(key, "v", rev)})
	}
}

func testWatchManyWatchers(t *testing.T, s storage.Interface) {
	const watchers, writers, updates = 5, 4, 20
	start := mustRevision(t, s)
	chans := make([]<-chan storage.Event, watchers)
	for i := range chans {
		chans[i] = mustWatch(t, s, "/m/", start)
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			key := fmt.Sprintf("/m/%d", w)
			if _, err := s.Create(t.Context(), key, []byte("0")); err != nil {
				t.Errorf("Create(%q): %v", key, err)
				return
			}
			for i := range updates {
				if _, err := s.Update(t.Context(), key, fmt.Appendf(nil, "%d", i+1), 0); err != nil {
					t.Errorf("Update(%q): %v", key, err)
					return
				}
			}
			if _, err := s.Delete(t.Context(), key, 0); err != nil {
				t.Errorf("Delete(%q): %v", key, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	total := writers * (updates + 2)
	first := recvN(t, chans[0], total)
	checkConsecutive(t, first, start)
	for i, ch := range chans[1:] {
		got := recvN(t, ch, total)
		if !slices.EqualFunc(got, first, sameEvent) {
			t.Errorf("watcher %d saw a different sequence from watcher 0", i+1)
			checkEvents(t, got, first)
		}
	}
}

func testWatchConcurrentWriters(t *testing.T, s storage.Interface) {
	const writers, rounds = 8, 15
	start := mustRevision(t, s)
	ch := mustWatch(t, s, "/o/", start)

	// Each writer creates and updates a key per round, and deletes every
	// other one, recording what each of its writes did.
	type write struct {
		typ        storage.EventType
		key, value string
	}
	done := make([]map[int64]write, writers)
	var wg sync.WaitGroup
	for w := range writers {
		done[w] = map[int64]write{}
		wg.Go(func() {
			ctx := t.Context()
			for r := range rounds {
				key := fmt.Sprintf("/o/%d/%02d", w, r)
				rev, err := s.Create(ctx, key, []byte("c"))
				if err != nil {
					t.Errorf("Create(%q): %v", key, err)
					return
				}
				done[w][rev] = write{storage.Put, key, "c"}
				if rev, err = s.Update(ctx, key, []byte("u"), rev); err != nil {
					t.Errorf("Update(%q): %v", key, err)
					return
				}
				done[w][rev] = write{storage.Put, key, "u"}
				if r%2 == 0 {
					removed, err := s.Delete(ctx, key, rev)
					if err != nil {
						t.Errorf("Delete(%q): %v", key, err)
						return
					}
					done[w][removed.ModRevision] = write{storage.Delete, key, "u"}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	all := map[int64]write{}
	for _, m := range done {
		for rev, w := range m {
			if _, dup := all[rev]; dup {
				t.Fatalf("revision %d returned to two writes", rev)
			}
			all[rev] = w
		}
	}

	events := recvN(t, ch, len(all))
	checkConsecutive(t, events, start)
	state := map[string]string{}
	for _, ev := range events {
		w, ok := all[ev.ModRevision]
		if !ok || w.typ != ev.Type || w.key != ev.Key || w.value != string(ev.Value) {
			t.Errorf("event %s, want the write made at that revision: %+v", fmtEvent(ev), w)
		}
		if ev.Type == storage.Delete {
			delete(state, ev.Key)
		} else {
			state[ev.Key] = string(ev.Value)
		}
	}
	// Replaying the stream gives the store's state.
	list := mustList(t, s, "/o/", storage.ListOptions{})
	if len(list.Items) != len(state) {
		t.Errorf("replayed events give %d keys, List %d", len(state), len(list.Items))
	}
	for _, item := range list.Items {
		if v, ok := state[item.Key]; !ok || v != string(item.Value) {
			t.Errorf("List has %s, replayed events %q (present: %v)", fmtKV(item), v, ok)
		}
	}
}

// checkConsecutive checks that events have the revisions after start, one
// after the other.
func checkConsecutive(t *testing.T, events []storage.Event, start int64) {
	t.Helper()
	for i, ev := range events {
		if want := start + 1 + int64(i); ev.ModRevision != want {
			t.Fatalf("event %d has revision %d, want %d (no gap, no duplicate, in order)", i, ev.ModRevision, want)
		}
	}
}
