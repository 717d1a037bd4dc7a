package watch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

func TestWatchFromRevision(t *testing.T) {
	e := newEnv(t, envOptions{})
	m := newModel(t, e.store)
	m.create(widgets+"ns1/a", "a0")
	e.run(t)
	first := e.hub.Revision()

	m.create(widgets+"ns1/b", "b1")
	m.update(widgets+"ns1/a", "a1")
	m.create(gadgets+"ns1/a", "a gadget")
	m.delete(widgets + "ns1/b")
	m.create(widgets+"ns2/c", "c1")
	m.update(widgets+"ns2/c", "c2")
	m.create(widgets+"ns1/b", "b2")
	m.update(gadgets+"ns1/a", "a gadget 2")
	m.delete(widgets + "ns1/a")
	last := m.update(widgets+"ns2/c", "c3")
	mustWaitFor(t, e.hub, last)

	// One watcher from each revision, and one from a revision the hub has
	// not reached yet.
	watchers := map[int64]*watch.Watcher{}
	for rev := first; rev <= last+1; rev++ {
		watchers[rev] = mustWatch(t, e.widgets, watch.WatchOptions{Revision: rev})
	}
	// The last write ends every watcher's expected events: anything extra,
	// missing or out of order shows up before it.
	m.create(widgets+"ns3/sentinel", "s1")
	m.create(widgets+"ns3/sentinel2", "s2")

	for rev := first; rev <= last+1; rev++ {
		t.Run(fmt.Sprintf("From%d", rev), func(t *testing.T) {
			want := m.after(rev, widgets)
			checkChanges(t, nextChanges(t, watchers[rev], len(want)), want)
		})
	}
}

func TestWatchPrefix(t *testing.T) {
	e := newEnv(t, envOptions{})
	m := newModel(t, e.store)
	m.create(widgets+"ns1/x", "x0")
	e.run(t)
	start := e.hub.Revision()

	tests := []struct {
		name   string
		prefix string // as given to Watch
		under  string // the keys it must see
	}{
		{"Resource", "", widgets},
		{"ResourceFull", widgets, widgets},
		{"Namespace", "ns1/", widgets + "ns1/"},
		{"NamespaceFull", widgets + "ns1/", widgets + "ns1/"},
		{"NamePrefix", "ns1/a", widgets + "ns1/a"},
	}
	watchers := make([]*watch.Watcher, len(tests))
	for i, tt := range tests {
		watchers[i] = mustWatch(t, e.widgets, watch.WatchOptions{Prefix: tt.prefix, Revision: start})
	}
	for _, key := range []string{"ns1/a", "ns1/ab", "ns10/a", "ns2/a", "ns1/b", "ns1"} {
		m.create(widgets+key, "v1")
		m.create(gadgets+key, "gadget")
		m.update(widgets+key, "v2")
	}
	m.delete(widgets + "ns10/a")
	m.delete(widgets + "ns1/ab")
	m.create(widgets+"ns1/a~sentinel", "end") // under every prefix

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := m.after(start, tt.under)
			checkChanges(t, nextChanges(t, watchers[i], len(want)), want)
		})
	}
}

