package watch_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// TestAddWhileRunning adds a cache to a hub that runs: it holds what the
// store held when it was added, then every later change and nothing twice;
// removed, its watchers end with ErrStopped and the hub goes on.
func TestAddWhileRunning(t *testing.T) {
	e := newEnv(t, envOptions{})
	const things = "/registry/things/"
	mustCreate(t, e.store, things+"a", "a1")
	mustUpdate(t, e.store, things+"a", "a2")
	mustCreate(t, e.store, things+"b", "b1")
	e.run(t)
	c, err := e.hub.Add(context.Background(), things, decode)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 2 {
		t.Fatalf("the added cache holds %d objects, want 2", c.Len())
	}
	if it, _ := c.Get(things + "a"); it == nil || objectOf(t, it).Value != "a2" {
		t.Fatalf("a: %v", it)
	}
	w := mustWatch(t, c, watch.WatchOptions{Prefix: things, Revision: e.hub.Revision()})
	rev := mustCreate(t, e.store, things+"c", "c1")
	mustWaitFor(t, e.hub, rev)
	if ev := next(t, w); ev.Type != watch.Added || ev.Item.Key != things+"c" {
		t.Fatalf("event %v %s, want ADDED c", ev.Type, ev.Item.Key)
	}
	if c.Len() != 3 {
		t.Fatalf("%d objects after a create, want 3", c.Len())
	}

	e.hub.Unregister(c)
	if _, err := tryNext(w); !errors.Is(err, watch.ErrStopped) {
		t.Fatalf("a watcher of a removed cache: %v, want ErrStopped", err)
	}
	rev = mustCreate(t, e.store, things+"d", "d1")
	mustWaitFor(t, e.hub, rev)
	if c.Len() != 3 {
		t.Errorf("a removed cache changed: %d objects", c.Len())
	}
	rev = mustCreate(t, e.store, widgets+"w", "w1")
	mustWaitFor(t, e.hub, rev)
	if it, _ := e.widgets.Get(widgets + "w"); it == nil {
		t.Error("the other caches stopped")
	}
}

// listHeld is a store whose List of one prefix reads, then waits for
// release before it answers: a large collection being read.
type listHeld struct {
	storage.Interface
	prefix   string
	listed   chan int64 // the revision the held List read at
	release  chan struct{}
	holdOnce sync.Once
}

func (s *listHeld) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	page, err := s.Interface.List(ctx, prefix, opts)
	if prefix == s.prefix {
		s.holdOnce.Do(func() {
			s.listed <- page.Revision
			<-s.release
		})
	}
	return page, err
}

// TestAddDoesNotStallOthers adds a cache whose first list is held: the
// events of the other caches go on meanwhile, and the added cache, once
// filled, holds the changes made to its keys during its list, once each,
// and its history has them after the list's revision.
func TestAddDoesNotStallOthers(t *testing.T) {
	const things = "/registry/things/"
	mem := memory.New()
	t.Cleanup(func() { mem.Close() })
	store := &listHeld{Interface: mem, prefix: things, listed: make(chan int64, 1), release: make(chan struct{})}
	var released sync.Once
	release := func() { released.Do(func() { close(store.release) }) }
	t.Cleanup(release)
	hub := watch.New(store, root)
	ws := hub.Register(widgets, decode)
	startRun(t, hub)
	mustCreate(t, mem, things+"a", "a1")
	mustWaitFor(t, hub, mustCreate(t, mem, things+"b", "b1"))

	type added struct {
		c   *watch.Cache
		err error
	}
	done := make(chan added, 1)
	go func() {
		c, err := hub.Add(context.Background(), things, decode)
		done <- added{c, err}
	}()
	listRev := <-store.listed

	// Another kind's events flow while the list is held.
	w := mustWatch(t, ws, watch.WatchOptions{Prefix: widgets, Revision: hub.Revision()})
	mustCreate(t, mem, widgets+"w", "w1")
	if ev := next(t, w); ev.Type != watch.Added || ev.Item.Key != widgets+"w" {
		t.Fatalf("event %v %s, want ADDED w", ev.Type, ev.Item.Key)
	}
	// Changes to the added cache's keys after its list's revision.
	mustUpdate(t, mem, things+"a", "a2")
	mustCreate(t, mem, things+"c", "c1")
	mustWaitFor(t, hub, mustDelete(t, mem, things+"b"))
	release()
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	c := got.c
	if it, _ := c.Get(things + "a"); it == nil || objectOf(t, it).Value != "a2" {
		t.Errorf("a: %v", it)
	}
	if it, _ := c.Get(things + "b"); it != nil {
		t.Errorf("b was deleted during the list, still there: %v", objectOf(t, it))
	}
	if c.Len() != 2 {
		t.Errorf("%d objects, want a and c", c.Len())
	}
	h := mustWatch(t, c, watch.WatchOptions{Prefix: things, Revision: listRev})
	var types []watch.EventType
	for range 3 {
		types = append(types, next(t, h).Type)
	}
	if !slices.Equal(types, []watch.EventType{watch.Modified, watch.Added, watch.Deleted}) {
		t.Errorf("events after the list: %v", types)
	}
	mustWaitFor(t, hub, mustCreate(t, mem, things+"d", "d1"))
	if ev := next(t, h); ev.Type != watch.Added || ev.Item.Key != things+"d" || c.Len() != 3 {
		t.Errorf("after the fill: %v %s, %d objects", ev.Type, ev.Item.Key, c.Len())
	}
}

