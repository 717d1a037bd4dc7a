package watch_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// The key space of the tests: a hub over root with two resources.
const (
	root    = "/registry/"
	widgets = "/registry/widgets/"
	gadgets = "/registry/gadgets/"

	// waitTimeout bounds every wait; it only turns a hang into a failure.
	waitTimeout = 30 * time.Second
)

// object is what the tests' DecodeFunc makes of a stored value.
type object struct {
	Value string
	Rev   int64
}

func decode(kv storage.KeyValue) (any, error) {
	return object{Value: string(kv.Value), Rev: kv.ModRevision}, nil
}

// itemObject is the item's object, nil if it does not decode.
func itemObject(it *watch.Item) any {
	obj, _ := it.Object()
	return obj
}

// objectOf returns the item's object, checking that its revision is the
// item's.
func objectOf(t testing.TB, it *watch.Item) object {
	t.Helper()
	o, ok := itemObject(it).(object)
	if !ok {
		t.Fatalf("item %q holds a %T, not an object", it.Key, itemObject(it))
	}
	if o.Rev != it.Revision {
		t.Errorf("item %q: object decoded at revision %d, item revision %d", it.Key, o.Rev, it.Revision)
	}
	return o
}

type envOptions struct {
	store  []memory.Option
	hub    []watch.Option
	decode watch.DecodeFunc // nil: decode
}

// env is a memory store and a hub over root with the widgets and gadgets
// caches.
type env struct {
	store   *memory.Store
	hub     *watch.Hub
	widgets *watch.Cache
	gadgets *watch.Cache
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	store := memory.New(o.store...)
	t.Cleanup(func() { store.Close() })
	dec := o.decode
	if dec == nil {
		dec = decode
	}
	hub := watch.New(store, root, o.hub...)
	return &env{
		store:   store,
		hub:     hub,
		widgets: hub.Register(widgets, dec),
		gadgets: hub.Register(gadgets, dec),
	}
}

// run starts the hub and waits until it has caught up with the store. The
// test's cleanup ends Run and checks that it returned nil; stop does so
// earlier and returns Run's result.
func (e *env) run(t testing.TB) (stop func() error) {
	t.Helper()
	stop = startRun(t, e.hub)
	mustWaitFor(t, e.hub, mustRevision(t, e.store))
	return stop
}

// startRun runs h until the test ends or stop is called.
func startRun(t testing.TB, h *watch.Hub) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	var (
		once sync.Once
		err  error
	)
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(waitTimeout):
				err = errors.New("Run did not return after its context was cancelled")
			}
		})
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return stop
}

func mustRevision(t testing.TB, s storage.Interface) int64 {
	t.Helper()
	rev, err := s.Revision(context.Background())
	if err != nil {
		t.Fatalf("Revision: %v", err)
	}
	return rev
}

func mustCreate(t testing.TB, s storage.Interface, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(context.Background(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	return rev
}

func mustUpdate(t testing.TB, s storage.Interface, key, value string) int64 {
	t.Helper()
	rev, err := s.Update(context.Background(), key, []byte(value), 0)
	if err != nil {
		t.Fatalf("Update(%q): %v", key, err)
	}
	return rev
}

func mustDelete(t testing.TB, s storage.Interface, key string) int64 {
	t.Helper()
	kv, err := s.Delete(context.Background(), key, 0)
	if err != nil {
		t.Fatalf("Delete(%q): %v", key, err)
	}
	return kv.ModRevision
}

func mustWaitFor(t testing.TB, h *watch.Hub, rev int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := h.WaitFor(ctx, rev); err != nil {
		t.Fatalf("WaitFor(%d): %v (hub at %d)", rev, err, h.Revision())
	}
}

func mustWatch(t testing.TB, c *watch.Cache, opts watch.WatchOptions) *watch.Watcher {
	t.Helper()
	w, err := c.Watch(opts)
	if err != nil {
		t.Fatalf("Watch(%+v): %v", opts, err)
	}
	return w
}

// next returns the watcher's next event, failing the test on an error.
func next(t testing.TB, w *watch.Watcher) watch.Event {
	t.Helper()
	ev, err := tryNext(w)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return ev
}

func tryNext(w *watch.Watcher) (watch.Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	return w.Next(ctx)
}

// change is an event reduced to comparable values.
type change struct {
	Type      watch.EventType
	Key       string
	Value     string
	Rev       int64
	PrevValue string
	PrevRev   int64 // 0: no Prev
	End       bool  // InitialEventsEnd
}

func (c change) String() string {
	s := fmt.Sprintf("%s %s=%q@%d", c.Type, c.Key, c.Value, c.Rev)
	if c.PrevRev != 0 {
		s += fmt.Sprintf(" prev %q@%d", c.PrevValue, c.PrevRev)
	}
	if c.End {
		s += " initial-events-end"
	}
	return s
}

// summarize reduces ev to a change, checking what holds for every event.
func summarize(t testing.TB, ev watch.Event) change {
	t.Helper()
	c := change{Type: ev.Type, Rev: ev.Revision, End: ev.InitialEventsEnd}
	switch ev.Type {
	case watch.Bookmark:
		if ev.Item != nil || ev.Prev != nil {
			t.Errorf("bookmark at %d carries an item", ev.Revision)
		}
		return c
	case watch.Added, watch.Modified, watch.Deleted:
	default:
		t.Fatalf("event of unknown type %q", ev.Type)
	}
	if ev.Item == nil {
		t.Fatalf("%s event at %d has no item", ev.Type, ev.Revision)
	}
	c.Key, c.Value = ev.Item.Key, objectOf(t, ev.Item).Value
	if ev.Item.Revision != ev.Revision {
		t.Errorf("%s %s: item revision %d, event revision %d", ev.Type, c.Key, ev.Item.Revision, ev.Revision)
	}
	if ev.Prev != nil {
		if ev.Prev.Key != c.Key {
			t.Errorf("%s %s: Prev is of key %q", ev.Type, c.Key, ev.Prev.Key)
		}
		c.PrevValue, c.PrevRev = objectOf(t, ev.Prev).Value, ev.Prev.Revision
	}
	return c
}

// nextChanges reads n events.
func nextChanges(t testing.TB, w *watch.Watcher, n int) []change {
	t.Helper()
	got := make([]change, 0, n)
	for range n {
		got = append(got, summarize(t, next(t, w)))
	}
	return got
}

func checkChanges(t testing.TB, got, want []change) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("got %d events, want %d; the first differences:", len(got), len(want))
	shown := 0
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i].String()
		}
		if i < len(want) {
			w = want[i].String()
		}
		if g != w {
			t.Logf("event %d:\n\tgot  %s\n\twant %s", i, g, w)
			if shown++; shown == 10 {
				return
			}
		}
	}
}