func TestWatchExpiredRevision(t *testing.T) {
	t.Run("Count", func(t *testing.T) {
		e := newEnv(t, envOptions{hub: []watch.Option{watch.WithHistory(3, 0)}})
		m := newModel(t, e.store)
		m.create(widgets+"ns/a", "0")
		e.run(t)
		relisted := e.hub.Revision()
		for i := range 10 {
			m.update(widgets+"ns/a", fmt.Sprint(i+1))
		}
		lastWidget := m.log[len(m.log)-1].Rev
		// Writes to another resource do not move the widgets' window.
		for i := range 5 {
			m.create(fmt.Sprintf("%sns/%d", gadgets, i), "g")
		}
		mustWaitFor(t, e.hub, m.log[len(m.log)-1].Rev)
		floor := lastWidget - 3 // the window holds the widgets' last 3 events

		tests := []struct {
			name    string
			rev     int64
			expired bool
		}{
			{"Zero", 0, true},
			{"Relist", relisted, true},
			{"JustBeforeWindow", floor - 1, true},
			{"WindowStart", floor, false},
			{"InWindow", floor + 1, false},
			{"LastWidget", lastWidget, false},
			{"Hub", e.hub.Revision(), false},
			{"Future", e.hub.Revision() + 10, false},
		}
		watchers := map[string]*watch.Watcher{}
		for _, tt := range tests {
			w, err := e.widgets.Watch(watch.WatchOptions{Revision: tt.rev})
			switch {
			case tt.expired && !errors.Is(err, storage.ErrExpired):
				t.Errorf("%s: Watch(Revision: %d) with the window after %d: %v, want storage.ErrExpired", tt.name, tt.rev, floor, err)
			case !tt.expired && err != nil:
				t.Errorf("%s: Watch(Revision: %d) with the window after %d: %v", tt.name, tt.rev, floor, err)
			case !tt.expired:
				watchers[tt.name] = w
			}
		}
		// Read what the window holds before the next write moves it.
		for _, tt := range tests {
			if w := watchers[tt.name]; w != nil && tt.rev < lastWidget {
				t.Run(tt.name, func(t *testing.T) {
					want := m.after(tt.rev, widgets)
					checkChanges(t, nextChanges(t, w, len(want)), want)
				})
			}
		}
		sentinel := m.create(widgets+"ns/sentinel", "end")
		for _, tt := range tests {
			if w := watchers[tt.name]; w != nil && tt.rev < sentinel {
				t.Run(tt.name+"Sentinel", func(t *testing.T) {
					checkChanges(t, nextChanges(t, w, 1), m.after(sentinel-1, widgets))
				})
			}
		}
	})

	t.Run("Age", func(t *testing.T) {
		// An age bound of 1ns keeps only the latest event.
		e := newEnv(t, envOptions{hub: []watch.Option{watch.WithHistory(1000, time.Nanosecond)}})
		m := newModel(t, e.store)
		e.run(t)
		r1 := m.create(widgets+"ns/a", "1")
		r2 := m.update(widgets+"ns/a", "2")
		r3 := m.update(widgets+"ns/a", "3")
		mustWaitFor(t, e.hub, r3)
		if _, err := e.widgets.Watch(watch.WatchOptions{Revision: r1}); !errors.Is(err, storage.ErrExpired) {
			t.Errorf("Watch(Revision: %d) with only %d in the window: %v, want storage.ErrExpired", r1, r3, err)
		}
		// No write follows, and the last event leaves the window too:
		// an idle hub does not keep old revisions watchable.
		giveUp := time.Now().Add(30 * time.Second) // a bound on the wait, not a timing
		for {
			_, err := e.widgets.Watch(watch.WatchOptions{Revision: r2})
			if errors.Is(err, storage.ErrExpired) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Now().After(giveUp) {
				t.Fatalf("Watch(Revision: %d) is still served on an idle hub whose window is 1ns", r2)
			}
			time.Sleep(time.Millisecond)
		}
		// What missed nothing is still served: a watch from the last
		// revision, which the next write reaches.
		w := mustWatch(t, e.widgets, watch.WatchOptions{Revision: r3})
		r4 := m.update(widgets+"ns/a", "4")
		checkChanges(t, nextChanges(t, w, 1), m.after(r4-1, widgets))
	})
}

func TestWatcherFallsBehind(t *testing.T) {
	const window, writes = 5, 100
	e := newEnv(t, envOptions{hub: []watch.Option{watch.WithHistory(window, 0)}})
	m := newModel(t, e.store)
	m.create(widgets+"ns/a", "0")
	e.run(t)
	start := e.hub.Revision()

	neverRead := mustWatch(t, e.widgets, watch.WatchOptions{Revision: start})
	partlyRead := mustWatch(t, e.widgets, watch.WatchOptions{Revision: start})
	m.update(widgets+"ns/a", "first")
	checkChanges(t, nextChanges(t, partlyRead, 1), m.after(start, widgets))

	// Nobody reads while the window moves on: the writes complete, and the
	// hub applies them all, so publishing did not wait for the watchers.
	var last int64
	for i := range writes {
		last = m.update(widgets+"ns/a", fmt.Sprint(i))
	}
	mustWaitFor(t, e.hub, last)
	if it, _ := e.widgets.Get(widgets + "ns/a"); it == nil || it.Revision != last {
		t.Fatalf("Get after %d writes = %v, want the version of %d", writes, it, last)
	}
	caughtUp := mustWatch(t, e.widgets, watch.WatchOptions{Revision: last - window})

	for _, tc := range []struct {
		name string
		w    *watch.Watcher
	}{{"NeverRead", neverRead}, {"PartlyRead", partlyRead}} {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // and it stays ended
				if ev, err := tryNext(tc.w); !errors.Is(err, storage.ErrExpired) {
					t.Errorf("Next = %s event at %d, %v; want storage.ErrExpired", ev.Type, ev.Revision, err)
				}
			}
		})
	}
	t.Run("InWindow", func(t *testing.T) {
		want := m.after(last-window, widgets)
		checkChanges(t, nextChanges(t, caughtUp, len(want)), want)
	})
}