// relistStore holds the first List of Add's prefix after it reads (until
// addRelease) and the first relist of the hub's root before it reads
// (until rootRelease); it breaks the hub's first watch when expire is
// closed, and refuses the next as expired: a relist while Add fills.
type relistStore struct {
	storage.Interface
	prefix                  string
	addListed, rootListing  chan struct{}
	addRelease, rootRelease chan struct{}
	expire                  chan struct{}
	addOnce, rootOnce       sync.Once
	watches                 atomic.Int32
}

func (s *relistStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if prefix == root && s.watches.Load() > 0 { // a relist, not Run's first list
		s.rootOnce.Do(func() {
			s.rootListing <- struct{}{}
			<-s.rootRelease
		})
	}
	page, err := s.Interface.List(ctx, prefix, opts)
	if prefix == s.prefix {
		s.addOnce.Do(func() {
			s.addListed <- struct{}{}
			<-s.addRelease
		})
	}
	return page, err
}

func (s *relistStore) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	switch s.watches.Add(1) {
	case 1:
	case 2: // the hub watches again from where it was: too old now
		return nil, storage.ErrExpired
	default:
		return s.Interface.Watch(ctx, prefix, rev)
	}
	in, err := s.Interface.Watch(ctx, prefix, rev)
	if err != nil {
		return in, err
	}
	out := make(chan storage.Event)
	go func() {
		defer close(out)
		for {
			select {
			case ev, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			case <-s.expire:
				select {
				case out <- storage.Event{Err: storage.ErrExpired}:
				case <-ctx.Done():
				}
				return
			}
		}
	}()
	return out, nil
}

// TestAddDuringRelist: the hub relists while Add's list is held, and a
// change made while its watch was down reaches the store before the
// relist reads it, so no event carries it: Add lists again rather than
// fill the cache from its older list and the events after it.
func TestAddDuringRelist(t *testing.T) {
	const things = "/registry/things/"
	mem := memory.New()
	t.Cleanup(func() { mem.Close() })
	s := &relistStore{Interface: mem, prefix: things,
		addListed: make(chan struct{}), rootListing: make(chan struct{}),
		addRelease: make(chan struct{}), rootRelease: make(chan struct{}), expire: make(chan struct{})}
	hub := watch.New(s, root)
	hub.Register(widgets, decode)
	startRun(t, hub)
	mustWaitFor(t, hub, mustCreate(t, mem, things+"a", "a1"))

	done := make(chan *watch.Cache, 1)
	go func() {
		c, err := hub.Add(context.Background(), things, decode)
		if err != nil {
			t.Error(err)
		}
		done <- c
	}()
	<-s.addListed
	close(s.expire)
	<-s.rootListing // the relist, before it reads
	rev := mustCreate(t, mem, things+"c", "c1")
	close(s.rootRelease)
	mustWaitFor(t, hub, rev)
	close(s.addRelease)
	c := <-done
	if c == nil {
		t.FailNow()
	}
	if it, _ := c.Get(things + "c"); it == nil || c.Len() != 2 {
		t.Errorf("after a relist during the fill: c %v, %d objects, want a and c", it, c.Len())
	}
}
