package apiserver_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/memory"
)

// bookmark is the object of a BOOKMARK event.
type bookmark struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// initialEvents reads ADDED events until a BOOKMARK and checks it ends the
// initial events; it returns the names added and the bookmark.
func initialEvents(t *testing.T, ws *watchStream) ([]string, bookmark) {
	t.Helper()
	var names []string
	for {
		ev := ws.next()
		switch ev.Type {
		case "ADDED":
			names = append(names, ev.widget(t).Name)
		case "BOOKMARK":
			var b bookmark
			if err := json.Unmarshal(ev.Object, &b); err != nil {
				t.Fatalf("bookmark %s: %v", ev.Object, err)
			}
			if b.Kind != "Widget" || b.APIVersion != "example.com/v1" {
				t.Errorf("bookmark kind %q apiVersion %q, want Widget example.com/v1", b.Kind, b.APIVersion)
			}
			if b.Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
				t.Errorf("bookmark %s lacks the annotation k8s.io/initial-events-end: \"true\"", ev.Object)
			}
			mustRevision(t, "bookmark resourceVersion", b.Metadata.ResourceVersion)
			slices.Sort(names)
			return names, b
		default:
			t.Fatalf("event %s before the initial events ended", ev)
		}
	}
}

func TestWatchParamSpellings(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "a"))
	for _, v := range []string{"true", "1", "True", "t"} {
		t.Run("watch="+v, func(t *testing.T) {
			ws := c.watch(widgetsIn("default") + "?watch=" + v)
			ws.expect("ADDED a")
			ws.stop()
		})
	}
	// watch=false is a list.
	c.list(widgetsIn("default") + "?watch=false")
}

func TestWatchInitialEventsThenChanges(t *testing.T) {
	_, c := newTestServer(t)
	a := c.create(newWidget("default", "a"))
	c.create(newWidget("default", "b"))
	c.create(newWidget("other", "o"))

	ws := c.watch(widgetsIn("default") + "?watch=true")
	var names []string
	for range 2 {
		ev := ws.next()
		if ev.Type != "ADDED" {
			t.Fatalf("initial event %s, want ADDED", ev)
		}
		w := ev.widget(t)
		names = append(names, w.Name)
		if w.Kind != "Widget" || w.APIVersion != "example.com/v1" || w.UID == "" {
			t.Errorf("initial object %+v", w)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("initial ADDED %q, want a b", names)
	}

	c.create(newWidget("default", "c"))
	a.Spec.Color = "Green"
	updated := c.update(a)
	c.do(http.MethodDelete, widgetPath("default", "b"), nil).mustCode(t, http.StatusOK)
	c.create(newWidget("other", "ignored")) // another namespace
	evs := ws.expect("ADDED c", "MODIFIED a", "DELETED b")
	if w := evs[1].widget(t); w.Spec.Color != "Green" || w.ResourceVersion != updated.ResourceVersion {
		t.Errorf("MODIFIED a: color %q rv %s, want Green %s", w.Spec.Color, w.ResourceVersion, updated.ResourceVersion)
	}
}

func TestWatchInitialEventsEndBookmark(t *testing.T) {
	for name, query := range map[string]string{
		"allowWatchBookmarks": "?watch=true&allowWatchBookmarks=true",
		"streaming list":      "?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true",
		"streaming list at 0": "?allowWatchBookmarks=true&resourceVersion=0&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true",
	} {
		t.Run(name, func(t *testing.T) {
			_, c := newTestServer(t)
			c.create(newWidget("default", "a"))
			last := c.create(newWidget("default", "b"))
			c.create(newWidget("other", "o"))
			// resourceVersion=0 is "any": served from the cache as it is,
			// which a consistent list first brings up to the writes above.
			c.list(widgetsIn("default"))

			ws := c.watch(widgetsIn("default") + query)
			names, b := initialEvents(t, ws)
			if !slices.Equal(names, []string{"a", "b"}) {
				t.Errorf("initial ADDED %q, want a b", names)
			}
			if mustRevision(t, "bookmark", b.Metadata.ResourceVersion) < mustRevision(t, "b", last.ResourceVersion) {
				t.Errorf("bookmark resourceVersion %s is below the last object's %s", b.Metadata.ResourceVersion, last.ResourceVersion)
			}
			c.create(newWidget("default", "c"))
			ws.expect("ADDED c")

			// An empty collection: the bookmark alone.
			empty := c.watch(widgetsIn("empty") + query)
			if names, _ := initialEvents(t, empty); len(names) != 0 {
				t.Errorf("initial events in an empty namespace: %q", names)
			}
		})
	}
}

func TestWatchFromResourceVersion(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "base"))
	rv0 := c.list(widgetsIn("default")).Metadata.ResourceVersion

	x := c.create(newWidget("default", "x"))
	x.Spec.Color = "Blue"
	x.Labels = map[string]string{"v": "2"}
	mod := c.update(x)
	c.do(http.MethodDelete, widgetPath("default", "x"), nil).mustCode(t, http.StatusOK)
	deleteRV := c.list(widgetsIn("default")).Metadata.ResourceVersion
	c.create(newWidget("default", "zz")) // the end marker

	ws := c.watch(widgetsIn("default") + "?watch=true&resourceVersion=" + rv0)
	evs := ws.expect("ADDED x", "MODIFIED x", "DELETED x", "ADDED zz")
	added, modified, deleted := evs[0].widget(t), evs[1].widget(t), evs[2].widget(t)
	if added.Spec.Color != "Red" || added.ResourceVersion != x.ResourceVersion {
		t.Errorf("ADDED x: color %q rv %s, want Red %s", added.Spec.Color, added.ResourceVersion, x.ResourceVersion)
	}
	if modified.Spec.Color != "Blue" || modified.ResourceVersion != mod.ResourceVersion {
		t.Errorf("MODIFIED x: color %q rv %s, want Blue %s", modified.Spec.Color, modified.ResourceVersion, mod.ResourceVersion)
	}
	if deleted.Spec.Color != "Blue" || deleted.Labels["v"] != "2" || deleted.UID != x.UID {
		t.Errorf("DELETED x carries %+v, want the object's last state", deleted)
	}
	if deleted.ResourceVersion != deleteRV {
		t.Errorf("DELETED x resourceVersion %s, want the deletion's %s", deleted.ResourceVersion, deleteRV)
	}
	prev := mustRevision(t, "rv0", rv0)
	for _, ev := range evs {
		rv := mustRevision(t, "event rv", ev.widget(t).ResourceVersion)
		if rv <= prev {
			t.Errorf("event %s is not after %d", ev, prev)
		}
		prev = rv
	}

	// From the middle: only what came after.
	mid := c.watch(widgetsIn("default") + "?watch=true&resourceVersion=" + mod.ResourceVersion)
	mid.expect("DELETED x", "ADDED zz")

	// With bookmarks allowed but no initial events asked for, a watch from
	// a resourceVersion sends no initial-events-end bookmark first.
	bm := c.watch(widgetsIn("default") + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + deleteRV)
	bm.expect("ADDED zz")
}