func TestInitialEvents(t *testing.T) {
	// The window holds the changes after the snapshot, but not revision 1.
	e := newEnv(t, envOptions{hub: []watch.Option{watch.WithHistory(4, 0)}})
	m := newModel(t, e.store)
	// Created out of key order.
	for _, key := range []string{"ns2/a", "ns1/c", "ns10/a", "ns1/a", "ns1/b"} {
		m.create(widgets+key, key)
	}
	m.create(gadgets+"ns1/a", "gadget")
	m.update(widgets+"ns1/c", "c2")
	m.delete(widgets + "ns1/b")
	e.run(t)
	for range 5 { // move the window past every revision before the snapshot
		m.update(gadgets+"ns1/a", "gadget")
		m.update(widgets+"ns2/a", "a2")
	}
	mustWaitFor(t, e.hub, mustRevision(t, e.store))
	snapshot := e.hub.Revision()

	tests := []struct {
		name  string
		opts  watch.WatchOptions
		under string
	}{
		{"Resource", watch.WatchOptions{InitialEvents: true, InitialEventsEnd: true}, widgets},
		{"Namespace", watch.WatchOptions{Prefix: "ns1/", InitialEvents: true, InitialEventsEnd: true}, widgets + "ns1/"},
		{"EmptyNamespace", watch.WatchOptions{Prefix: "ns3/", InitialEvents: true, InitialEventsEnd: true}, widgets + "ns3/"},
		{"WithoutEndBookmark", watch.WatchOptions{InitialEvents: true}, widgets},
		{"RevisionIgnored", watch.WatchOptions{Revision: 1, InitialEvents: true, InitialEventsEnd: true}, widgets},
	}
	watchers := make([]*watch.Watcher, len(tests))
	for i, tt := range tests {
		watchers[i] = mustWatch(t, e.widgets, tt.opts)
	}
	m.update(widgets+"ns1/a", "after the snapshot")
	m.create(widgets+"ns3/a", "after the snapshot")
	m.delete(widgets + "ns1/c")
	m.create(widgets+"ns1/b", "again")

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := e.store.List(context.Background(), tt.under, storage.ListOptions{Revision: snapshot})
			if err != nil {
				t.Fatal(err)
			}
			var want []change
			for _, kv := range page.Items {
				want = append(want, change{Type: watch.Added, Key: kv.Key, Value: string(kv.Value), Rev: kv.ModRevision})
			}
			if tt.opts.InitialEventsEnd {
				want = append(want, change{Type: watch.Bookmark, Rev: snapshot, End: true})
			}
			want = append(want, m.after(snapshot, tt.under)...)
			checkChanges(t, nextChanges(t, watchers[i], len(want)), want)
		})
	}
}