// model writes to the store and records the events a watcher must see.
type model struct {
	t     testing.TB
	store storage.Interface
	live  map[string]change // current version of each key: Value, Rev
	log   []change
}

func newModel(t testing.TB, s storage.Interface) *model {
	return &model{t: t, store: s, live: map[string]change{}}
}

func (m *model) create(key, value string) int64 {
	m.t.Helper()
	rev := mustCreate(m.t, m.store, key, value)
	m.live[key] = change{Value: value, Rev: rev}
	m.log = append(m.log, change{Type: watch.Added, Key: key, Value: value, Rev: rev})
	return rev
}

func (m *model) update(key, value string) int64 {
	m.t.Helper()
	prev := m.live[key]
	rev := mustUpdate(m.t, m.store, key, value)
	m.live[key] = change{Value: value, Rev: rev}
	m.log = append(m.log, change{Type: watch.Modified, Key: key, Value: value, Rev: rev, PrevValue: prev.Value, PrevRev: prev.Rev})
	return rev
}

func (m *model) delete(key string) int64 {
	m.t.Helper()
	prev := m.live[key]
	rev := mustDelete(m.t, m.store, key)
	delete(m.live, key)
	m.log = append(m.log, change{Type: watch.Deleted, Key: key, Value: prev.Value, Rev: rev, PrevValue: prev.Value, PrevRev: prev.Rev})
	return rev
}