func TestWatchAllNamespaces(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("ns1", "first"))
	rv0 := c.list(allWidgets).Metadata.ResourceVersion
	c.create(newWidget("ns1", "x"))
	c.create(newWidget("ns2", "y"))
	c.create(newWidget("ns1", "zz"))

	all := c.watch(allWidgets + "?watch=true&resourceVersion=" + rv0)
	evs := all.expect("ADDED x", "ADDED y", "ADDED zz")
	if ns := evs[1].widget(t).Namespace; ns != "ns2" {
		t.Errorf("y in namespace %q", ns)
	}
	one := c.watch(widgetsIn("ns1") + "?watch=true&resourceVersion=" + rv0)
	one.expect("ADDED x", "ADDED zz")

	byName := c.watch(allWidgets + "?watch=true&fieldSelector=metadata.name%3Dy&resourceVersion=" + rv0)
	byName.expect("ADDED y")

	// Cluster-scoped resources watch the same way.
	var gold struct {
		kapi.ObjectMeta `json:"metadata"`
	}
	c.do(http.MethodPost, widgetClasses, `{"metadata":{"name":"gold"}}`).mustCode(t, http.StatusCreated).into(t, &gold)
	classes := c.watch(widgetClasses + "?watch=true&resourceVersion=" + rv0)
	if ev := classes.next(); ev.Type != "ADDED" || ev.String() != "ADDED gold@"+gold.ResourceVersion {
		t.Errorf("widget class event %s", ev)
	}
}

func TestWatchTimeoutEndsStream(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "a"))
	ws := c.watch(widgetsIn("default") + "?watch=true&timeoutSeconds=1")
	evs := ws.untilEnd() // fails the test if the server never ends it
	if len(evs) != 1 || evs[0].Type != "ADDED" {
		t.Errorf("events %v, want ADDED a", evs)
	}
}