// TestInitialEventsConcurrentWriters starts watchers with initial events
// while writers write, and checks that each watcher's snapshot, end
// bookmark and following changes add up to the store's history.
func TestInitialEventsConcurrentWriters(t *testing.T) {
	const writers, ops, watchers = 4, 300, 24
	e := newEnv(t, envOptions{})
	for i := range 40 {
		mustCreate(t, e.store, fmt.Sprintf("%sns%d/seed%02d", widgets, i%2, i), "seed")
	}
	e.run(t)
	from := e.hub.Revision()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	storeEvents, err := e.store.Watch(ctx, widgets, from)
	if err != nil {
		t.Fatal(err)
	}

	// The writers write concurrently with each other, with the readers and
	// with the start of each watcher; tokens only pace them so that the
	// watchers' snapshots spread over the writes.
	tokens := make(chan struct{}, writers*ops)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			live := map[string]bool{}
			for i := range ops {
				select {
				case <-tokens:
				case <-ctx.Done():
					t.Errorf("writer %d: %v", w, ctx.Err())
					return
				}
				key := fmt.Sprintf("%sns%d/w%d-%02d", widgets, rng.IntN(2), w, rng.IntN(15))
				value := fmt.Appendf(nil, "%d-%d", w, i)
				var err error
				switch {
				case !live[key]:
					_, err = e.store.Create(ctx, key, value)
					live[key] = true
				case rng.IntN(3) == 0:
					_, err = e.store.Delete(ctx, key, 0)
					live[key] = false
				default:
					_, err = e.store.Update(ctx, key, value, 0)
				}
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				runtime.Gosched()
			}
		})
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()

	// The watchers start spread over the writes and read as they go, until
	// the sentinel written after the writers.
	const sentinelKey = widgets + "ns0/~sentinel"
	type started struct {
		prefix string
		events []watch.Event
		err    error
	}
	ws := make([]*started, watchers)
	var readers sync.WaitGroup
	for i := range ws {
		s := &started{prefix: widgets}
		if i%2 == 1 {
			s.prefix = widgets + "ns0/"
		}
		w := mustWatch(t, e.widgets, watch.WatchOptions{Prefix: s.prefix, InitialEvents: true, InitialEventsEnd: true})
		ws[i] = s
		readers.Go(func() {
			for {
				ev, err := w.Next(ctx)
				if err != nil {
					s.err = err
					return
				}
				s.events = append(s.events, ev)
				if ev.Item != nil && ev.Item.Key == sentinelKey {
					return
				}
			}
		})
		for range writers * ops / watchers {
			tokens <- struct{}{}
		}
		// The next watcher starts while the last of these writes are made.
		for len(tokens) > 0 && ctx.Err() == nil {
			runtime.Gosched()
		}
	}
	<-writersDone
	if t.Failed() {
		return
	}
	final := mustCreate(t, e.store, sentinelKey, "end")
	readers.Wait()

	// The store's history after from, as the changes a watcher must see.
	page, err := e.store.List(ctx, widgets, storage.ListOptions{Revision: from})
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]change{}
	for _, kv := range page.Items {
		state[kv.Key] = change{Value: string(kv.Value), Rev: kv.ModRevision}
	}
	var history []change
	for rev := from; rev < final; {
		ev := <-storeEvents
		if ev.Err != nil {
			t.Fatalf("store watch: %v", ev.Err)
		}
		rev = ev.ModRevision
		prev, existed := state[ev.Key]
		c := change{Key: ev.Key, Value: string(ev.Value), Rev: ev.ModRevision}
		switch {
		case ev.Type == storage.Delete:
			c.Type = watch.Deleted
			delete(state, ev.Key)
		case existed:
			c.Type = watch.Modified
			state[ev.Key] = change{Value: c.Value, Rev: c.Rev}
		default:
			c.Type = watch.Added
			state[ev.Key] = change{Value: c.Value, Rev: c.Rev}
		}
		if existed {
			c.PrevValue, c.PrevRev = prev.Value, prev.Rev
		}
		history = append(history, c)
	}

	snapshots := map[int64]bool{}
	for i, s := range ws {
		t.Run(fmt.Sprintf("Watcher%02d", i), func(t *testing.T) {
			if s.err != nil {
				t.Fatalf("Next: %v after %d events", s.err, len(s.events))
			}
			got := make([]change, len(s.events))
			for j, ev := range s.events {
				got[j] = summarize(t, ev)
			}
			end := slices.IndexFunc(got, func(c change) bool { return c.Type == watch.Bookmark })
			if end < 0 {
				t.Fatalf("no bookmark among %d events", len(got))
			}
			snapshot := got[end].Rev
			snapshots[snapshot] = true
			if snapshot < from || snapshot >= final {
				t.Fatalf("initial events at %d, outside the writes %d..%d", snapshot, from, final)
			}

			page, err := e.store.List(ctx, s.prefix, storage.ListOptions{Revision: snapshot})
			if err != nil {
				t.Fatal(err)
			}
			var want []change
			for _, kv := range page.Items {
				want = append(want, change{Type: watch.Added, Key: kv.Key, Value: string(kv.Value), Rev: kv.ModRevision})
			}
			want = append(want, change{Type: watch.Bookmark, Rev: snapshot, End: true})
			for _, c := range history {
				if c.Rev > snapshot && strings.HasPrefix(c.Key, s.prefix) {
					want = append(want, c)
				}
			}
			checkChanges(t, got, want)

			// Replaying the events gives the store's final state.
			replay := map[string]string{}
			for _, c := range got {
				switch c.Type {
				case watch.Added, watch.Modified:
					replay[c.Key] = c.Value
				case watch.Deleted:
					delete(replay, c.Key)
				}
			}
			last, err := e.store.List(ctx, s.prefix, storage.ListOptions{Revision: final})
			if err != nil {
				t.Fatal(err)
			}
			finalState := map[string]string{}
			for _, kv := range last.Items {
				finalState[kv.Key] = string(kv.Value)
			}
			if !maps.Equal(replay, finalState) {
				t.Errorf("replayed state has %d keys, the store %d", len(replay), len(finalState))
			}
		})
	}
	t.Logf("%d watchers started at %d different revisions among %d..%d", watchers, len(snapshots), from, final)
}

func TestBookmarkInterval(t *testing.T) {
	const interval = 10 * time.Millisecond
	e := newEnv(t, envOptions{})
	m := newModel(t, e.store)
	m.create(widgets+"ns1/a", "a")
	e.run(t)

	tests := []struct {
		name string
		opts watch.WatchOptions
		// write makes the changes while the watcher is idle, and returns
		// the events the watcher must see first.
		write func() []change
	}{
		{"AfterEvent", watch.WatchOptions{}, func() []change {
			r := m.create(widgets+"ns1/b", "b")
			m.create(gadgets+"ns1/b", "moves the hub on")
			return m.after(r-1, widgets)
		}},
		{"NoEvent", watch.WatchOptions{}, func() []change {
			m.create(gadgets+"ns1/c", "moves the hub on")
			return nil
		}},
		{"OtherNamespace", watch.WatchOptions{Prefix: "ns1/"}, func() []change {
			m.create(widgets+"ns2/a", "not under the watcher's prefix")
			return nil
		}},
		{"AfterInitialEvents", watch.WatchOptions{InitialEvents: true, InitialEventsEnd: true}, func() []change {
			items, rev, _ := e.widgets.List(widgets, "", 0, nil)
			var want []change
			for _, it := range items {
				want = append(want, change{Type: watch.Added, Key: it.Key, Value: objectOf(t, it).Value, Rev: it.Revision})
			}
			return append(want, change{Type: watch.Bookmark, Rev: rev, End: true})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Revision, opts.BookmarkInterval = e.hub.Revision(), interval
			w := mustWatch(t, e.widgets, opts)
			start := e.hub.Revision()
			want := tt.write()
			mustWaitFor(t, e.hub, mustRevision(t, e.store))
			checkChanges(t, nextChanges(t, w, len(want)), want)

			seen := start
			if len(want) > 0 {
				seen = want[len(want)-1].Rev
			}
			for range 3 {
				bm := summarize(t, next(t, w))
				if bm.Type != watch.Bookmark || bm.End {
					t.Fatalf("idle watcher got %v, want a bookmark", bm)
				}
				if hub := e.hub.Revision(); bm.Rev < seen || bm.Rev > hub {
					t.Errorf("bookmark at %d, after events up to %d with the hub at %d", bm.Rev, seen, hub)
				}
				seen = bm.Rev
			}

			// Bookmarks never claim a revision whose event is still to come,
			// and the watch goes on after them without a gap.
			r := m.update(widgets+"ns1/a", "after bookmarks")
			for {
				c := summarize(t, next(t, w))
				if c.Type == watch.Bookmark {
					if c.Rev < seen || c.Rev >= r {
						t.Errorf("bookmark at %d, after %d and before the event at %d", c.Rev, seen, r)
					}
					seen = c.Rev
					continue
				}
				checkChanges(t, []change{c}, m.after(r-1, widgets))
				break
			}
		})
	}
}