// after returns the recorded changes after rev to keys under prefix.
func (m *model) after(rev int64, prefix string) []change {
	var out []change
	for _, c := range m.log {
		if c.Rev > rev && strings.HasPrefix(c.Key, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// checkCacheMatchesStore compares everything c serves with the store's
// current state of c's prefix.
func checkCacheMatchesStore(t testing.TB, s storage.Interface, c *watch.Cache) {
	t.Helper()
	page, err := s.List(context.Background(), c.Prefix(), storage.ListOptions{})
	if err != nil {
		t.Fatalf("List(%q): %v", c.Prefix(), err)
	}
	type kv struct {
		Key, Value string
		Rev        int64
	}
	var want, got []kv
	for _, it := range page.Items {
		want = append(want, kv{it.Key, string(it.Value), it.ModRevision})
		item, _ := c.Get(it.Key)
		if item == nil {
			t.Errorf("Get(%q) = nil, the store has it at %d", it.Key, it.ModRevision)
		} else if o := objectOf(t, item); o.Value != string(it.Value) || item.Revision != it.ModRevision {
			t.Errorf("Get(%q) = %q@%d, the store has %q@%d", it.Key, o.Value, item.Revision, it.Value, it.ModRevision)
		}
	}
	items, _, remaining := c.List(c.Prefix(), "", 0, nil)
	for _, it := range items {
		got = append(got, kv{it.Key, objectOf(t, it).Value, it.Revision})
	}
	if !slices.Equal(got, want) || remaining != 0 {
		t.Errorf("cache %s lists (remaining %d):\n%v\nthe store has:\n%v", c.Prefix(), remaining, got, want)
	}
}

func keysOf(items []*watch.Item) []string {
	keys := []string{}
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	return keys
}

func TestRunRelists(t *testing.T) {
	tests := []struct {
		name string
		fill func(m *model)
	}{
		{"Empty", func(*model) {}},
		{"OutsideRootOnly", func(m *model) {
			m.create("/outside/a", "outside root")
		}},
		{"CreatedUpdatedDeleted", func(m *model) {
			m.create(widgets+"ns1/a", "a1")
			m.create(widgets+"ns1/b", "b1")
			m.create(widgets+"ns2/a", "a1")
			m.update(widgets+"ns1/a", "a2")
			m.delete(widgets + "ns1/b")
			m.create(gadgets+"ns1/a", "gadget")
			m.create(root+"other/ns1/a", "not a registered resource")
			m.create(root+"loose", "no resource segment")
			m.create("/outside/a", "outside root")
			m.update(widgets+"ns2/a", "a2")
		}},
		{"MoreThanOnePage", func(m *model) {
			// The hub reads the store in pages of 1,000.
			for i := range 2500 {
				m.create(fmt.Sprintf("%sns%d/%04d", widgets, i%3, i), fmt.Sprint(i))
				if i%7 == 0 {
					m.create(fmt.Sprintf("%sns/%04d", gadgets, i), "g")
				}
			}
			for i := 0; i < 2500; i += 11 {
				m.update(fmt.Sprintf("%sns%d/%04d", widgets, i%3, i), "updated")
			}
			for i := 0; i < 2500; i += 13 {
				m.delete(fmt.Sprintf("%sns%d/%04d", widgets, i%3, i))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			m := newModel(t, e.store)
			tt.fill(m)
			e.run(t)

			if got, want := e.hub.Revision(), mustRevision(t, e.store); got != want {
				t.Errorf("Revision() = %d after the relist, the store is at %d", got, want)
			}
			checkCacheMatchesStore(t, e.store, e.widgets)
			checkCacheMatchesStore(t, e.store, e.gadgets)
			for key := range m.live {
				for _, c := range []*watch.Cache{e.widgets, e.gadgets} {
					if it, _ := c.Get(key); it != nil && !strings.HasPrefix(key, c.Prefix()) {
						t.Errorf("cache %s serves %q", c.Prefix(), key)
					}
				}
			}
		})
	}
}

func TestRunFollowsStore(t *testing.T) {
	e := newEnv(t, envOptions{})
	m := newModel(t, e.store)
	m.create(widgets+"ns1/existing", "before Run")
	e.run(t)

	type step struct {
		name  string
		write func() int64
		key   string
		want  string // "" for absent
	}
	steps := []step{
		{"Create", func() int64 { return m.create(widgets+"ns1/a", "a1") }, widgets + "ns1/a", "a1"},
		{"UpdateRelisted", func() int64 { return m.update(widgets+"ns1/existing", "after Run") }, widgets + "ns1/existing", "after Run"},
		{"Update", func() int64 { return m.update(widgets+"ns1/a", "a2") }, widgets + "ns1/a", "a2"},
		{"CreateOtherNamespace", func() int64 { return m.create(widgets+"ns2/a", "other") }, widgets + "ns2/a", "other"},
		{"Delete", func() int64 { return m.delete(widgets + "ns1/a") }, widgets + "ns1/a", ""},
		{"DeleteRelisted", func() int64 { return m.delete(widgets + "ns1/existing") }, widgets + "ns1/existing", ""},
		{"Recreate", func() int64 { return m.create(widgets+"ns1/a", "a3") }, widgets + "ns1/a", "a3"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			rev := s.write()
			mustWaitFor(t, e.hub, rev)
			it, at := e.widgets.Get(s.key)
			if at < rev {
				t.Errorf("Get(%q) read at %d, after WaitFor(%d)", s.key, at, rev)
			}
			switch {
			case s.want == "" && it != nil:
				t.Errorf("Get(%q) = %q after its deletion", s.key, objectOf(t, it).Value)
			case s.want != "" && it == nil:
				t.Errorf("Get(%q) = nil, want %q", s.key, s.want)
			case s.want != "":
				if o := objectOf(t, it); o.Value != s.want || it.Revision != rev {
					t.Errorf("Get(%q) = %q@%d, want %q@%d", s.key, o.Value, it.Revision, s.want, rev)
				}
			}
			checkCacheMatchesStore(t, e.store, e.widgets)
		})
	}
}

func TestCacheList(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, k := range []string{"ns1/a", "ns1/b", "ns1/c", "ns1/d", "ns1/e", "ns10/a", "ns2/a", "ns2/b"} {
		mustCreate(t, e.store, widgets+k, strings.TrimPrefix(k[strings.IndexByte(k, '/'):], "/"))
	}
	mustCreate(t, e.store, gadgets+"ns1/z", "z")
	e.run(t)

	not := func(name string) func(*watch.Item) bool {
		return func(it *watch.Item) bool { return objectOf(t, it).Value != name }
	}
	ns1 := widgets + "ns1/"
	tests := []struct {
		name          string
		prefix, start string
		limit         int
		filter        func(*watch.Item) bool
		want          []string // keys without the widgets prefix
		remaining     int
	}{
		{name: "All", prefix: widgets,
			want: []string{"ns1/a", "ns1/b", "ns1/c", "ns1/d", "ns1/e", "ns10/a", "ns2/a", "ns2/b"}},
		{name: "EmptyPrefixIsTheResource", prefix: "",
			want: []string{"ns1/a", "ns1/b", "ns1/c", "ns1/d", "ns1/e", "ns10/a", "ns2/a", "ns2/b"}},
		{name: "Namespace", prefix: ns1,
			want: []string{"ns1/a", "ns1/b", "ns1/c", "ns1/d", "ns1/e"}},
		{name: "NamespaceWithoutKeys", prefix: widgets + "ns3/", want: []string{}},
		{name: "Start", prefix: ns1, start: ns1 + "c",
			want: []string{"ns1/c", "ns1/d", "ns1/e"}},
		{name: "StartBetweenKeys", prefix: ns1, start: ns1 + "bb",
			want: []string{"ns1/c", "ns1/d", "ns1/e"}},
		{name: "StartBeforePrefix", prefix: ns1, start: widgets,
			want: []string{"ns1/a", "ns1/b", "ns1/c", "ns1/d", "ns1/e"}},
		{name: "StartPastEnd", prefix: ns1, start: ns1 + "z", want: []string{}},
		{name: "Limit", prefix: ns1, limit: 2,
			want: []string{"ns1/a", "ns1/b"}, remaining: 3},
		{name: "LimitAndStart", prefix: ns1, start: ns1 + "b", limit: 2,
			want: []string{"ns1/b", "ns1/c"}, remaining: 2},
		{name: "LimitReachedOnLastKey", prefix: ns1, start: ns1 + "d", limit: 2,
			want: []string{"ns1/d", "ns1/e"}},
		{name: "LimitAboveCount", prefix: ns1, limit: 100,
			want: []string{"ns1/a", "ns1/b", "ns1/c", "ns1/d", "ns1/e"}},
		{name: "LimitAcrossNamespaces", prefix: widgets, limit: 6,
			want: []string{"ns1/a", "ns1/b", "ns1/c", "ns1/d", "ns1/e", "ns10/a"}, remaining: 2},
		{name: "Filter", prefix: ns1, filter: not("b"),
			want: []string{"ns1/a", "ns1/c", "ns1/d", "ns1/e"}},
		{name: "FilterRejectsAll", prefix: ns1, filter: func(*watch.Item) bool { return false }, want: []string{}},
		// remaining counts the keys under prefix after the last item
		// returned, whether or not they pass the filter.
		{name: "FilterAndLimit", prefix: ns1, filter: not("b"), limit: 2,
			want: []string{"ns1/a", "ns1/c"}, remaining: 2},
		{name: "FilterAndLimitLastKeysRejected", prefix: ns1, limit: 1,
			filter: func(it *watch.Item) bool { return objectOf(t, it).Value == "a" },
			want:   []string{"ns1/a"}, remaining: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, rev, remaining := e.widgets.List(tt.prefix, tt.start, tt.limit, tt.filter)
			want := []string{}
			for _, k := range tt.want {
				want = append(want, widgets+k)
			}
			if got := keysOf(items); !slices.Equal(got, want) || remaining != tt.remaining {
				t.Errorf("List(%q, %q, %d) = %v, remaining %d; want %v, remaining %d",
					tt.prefix, tt.start, tt.limit, got, remaining, want, tt.remaining)
			}
			if hubRev := e.hub.Revision(); rev != hubRev {
				t.Errorf("List read at %d, hub at %d", rev, hubRev)
			}
		})
	}

	t.Run("Pages", func(t *testing.T) {
		// Following remaining and start through the pages lists every key.
		var got []string
		start := ""
		for {
			items, _, remaining := e.widgets.List(widgets, start, 3, nil)
			got = append(got, keysOf(items)...)
			if remaining == 0 {
				break
			}
			start = items[len(items)-1].Key + "\x00"
		}
		all, _, _ := e.widgets.List(widgets, "", 0, nil)
		if want := keysOf(all); !slices.Equal(got, want) {
			t.Errorf("pages listed %v, want %v", got, want)
		}
	})

	t.Run("ReflectsWrites", func(t *testing.T) {
		mustCreate(t, e.store, ns1+"bb", "bb")
		mustDelete(t, e.store, ns1+"d")
		rev := mustUpdate(t, e.store, ns1+"a", "a2")
		mustWaitFor(t, e.hub, rev)
		items, at, _ := e.widgets.List(ns1, "", 0, nil)
		if want := []string{ns1 + "a", ns1 + "b", ns1 + "bb", ns1 + "c", ns1 + "e"}; !slices.Equal(keysOf(items), want) {
			t.Errorf("List = %v, want %v", keysOf(items), want)
		}
		if at < rev {
			t.Errorf("List read at %d, after WaitFor(%d)", at, rev)
		}
		if o := objectOf(t, items[0]); o.Value != "a2" || items[0].Revision != rev {
			t.Errorf("List()[0] = %q@%d, want %q@%d", o.Value, items[0].Revision, "a2", rev)
		}
	})
}

func TestWaitFor(t *testing.T) {
	t.Run("BeforeRun", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		rev := mustCreate(t, e.store, widgets+"ns/a", "a")
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			done <- e.hub.WaitFor(ctx, rev)
		}()
		startRun(t, e.hub)
		if err := <-done; err != nil {
			t.Fatalf("WaitFor(%d): %v", rev, err)
		}
		if it, _ := e.widgets.Get(widgets + "ns/a"); it == nil {
			t.Errorf("Get after WaitFor(%d) = nil", rev)
		}
	})

	e := newEnv(t, envOptions{})
	mustCreate(t, e.store, widgets+"ns/a", "a")
	mustUpdate(t, e.store, widgets+"ns/a", "b")
	e.run(t)

	t.Run("Reached", func(t *testing.T) {
		for _, rev := range []int64{0, 1, 2} {
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			if err := e.hub.WaitFor(ctx, rev); err != nil {
				t.Errorf("WaitFor(%d) with the hub at %d: %v", rev, e.hub.Revision(), err)
			}
		}
	})

	t.Run("Later", func(t *testing.T) {
		const writes = 20
		want := e.hub.Revision() + writes
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			err := e.hub.WaitFor(ctx, want)
			if err == nil {
				if got := e.hub.Revision(); got < want {
					err = fmt.Errorf("returned with the hub at %d", got)
				}
				if it, _ := e.widgets.Get(fmt.Sprintf("%sns/%02d", widgets, writes-1)); it == nil {
					err = errors.New("returned before the last write reached the cache")
				}
			}
			done <- err
		}()
		for i := range writes {
			mustCreate(t, e.store, fmt.Sprintf("%sns/%02d", widgets, i), "v")
		}
		if err := <-done; err != nil {
			t.Errorf("WaitFor(%d): %v", want, err)
		}
	})

	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.hub.WaitFor(ctx, e.hub.Revision()+1000) }()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("WaitFor after cancel = %v, want context.Canceled", err)
		}
	})

	t.Run("AlreadyCancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := e.hub.WaitFor(ctx, e.hub.Revision()+1); !errors.Is(err, context.Canceled) {
			t.Errorf("WaitFor = %v, want context.Canceled", err)
		}
	})

	t.Run("Deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		if err := e.hub.WaitFor(ctx, e.hub.Revision()+1000); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("WaitFor = %v, want context.DeadlineExceeded", err)
		}
	})

	// WaitWithin's bound ends the wait as a context's deadline would, and
	// neither it nor ctx's cancellation is needed when the hub is there.
	t.Run("Within", func(t *testing.T) {
		if err := e.hub.WaitWithin(context.Background(), e.hub.Revision()+1000, time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("WaitWithin past the hub = %v, want context.DeadlineExceeded", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := e.hub.WaitWithin(ctx, e.hub.Revision()+1000, time.Hour); !errors.Is(err, context.Canceled) {
			t.Errorf("WaitWithin with ctx cancelled = %v, want context.Canceled", err)
		}
		if err := e.hub.WaitWithin(ctx, e.hub.Revision(), time.Nanosecond); err != nil {
			t.Errorf("WaitWithin at the hub's revision = %v", err)
		}
	})
}

func TestKeysOutsideCaches(t *testing.T) {
	e := newEnv(t, envOptions{})
	m := newModel(t, e.store)
	m.create(widgets+"ns/a", "a")
	e.run(t)
	w := mustWatch(t, e.widgets, watch.WatchOptions{Revision: e.hub.Revision()})
	g := mustWatch(t, e.gadgets, watch.WatchOptions{Revision: e.hub.Revision()})
	start := e.hub.Revision()

	for _, key := range []string{
		root + "other/ns/a",    // a resource nobody registered
		root + "widgets",       // no slash after the segment
		root + "widgetsx/ns/a", // shares the resource's name as a prefix
	} {
		m.create(key, "ignored")
		m.update(key, "ignored again")
	}
	rev := m.delete(root + "other/ns/a")
	// Every revision of the store is under root, in a cache or not: the hub
	// counts them all.
	mustWaitFor(t, e.hub, rev)
	if got := e.hub.Revision(); got != rev {
		t.Errorf("Revision() = %d, the store is at %d", got, rev)
	}
	checkCacheMatchesStore(t, e.store, e.widgets)
	checkCacheMatchesStore(t, e.store, e.gadgets)
	if items, _, _ := e.gadgets.List(gadgets, "", 0, nil); len(items) != 0 {
		t.Errorf("gadgets cache lists %v", keysOf(items))
	}

	// The next event of each watcher is the sentinel written after the
	// ignored keys: nothing came in between.
	m.create(widgets+"ns/sentinel", "w")
	m.create(gadgets+"ns/sentinel", "g")
	checkChanges(t, nextChanges(t, w, 1), m.after(start, widgets))
	checkChanges(t, nextChanges(t, g, 1), m.after(start, gadgets))
}

func TestTwoCaches(t *testing.T) {
	e := newEnv(t, envOptions{})
	m := newModel(t, e.store)
	m.create(widgets+"ns/a", "widget a")
	m.create(gadgets+"ns/a", "gadget a")
	e.run(t)
	start := e.hub.Revision()
	ww := mustWatch(t, e.widgets, watch.WatchOptions{Revision: start})
	gw := mustWatch(t, e.gadgets, watch.WatchOptions{Revision: start})

	// The same names under both resources, interleaved.
	var last int64
	for i := range 10 {
		name := fmt.Sprintf("ns/%d", i)
		m.create(widgets+name, "widget")
		m.create(gadgets+name, "gadget")
		if i%2 == 0 {
			m.update(widgets+name, "widget 2")
		} else {
			m.delete(gadgets + name)
		}
		last = m.update(gadgets+"ns/a", fmt.Sprintf("gadget a %d", i))
		if got := mustRevision(t, e.store); got != last {
			t.Fatalf("store at %d after the last write at %d", got, last)
		}
	}
	mustWaitFor(t, e.hub, last)
	if got := e.hub.Revision(); got != last {
		t.Errorf("Revision() = %d, the store is at %d", got, last)
	}

	checkCacheMatchesStore(t, e.store, e.widgets)
	checkCacheMatchesStore(t, e.store, e.gadgets)
	for _, tc := range []struct {
		cache *watch.Cache
		other string
	}{{e.widgets, gadgets}, {e.gadgets, widgets}} {
		if it, _ := tc.cache.Get(tc.other + "ns/a"); it != nil {
			t.Errorf("cache %s serves %s", tc.cache.Prefix(), it.Key)
		}
		if items, _, _ := tc.cache.List(tc.other, "", 0, nil); len(items) != 0 {
			t.Errorf("cache %s lists %v under %s", tc.cache.Prefix(), keysOf(items), tc.other)
		}
	}
	t.Run("Widgets", func(t *testing.T) {
		want := m.after(start, widgets)
		checkChanges(t, nextChanges(t, ww, len(want)), want)
	})
	t.Run("Gadgets", func(t *testing.T) {
		want := m.after(start, gadgets)
		checkChanges(t, nextChanges(t, gw, len(want)), want)
	})
}

// TestUndecodableValues: a value the DecodeFunc rejects is reported and
// left out of the cache, and Unreadable names its key until it is rewritten
// or deleted; a served object that becomes undecodable is announced as
// deleted, at the revision of that write.
func TestUndecodableValues(t *testing.T) {
	errBad := errors.New("bad value")
	var (
		mu   sync.Mutex
		errs []error
	)
	e := newEnv(t, envOptions{
		hub: []watch.Option{watch.WithErrorHandler(func(err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})},
		decode: func(kv storage.KeyValue) (any, error) {
			if string(kv.Value) == "bad" {
				return nil, fmt.Errorf("%s: %w", kv.Key, errBad)
			}
			return decode(kv)
		},
	})
	m := newModel(t, e.store)
	m.create(widgets+"ns/relisted-bad", "bad")
	m.create(widgets+"ns/a", "a1")
	e.run(t)
	start := e.hub.Revision()
	w := mustWatch(t, e.widgets, watch.WatchOptions{Revision: start})
	if it, _ := e.widgets.Get(widgets + "ns/relisted-bad"); it != nil {
		t.Errorf("Get of an undecodable value = %v", objectOf(t, it))
	}

	unreadable := func(prefix string, want ...string) {
		t.Helper()
		var got []string
		for _, u := range e.widgets.Unreadable(prefix) {
			if !errors.Is(u.Err, errBad) || u.Revision == 0 {
				t.Errorf("unreadable %s: revision %d, error %v", u.Key, u.Revision, u.Err)
			}
			got = append(got, strings.TrimPrefix(u.Key, widgets))
		}
		if !slices.Equal(got, want) {
			t.Errorf("Unreadable(%q) = %q, want %q", prefix, got, want)
		}
	}
	unreadable(widgets, "ns/relisted-bad")

	a1 := m.live[widgets+"ns/a"]
	bad := mustUpdate(t, e.store, widgets+"ns/a", "bad")
	mustWaitFor(t, e.hub, mustCreate(t, e.store, widgets+"ns/b", "bad"))
	unreadable(widgets, "ns/a", "ns/b", "ns/relisted-bad")
	unreadable(widgets+"ns/r", "ns/relisted-bad")
	unreadable(widgets + "other/")
	a2 := mustUpdate(t, e.store, widgets+"ns/a", "a2")
	good := mustUpdate(t, e.store, widgets+"ns/relisted-bad", "good")
	mustDelete(t, e.store, widgets+"ns/b")
	last := mustCreate(t, e.store, widgets+"ns/z", "sentinel")
	want := []change{
		{Type: watch.Deleted, Key: widgets + "ns/a", Value: "a1", Rev: bad, PrevValue: "a1", PrevRev: a1.Rev},
		{Type: watch.Added, Key: widgets + "ns/a", Value: "a2", Rev: a2},
		{Type: watch.Added, Key: widgets + "ns/relisted-bad", Value: "good", Rev: good},
		{Type: watch.Added, Key: widgets + "ns/z", Value: "sentinel", Rev: last},
	}
	checkChanges(t, nextChanges(t, w, len(want)), want)
	mustWaitFor(t, e.hub, last)
	checkCacheMatchesStore(t, e.store, e.widgets)
	unreadable(widgets) // rewritten, deleted: none is left

	mu.Lock()
	defer mu.Unlock()
	if len(errs) < 3 { // the relist, the update and the create
		t.Errorf("the error handler got %d errors, want at least 3: %v", len(errs), errs)
	}
	for _, err := range errs {
		if !errors.Is(err, errBad) {
			t.Errorf("the error handler got %v", err)
		}
	}
}

// racingStore makes one write, to key, when the hub first calls Watch:
// a client's write racing the hub's start.
type racingStore struct {
	*memory.Store
	key     string
	once    sync.Once
	watched chan struct{} // closed when that Watch has returned
}

func (s *racingStore) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	first := false
	s.once.Do(func() {
		first = true
		if _, err := s.Store.Create(ctx, s.key, []byte("raced")); err != nil {
			panic(err)
		}
	})
	ch, err := s.Store.Watch(ctx, prefix, rev)
	if first {
		close(s.watched)
	}
	return ch, err
}

