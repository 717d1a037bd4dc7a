package apiserver_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/memory"
)

// rvNS is the namespace every row of TestResourceVersionTables writes in.
const rvNS = "default"

// TestResourceVersionTables walks every cell of the resourceVersion tables
// of the Kubernetes API Concepts ("Resource versions": get and list; list by
// resourceVersionMatch and paging parameters; watch), plus the edges the
// same section describes: a resourceVersion ahead of the store ("Unavailable
// resource versions"), one that has left the history window ("410 Gone"),
// and the invalid combinations, answered as kube-apiserver answers them.
//
// Each row runs against a server of its own. Revisions are the memory
// store's, one per write, so "ahead of the store" is computed from the last
// write's resourceVersion; a client could not do that arithmetic, a test of
// this server can.
//
// The semantics are checked exactly where the table's guarantee is exact:
//   - Most Recent: a write made just before the read is in it, with no wait.
//   - Exact: the list as it was at N: an object created after N is absent,
//     one modified after N has its old content, one deleted after N is
//     present with its content at N; the list's resourceVersion is N.
//   - Any and Not older than: the data may lag, so the row first makes a
//     consistent read (which waits until the cache has every write) and then
//     expects the current state.
//   - Continuation: every page is at the first page's revision, even after a
//     later write.
func TestResourceVersionTables(t *testing.T) {
	type row struct {
		name string
		// opts configure the row's server; nil: the defaults.
		opts func(t *testing.T) []apiserver.Option
		run  func(t *testing.T, c *apiClient)
	}
	var rows []row
	add := func(name string, run func(t *testing.T, c *apiClient)) {
		rows = append(rows, row{name: name, run: run})
	}
	// A store whose history keeps only the last 3 revisions, so a
	// resourceVersion leaves the window after a few writes.
	shortHistory := func(t *testing.T) []apiserver.Option {
		store := memory.New(memory.WithHistory(3))
		t.Cleanup(func() { store.Close() })
		return []apiserver.Option{apiserver.WithStorage(store)}
	}

	// ---- get: unset = Most Recent, "0" = Any, N = Not older than.

	add("get/rv unset/most recent", func(t *testing.T, c *apiClient) {
		w := c.create(newWidget(rvNS, "a"))
		w.Spec.Color = "Blue"
		want := c.update(w)
		got := c.get(widgetPath(rvNS, "a")).mustCode(t, http.StatusOK).widget(t) // at once: no wait, no retry
		if got.Spec.Color != "Blue" || got.ResourceVersion != want.ResourceVersion {
			t.Errorf("GET right after an update: color %q at %s, want Blue at %s", got.Spec.Color, got.ResourceVersion, want.ResourceVersion)
		}
	})
	add("get/rv 0/any", func(t *testing.T, c *apiClient) {
		w := c.create(newWidget(rvNS, "a"))
		c.read(rvNS, "a") // consistent: the cache now has the create
		got := c.get(widgetPath(rvNS, "a")+"?resourceVersion=0").mustCode(t, http.StatusOK).widget(t)
		if got.UID != w.UID || got.ResourceVersion != w.ResourceVersion || got.Spec.Color != "Red" {
			t.Errorf("GET at 0: uid %s rv %s color %q, want %s %s Red", got.UID, got.ResourceVersion, got.Spec.Color, w.UID, w.ResourceVersion)
		}
	})
	add("get/rv N older than current/not older than", func(t *testing.T, c *apiClient) {
		w := c.create(newWidget(rvNS, "a"))
		n := w.ResourceVersion
		w.Spec.Color = "Blue"
		want := c.update(w)
		c.read(rvNS, "a")
		got := c.get(widgetPath(rvNS, "a")+"?resourceVersion="+n).mustCode(t, http.StatusOK).widget(t)
		if got.Spec.Color != "Blue" || got.ResourceVersion != want.ResourceVersion {
			t.Errorf("GET not older than %s: color %q at %s, want the current state, Blue at %s", n, got.Spec.Color, got.ResourceVersion, want.ResourceVersion)
		}
	})
	add("get/rv N ahead of the store/504 too large", func(t *testing.T, c *apiClient) {
		w := c.create(newWidget(rvNS, "a"))
		wantTooLarge(t, c.get(widgetPath(rvNS, "a")+"?resourceVersion="+rvPlus(t, w.ResourceVersion, 1000)))
	})
	add("get/rv N ahead of the store, written during the wait/the object at N", func(t *testing.T, c *apiClient) {
		w := c.create(newWidget(rvNS, "a"))
		n := rvPlus(t, w.ResourceVersion, 1)
		pending := rvGetAsync(c, widgetPath(rvNS, "a")+"?resourceVersion="+n)
		time.Sleep(100 * time.Millisecond) // let the GET start waiting; it passes either way
		w.Spec.Color = "Blue"
		if upd := c.update(w); upd.ResourceVersion != n {
			t.Fatalf("the update is at %s, want %s (one revision per write)", upd.ResourceVersion, n)
		}
		got := (<-pending).get(t).mustCode(t, http.StatusOK).widget(t)
		if got.Spec.Color != "Blue" || got.ResourceVersion != n {
			t.Errorf("GET at %s: color %q at %s, want Blue at %s", n, got.Spec.Color, got.ResourceVersion, n)
		}
	})

	// ---- list: the table of resourceVersionMatch × paging × resourceVersion.

	// unset match, limit unset: Most Recent | Any | Not older than.
	add("list/match unset, limit unset, rv unset/most recent", func(t *testing.T, c *apiClient) {
		h := writeRVHistory(t, c)
		h.wantCurrent(t, rvListAll(t, c, "", 0))
	})
	add("list/match unset, limit unset, rv 0/any", func(t *testing.T, c *apiClient) {
		h := writeRVHistory(t, c)
		h.sync(t)
		h.wantCurrent(t, rvListAll(t, c, "?resourceVersion=0", 0))
	})
	add("list/match unset, limit unset, rv N/not older than", func(t *testing.T, c *apiClient) {
		h := writeRVHistory(t, c)
		// N = the write just made, read at once: the list must wait for it.
		h.wantCurrent(t, rvListAll(t, c, "?resourceVersion="+h.current, 0))
		// N older than the cache: the newest data.
		h.wantCurrent(t, rvListAll(t, c, "?resourceVersion="+h.n, 0))
	})
	// unset match, limit set: Most Recent | Any | Exact.
	add("list/match unset, limit, rv unset/most recent", func(t *testing.T, c *apiClient) {
		h := writeRVHistory(t, c)
		h.wantCurrent(t, rvListAll(t, c, "?limit=1", 1))
	})
	add("list/match unset, limit, rv 0/any", func(t *testing.T, c *apiClient) {
		h := writeRVHistory(t, c)
		h.sync(t)
		h.wantCurrent(t, rvListAll(t, c, "?limit=1&resourceVersion=0", 1))
	})
	add("list/match unset, limit, rv N/exact", func(t *testing.T, c *apiClient) {
		h := writeRVHistory(t, c)
		h.wantAtN(t, rvListAll(t, c, "?limit=1&resourceVersion="+h.n, 1))
		h.wantAtN(t, rvListAll(t, c, "?limit=10&resourceVersion="+h.n, 10)) // one page
	})
	// unset match, limit and continue: Continuation | Continuation | 400.
	add("list/match unset, limit and continue, rv unset/continuation", func(t *testing.T, c *apiClient) {
		h := writeRVHistory(t, c)
		h.wantCurrent(t, h.continued(t, ""))
	})
	add("list/match unset, limit and continue, rv 0/continuation", func(t *testing.T, c *apiClient) {
		h := writeRVHistory(t, c)
		h.wantCurrent(t, h.continued(t, "&resourceVersion=0"))
	})
	add("list/match unset, limit and continue, rv N/400", func(t *testing.T, c *apiClient) {
		h := writeRVHistory(t, c)
		first := c.list(widgetsIn(rvNS) + "?limit=1")
		st := c.get(widgetsIn(rvNS)+"?limit=1&resourceVersion="+h.n+"&continue="+first.Metadata.Continue).
			failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		if want := "specifying resource version is not allowed when using continue"; st.Message != want {
			t.Errorf("message %q, want %q", st.Message, want)
		}
	})
	// Exact, limit unset and set: Invalid | Invalid | Exact.
	for _, limit := range []string{"", "&limit=1"} {
		paging := "limit unset"
		if limit != "" {
			paging = "limit"
		}
		add("list/Exact, "+paging+", rv unset/422", func(t *testing.T, c *apiClient) {
			wantListOptionsInvalid(t, c.get(widgetsIn(rvNS)+"?resourceVersionMatch=Exact"+limit),
				kapi.CauseTypeFieldValueForbidden, "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided")
		})
		add("list/Exact, "+paging+", rv 0/422", func(t *testing.T, c *apiClient) {
			wantListOptionsInvalid(t, c.get(widgetsIn(rvNS)+"?resourceVersionMatch=Exact&resourceVersion=0"+limit),
				kapi.CauseTypeFieldValueForbidden, `Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`)
		})
		add("list/Exact, "+paging+", rv N/exact", func(t *testing.T, c *apiClient) {
			h := writeRVHistory(t, c)
			n := 0
			if limit != "" {
				n = 1
			}
			h.wantAtN(t, rvListAll(t, c, "?resourceVersionMatch=Exact&resourceVersion="+h.n+limit, n))
		})
	}
	// NotOlderThan, limit unset and set: Invalid | Any | Not older than.
	for _, limit := range []string{"", "&limit=1"} {
		paging, pageSize := "limit unset", 0
		if limit != "" {
			paging, pageSize = "limit", 1
		}
		add("list/NotOlderThan, "+paging+", rv unset/422", func(t *testing.T, c *apiClient) {
			wantListOptionsInvalid(t, c.get(widgetsIn(rvNS)+"?resourceVersionMatch=NotOlderThan"+limit),
				kapi.CauseTypeFieldValueForbidden, "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided")
		})
		add("list/NotOlderThan, "+paging+", rv 0/any", func(t *testing.T, c *apiClient) {
			h := writeRVHistory(t, c)
			h.sync(t)
			h.wantCurrent(t, rvListAll(t, c, "?resourceVersionMatch=NotOlderThan&resourceVersion=0"+limit, pageSize))
		})
		add("list/NotOlderThan, "+paging+", rv N/not older than", func(t *testing.T, c *apiClient) {
			h := writeRVHistory(t, c)
			h.wantCurrent(t, rvListAll(t, c, "?resourceVersionMatch=NotOlderThan&resourceVersion="+h.current+limit, pageSize))
			h.wantCurrent(t, rvListAll(t, c, "?resourceVersionMatch=NotOlderThan&resourceVersion="+h.n+limit, pageSize))
		})
	}

	// Exact needs the revision in the window: 410 Expired once it has left.
	expiredRow := func(name, query string) {
		rows = append(rows, row{name: name, opts: shortHistory, run: func(t *testing.T, c *apiClient) {
			n := c.create(newWidget(rvNS, "a")).ResourceVersion
			for i := range 6 {
				c.create(newWidget(rvNS, "later-"+strconv.Itoa(i)))
			}
			st := c.get(widgetsIn(rvNS)+strings.ReplaceAll(query, "{N}", n)).failure(t, http.StatusGone, kapi.StatusReasonExpired)
			if want := "The resourceVersion for the provided list is too old."; st.Message != want {
				t.Errorf("message %q, want %q", st.Message, want)
			}
		}})
	}
	expiredRow("list/Exact, rv N out of the window/410 expired", "?resourceVersionMatch=Exact&resourceVersion={N}")
	expiredRow("list/match unset, limit, rv N out of the window/410 expired", "?limit=1&resourceVersion={N}")
	rows = append(rows, row{name: "list/continue whose revision left the window/410 expired", opts: shortHistory, run: func(t *testing.T, c *apiClient) {
		c.create(newWidget(rvNS, "a"))
		c.create(newWidget(rvNS, "b"))
		first := c.list(widgetsIn(rvNS) + "?limit=1")
		for i := range 6 {
			c.create(newWidget(rvNS, "later-"+strconv.Itoa(i)))
		}
		st := c.get(widgetsIn(rvNS)+"?limit=1&continue="+first.Metadata.Continue).failure(t, http.StatusGone, kapi.StatusReasonExpired)
		if want := "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."; st.Message != want {
			t.Errorf("message %q, want %q", st.Message, want)
		}
	}})

	// A resourceVersion ahead of the store: wait briefly, then 504.
	for _, q := range []struct{ name, query string }{
		{"match unset, limit unset", "?resourceVersion={N}"},
		{"NotOlderThan", "?resourceVersionMatch=NotOlderThan&resourceVersion={N}"},
		{"Exact", "?resourceVersionMatch=Exact&resourceVersion={N}"},
		{"match unset, limit (exact)", "?limit=1&resourceVersion={N}"},
	} {
		add("list/"+q.name+", rv N ahead of the store/504 too large", func(t *testing.T, c *apiClient) {
			w := c.create(newWidget(rvNS, "a"))
			wantTooLarge(t, c.get(widgetsIn(rvNS)+strings.ReplaceAll(q.query, "{N}", rvPlus(t, w.ResourceVersion, 1000))))
		})
	}
	add("list/rv N ahead of the store, written during the wait/the list at N", func(t *testing.T, c *apiClient) {
		w := c.create(newWidget(rvNS, "a"))
		n := rvPlus(t, w.ResourceVersion, 1)
		pending := rvGetAsync(c, widgetsIn(rvNS)+"?resourceVersionMatch=NotOlderThan&resourceVersion="+n)
		time.Sleep(100 * time.Millisecond)
		if b := c.create(newWidget(rvNS, "b")); b.ResourceVersion != n {
			t.Fatalf("b was created at %s, want %s (one revision per write)", b.ResourceVersion, n)
		}
		var l widgetList
		(<-pending).get(t).mustCode(t, http.StatusOK).into(t, &l)
		if got := l.names(); l.Metadata.ResourceVersion != n || !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("list not older than %s: %q at %s, want a b at %s", n, got, l.Metadata.ResourceVersion, n)
		}
	})

	// Other invalid combinations.
	add("list/unknown resourceVersionMatch/422", func(t *testing.T, c *apiClient) {
		wantListOptionsInvalid(t, c.get(widgetsIn(rvNS)+"?resourceVersionMatch=Newest&resourceVersion=5"),
			kapi.CauseTypeFieldValueNotSupported, `Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""`)
	})
	add("list/resourceVersionMatch with continue/422", func(t *testing.T, c *apiClient) {
		c.create(newWidget(rvNS, "a"))
		c.create(newWidget(rvNS, "b"))
		first := c.list(widgetsIn(rvNS) + "?limit=1")
		wantListOptionsInvalid(t, c.get(widgetsIn(rvNS)+"?limit=1&resourceVersion=0&resourceVersionMatch=NotOlderThan&continue="+first.Metadata.Continue),
			kapi.CauseTypeFieldValueForbidden, "Forbidden: resourceVersionMatch is forbidden when continue is provided")
	})
	add("list/rv not a number/400", func(t *testing.T, c *apiClient) {
		// kube-apiserver answers 500 here (kubernetes/kubernetes#101350,
		// #139485: the parse error is not mapped to a Status); 400 is what
		// those issues ask for and what this server answers.
		st := c.get(widgetsIn(rvNS)+"?resourceVersion=abc").failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
		if !strings.Contains(st.Message, `"abc"`) {
			t.Errorf("message %q does not name the resourceVersion", st.Message)
		}
	})

	// ---- watch: unset = Get State and Start at Most Recent, "0" = Get
	// State and Start at Any, N = Start at Exact.

	add("watch/rv unset/state at most recent, then changes", func(t *testing.T, c *apiClient) {
		a := c.create(newWidget(rvNS, "a"))
		b := c.create(newWidget(rvNS, "b")) // just before the watch: it must be in the state
		ws := c.watch(widgetsIn(rvNS) + "?watch=true")
		rvWantEvents(t, ws.expect("ADDED a", "ADDED b"), a.ResourceVersion, b.ResourceVersion)
		a.Spec.Color = "Blue"
		mod := c.update(a)
		cc := c.create(newWidget(rvNS, "c"))
		rvWantEvents(t, ws.expect("MODIFIED a", "ADDED c"), mod.ResourceVersion, cc.ResourceVersion)
	})
	add("watch/rv 0/state at any, then changes", func(t *testing.T, c *apiClient) {
		a := c.create(newWidget(rvNS, "a"))
		b := c.create(newWidget(rvNS, "b"))
		c.list(widgetsIn(rvNS)) // consistent: the cache has both
		ws := c.watch(widgetsIn(rvNS) + "?watch=true&resourceVersion=0")
		rvWantEvents(t, ws.expect("ADDED a", "ADDED b"), a.ResourceVersion, b.ResourceVersion)
		cc := c.create(newWidget(rvNS, "c"))
		rvWantEvents(t, ws.expect("ADDED c"), cc.ResourceVersion)
	})
	add("watch/rv N/changes strictly after N, no synthetic events", func(t *testing.T, c *apiClient) {
		a := c.create(newWidget(rvNS, "a"))
		n := a.ResourceVersion
		b := c.create(newWidget(rvNS, "b")) // the first write after N
		a.Spec.Color = "Blue"
		mod := c.update(a)
		ws := c.watch(widgetsIn(rvNS) + "?watch=true&resourceVersion=" + n)
		rvWantEvents(t, ws.expect("ADDED b", "MODIFIED a"), b.ResourceVersion, mod.ResourceVersion)
		cc := c.create(newWidget(rvNS, "c"))
		rvWantEvents(t, ws.expect("ADDED c"), cc.ResourceVersion)
	})
	add("watch/rv N ahead of the store/waits, then the changes after N", func(t *testing.T, c *apiClient) {
		a := c.create(newWidget(rvNS, "a"))
		n := rvPlus(t, a.ResourceVersion, 1)
		ws := c.watch(widgetsIn(rvNS) + "?watch=true&resourceVersion=" + n)
		// The write at N itself is not after N: a client that sends N
		// says it has seen it. The next one is the first event.
		if at := c.create(newWidget(rvNS, "at-n")); at.ResourceVersion != n {
			t.Fatalf("at-n was created at %s, want %s (one revision per write)", at.ResourceVersion, n)
		}
		after := c.create(newWidget(rvNS, "after-n"))
		rvWantEvents(t, ws.expect("ADDED after-n"), after.ResourceVersion)
	})
	add("watch/sendInitialEvents=true, NotOlderThan, rv unset/consistent state, bookmark, changes", func(t *testing.T, c *apiClient) {
		a := c.create(newWidget(rvNS, "a"))
		b := c.create(newWidget(rvNS, "b")) // just before: a consistent read sees it
		ws := c.watch(widgetsIn(rvNS) + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
		rvWantEvents(t, ws.expect("ADDED a", "ADDED b"), a.ResourceVersion, b.ResourceVersion)
		rvWantInitialEventsEnd(t, ws.next(), b.ResourceVersion)
		cc := c.create(newWidget(rvNS, "c"))
		rvWantEvents(t, ws.expect("ADDED c"), cc.ResourceVersion)
	})
	add("watch/sendInitialEvents=true, NotOlderThan, rv N/state not older than N, bookmark, changes", func(t *testing.T, c *apiClient) {
		a := c.create(newWidget(rvNS, "a"))
		b := c.create(newWidget(rvNS, "b"))
		ws := c.watch(widgetsIn(rvNS) + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=" + b.ResourceVersion)
		rvWantEvents(t, ws.expect("ADDED a", "ADDED b"), a.ResourceVersion, b.ResourceVersion)
		rvWantInitialEventsEnd(t, ws.next(), b.ResourceVersion)
		cc := c.create(newWidget(rvNS, "c"))
		rvWantEvents(t, ws.expect("ADDED c"), cc.ResourceVersion)
	})
	add("watch/sendInitialEvents=false, NotOlderThan, rv unset/changes only", func(t *testing.T, c *apiClient) {
		c.create(newWidget(rvNS, "a"))
		ws := c.watch(widgetsIn(rvNS) + "?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
		b := c.create(newWidget(rvNS, "b"))
		rvWantEvents(t, ws.expect("ADDED b"), b.ResourceVersion)
	})
	add("watch/sendInitialEvents=false, NotOlderThan, rv N/changes strictly after N", func(t *testing.T, c *apiClient) {
		a := c.create(newWidget(rvNS, "a"))
		b := c.create(newWidget(rvNS, "b"))
		ws := c.watch(widgetsIn(rvNS) + "?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=" + a.ResourceVersion)
		rvWantEvents(t, ws.expect("ADDED b"), b.ResourceVersion)
	})
	add("watch/rv N out of the window/one ERROR 410 expired, then the end", func(t *testing.T, _ *apiClient) {
		// A server restarted over the same store starts its history at the
		// store's revision: N, from before, has left the window.
		store := memory.New()
		t.Cleanup(func() { store.Close() })
		first := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
		c := &apiClient{t: t, base: first.URL, hc: first.Client()}
		n := c.create(newWidget(rvNS, "a")).ResourceVersion
		c.create(newWidget(rvNS, "b"))
		first.API.Close()
		second := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
		c = &apiClient{t: t, base: second.URL, hc: second.Client()}
		evs := c.watch(widgetsIn(rvNS) + "?watch=true&resourceVersion=" + n).untilEnd()
		if len(evs) != 1 || evs[0].Type != "ERROR" {
			t.Fatalf("events %v, want one ERROR", evs)
		}
		var st kapi.Status
		if err := json.Unmarshal(evs[0].Object, &st); err != nil {
			t.Fatal(err)
		}
		if st.Kind != "Status" || st.Code != http.StatusGone || st.Reason != kapi.StatusReasonExpired {
			t.Errorf("ERROR object %+v, want a 410 Expired Status", st)
		}
	})
	add("watch/sendInitialEvents=true without resourceVersionMatch/422", func(t *testing.T, c *apiClient) {
		wantListOptionsInvalid(t, c.get(widgetsIn(rvNS)+"?watch=true&sendInitialEvents=true"),
			kapi.CauseTypeFieldValueForbidden, "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
	})
	add("watch/resourceVersionMatch without sendInitialEvents/422", func(t *testing.T, c *apiClient) {
		wantListOptionsInvalid(t, c.get(widgetsIn(rvNS)+"?watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=1"),
			kapi.CauseTypeFieldValueForbidden, "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
	})

	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel() // the 504 rows each wait a few seconds
			var opts []apiserver.Option
			if r.opts != nil {
				opts = r.opts(t)
			}
			srv := apiservertest.New(t, widgetapi.Register, opts...)
			r.run(t, &apiClient{t: t, base: srv.URL, hc: srv.Client()})
		})
	}
}

// rvHistory is the state a list row reads, written by writeRVHistory:
//
//	create kept, modified, deleted                             ← n: deleted's create
//	update modified (Red → Blue), delete deleted, create added ← current
type rvHistory struct {
	c                             *apiClient
	n, current                    string
	keptRV, modifiedRV, deletedRV string // their creates, at or before n
	modifiedBlueRV, addedRV       string // after n
}

func writeRVHistory(t *testing.T, c *apiClient) rvHistory {
	t.Helper()
	h := rvHistory{c: c}
	h.keptRV = c.create(newWidget(rvNS, "kept")).ResourceVersion
	m := c.create(newWidget(rvNS, "modified"))
	h.modifiedRV = m.ResourceVersion
	h.deletedRV = c.create(newWidget(rvNS, "deleted")).ResourceVersion
	h.n = h.deletedRV
	m.Spec.Color = "Blue"
	h.modifiedBlueRV = c.update(m).ResourceVersion
	c.do(http.MethodDelete, widgetPath(rvNS, "deleted"), nil).mustCode(t, http.StatusOK)
	h.addedRV = c.create(newWidget(rvNS, "added")).ResourceVersion
	h.current = h.addedRV
	return h
}

// sync makes a consistent read, after which the cache holds every write.
func (h rvHistory) sync(t *testing.T) {
	t.Helper()
	if rv := h.c.list(widgetsIn(rvNS)).Metadata.ResourceVersion; rv != h.current {
		t.Fatalf("a consistent list is at %s, want %s", rv, h.current)
	}
}

// wantAtN checks a list read at exactly n.
func (h rvHistory) wantAtN(t *testing.T, l rvList) {
	t.Helper()
	rv, items := l.rv, l.items
	if rv != h.n {
		t.Errorf("list resourceVersion %s, want exactly %s", rv, h.n)
	}
	want := []string{"deleted Red@" + h.deletedRV, "kept Red@" + h.keptRV, "modified Red@" + h.modifiedRV}
	if got := rvSummary(items); !slices.Equal(got, want) {
		t.Errorf("list at %s: %q,\nwant %q (added absent, modified as it was, deleted still there)", h.n, got, want)
	}
}

// wantCurrent checks a list read at the latest revision.
func (h rvHistory) wantCurrent(t *testing.T, l rvList) {
	t.Helper()
	rv, items := l.rv, l.items
	if rv != h.current {
		t.Errorf("list resourceVersion %s, want the latest, %s", rv, h.current)
	}
	want := []string{"added Red@" + h.addedRV, "kept Red@" + h.keptRV, "modified Blue@" + h.modifiedBlueRV}
	if got := rvSummary(items); !slices.Equal(got, want) {
		t.Errorf("list at the latest revision: %q,\nwant %q", got, want)
	}
}

// continued lists one item, writes, then continues with extra added to the
// continue requests: every page must be at the first page's revision.
func (h rvHistory) continued(t *testing.T, extra string) rvList {
	t.Helper()
	first := h.c.list(widgetsIn(rvNS) + "?limit=1")
	if first.Metadata.Continue == "" {
		t.Fatalf("the first page of 1 has no continue token")
	}
	h.c.create(newWidget(rvNS, "late")) // sorts between kept and modified
	rv, items := first.Metadata.ResourceVersion, first.Items
	for tok := first.Metadata.Continue; tok != ""; {
		page := h.c.list(widgetsIn(rvNS) + "?limit=1&continue=" + tok + extra)
		if page.Metadata.ResourceVersion != rv {
			t.Errorf("a continued page is at %s, the first at %s", page.Metadata.ResourceVersion, rv)
		}
		items, tok = append(items, page.Items...), page.Metadata.Continue
	}
	return rvList{rv, items}
}

// rvList is a whole list, read in one or more pages.
type rvList struct {
	rv    string
	items []widgetapi.Widget
}

// rvListAll lists with query and, when limit > 0, follows the continue
// tokens; every page must be at the first page's revision.
func rvListAll(t *testing.T, c *apiClient, query string, limit int) rvList {
	t.Helper()
	l := c.list(widgetsIn(rvNS) + query)
	rv, items := l.Metadata.ResourceVersion, l.Items
	if limit > 0 && len(l.Items) > limit {
		t.Errorf("a page of %d items with limit %d", len(l.Items), limit)
	}
	for tok := l.Metadata.Continue; tok != ""; {
		if limit == 0 {
			t.Fatalf("a list without limit has a continue token")
		}
		page := c.list(widgetsIn(rvNS) + "?limit=" + strconv.Itoa(limit) + "&continue=" + tok)
		if page.Metadata.ResourceVersion != rv {
			t.Errorf("a continued page is at %s, the first at %s", page.Metadata.ResourceVersion, rv)
		}
		items, tok = append(items, page.Items...), page.Metadata.Continue
	}
	return rvList{rv, items}
}

// rvSummary is "name color@resourceVersion" of each item, in list order.
func rvSummary(items []widgetapi.Widget) []string {
	s := make([]string, len(items))
	for i, w := range items {
		s[i] = w.Name + " " + w.Spec.Color + "@" + w.ResourceVersion
	}
	return s
}

// rvWantEvents checks the resourceVersions of events already checked by
// expect.
func rvWantEvents(t *testing.T, evs []watchEvent, rvs ...string) {
	t.Helper()
	for i, ev := range evs {
		if got := ev.widget(t).ResourceVersion; got != rvs[i] {
			t.Errorf("event %d (%s) at %s, want %s", i, ev, got, rvs[i])
		}
	}
}

// rvWantInitialEventsEnd checks that ev is the bookmark that ends the
// initial events of a streaming list read at rv.
func rvWantInitialEventsEnd(t *testing.T, ev watchEvent, rv string) {
	t.Helper()
	if ev.Type != "BOOKMARK" {
		t.Fatalf("event %s, want the BOOKMARK that ends the initial events", ev)
	}
	var b bookmark
	if err := json.Unmarshal(ev.Object, &b); err != nil {
		t.Fatalf("bookmark %s: %v", ev.Object, err)
	}
	if b.Kind != "Widget" || b.APIVersion != "example.com/v1" || b.Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
		t.Errorf("bookmark %s, want a Widget annotated k8s.io/initial-events-end: \"true\"", ev.Object)
	}
	if b.Metadata.ResourceVersion != rv {
		t.Errorf("bookmark at %s, want the snapshot's revision %s", b.Metadata.ResourceVersion, rv)
	}
}