// TestBookmarkWaitsForIdle has a watcher's bookmark timer fire while the
// watcher is away (its consumer busy), then an event arrive: the watcher
// has not been idle since, so its next wait must not end in a bookmark
// until it has been idle for the whole interval again.
func TestBookmarkWaitsForIdle(t *testing.T) {
	const interval = 400 * time.Millisecond
	e := newEnv(t, envOptions{})
	e.run(t)
	w := mustWatch(t, e.widgets, watch.WatchOptions{Revision: e.hub.Revision(), BookmarkInterval: interval})

	// A wait that arms the timer, ended by an event.
	created := make(chan error, 1)
	go func() {
		time.Sleep(interval / 4)
		_, err := e.store.Create(context.Background(), widgets+"ns/a", []byte("a"))
		created <- err
	}()
	ev := next(t, w)
	if err := <-created; err != nil {
		t.Fatalf("Create: %v", err)
	}
	if ev.Type != watch.Added {
		t.Fatalf("got %v, want the ADDED of a", summarize(t, ev))
	}
	time.Sleep(interval * 3 / 2) // the timer fires while no one waits
	rev := mustCreate(t, e.store, widgets+"ns/b", "b")
	mustWaitFor(t, e.hub, rev)
	idle := time.Now() // no later than the watcher's idle time
	if ev := next(t, w); ev.Type != watch.Added || ev.Revision != rev {
		t.Fatalf("got %v, want the ADDED of b", summarize(t, ev))
	}
	ctx, cancel := context.WithTimeout(context.Background(), interval/2)
	defer cancel()
	if ev, err := w.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next right after an event: %v, %v; want nothing for half the interval", summarize(t, ev), err)
	}
	if ev := next(t, w); ev.Type != watch.Bookmark || ev.Revision != rev {
		t.Fatalf("got %v, want a bookmark at %d", summarize(t, ev), rev)
	}
	if waited := time.Since(idle); waited < interval {
		t.Errorf("bookmark after %v idle, want %v", waited, interval)
	}
}

// TestBookmarkWaitsForIdleAsyncTimers runs TestBookmarkWaitsForIdle again
// with the timers of Go before 1.23, which a program gets with
// GODEBUG=asynctimerchan=1 (in its environment or a //go:debug line): a
// tick that fired while the watcher was away stays in the channel past
// Reset, and must not become a bookmark.
func TestBookmarkWaitsForIdleAsyncTimers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a test binary again")
	}
	if strings.Contains(os.Getenv("GODEBUG"), "asynctimerchan=1") {
		t.Skip("already the run with the old timers")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBookmarkWaitsForIdle$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "GODEBUG=asynctimerchan=1")
	out, err := cmd.CombinedOutput()
	// The test by name: a run that matches no test passes too.
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestBookmarkWaitsForIdle ")) {
		t.Fatalf("with GODEBUG=asynctimerchan=1: %v\n%s", err, out)
	}
}