// TestRunStartsOnEmptyStore: a write that lands between the hub's relist
// and the start of its storage watch must reach the cache, also when the
// relist read an empty store at revision 0 (the storage watch from 0 must
// then mean "after 0", not "from now").
func TestRunStartsOnEmptyStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		seed bool
	}{
		{"StoreAtRevision0", false},
		{"StoreAtRevision1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &racingStore{Store: memory.New(), key: widgets + "ns/raced", watched: make(chan struct{})}
			t.Cleanup(func() { store.Close() })
			if tc.seed {
				mustCreate(t, store, "/outside/seed", "seed")
			}
			hub := watch.New(store, root)
			cache := hub.Register(widgets, decode)
			startRun(t, hub)
			select {
			case <-store.watched:
			case <-time.After(waitTimeout):
				t.Fatal("the hub did not start its storage watch")
			}
			rev := mustCreate(t, store, widgets+"ns/after", "after")
			mustWaitFor(t, hub, rev)
			for _, key := range []string{widgets + "ns/raced", widgets + "ns/after"} {
				if it, _ := cache.Get(key); it == nil {
					t.Errorf("Get(%q) = nil with the hub at %d; the store has it", key, hub.Revision())
				}
			}
		})
	}
}

func TestRunReturns(t *testing.T) {
	t.Run("NilWhenCancelled", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		stop := e.run(t)
		mustCreate(t, e.store, widgets+"ns/a", "a")
		if err := stop(); err != nil {
			t.Errorf("Run = %v after its context was cancelled, want nil", err)
		}
	})
	t.Run("NilWhenCancelledBeforeStart", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := e.hub.Run(ctx); err != nil {
			t.Errorf("Run = %v with a cancelled context, want nil", err)
		}
	})
	t.Run("ErrClosedWhenStoreCloses", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		mustCreate(t, e.store, widgets+"ns/a", "a")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- e.hub.Run(ctx) }()
		mustWaitFor(t, e.hub, mustRevision(t, e.store))
		e.store.Close()
		select {
		case err := <-done:
			if !errors.Is(err, storage.ErrClosed) {
				t.Errorf("Run = %v after the store closed, want storage.ErrClosed", err)
			}
		case <-time.After(waitTimeout):
			t.Fatal("Run did not return after the store closed")
		}
	})
}