// wantTooLarge checks kube-apiserver's answer to a read at a resourceVersion
// ahead of the store: 504 Timeout, a Retry-After header, the message
// client-go looks for and the ResourceVersionTooLarge cause.
func wantTooLarge(t *testing.T, r *response) {
	t.Helper()
	st := r.failure(t, http.StatusGatewayTimeout, kapi.StatusReasonTimeout)
	if !strings.Contains(st.Message, "Too large resource version") {
		t.Errorf("message %q lacks %q", st.Message, "Too large resource version")
	}
	after, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || after < 1 {
		t.Errorf("Retry-After %q, want a positive number of seconds", r.Header.Get("Retry-After"))
	}
	var wire struct {
		Details struct {
			RetryAfterSeconds int `json:"retryAfterSeconds"`
			Causes            []struct {
				Reason  string `json:"reason"`
				Message string `json:"message"`
			} `json:"causes"`
		} `json:"details"`
	}
	r.into(t, &wire)
	if d := wire.Details; len(d.Causes) == 0 || d.Causes[0].Reason != "ResourceVersionTooLarge" || d.Causes[0].Message != "Too large resource version" {
		t.Errorf("details.causes %+v, want [{reason: ResourceVersionTooLarge, message: Too large resource version}]", d.Causes)
	}
	if wire.Details.RetryAfterSeconds != after {
		t.Errorf("details.retryAfterSeconds %d, Retry-After %d", wire.Details.RetryAfterSeconds, after)
	}
}