// TestBookmarksWithConcurrentWrites has a watcher that asks for a bookmark
// whenever it is idle follow a writer: the bookmarks fall between the
// events, and the events still come without gaps or duplicates.
func TestBookmarksWithConcurrentWrites(t *testing.T) {
	const writes = 2000
	e := newEnv(t, envOptions{})
	a := change{Value: "0", Rev: mustCreate(t, e.store, widgets+"ns/a", "0")}
	e.run(t)
	start := e.hub.Revision()
	w := mustWatch(t, e.widgets, watch.WatchOptions{Revision: start, BookmarkInterval: time.Nanosecond})

	var want []change
	written := make(chan struct{})
	go func() {
		defer close(written)
		ctx := context.Background()
		for i := range writes {
			c := change{Type: watch.Modified, Key: widgets + "ns/a", Value: fmt.Sprint(i), PrevValue: a.Value, PrevRev: a.Rev}
			var err error
			if i%3 == 0 {
				c = change{Type: watch.Added, Key: fmt.Sprintf("%sns/%d", widgets, i), Value: "v"}
				c.Rev, err = e.store.Create(ctx, c.Key, []byte(c.Value))
			} else {
				c.Rev, err = e.store.Update(ctx, c.Key, []byte(c.Value), 0)
				a = change{Value: c.Value, Rev: c.Rev}
			}
			if err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
			want = append(want, c)
			if i%64 == 0 {
				runtime.Gosched()
			}
		}
	}()

	// Read until the watcher has seen the last write: with a skipped event
	// the bookmarks take it there all the same.
	var got []change
	bookmarks, seen, final := 0, start, int64(-1)
	deadline := time.Now().Add(waitTimeout)
	for final < 0 || seen < final {
		if final < 0 {
			select {
			case <-written:
				if final = e.hub.Revision(); len(want) > 0 {
					final = want[len(want)-1].Rev
				}
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d events and %d bookmarks the watcher is at %d, the writes ended at %d", len(got), bookmarks, seen, final)
		}
		c := summarize(t, next(t, w))
		if c.Type != watch.Bookmark {
			got = append(got, c)
			if c.Rev <= seen {
				t.Fatalf("event at %d after a bookmark or event at %d", c.Rev, seen)
			}
			seen = c.Rev
			continue
		}
		bookmarks++
		if c.Rev < seen {
			t.Fatalf("bookmark at %d after an event or bookmark at %d", c.Rev, seen)
		}
		seen = c.Rev
	}
	checkChanges(t, got, want)
	t.Logf("%d bookmarks among %d events", bookmarks, writes)
}

func TestNextContext(t *testing.T) {
	e := newEnv(t, envOptions{})
	mustCreate(t, e.store, widgets+"ns/a", "a")
	e.run(t)
	rev := e.hub.Revision()

	options := []struct {
		name string
		opts watch.WatchOptions
	}{
		{"CaughtUp", watch.WatchOptions{Revision: rev}},
		{"Bookmarks", watch.WatchOptions{Revision: rev, BookmarkInterval: time.Hour}},
		{"FutureRevision", watch.WatchOptions{Revision: rev + 100}},
		{"QuietPrefix", watch.WatchOptions{Prefix: "quiet/", Revision: rev}},
	}
	contexts := []struct {
		name string
		make func() (context.Context, context.CancelFunc, func())
		want error
	}{
		{"AlreadyCancelled", func() (context.Context, context.CancelFunc, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel, func() {}
		}, context.Canceled},
		{"CancelledWhileWaiting", func() (context.Context, context.CancelFunc, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, cancel, cancel
		}, context.Canceled},
		{"DeadlineWhileWaiting", func() (context.Context, context.CancelFunc, func()) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			return ctx, cancel, func() {}
		}, context.DeadlineExceeded},
	}
	for _, o := range options {
		for _, c := range contexts {
			t.Run(o.name+"/"+c.name, func(t *testing.T) {
				w := mustWatch(t, e.widgets, o.opts)
				ctx, cancel, end := c.make()
				defer cancel()
				done := make(chan error, 1)
				go func() {
					ev, err := w.Next(ctx)
					if err == nil {
						err = fmt.Errorf("an event: %+v", ev)
					}
					done <- err
				}()
				end()
				select {
				case err := <-done:
					if !errors.Is(err, c.want) {
						t.Errorf("Next = %v, want %v", err, c.want)
					}
				case <-time.After(waitTimeout):
					t.Fatal("Next did not return when its context ended")
				}
			})
		}
	}
}

