package watch_test

import (
	"context"
	"errors"
	"testing"

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