// wantListOptionsInvalid checks kube-apiserver's 422 for list options that
// do not go together: one cause on resourceVersionMatch (or the field its
// message names) with body as its message.
func wantListOptionsInvalid(t *testing.T, r *response, typ kapi.CauseType, body string) {
	t.Helper()
	st := r.failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	const field = "resourceVersionMatch"
	if want := `ListOptions.meta.k8s.io "" is invalid: ` + field + ": " + body; st.Message != want {
		t.Errorf("message %q,\nwant    %q", st.Message, want)
	}
	d := st.Details
	if d == nil || d.Group != "meta.k8s.io" || d.Kind != "ListOptions" || d.Name != "" || len(d.Causes) != 1 {
		t.Fatalf("details %+v, want group meta.k8s.io, kind ListOptions, one cause", d)
	}
	if c := d.Causes[0]; c.Type != typ || c.Field != field || c.Message != body {
		t.Errorf("cause %+v, want {%s %q %s}", c, typ, body, field)
	}
}

// rvPlus is the resourceVersion d revisions after rv.
func rvPlus(t *testing.T, rv string, d int64) string {
	t.Helper()
	return strconv.FormatInt(mustRevision(t, "resourceVersion", rv)+d, 10)
}

// pendingGet is the outcome of a GET sent from another goroutine.
type pendingGet struct {
	r   *response
	err error
}

func (p pendingGet) get(t *testing.T) *response {
	t.Helper()
	if p.err != nil {
		t.Fatalf("GET: %v", p.err)
	}
	return p.r
}

// rvGetAsync sends a GET from a goroutine of its own; the channel receives
// its outcome.
func rvGetAsync(c *apiClient, path string) <-chan pendingGet {
	out := make(chan pendingGet, 1)
	go func() {
		r, err := c.send(http.MethodGet, path, "", "")
		out <- pendingGet{r, err}
	}()
	return out
}