// TestFanOut has 200 watchers follow 1,000 writes by 4 concurrent writers,
// beside a watcher that never reads and one that stops after one event.
func TestFanOut(t *testing.T) {
	const watchers, writers, writes = 200, 4, 1000
	e := newEnv(t, envOptions{})
	e.run(t)
	start := e.hub.Revision()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	storeEvents, err := e.store.Watch(ctx, widgets, start)
	if err != nil {
		t.Fatal(err)
	}

	stalled := mustWatch(t, e.widgets, watch.WatchOptions{Revision: start})
	slow := mustWatch(t, e.widgets, watch.WatchOptions{Revision: start})
	got := make([][]change, watchers)
	errs := make([]error, watchers)
	var readers sync.WaitGroup
	for i := range watchers {
		w := mustWatch(t, e.widgets, watch.WatchOptions{Revision: start})
		readers.Go(func() {
			for range writes {
				ev, err := w.Next(ctx)
				if err != nil {
					errs[i] = err
					return
				}
				got[i] = append(got[i], change{Type: ev.Type, Key: ev.Item.Key, Value: itemObject(ev.Item).(object).Value, Rev: ev.Revision})
			}
		})
	}
	slowRead := make(chan struct{})
	go func() {
		if _, err := slow.Next(ctx); err == nil {
			close(slowRead)
		}
		// ...and reads nothing more.
	}()

	var writersWG sync.WaitGroup
	for w := range writers {
		writersWG.Go(func() {
			key := fmt.Sprintf("%sns/%d", widgets, w)
			if _, err := e.store.Create(ctx, key, []byte("0")); err != nil {
				t.Errorf("Create: %v", err)
				return
			}
			for i := 1; i < writes/writers; i++ {
				if _, err := e.store.Update(ctx, key, fmt.Appendf(nil, "%d", i), 0); err != nil {
					t.Errorf("Update: %v", err)
					return
				}
			}
		})
	}
	writersWG.Wait()
	readers.Wait()
	select {
	case <-slowRead:
	case <-time.After(waitTimeout):
		t.Fatal("the slow watcher got no event")
	}

	// The store's order of the writes.
	var want []change
	for range writes {
		ev := <-storeEvents
		if ev.Err != nil {
			t.Fatalf("store watch: %v", ev.Err)
		}
		typ := watch.Modified
		if ev.Prev == nil {
			typ = watch.Added
		}
		want = append(want, change{Type: typ, Key: ev.Key, Value: string(ev.Value), Rev: ev.ModRevision})
	}
	for i, c := range want {
		if c.Rev != start+int64(i)+1 {
			t.Fatalf("store event %d at revision %d, want %d", i, c.Rev, start+int64(i)+1)
		}
	}
	for i := range watchers {
		if errs[i] != nil {
			t.Errorf("watcher %d: Next: %v after %d events", i, errs[i], len(got[i]))
		} else if !slices.Equal(got[i], want) {
			t.Errorf("watcher %d saw a different sequence from the store's", i)
			checkChanges(t, got[i], want)
		}
	}

	t.Run("StalledWatcherCatchesUp", func(t *testing.T) {
		var got []change
		for range writes {
			ev := next(t, stalled)
			got = append(got, change{Type: ev.Type, Key: ev.Item.Key, Value: objectOf(t, ev.Item).Value, Rev: ev.Revision})
		}
		checkChanges(t, got, want)
	})
}