func TestWatchLabelSelector(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("other", "seed")) // so that the list below is at a revision above 0
	rv0 := c.list(widgetsIn("default")).Metadata.ResourceVersion

	m := c.create(newWidget("default", "m")) // does not match
	m.Labels = map[string]string{"app": "web"}
	m = c.update(m) // starts matching: ADDED
	m.Spec.Size = 2
	m = c.update(m) // still matches: MODIFIED
	matching := m
	m.Labels = map[string]string{"app": "db"}
	m = c.update(m) // stops matching: DELETED
	stopped := m.ResourceVersion
	m.Spec.Size = 3
	c.update(m) // matches neither before nor after: nothing
	s := newWidget("default", "s")
	s.Labels = map[string]string{"app": "web"}
	c.create(s) // the end marker

	ws := c.watch(widgetsIn("default") + "?watch=true&labelSelector=app%3Dweb&resourceVersion=" + rv0)
	evs := ws.expect("ADDED m", "MODIFIED m", "DELETED m", "ADDED s")
	// As kube-apiserver's watch cache (cacher/cache_watcher.go): the last
	// state that matched, with the resourceVersion of the change.
	if got := evs[2].widget(t); got.Labels["app"] != "web" || got.Spec.Size != matching.Spec.Size || got.ResourceVersion != stopped {
		t.Errorf("DELETED m carries app=%q size=%d at %s, want its last matching state (web, %d) at %s",
			got.Labels["app"], got.Spec.Size, got.ResourceVersion, matching.Spec.Size, stopped)
	}

	// Initial events through a selector: only what matches.
	init := c.watch(widgetsIn("default") + "?watch=true&allowWatchBookmarks=true&labelSelector=app%3Dweb")
	if names, _ := initialEvents(t, init); !slices.Equal(names, []string{"s"}) {
		t.Errorf("initial events through app=web: %q, want s", names)
	}
}

func TestWatchEndsOnServerClose(t *testing.T) {
	srv, c := newTestServer(t)
	c.create(newWidget("default", "a"))
	ws := c.watch(widgetsIn("default") + "?watch=true")
	ws.expect("ADDED a")
	idle := c.watch(widgetsIn("idle") + "?watch=true&allowWatchBookmarks=true")
	initialEvents(t, idle)

	if err := srv.API.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if evs := ws.untilEnd(); len(evs) != 0 {
		t.Errorf("events after Close: %v", evs)
	}
	idle.untilEnd()

	// After Close the server refuses requests with a Status.
	c.get(widgetsIn("default")).failure(t, http.StatusServiceUnavailable, kapi.StatusReasonServiceUnavailable)
}

// TestWatchTooOldResourceVersion: a watch from a resourceVersion the cache's
// history no longer covers (here: older than a restarted server's history)
// gets, as from kube-apiserver's watch cache, HTTP 200 and one ERROR event
// carrying a 410 Expired Status, then the end of the stream.
func TestWatchTooOldResourceVersion(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	first := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	c := &apiClient{t: t, base: first.URL, hc: first.Client()}
	old := c.create(newWidget("default", "a")).ResourceVersion
	c.create(newWidget("default", "b"))
	first.API.Close()

	restarted := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	c = &apiClient{t: t, base: restarted.URL, hc: restarted.Client()}
	events := c.watch(widgetsIn("default") + "?watch=true&resourceVersion=" + old).untilEnd()
	if len(events) != 1 || events[0].Type != "ERROR" {
		t.Fatalf("events %v, want one ERROR", events)
	}
	var st kapi.Status
	if err := json.Unmarshal(events[0].Object, &st); err != nil {
		t.Fatal(err)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" || st.Code != http.StatusGone || st.Reason != kapi.StatusReasonExpired ||
		!strings.HasPrefix(st.Message, "too old resource version: "+old+" (") {
		t.Errorf("ERROR object %+v, want a 410 Expired Status about %s", st, old)
	}

	// From the revision the restarted server listed at, the watch goes on.
	rv := c.list(widgetsIn("default")).Metadata.ResourceVersion
	ws := c.watch(widgetsIn("default") + "?watch=true&resourceVersion=" + rv)
	defer ws.stop()
	c.create(newWidget("default", "c"))
	ws.expect("ADDED c")
}

// TestWatchEndsWithBookmark: when the server ends a watch that allows
// bookmarks (here on timeoutSeconds), its last event is a BOOKMARK at the
// revision the client has reached, so it resumes from there without a gap;
// not with a timeout of 2s or less, as kube-apiserver's cacher sends it 2s
// before the deadline (crddiff's "watch bookmarks").
func TestWatchEndsWithBookmark(t *testing.T) {
	_, c := newTestServer(t)
	rv := c.create(newWidget("default", "a")).ResourceVersion
	// b before the watch, which replays it: on a slow machine the watch's
	// one second could otherwise run out before the event.
	created := c.create(newWidget("default", "b")).ResourceVersion
	ws := c.watch(widgetsIn("default") + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion=" + rv)
	events := ws.untilEnd()
	if len(events) != 2 || events[0].Type != "ADDED" || events[1].Type != "BOOKMARK" {
		t.Fatalf("events %v, want ADDED b then the closing BOOKMARK", events)
	}
	if got := events[1].widget(t).ResourceVersion; mustRevision(t, "bookmark", got) < mustRevision(t, "create", created) {
		t.Errorf("closing bookmark at %s, before the last event's %s", got, created)
	}

	// Without allowWatchBookmarks, or with a timeout of 1s, no bookmark.
	for _, q := range []string{"", "&allowWatchBookmarks=true"} {
		ws = c.watch(widgetsIn("default") + "?watch=true&timeoutSeconds=1&resourceVersion=" + created + q)
		if events := ws.untilEnd(); len(events) != 0 {
			t.Errorf("%s: events %v, want none", q, events)
		}
	}
}