// TestWatchersEndWithRun checks the package documentation's "Hub.Run feeds
// the caches until its context ends; every watcher ends with it."
func TestWatchersEndWithRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	stop := e.run(t)
	w := mustWatch(t, e.widgets, watch.WatchOptions{Revision: e.hub.Revision()})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := w.Next(ctx)
		done <- err
	}()
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, watch.ErrStopped) {
			t.Errorf("Next = %v after Run ended, want ErrStopped", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Next still waits 5s after Run returned; the watcher should end with Run")
		cancel()
		<-done
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	baseline := runtime.NumGoroutine()

	store := memory.New()
	defer store.Close()
	rev := mustCreate(t, store, widgets+"ns/a", "a")
	hub := watch.New(store, root)
	cache := hub.Register(widgets, decode)
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- hub.Run(runCtx) }()
	mustWaitFor(t, hub, rev)

	// Watchers in each state their context can end in: waiting for a
	// change, waiting with a bookmark timer, having initial events left,
	// fallen behind a future revision; and a WaitFor for a future revision.
	var wg sync.WaitGroup
	var cancels []context.CancelFunc
	waitIn := func(f func(ctx context.Context) error) {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		wg.Go(func() {
			if err := f(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("got %v when the context was cancelled, want context.Canceled", err)
			}
		})
	}
	for _, opts := range []watch.WatchOptions{
		{Revision: rev},
		{Revision: rev, BookmarkInterval: time.Hour},
		{Revision: rev, BookmarkInterval: time.Millisecond},
		{Revision: rev + 1000},
		{InitialEvents: true, InitialEventsEnd: true},
		{Prefix: "quiet/", Revision: rev},
	} {
		w := mustWatch(t, cache, opts)
		waitIn(func(ctx context.Context) error {
			for {
				if _, err := w.Next(ctx); err != nil {
					return err
				}
			}
		})
	}
	waitIn(func(ctx context.Context) error { return hub.WaitFor(ctx, rev+1000) })
	for i := range 10 {
		mustCreate(t, store, fmt.Sprintf("%sns/%d", widgets, i), "v")
	}
	mustWatch(t, cache, watch.WatchOptions{Revision: rev}) // never read

	// Each waiter ends by its own context (Run stopping would end them
	// with ErrStopped instead: TestWatchersEndWithRun), then Run by its.
	for _, cancel := range cancels {
		cancel()
	}
	wg.Wait()
	stopRun()
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("Run = %v after its context was cancelled, want nil", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return after its context was cancelled")
	}

	deadline := time.Now().Add(waitTimeout)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before the test:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestItemEncoded(t *testing.T) {
	e := newEnv(t, envOptions{})
	mustCreate(t, e.store, widgets+"ns/a", "a")
	e.run(t)
	cached, _ := e.widgets.Get(widgets + "ns/a")
	if cached == nil {
		t.Fatal("Get = nil")
	}

	for _, tc := range []struct {
		name string
		item *watch.Item
	}{
		{"FromCache", cached},
		{"Literal", watch.NewItem("k", 7, object{"literal", 7})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const callers = 50
			formats := []string{"application/json", "application/yaml", "application/cbor"}
			var mu sync.Mutex
			calls := map[string]int{}
			encoder := func(format string) func() ([]byte, error) {
				return func() ([]byte, error) {
					obj, err := tc.item.Object()
					if err != nil {
						return nil, err
					}
					mu.Lock()
					calls[format]++
					mu.Unlock()
					runtime.Gosched() // let the other callers pile up
					return fmt.Appendf(nil, "%s:%v", format, obj), nil
				}
			}
			results := make([][][]byte, len(formats))
			for i := range results {
				results[i] = make([][]byte, callers)
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			for f, format := range formats {
				for c := range callers {
					wg.Go(func() {
						<-start
						data, err := tc.item.Encoded(format, encoder(format))
						if err != nil {
							t.Errorf("Encoded(%q): %v", format, err)
						}
						results[f][c] = data
					})
				}
			}
			close(start)
			wg.Wait()
			for f, format := range formats {
				if calls[format] != 1 {
					t.Errorf("%s: encoder called %d times, want 1", format, calls[format])
				}
				want := fmt.Sprintf("%s:%v", format, itemObject(tc.item))
				first := results[f][0]
				for c, data := range results[f] {
					if string(data) != want {
						t.Errorf("%s: caller %d got %q, want %q", format, c, data, want)
					} else if &data[0] != &first[0] {
						t.Errorf("%s: caller %d got a copy, not the shared bytes", format, c)
					}
				}
			}
		})
	}
}

// countingHub runs a hub over a new memory store with the widgets cache,
// made with opts, whose objects are *object; decodes counts its decodings.
func countingHub(t *testing.T, opts ...watch.CacheOption) (store *memory.Store, hub *watch.Hub, cache *watch.Cache, decodes *atomic.Int64, ctx context.Context) {
	decodes = new(atomic.Int64)
	dec := func(kv storage.KeyValue) (any, error) {
		decodes.Add(1)
		return &object{Value: string(kv.Value), Rev: kv.ModRevision}, nil
	}
	store = memory.New()
	t.Cleanup(func() { store.Close() })
	hub = watch.New(store, root)
	cache = hub.Register(widgets, dec, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go hub.Run(ctx)
	return store, hub, cache, decodes, ctx
}

// An item keeps its decoded object while it is among the last ones its
// cache decoded: once others have taken its place, Object decodes the
// stored value again, once, and the new object is found by the next
// callers. A summary kept by KeepSummary stays whatever happens.
func TestItemObjectDecodedAgain(t *testing.T) {
	store, hub, cache, decodes, ctx := countingHub(t, watch.KeepSummary(func(obj any, value []byte) any {
		return "summary of " + string(value)
	}))
	rev := mustCreate(t, store, widgets+"ns/a", "a")
	if err := hub.WaitFor(ctx, rev); err != nil {
		t.Fatal(err)
	}
	it, _ := cache.Get(widgets + "ns/a")
	if it == nil {
		t.Fatal("Get = nil")
	}
	if it.Summary != "summary of a" {
		t.Errorf("Summary = %v", it.Summary)
	}
	held, err := it.Object()
	if err != nil {
		t.Fatal(err)
	}
	// Among the recent: the same object, decoded no more.
	before := decodes.Load()
	if again, _ := it.Object(); again != held || decodes.Load() != before {
		t.Errorf("a recent item's object was decoded again (%d decodes more)", decodes.Load()-before)
	}
	// Many more decoded since: decoded again once, equal, then shared.
	for i := range 1100 {
		rev = mustCreate(t, store, fmt.Sprintf("%sns/b%04d", widgets, i), "b")
	}
	if err := hub.WaitFor(ctx, rev); err != nil {
		t.Fatal(err)
	}
	before = decodes.Load()
	first, err := it.Object()
	if err != nil {
		t.Fatal(err)
	}
	second, _ := it.Object()
	if n := decodes.Load() - before; n != 1 {
		t.Errorf("%d decodes after the item left the recent ones, want 1", n)
	}
	if first != second || first == held {
		t.Error("the object decoded again is not shared, or was not decoded again")
	}
	if o := first.(*object); o.Value != "a" || o.Rev != it.Revision {
		t.Errorf("decoded again as %+v", o)
	}
	if it.Summary != "summary of a" {
		t.Errorf("Summary = %v after leaving the recent ones", it.Summary)
	}
}

// A writer's offered object is what the cache keeps for the value it
// wrote, stamped with the write's revision, instead of a decoding; an
// offer for other bytes (another writer's, on the same key) is not taken;
// a withdrawn offer is not taken. Item.Offered says which items hold an
// offered object.
func TestOffer(t *testing.T) {
	store, hub, cache, decodes, ctx := countingHub(t, watch.TakeOffers(func(obj any, rev int64) { obj.(*object).Rev = rev }))
	if err := hub.WaitFor(ctx, 0); err != nil {
		t.Fatal(err)
	}
	key := widgets + "ns/a"
	offeredItem := func() bool {
		it, _ := cache.Get(key)
		return it.Offered()
	}
	write := func(value string, offered *object, withdraw bool) any {
		t.Helper()
		v := []byte(value)
		if offered != nil {
			cache.Offer(key, v, offered)
		}
		var rev int64
		var err error
		if _, gerr := store.Get(ctx, key, 0); gerr != nil {
			rev, err = store.Create(ctx, key, v)
		} else {
			rev, err = store.Update(ctx, key, v, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		if withdraw {
			cache.Withdraw(key, v)
		}
		if err := hub.WaitFor(ctx, rev); err != nil {
			t.Fatal(err)
		}
		it, _ := cache.Get(key)
		obj, err := it.Object()
		if err != nil {
			t.Fatal(err)
		}
		if o := obj.(*object); o.Value != value || o.Rev != rev {
			t.Errorf("cached %+v, want %q at %d", o, value, rev)
		}
		return obj
	}

	offered := &object{Value: "one"}
	before := decodes.Load()
	if got := write("one", offered, false); got != offered || decodes.Load() != before || !offeredItem() {
		t.Errorf("the offer was not taken (%d decodes), or its item not Offered", decodes.Load()-before)
	}
	// An offer for other bytes under the same key (a writer that lost
	// the race): not taken, decoded.
	before = decodes.Load()
	cache.Offer(key, []byte("lost"), &object{Value: "lost"})
	if got := write("two", nil, false); decodes.Load() != before+1 || offeredItem() {
		t.Errorf("an offer for other bytes was taken: %+v", got)
	}
	// Withdrawn before the event came: decoded (the event may come
	// before the withdrawal, so only the outcome is checked).
	write("three", &object{Value: "three"}, true)
	// Equal bytes from another slice (a store that copies): taken.
	before = decodes.Load()
	offered = &object{Value: "four"}
	cache.Offer(key, []byte("four"), offered)
	if got := write("four", nil, false); got != offered || decodes.Load() != before {
		t.Errorf("an offer of equal bytes was not taken (%d decodes)", decodes.Load()-before)
	}
}