// TestRelistAfterStorageWatchExpires makes the hub fall behind its storage
// watch: its DecodeFunc blocks on one value while the store, keeping only 8
// revisions, takes 200 writes. The storage watch then ends with ErrExpired
// and the hub relists.
func TestRelistAfterStorageWatchExpires(t *testing.T) {
	var (
		stalled      = make(chan struct{})
		release      = make(chan struct{})
		stallOnce    sync.Once
		releaseOnce  sync.Once
		hubErrs      = make(chan error, 100)
		releaseStall = func() { releaseOnce.Do(func() { close(release) }) }
	)
	t.Cleanup(releaseStall)
	e := newEnv(t, envOptions{
		store: []memory.Option{memory.WithHistory(8)},
		hub: []watch.Option{watch.WithErrorHandler(func(err error) {
			select {
			case hubErrs <- err:
			default:
			}
		})},
		decode: func(kv storage.KeyValue) (any, error) {
			if string(kv.Value) == "stall" {
				stallOnce.Do(func() {
					close(stalled)
					<-release
				})
			}
			return decode(kv)
		},
	})
	m := newModel(t, e.store)
	for _, key := range []string{"ns1/a", "ns1/b", "ns1/c", "ns2/a"} {
		m.create(widgets+key, "v0")
	}
	m.create(gadgets+"ns1/a", "v0")
	e.run(t)
	before := e.hub.Revision()
	caughtUp := mustWatch(t, e.widgets, watch.WatchOptions{Revision: before})
	withInitial := mustWatch(t, e.widgets, watch.WatchOptions{InitialEvents: true, InitialEventsEnd: true})
	gadgetWatcher := mustWatch(t, e.gadgets, watch.WatchOptions{Revision: before})
	bookmarked := mustWatch(t, e.widgets, watch.WatchOptions{Revision: before})

	m.update(widgets+"ns1/a", "stall")
	select {
	case <-stalled:
	case <-time.After(waitTimeout):
		t.Fatal("the hub did not decode the stalling value")
	}
	for i := range 200 {
		switch key := fmt.Sprintf("%sns%d/%02d", widgets, i%3, i%20); {
		case i%10 == 9:
			m.update(gadgets+"ns1/a", fmt.Sprint(i))
		case m.live[key].Rev == 0:
			m.create(key, fmt.Sprint(i))
		case i%4 == 0:
			m.delete(key)
		default:
			m.update(key, fmt.Sprint(i))
		}
	}
	m.delete(widgets + "ns1/b")
	m.update(widgets+"ns1/c", "after the stall")
	storeRev := mustRevision(t, e.store)
	releaseStall()

	select {
	case err := <-hubErrs:
		if !errors.Is(err, storage.ErrExpired) {
			t.Fatalf("the hub reported %v, want storage.ErrExpired", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the hub reported no error")
	}
	mustWaitFor(t, e.hub, storeRev)

	t.Run("State", func(t *testing.T) {
		if got := e.hub.Revision(); got != storeRev {
			t.Errorf("Revision() = %d, the store is at %d", got, storeRev)
		}
		checkCacheMatchesStore(t, e.store, e.widgets)
		checkCacheMatchesStore(t, e.store, e.gadgets)
	})

	// A watcher may read events the hub applied before its storage watch
	// failed, then must end: what it missed is gone.
	expires := func(t *testing.T, w *watch.Watcher, want []change) {
		t.Helper()
		var got []change
		for {
			ev, err := tryNext(w)
			if errors.Is(err, storage.ErrExpired) {
				break
			}
			if err != nil {
				t.Fatalf("Next: %v after %d events, want storage.ErrExpired", err, len(got))
			}
			got = append(got, summarize(t, ev))
			if len(got) > len(want) {
				break
			}
		}
		if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
			t.Errorf("events before the expiry are not a prefix of the history")
			checkChanges(t, got, want)
		}
	}
	t.Run("CaughtUpWatcherExpires", func(t *testing.T) {
		expires(t, caughtUp, m.after(before, widgets))
	})
	t.Run("InitialEventsWatcherExpires", func(t *testing.T) {
		var want []change
		for _, c := range m.log[:4] { // the widgets created before Run, in key order
			want = append(want, change{Type: watch.Added, Key: c.Key, Value: c.Value, Rev: c.Rev})
		}
		want = append(want, change{Type: watch.Bookmark, Rev: before, End: true})
		want = append(want, m.after(before, widgets)...)
		expires(t, withInitial, want)
	})
	t.Run("OtherCacheWatcherExpires", func(t *testing.T) {
		expires(t, gadgetWatcher, m.after(before, gadgets))
	})
	t.Run("BookmarkKeepsWhatWasMissed", func(t *testing.T) {
		// The relist emptied the history: a bookmark must not move the
		// watcher past the events it never read, which would let the
		// client resume after them without a gap being noticed.
		if bm := bookmarked.Bookmark(); bm.Revision != before {
			t.Errorf("Bookmark at %d, want %d: the watcher has read nothing since", bm.Revision, before)
		}
		if _, err := tryNext(bookmarked); !errors.Is(err, storage.ErrExpired) {
			t.Errorf("Next after Bookmark: %v, want storage.ErrExpired", err)
		}
	})
	t.Run("WatchFromBeforeRelistExpired", func(t *testing.T) {
		if _, err := e.widgets.Watch(watch.WatchOptions{Revision: before}); !errors.Is(err, storage.ErrExpired) {
			t.Errorf("Watch(Revision: %d) = %v, want storage.ErrExpired", before, err)
		}
	})
	t.Run("HubGoesOn", func(t *testing.T) {
		w := mustWatch(t, e.widgets, watch.WatchOptions{Revision: e.hub.Revision()})
		initial := mustWatch(t, e.widgets, watch.WatchOptions{Prefix: "ns1/", InitialEvents: true})
		items, _, _ := e.widgets.List(widgets+"ns1/", "", 0, nil)
		from := e.hub.Revision()
		rev := m.update(widgets+"ns1/c", "after the relist")
		mustWaitFor(t, e.hub, rev)
		checkChanges(t, nextChanges(t, w, 1), m.after(from, widgets))
		checkChanges(t, nextChanges(t, initial, len(items)+1)[len(items):], m.after(from, widgets))
		checkCacheMatchesStore(t, e.store, e.widgets)
	})
}

// TestFilter: a watch narrowed by a filter sees an object that starts being
// accepted as Added and one that stops as Deleted with its accepted state,
// never sees the others, and Buffered says exactly whether Next would
// return without waiting.
func TestFilter(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.run(t)
	red := func(it *watch.Item) bool { return strings.HasPrefix(itemObject(it).(object).Value, "red") }
	start := mustRevision(t, e.store)
	w, err := e.widgets.Watch(watch.WatchOptions{Revision: start, Filter: red})
	if err != nil {
		t.Fatal(err)
	}
	if w.Buffered() {
		t.Fatal("Buffered before any change")
	}
	rev := mustCreate(t, e.store, widgets+"ns/a", "blue")
	mustWaitFor(t, e.hub, rev)
	if w.Buffered() {
		t.Fatal("Buffered with only a change the filter refuses")
	}
	for _, step := range []struct{ value, want string }{
		{"red 1", "ADDED red 1"},    // starts being accepted
		{"red 2", "MODIFIED red 2"}, // stays accepted
		{"blue 2", "DELETED red 2"}, // stops: its last accepted state
		{"blue 3", ""},              // never seen
		{"red 4", "ADDED red 4"},
	} {
		rev := mustUpdate(t, e.store, widgets+"ns/a", step.value)
		mustWaitFor(t, e.hub, rev)
		if step.want == "" {
			if w.Buffered() {
				t.Fatalf("after %q: Buffered, want nothing to see", step.value)
			}
			continue
		}
		if !w.Buffered() {
			t.Fatalf("after %q: not Buffered", step.value)
		}
		ev, err := w.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := string(ev.Type) + " " + itemObject(ev.Item).(object).Value; got != step.want || ev.Revision != rev {
			t.Fatalf("after %q: %s at %d, want %s at %d", step.value, got, ev.Revision, step.want, rev)
		}
	}
}
