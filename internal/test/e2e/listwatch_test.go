package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/pager"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/memory"
)

// seedWidgets creates w-00 … w-(n-1), all Red, and returns name ->
// resourceVersion.
func seedWidgets(t *testing.T, ctx context.Context, widgets dynamic.ResourceInterface, n int) (names []string, rvs map[string]string) {
	t.Helper()
	rvs = map[string]string{}
	for i := range n {
		name := fmt.Sprintf("w-%02d", i)
		obj, err := widgets.Create(ctx, newWidget(name, map[string]any{"color": "Red"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		names = append(names, name)
		rvs[name] = obj.GetResourceVersion()
	}
	return names, rvs
}

// setColor reads a widget, sets spec.color and writes it back; it returns the
// new resourceVersion.
func setColor(t *testing.T, ctx context.Context, widgets dynamic.ResourceInterface, name, color string) string {
	t.Helper()
	return modify(t, ctx, widgets, name, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, color, "spec", "color")
	})
}

// modify reads a widget, changes it with f and updates it; it returns the new
// resourceVersion.
func modify(t *testing.T, ctx context.Context, widgets dynamic.ResourceInterface, name string, f func(*unstructured.Unstructured)) string {
	t.Helper()
	obj, err := widgets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	f(obj)
	obj, err = widgets.Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update %s: %v", name, err)
	}
	return obj.GetResourceVersion()
}

func remaining(l *unstructured.UnstructuredList) string {
	if n := l.GetRemainingItemCount(); n != nil {
		return strconv.FormatInt(*n, 10)
	}
	return "nil"
}

// TestPager lists 10 widgets 3 at a time, by hand and with client-go's pager:
// pages of 3, 3, 3 and 1, all at the first page's resourceVersion, with
// remainingItemCount 7, 4 and 1 and none on the last page, and writes made
// between pages do not show.
func TestPager(t *testing.T) {
	t.Run("by-hand", func(t *testing.T) {
		srv := startServer(t)
		ctx := ctxFor(t, 60*time.Second)
		widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
		all, rvs := seedWidgets(t, ctx, widgets, 10)

		type pageWant struct {
			names     []string
			remaining string
			between   func() // writes made after this page
		}
		pages := []pageWant{
			{names: all[0:3], remaining: "7", between: func() {
				// Not yet listed: a new object among them, one updated, one deleted.
				if _, err := widgets.Create(ctx, newWidget("w-04a", map[string]any{"color": "Blue"}), metav1.CreateOptions{}); err != nil {
					t.Fatalf("create w-04a: %v", err)
				}
				setColor(t, ctx, widgets, "w-07", "Green")
				if err := widgets.Delete(ctx, "w-08", metav1.DeleteOptions{}); err != nil {
					t.Fatalf("delete w-08: %v", err)
				}
				setColor(t, ctx, widgets, "w-01", "Blue") // already listed
			}},
			{names: all[3:6], remaining: "4", between: func() {
				if _, err := widgets.Create(ctx, newWidget("w-06a", map[string]any{"color": "Blue"}), metav1.CreateOptions{}); err != nil {
					t.Fatalf("create w-06a: %v", err)
				}
				if err := widgets.Delete(ctx, "w-09", metav1.DeleteOptions{}); err != nil {
					t.Fatalf("delete w-09: %v", err)
				}
			}},
			{names: all[6:9], remaining: "1"},
			{names: all[9:10], remaining: "nil"},
		}
		var rv, token string
		for i, w := range pages {
			l, err := widgets.List(ctx, metav1.ListOptions{Limit: 3, Continue: token})
			if err != nil {
				t.Fatalf("page %d (limit=3, continue=%q): %v", i+1, token, err)
			}
			if i == 0 {
				rv = l.GetResourceVersion()
			}
			var got []string
			for _, it := range l.Items {
				got = append(got, it.GetName())
				if it.GetResourceVersion() != rvs[it.GetName()] {
					t.Errorf("page %d: %s at resourceVersion %s, want %s (its state when the list began)", i+1, it.GetName(), it.GetResourceVersion(), rvs[it.GetName()])
				}
				if c, _, _ := unstructured.NestedString(it.Object, "spec", "color"); c != "Red" {
					t.Errorf("page %d: %s has color %q, want Red (its state when the list began)", i+1, it.GetName(), c)
				}
			}
			if !slices.Equal(got, w.names) {
				t.Errorf("page %d: items %v, want %v", i+1, got, w.names)
			}
			if l.GetResourceVersion() != rv {
				t.Errorf("page %d: resourceVersion %s, want the first page's %s", i+1, l.GetResourceVersion(), rv)
			}
			if r := remaining(l); r != w.remaining {
				t.Errorf("page %d: remainingItemCount %s, want %s", i+1, r, w.remaining)
			}
			token = l.GetContinue()
			last := i == len(pages)-1
			if last != (token == "") {
				t.Fatalf("page %d: continue %q (last page: %v); list metadata: %s", i+1, token, last, mustJSON(l.Object["metadata"]))
			}
			if w.between != nil {
				w.between()
			}
		}

		// A new list sees the writes.
		l, err := widgets.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		want := sorted("w-00", "w-01", "w-02", "w-03", "w-04", "w-04a", "w-05", "w-06", "w-06a", "w-07")
		if got := names(l.Items); !slices.Equal(got, want) {
			t.Errorf("a new list: %v, want %v", got, want)
		}
		if !rvNewer(t, l.GetResourceVersion(), rv) {
			t.Errorf("a new list's resourceVersion %s is not newer than the paged list's %s", l.GetResourceVersion(), rv)
		}
	})

	t.Run("client-go-pager", func(t *testing.T) {
		srv := startServer(t)
		ctx := ctxFor(t, 60*time.Second)
		log := &requestLog{}
		widgets := dynamicClient(t, srv, log).Resource(widgetsGVR).Namespace(testNamespace)
		all, _ := seedWidgets(t, ctx, widgets, 10)
		writer := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
		before := len(log.all())

		type page struct {
			n         int
			rv        string
			remaining string
		}
		var pages []page
		p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
			l, err := widgets.List(ctx, opts)
			if err != nil {
				return nil, err
			}
			pages = append(pages, page{len(l.Items), l.GetResourceVersion(), remaining(l)})
			// A write between pages, among the objects not yet listed.
			name := fmt.Sprintf("w-0%da", len(pages)+4)
			if _, err := writer.Create(ctx, newWidget(name, map[string]any{"color": "Blue"}), metav1.CreateOptions{}); err != nil {
				t.Errorf("create %s: %v", name, err)
			}
			return l, nil
		}))
		p.PageSize = 3
		obj, paginated, err := p.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("pager list: %v\nrequests:\n%s", err, log)
		}
		if !paginated {
			t.Errorf("the pager says the result was not paginated")
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			t.Fatalf("extract list from %T: %v", obj, err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.(*unstructured.Unstructured).GetName())
		}
		if !slices.Equal(got, all) {
			t.Errorf("the pager listed %v, want %v (the writes between pages must not show)", got, all)
		}
		wantPages := []page{{3, "", "7"}, {3, "", "4"}, {3, "", "1"}, {1, "", "nil"}}
		if len(pages) != len(wantPages) {
			t.Fatalf("pages %+v, want 4 pages of 3, 3, 3 and 1\nrequests:\n%s", pages, log)
		}
		for i, w := range wantPages {
			w.rv = pages[0].rv
			if pages[i] != w {
				t.Errorf("page %d: %+v, want %+v", i+1, pages[i], w)
			}
		}
		var lists []loggedRequest
		for _, r := range log.all()[before:] {
			if r.Method == http.MethodGet {
				lists = append(lists, r)
			}
		}
		if len(lists) != 4 {
			t.Errorf("the pager made %d GETs, want 4:\n%s", len(lists), log)
		}
		for i, r := range lists {
			if !strings.Contains(r.URL, "limit=3") || (i > 0) != strings.Contains(r.URL, "continue=") || r.Status != http.StatusOK {
				t.Errorf("request %d: %s; want limit=3, a continue token on all but the first, and 200", i+1, r)
			}
		}
	})
}

// TestKubectlChunkSize runs `kubectl get widgets --chunk-size=2` over 5
// widgets with each kubectl installed: it prints the 5 rows under one header,
// and made 3 list requests with limit=2, the last two with continue tokens.
func TestKubectlChunkSize(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 5*time.Minute)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
	want := []string{"chunk-1", "chunk-2", "chunk-3", "chunk-4", "chunk-5"}
	for _, name := range want {
		if _, err := widgets.Create(ctx, newWidget(name, map[string]any{"color": "Green"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	bins := append([]string{dispatcherKubectl}, pinnedKubectls()...)
	for _, bin := range bins {
		name := strings.TrimPrefix(filepath.Base(bin), "kubectl.")
		if bin == dispatcherKubectl {
			name = "dispatcher"
		}
		t.Run(name, func(t *testing.T) {
			proxy := newSwitchProxy(t, srv.URL)
			k := newKubectl(t, bin, proxy.server())
			args := []string{"get", "widgets", "--chunk-size=2"}
			out := k.must(t, args...)
			failed := false
			fail := func(format string, a ...any) {
				t.Helper()
				failed = true
				t.Errorf(format, a...)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var headers int
			var rows []string
			for _, l := range lines {
				f := strings.Fields(l)
				switch {
				case len(f) == 0:
				case f[0] == "NAME":
					headers++
				default:
					rows = append(rows, f[0])
				}
			}
			if !slices.Equal(rows, want) || headers != 1 {
				fail("kubectl printed rows %v under %d headers, want %v under one header:\n%s", rows, headers, want, out)
			}
			var lists []proxiedSnapshot
			for _, r := range proxy.requests() {
				if r.isList() {
					lists = append(lists, r)
				}
			}
			if len(lists) != 3 {
				fail("kubectl made %d list requests, want 3 (pages of 2, 2, 1)", len(lists))
			}
			for i, r := range lists {
				if r.Query.Get("limit") != "2" || (i > 0) != (r.Query.Get("continue") != "") || r.Status != http.StatusOK {
					fail("list request %d: %s %s -> %d; want limit=2, a continue token on all but the first, and 200", i+1, r.Method, r.URL, r.Status)
				}
			}
			if failed {
				t.Logf("requests through the proxy:\n%s\n%s", proxy, k.verbose(t, nil, args...))
				return
			}
			for _, r := range lists {
				t.Logf("list request: %s -> %d", r.URL, r.Status)
			}
		})
	}
}

const informerModesMarker = "KAPI_E2E_INFORMER_MODES_CHILD"

// TestInformerModes runs informers with a label selector and with a field
// selector (spec.color, a field the example registers) with client-go's
// default streaming list: each syncs to exactly the matching widgets, gets an
// add when an object starts matching and a delete when it stops, and nothing
// for objects that never match. (TestInformer and TestInformerListWatch cover
// informers without selectors.)
func TestInformerModes(t *testing.T) {
	informerModesSuite(t, true)
}

// TestInformerModesListWatch is TestInformerModes with
// KUBE_FEATURE_WatchListClient=false (LIST, then WATCH), in a child process.
func TestInformerModesListWatch(t *testing.T) {
	if !runInChildProcess(t, informerModesMarker, "KUBE_FEATURE_WatchListClient=false") {
		return
	}
	informerModesSuite(t, false)
}

// selectorCase describes a selector and how to make a widget match it or not.
type selectorCase struct {
	labelSelector, fieldSelector string
	match, unmatch               func(*unstructured.Unstructured)
	touch                        func(*unstructured.Unstructured) // changes a matching widget so that it still matches
}

var (
	labelCase = selectorCase{
		labelSelector: "tier=gold",
		match:         func(u *unstructured.Unstructured) { setLabel(u, "tier", "gold") },
		unmatch:       func(u *unstructured.Unstructured) { setLabel(u, "tier", "silver") },
		touch:         func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "Blue", "spec", "color") },
	}
	fieldCase = selectorCase{
		fieldSelector: "spec.color=Red",
		match:         func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "Red", "spec", "color") },
		unmatch: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "Green", "spec", "color")
		},
		touch: func(u *unstructured.Unstructured) { setLabel(u, "touched", "yes") },
	}
)

func setLabel(u *unstructured.Unstructured, k, v string) {
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[k] = v
	u.SetLabels(l)
}

func (c selectorCase) widget(name string, matching bool) *unstructured.Unstructured {
	w := newWidget(name, map[string]any{"color": "Green"})
	if matching {
		c.match(w)
	} else {
		c.unmatch(w)
	}
	return w
}

func (c selectorCase) listOptions() metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: c.labelSelector, FieldSelector: c.fieldSelector}
}

func informerModesSuite(t *testing.T, streaming bool) {
	t.Run("label-selector", func(t *testing.T) { informerWithSelector(t, streaming, labelCase) })
	t.Run("field-selector", func(t *testing.T) { informerWithSelector(t, streaming, fieldCase) })
}

func informerWithSelector(t *testing.T, streaming bool, c selectorCase) {
	srv := startServer(t)
	ctx := ctxFor(t, 90*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
	create := func(name string, matching bool) {
		t.Helper()
		if _, err := widgets.Create(ctx, c.widget(name, matching), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	create("a", true)
	create("b", false)
	create("c", false)
	create("d", true)
	if _, err := widgets.Create(ctx, newWidget("plain", map[string]any{"color": "Blue"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create plain: %v", err)
	}

	fi := startFilteredInformer(t, srv, streaming, c.labelSelector, c.fieldSelector)
	opts := c.listOptions()
	waitStoreIs(t, fi.informer, widgets, opts, "a", "d")
	initial := map[string]bool{nextEvent(t, fi.events): true, nextEvent(t, fi.events): true}
	if !initial["add a"] || !initial["add d"] {
		t.Errorf("initial events %v, want add a and add d", initial)
	}
	expect := func(want string) {
		t.Helper()
		if got := nextEvent(t, fi.events); got != want {
			t.Fatalf("informer event %q, want %q (store: %v)", got, want, storeState(fi.informer))
		}
	}

	modify(t, ctx, widgets, "b", c.match) // starts matching
	expect("add b")
	modify(t, ctx, widgets, "a", c.unmatch) // stops matching
	expect("delete a")
	modify(t, ctx, widgets, "d", c.touch) // still matches
	expect("update d")
	modify(t, ctx, widgets, "c", c.touch) // never matches
	create("e", true)
	expect("add e")
	create("f", false)
	if err := widgets.Delete(ctx, "e", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete e: %v", err)
	}
	expect("delete e")
	if err := widgets.Delete(ctx, "f", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete f: %v", err)
	}
	modify(t, ctx, widgets, "a", c.match) // matches again
	expect("add a")
	create("sentinel", true) // the next event: nothing came for c and f
	expect("add sentinel")
	waitStoreIs(t, fi.informer, widgets, opts, "a", "b", "d", "sentinel")
	if extra := pendingEvents(fi.events); len(extra) > 0 {
		t.Errorf("unexpected extra informer events %v", extra)
	}
}

const reflectorModesMarker = "KAPI_E2E_REFLECTOR_CHILD"

// TestReflectorRelistsAfterGone makes an informer's reflector (client-go
// defaults: streaming list) resume its watch from a resourceVersion that the
// server no longer has in its watch history: the server answers 200 and one
// ERROR event with a 410 Expired Status, and the reflector relists and ends
// with exactly the server's state.
//
// How: two kapi servers share one store, behind a proxy. The informer syncs
// through the proxy from the first; the proxy then holds new requests, the
// first server shuts down (ending the watch cleanly, so the reflector
// re-watches from its last resourceVersion rather than relisting), a third
// server writes to the store, and the proxy sends the held watch to a second
// server started after those writes, whose history begins after the
// reflector's resourceVersion.
func TestReflectorRelistsAfterGone(t *testing.T) {
	reflectorRelistsAfterGone(t, true)
}

// TestReflectorRelistsAfterGoneListWatch is TestReflectorRelistsAfterGone
// with KUBE_FEATURE_WatchListClient=false (the relist is a LIST).
func TestReflectorRelistsAfterGoneListWatch(t *testing.T) {
	if !runInChildProcess(t, reflectorModesMarker, "KUBE_FEATURE_WatchListClient=false") {
		return
	}
	reflectorRelistsAfterGone(t, false)
}

func reflectorRelistsAfterGone(t *testing.T, streaming bool) {
	ctx := ctxFor(t, 2*time.Minute)
	store := memory.New()
	s1 := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	direct := func(url string) dynamic.ResourceInterface {
		return dynamicClient(t, &server{URL: url}, nil).Resource(widgetsGVR).Namespace(testNamespace)
	}
	w1 := direct(s1.URL)
	for i := range 5 {
		name := fmt.Sprintf("old-%d", i)
		if _, err := w1.Create(ctx, newWidget(name, map[string]any{"color": "Red"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}

	proxy := newSwitchProxy(t, s1.URL)
	informer := startInformer(t, proxy.server(), streaming, nil)
	waitConverged(t, informer, w1)
	// One event on the established watch, so that client-go does not take its
	// end for a failed ("very short") watch and relist on its own.
	if _, err := w1.Create(ctx, newWidget("old-5", map[string]any{"color": "Red"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create old-5: %v", err)
	}
	waitConverged(t, informer, w1)
	beforeCut := len(proxy.requests())

	// Hold what comes next, and end the watch.
	proxy.pause()
	if err := s1.API.Close(); err != nil {
		t.Fatalf("closing the first server: %v", err)
	}
	var held proxiedSnapshot
	eventually(t, 30*time.Second, func() bool {
		for _, r := range proxy.requests()[beforeCut:] {
			if r.Held {
				held = r
				return true
			}
		}
		return false
	}, func() string {
		return "the reflector sent no request after its watch ended; requests:\n" + proxy.String()
	})
	if !held.isWatch() || held.isStreamingList() || held.Query.Get("resourceVersion") == "" || held.Query.Get("resourceVersion") == "0" {
		t.Fatalf("after its watch ended the reflector sent %s %s, want a watch from its last resourceVersion (the test needs the reflector to resume, not relist); requests:\n%s",
			held.Method, held.URL, proxy)
	}
	lastRV := held.Query.Get("resourceVersion")

	// Writes the reflector has not seen, through a server of their own.
	writer := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	ww := direct(writer.URL)
	for i := range 3 {
		name := fmt.Sprintf("new-%d", i)
		if _, err := ww.Create(ctx, newWidget(name, map[string]any{"color": "Blue"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	setColor(t, ctx, ww, "old-1", "Green")
	setColor(t, ctx, ww, "old-2", "Green")
	for _, name := range []string{"old-3", "old-4"} {
		if err := ww.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}

	// The second server's watch history begins after those writes.
	s2 := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	w2 := direct(s2.URL)
	l, err := w2.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list from the second server: %v", err)
	}
	wantNames := sorted("old-0", "old-1", "old-2", "old-5", "new-0", "new-1", "new-2")
	if got := names(l.Items); !slices.Equal(got, wantNames) {
		t.Fatalf("the second server lists %v, want %v", got, wantNames)
	}
	if !rvNewer(t, l.GetResourceVersion(), lastRV) {
		t.Fatalf("the second server is at %s, not past the reflector's %s", l.GetResourceVersion(), lastRV)
	}
	// What the reflector will get, seen directly: 200, then one ERROR event
	// with 410 Expired, then the end of the stream.
	checkExpiredWatch(t, s2.URL+widgetsPath+"?watch=true&resourceVersion="+lastRV)

	proxy.switchTo(t, s2.URL)
	proxy.resume()
	waitConverged(t, informer, w2)
	got := map[string]bool{}
	for name := range storeState(informer) {
		got[name] = true
	}
	for _, n := range wantNames {
		if !got[n] {
			t.Errorf("the informer's store lacks %s", n)
		}
	}
	if len(got) != len(wantNames) {
		t.Errorf("the informer's store holds %v, want %v", storeState(informer), wantNames)
	}

	// The requests: the held watch got 200 and the 410 ERROR event, and after
	// it the reflector relisted (a LIST, or a streaming list), answered 200.
	reqs := proxy.requests()
	h := reqs[held.Index]
	if h.Status != http.StatusOK || !strings.Contains(h.Body, `"type":"ERROR"`) || !strings.Contains(h.Body, `"code":410`) {
		t.Errorf("the resumed watch %s got %d with body %.600q; want 200 and an ERROR event with a 410 Status\nrequests:\n%s", h.URL, h.Status, h.Body, proxy)
	}
	relisted := false
	for _, r := range reqs[held.Index+1:] {
		if (r.isList() || r.isStreamingList()) && r.Status == http.StatusOK {
			relisted = true
			if streaming && !r.isStreamingList() {
				t.Errorf("with streaming lists on, the reflector relisted with %s, want a watch with sendInitialEvents=true", r.URL)
			}
			break
		}
	}
	if !relisted {
		t.Errorf("no relist (LIST or streaming list answered 200) after the 410; requests:\n%s", proxy)
	}
	t.Logf("requests through the proxy:\n%s", proxy)
}

// checkExpiredWatch GETs a watch URL that must have left the history: 200,
// then exactly one ERROR event carrying a 410 Expired Status, then the end of
// the stream.
func checkExpiredWatch(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			lines = append(lines, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("GET %s: reading the stream: %v (so far: %q)", url, err, lines)
	}
	if resp.StatusCode != http.StatusOK || len(lines) != 1 {
		t.Fatalf("GET %s: %d with %d events %q; want 200 and exactly one ERROR event", url, resp.StatusCode, len(lines), lines)
	}
	var ev struct {
		Type   string        `json:"type"`
		Object metav1.Status `json:"object"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil {
		t.Fatalf("GET %s: event %q: %v", url, lines[0], err)
	}
	st := ev.Object
	if ev.Type != "ERROR" || st.Kind != "Status" || st.APIVersion != "v1" || st.Status != metav1.StatusFailure ||
		st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired || st.Message == "" {
		t.Errorf("GET %s: event %s; want an ERROR with a v1 Status Failure 410 Expired and a message", url, lines[0])
	}
}

// TestSelectorListsAndWatches lists and watches widgets with label selectors
// of every operator and with field selectors on metadata.name,
// metadata.namespace and spec.color (registered by the example): each result
// is exactly the matching objects; a watch with a selector sends ADDED when an
// object starts matching and DELETED (with its last matching state, at the
// resourceVersion of the change) when it stops; deletecollection honours a
// field selector; bad selectors and unsupported fields are 400.
func TestSelectorListsAndWatches(t *testing.T) {
	t.Run("lists", func(t *testing.T) {
		srv := startServer(t)
		ctx := ctxFor(t, 60*time.Second)
		client := dynamicClient(t, srv, nil)
		widgets := client.Resource(widgetsGVR).Namespace(testNamespace)
		others := client.Resource(widgetsGVR).Namespace("other")
		createNamespace(t, ctx, client, "other")
		for _, w := range []*unstructured.Unstructured{
			labeledWidget("a", "Red", map[string]string{"tier": "gold", "env": "prod"}),
			labeledWidget("b", "Green", map[string]string{"tier": "silver", "env": "prod"}),
			labeledWidget("c", "Blue", map[string]string{"tier": "bronze"}),
			labeledWidget("d", "Red", map[string]string{"env": "dev"}),
			labeledWidget("e", "Green", nil),
		} {
			if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create %s: %v", w.GetName(), err)
			}
		}
		for _, w := range []*unstructured.Unstructured{
			labeledWidget("a", "Red", map[string]string{"tier": "gold"}),
			labeledWidget("z", "Blue", nil),
		} {
			if _, err := others.Create(ctx, w, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create other/%s: %v", w.GetName(), err)
			}
		}

		cases := []struct {
			label, field string
			want         []string
		}{
			{label: "tier=gold", want: []string{"a"}},
			{label: "tier==gold", want: []string{"a"}},
			{label: "tier!=gold", want: []string{"b", "c", "d", "e"}},
			{label: "tier in (gold,silver)", want: []string{"a", "b"}},
			{label: "tier in (gold, silver)", want: []string{"a", "b"}},
			{label: "tier notin (gold,silver)", want: []string{"c", "d", "e"}},
			{label: "tier", want: []string{"a", "b", "c"}},
			{label: "!tier", want: []string{"d", "e"}},
			{label: "env=prod,tier!=silver", want: []string{"a"}},
			{label: "tier,!env", want: []string{"c"}},
			{label: "env in (prod,dev),tier notin (silver)", want: []string{"a", "d"}},
			{label: "tier=platinum", want: []string{}},
			{field: "metadata.name=b", want: []string{"b"}},
			{field: "metadata.name==b", want: []string{"b"}},
			{field: "metadata.name!=b", want: []string{"a", "c", "d", "e"}},
			{field: "metadata.namespace=default", want: []string{"a", "b", "c", "d", "e"}},
			{field: "metadata.namespace=other", want: []string{}},
			{field: "spec.color=Red", want: []string{"a", "d"}},
			{field: "spec.color==Green", want: []string{"b", "e"}},
			{field: "spec.color!=Red", want: []string{"b", "c", "e"}},
			{field: "spec.color=Red,metadata.name!=a", want: []string{"d"}},
			{field: "spec.color=purple", want: []string{}},
			{label: "tier", field: "spec.color=Red", want: []string{"a"}},
			{label: "env", field: "spec.color!=Red", want: []string{"b"}},
		}
		for _, tc := range cases {
			l, err := widgets.List(ctx, metav1.ListOptions{LabelSelector: tc.label, FieldSelector: tc.field})
			if err != nil {
				t.Errorf("labelSelector %q fieldSelector %q: %v", tc.label, tc.field, err)
				continue
			}
			if got := names(l.Items); !slices.Equal(got, sorted(tc.want...)) {
				t.Errorf("labelSelector %q fieldSelector %q: %v, want %v", tc.label, tc.field, got, sorted(tc.want...))
			}
			if l.GetContinue() != "" || l.GetRemainingItemCount() != nil {
				t.Errorf("labelSelector %q fieldSelector %q: an unlimited list has continue %q remainingItemCount %s", tc.label, tc.field, l.GetContinue(), remaining(l))
			}
		}

		// Across namespaces.
		all := client.Resource(widgetsGVR)
		for _, tc := range []struct {
			label, field string
			want         []string
		}{
			{label: "tier=gold", want: []string{"default/a", "other/a"}},
			{field: "metadata.namespace=other", want: []string{"other/a", "other/z"}},
			{field: "metadata.namespace!=default,spec.color=Blue", want: []string{"other/z"}},
			{field: "metadata.name=a", want: []string{"default/a", "other/a"}},
			{field: "spec.color=Blue", want: []string{"default/c", "other/z"}},
		} {
			l, err := all.List(ctx, metav1.ListOptions{LabelSelector: tc.label, FieldSelector: tc.field})
			if err != nil {
				t.Errorf("all namespaces, labelSelector %q fieldSelector %q: %v", tc.label, tc.field, err)
				continue
			}
			if got := nsNames(l.Items); !slices.Equal(got, tc.want) {
				t.Errorf("all namespaces, labelSelector %q fieldSelector %q: %v, want %v", tc.label, tc.field, got, tc.want)
			}
		}

		// With a selector, pages have no remainingItemCount but still cover
		// exactly the matching objects.
		var paged []string
		token := ""
		for range 10 {
			l, err := widgets.List(ctx, metav1.ListOptions{LabelSelector: "tier", Limit: 1, Continue: token})
			if err != nil {
				t.Fatalf("paged list with labelSelector tier: %v", err)
			}
			paged = append(paged, names(l.Items)...)
			if l.GetRemainingItemCount() != nil {
				t.Errorf("a page with a label selector has remainingItemCount %s; kube-apiserver sets none with a selector", remaining(l))
			}
			if token = l.GetContinue(); token == "" {
				break
			}
		}
		if !slices.Equal(sorted(paged...), []string{"a", "b", "c"}) {
			t.Errorf("paged list with labelSelector tier: %v, want [a b c]", paged)
		}
	})

	t.Run("invalid", func(t *testing.T) {
		srv := startServer(t)
		ctx := ctxFor(t, 60*time.Second)
		widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
		for _, tc := range []struct {
			label, field string
			mention      string // the Status message must contain it
		}{
			{field: "spec.size=1", mention: "spec.size"},
			{field: "status.replicas=1", mention: "status.replicas"},
			{field: "spec.color=Red,spec.bogus=x", mention: "spec.bogus"},
			{field: "metadata.labels=x", mention: "metadata.labels"},
			{field: "spec.color", mention: "spec.color"},
			{label: "tier in (gold", mention: ""},
			{label: "tier=gold=silver", mention: ""},
			{label: "Bad Key=x", mention: ""},
			{label: "tier=" + strings.Repeat("x", 64), mention: ""},
		} {
			opts := metav1.ListOptions{LabelSelector: tc.label, FieldSelector: tc.field}
			_, err := widgets.List(ctx, opts)
			checkBadRequest(t, "list", opts, err, tc.mention)
			w, err := widgets.Watch(ctx, opts)
			if err == nil {
				w.Stop()
			}
			checkBadRequest(t, "watch", opts, err, tc.mention)
			err = widgets.DeleteCollection(ctx, metav1.DeleteOptions{}, opts)
			checkBadRequest(t, "deletecollection", opts, err, tc.mention)
		}
	})

	t.Run("label-watch", func(t *testing.T) { selectorWatch(t, labelCase) })
	t.Run("field-watch", func(t *testing.T) { selectorWatch(t, fieldCase) })

	t.Run("deletecollection", func(t *testing.T) {
		srv := startServer(t)
		ctx := ctxFor(t, 60*time.Second)
		widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
		for _, w := range []*unstructured.Unstructured{
			labeledWidget("r1", "Red", map[string]string{"tier": "gold"}),
			labeledWidget("r2", "Red", nil),
			labeledWidget("g1", "Green", map[string]string{"tier": "gold"}),
			labeledWidget("g2", "Green", nil),
			labeledWidget("b1", "Blue", nil),
		} {
			if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create %s: %v", w.GetName(), err)
			}
		}
		steps := []struct {
			label, field string
			left         []string
		}{
			{field: "spec.color=Red,metadata.name!=r2", left: []string{"b1", "g1", "g2", "r2"}},
			{label: "tier=gold", field: "spec.color==Green", left: []string{"b1", "g2", "r2"}},
			{field: "spec.color!=Blue", left: []string{"b1"}},
			{field: "spec.color=purple", left: []string{"b1"}},
		}
		for _, s := range steps {
			opts := metav1.ListOptions{LabelSelector: s.label, FieldSelector: s.field}
			if err := widgets.DeleteCollection(ctx, metav1.DeleteOptions{}, opts); err != nil {
				t.Fatalf("deletecollection labelSelector %q fieldSelector %q: %v", s.label, s.field, err)
			}
			l, err := widgets.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if got := names(l.Items); !slices.Equal(got, s.left) {
				t.Errorf("after deletecollection labelSelector %q fieldSelector %q: %v left, want %v", s.label, s.field, got, s.left)
			}
		}
	})
}

func checkBadRequest(t *testing.T, verb string, opts metav1.ListOptions, err error, mention string) {
	t.Helper()
	what := fmt.Sprintf("%s with labelSelector %q fieldSelector %q", verb, opts.LabelSelector, opts.FieldSelector)
	if err == nil {
		t.Errorf("%s succeeded, want 400 BadRequest", what)
		return
	}
	st := statusOfErr(t, err)
	if st.Code != http.StatusBadRequest || st.Reason != metav1.StatusReasonBadRequest || st.Status != metav1.StatusFailure || st.Message == "" {
		t.Errorf("%s: %d %s %q, want 400 BadRequest Failure with a message; full: %s", what, st.Code, st.Reason, st.Message, mustJSON(st))
	}
	if mention != "" && !strings.Contains(st.Message, mention) {
		t.Errorf("%s: message %q does not name %s", what, st.Message, mention)
	}
}

// selectorWatch watches with a selector from a list's resourceVersion, and
// without one (initial events), and follows objects in and out of it.
func selectorWatch(t *testing.T, c selectorCase) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
	create := func(name string, matching bool) string {
		t.Helper()
		obj, err := widgets.Create(ctx, c.widget(name, matching), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return obj.GetResourceVersion()
	}
	del := func(name string) {
		t.Helper()
		if err := widgets.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	create("a", true)
	create("b", false)
	create("c", false)
	l, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	opts := c.listOptions()

	// Without a resourceVersion: ADDED for what matches now, then changes.
	fromNow, err := widgets.Watch(ctx, opts)
	if err != nil {
		t.Fatalf("watch %+v: %v", opts, err)
	}
	defer fromNow.Stop()
	wantWatchEvent(t, fromNow, watch.Added, "a", "")

	opts.ResourceVersion = l.GetResourceVersion()
	fromList, err := widgets.Watch(ctx, opts)
	if err != nil {
		t.Fatalf("watch %+v: %v", opts, err)
	}
	defer fromList.Stop()

	both := func(typ watch.EventType, name, rv string) []*unstructured.Unstructured {
		t.Helper()
		return []*unstructured.Unstructured{
			wantWatchEvent(t, fromList, typ, name, rv),
			wantWatchEvent(t, fromNow, typ, name, rv),
		}
	}
	rv := modify(t, ctx, widgets, "b", c.match) // starts matching
	for _, obj := range both(watch.Added, "b", rv) {
		checkMatches(t, c, obj, true)
	}
	rv = modify(t, ctx, widgets, "a", c.unmatch) // stops matching
	for _, obj := range both(watch.Deleted, "a", rv) {
		// kube-apiserver sends the last state that matched, at the
		// resourceVersion of the change that made it stop matching.
		checkMatches(t, c, obj, true)
	}
	rv = modify(t, ctx, widgets, "b", c.touch) // still matches
	both(watch.Modified, "b", rv)
	modify(t, ctx, widgets, "c", c.touch) // never matches
	rv = create("d", true)
	both(watch.Added, "d", rv)
	create("e", false)
	del("d")
	for _, obj := range both(watch.Deleted, "d", "") {
		checkMatches(t, c, obj, true)
		if !rvNewer(t, obj.GetResourceVersion(), rv) {
			t.Errorf("DELETED d at resourceVersion %s, not newer than its creation's %s", obj.GetResourceVersion(), rv)
		}
	}
	del("e")
	rv = modify(t, ctx, widgets, "a", c.match) // matches again
	both(watch.Added, "a", rv)
	rv = create("sentinel", true) // the next event: nothing came for c and e
	both(watch.Added, "sentinel", rv)
}

// checkMatches checks whether an object carried by a watch event matches the
// selector case (tier=gold or spec.color=Red), from the object itself: a
// DELETED event's object is a past state the server can no longer be asked
// about.
func checkMatches(t *testing.T, c selectorCase, obj *unstructured.Unstructured, want bool) {
	t.Helper()
	var got bool
	switch {
	case c.labelSelector != "":
		got = obj.GetLabels()["tier"] == "gold"
	default:
		color, _, _ := unstructured.NestedString(obj.Object, "spec", "color")
		got = color == "Red"
	}
	if got != want {
		t.Errorf("object %s in the event: matches %q/%q = %v, want %v; object: %s", obj.GetName(), c.labelSelector, c.fieldSelector, got, want, mustJSON(obj.Object))
	}
}

// wantCause is one expected cause of a 422 on ListOptions.
type wantCause struct {
	typ   metav1.CauseType
	field string
	body  string // the cause's message, as kube-apiserver words it
}

func forbidden(field, detail string) wantCause {
	return wantCause{metav1.CauseType("FieldValueForbidden"), field, "Forbidden: " + detail}
}

func notSupported(field, value string, supported ...string) wantCause {
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = strconv.Quote(s)
	}
	return wantCause{metav1.CauseTypeFieldValueNotSupported, field,
		fmt.Sprintf("Unsupported value: %q: supported values: %s", value, strings.Join(q, ", "))}
}

// checkListOptionsInvalid checks kube-apiserver's 422 for bad list or watch
// options: kind ListOptions, group meta.k8s.io, no name, one cause per
// problem, and the message built from them.
func checkListOptionsInvalid(t *testing.T, what string, err error, causes ...wantCause) {
	t.Helper()
	if err == nil {
		t.Errorf("%s succeeded, want 422 Invalid", what)
		return
	}
	st := statusOfErr(t, err)
	if st.Code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid || st.Status != metav1.StatusFailure {
		t.Errorf("%s: %d %s, want 422 Invalid; full: %s", what, st.Code, st.Reason, mustJSON(st))
		return
	}
	if st.Details == nil || st.Details.Kind != "ListOptions" || st.Details.Group != "meta.k8s.io" || st.Details.Name != "" {
		t.Errorf("%s: details %s, want kind ListOptions, group meta.k8s.io, no name", what, mustJSON(st.Details))
		return
	}
	var msgs []string
	for _, c := range causes {
		msgs = append(msgs, c.field+": "+c.body)
	}
	wantMsg := `ListOptions.meta.k8s.io "" is invalid: ` + strings.Join(msgs, ", ")
	if len(msgs) > 1 {
		wantMsg = `ListOptions.meta.k8s.io "" is invalid: [` + strings.Join(msgs, ", ") + "]"
	}
	if st.Message != wantMsg {
		t.Errorf("%s: message\n  %q\nwant\n  %q", what, st.Message, wantMsg)
	}
	if len(st.Details.Causes) != len(causes) {
		t.Errorf("%s: causes %s, want %d", what, mustJSON(st.Details.Causes), len(causes))
		return
	}
	for i, c := range causes {
		got := st.Details.Causes[i]
		if got.Type != c.typ || got.Field != c.field || got.Message != c.body {
			t.Errorf("%s: cause %d = {%s %q %q}, want {%s %q %q}", what, i, got.Type, got.Field, got.Message, c.typ, c.field, c.body)
		}
	}
}

// TestInvalidListOptions sends every invalid combination of list and watch
// options through client-go and checks kube-apiserver's answer: status code,
// reason, details and causes.
func TestInvalidListOptions(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 90*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
	seedWidgets(t, ctx, widgets, 3)
	first, err := widgets.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatalf("list limit=1: %v", err)
	}
	rv, token := first.GetResourceVersion(), first.GetContinue()
	if token == "" {
		t.Fatalf("a list with limit=1 over 3 widgets has no continue token: %s", mustJSON(first.Object["metadata"]))
	}
	yes, no := true, false

	t.Run("list-422", func(t *testing.T) {
		unlessRV := forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
		withContinue := forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
		for _, tc := range []struct {
			name   string
			opts   metav1.ListOptions
			causes []wantCause
		}{
			{"NotOlderThan-without-resourceVersion",
				metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
				[]wantCause{unlessRV}},
			{"Exact-without-resourceVersion",
				metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact},
				[]wantCause{unlessRV}},
			{"Exact-with-0",
				metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
				[]wantCause{forbidden("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`)}},
			{"unknown-match",
				metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: "Newest"},
				[]wantCause{notSupported("resourceVersionMatch", "Newest", "Exact", "NotOlderThan", "")}},
			{"unknown-match-without-resourceVersion",
				metav1.ListOptions{ResourceVersionMatch: "exact"},
				[]wantCause{unlessRV, notSupported("resourceVersionMatch", "exact", "Exact", "NotOlderThan", "")}},
			{"match-with-continue",
				metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Continue: token, Limit: 1},
				[]wantCause{unlessRV, withContinue}},
			{"sendInitialEvents-true-on-list",
				metav1.ListOptions{SendInitialEvents: &yes},
				[]wantCause{forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")}},
			{"sendInitialEvents-false-on-list",
				metav1.ListOptions{SendInitialEvents: &no},
				[]wantCause{forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")}},
			{"sendInitialEvents-and-Exact-0",
				metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact, SendInitialEvents: &yes},
				[]wantCause{
					forbidden("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`),
					forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"),
				}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := widgets.List(ctx, tc.opts)
				checkListOptionsInvalid(t, fmt.Sprintf("list %+v", tc.opts), err, tc.causes...)
			})
		}
	})

	t.Run("watch-422", func(t *testing.T) {
		requiresNOT := forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
		onlyWithInitial := forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
		for _, tc := range []struct {
			name   string
			opts   metav1.ListOptions
			causes []wantCause
		}{
			{"sendInitialEvents-without-match",
				metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true},
				[]wantCause{requiresNOT}},
			{"sendInitialEvents-false-without-match",
				metav1.ListOptions{SendInitialEvents: &no, ResourceVersion: rv},
				[]wantCause{requiresNOT}},
			{"sendInitialEvents-with-Exact",
				metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchExact, ResourceVersion: rv, AllowWatchBookmarks: true},
				[]wantCause{requiresNOT, notSupported("resourceVersionMatch", "Exact", "NotOlderThan")}},
			{"NotOlderThan-without-sendInitialEvents",
				metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, ResourceVersion: rv},
				[]wantCause{onlyWithInitial}},
			{"Exact-without-sendInitialEvents",
				metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact, ResourceVersion: rv},
				[]wantCause{onlyWithInitial, notSupported("resourceVersionMatch", "Exact", "NotOlderThan")}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w, err := widgets.Watch(ctx, tc.opts)
				if err == nil {
					w.Stop()
				}
				checkListOptionsInvalid(t, fmt.Sprintf("watch %+v", tc.opts), err, tc.causes...)
			})
		}
	})

	t.Run("continue-with-resourceVersion", func(t *testing.T) {
		for _, v := range []string{rv, "1"} {
			_, err := widgets.List(ctx, metav1.ListOptions{Limit: 1, Continue: token, ResourceVersion: v})
			if err == nil {
				t.Errorf("list with continue and resourceVersion %s succeeded, want 400", v)
				continue
			}
			st := statusOfErr(t, err)
			if st.Code != http.StatusBadRequest || st.Reason != metav1.StatusReasonBadRequest ||
				st.Message != "specifying resource version is not allowed when using continue" {
				t.Errorf("list with continue and resourceVersion %s: %s; want 400 BadRequest %q", v, mustJSON(st), "specifying resource version is not allowed when using continue")
			}
		}
		// The token itself is still good.
		if _, err := widgets.List(ctx, metav1.ListOptions{Limit: 1, Continue: token}); err != nil {
			t.Errorf("list with the continue token alone: %v", err)
		}
	})

	t.Run("non-numeric-resourceVersion", func(t *testing.T) {
		check := func(what string, err error) {
			t.Helper()
			if err == nil {
				t.Errorf("%s succeeded, want 400", what)
				return
			}
			st := statusOfErr(t, err)
			if st.Code != http.StatusBadRequest || st.Reason != metav1.StatusReasonBadRequest || !strings.Contains(st.Message, "abc") {
				t.Errorf("%s: %s; want 400 BadRequest naming the bad resourceVersion", what, mustJSON(st))
			}
		}
		for _, opts := range []metav1.ListOptions{
			{ResourceVersion: "abc"},
			{ResourceVersion: "abc", Limit: 2},
			{ResourceVersion: "abc", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			{ResourceVersion: "abc", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
		} {
			_, err := widgets.List(ctx, opts)
			check(fmt.Sprintf("list %+v", opts), err)
		}
		for _, opts := range []metav1.ListOptions{
			{ResourceVersion: "abc"},
			{ResourceVersion: "abc", AllowWatchBookmarks: true},
			{ResourceVersion: "abc", SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true},
		} {
			w, err := widgets.Watch(ctx, opts)
			if err == nil {
				w.Stop()
			}
			check(fmt.Sprintf("watch %+v", opts), err)
		}
		_, err := widgets.Get(ctx, "w-00", metav1.GetOptions{ResourceVersion: "abc"})
		check("get resourceVersion=abc", err)
	})

	t.Run("malformed-continue", func(t *testing.T) {
		for _, bad := range []string{
			"garbage!",
			"bm90IGpzb24",            // base64 of "not json"
			"eyJ2IjoibWV0YS5rOHMifQ", // base64 of {"v":"meta.k8s"}
			token + "x",
			"%",
		} {
			_, err := widgets.List(ctx, metav1.ListOptions{Limit: 1, Continue: bad})
			if err == nil {
				t.Errorf("list with continue %q succeeded, want 400", bad)
				continue
			}
			st := statusOfErr(t, err)
			if st.Code != http.StatusBadRequest || st.Reason != metav1.StatusReasonBadRequest || !strings.HasPrefix(st.Message, "continue key is not valid") {
				t.Errorf("list with continue %q: %s; want 400 BadRequest, message starting %q", bad, mustJSON(st), "continue key is not valid")
			}
		}
	})

	t.Run("expired-continue", func(t *testing.T) {
		// The example keeps 10,000 revisions; a server of its own with a
		// store that keeps 5 expires a token quickly.
		s := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(memory.New(memory.WithHistory(5))))
		w := dynamicClient(t, &server{URL: s.URL}, nil).Resource(widgetsGVR).Namespace(testNamespace)
		seedWidgets(t, ctx, w, 4)
		page, err := w.List(ctx, metav1.ListOptions{Limit: 2})
		if err != nil {
			t.Fatalf("list limit=2: %v", err)
		}
		if page.GetContinue() == "" {
			t.Fatalf("no continue token: %s", mustJSON(page.Object["metadata"]))
		}
		for i := range 10 {
			setColor(t, ctx, w, "w-03", []string{"Green", "Blue"}[i%2])
		}
		_, err = w.List(ctx, metav1.ListOptions{Limit: 2, Continue: page.GetContinue()})
		if err == nil {
			t.Fatalf("list with a continue token 10 revisions past a 5-revision history succeeded, want 410 Expired")
		}
		st := statusOfErr(t, err)
		if st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired || !apierrors.IsResourceExpired(err) ||
			!strings.Contains(st.Message, "start a new list") {
			t.Errorf("expired continue: %s; want 410 Expired with a message telling the client to start a new list", mustJSON(st))
		}
		// client-go's pager, told to, falls back to a full list.
		p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
			if opts.Continue == "" {
				opts.Continue = page.GetContinue() // as if the first page were long ago
			}
			return w.List(ctx, opts)
		}))
		p.PageSize = 2
		_, _, err = p.List(ctx, metav1.ListOptions{})
		if !apierrors.IsResourceExpired(err) {
			t.Errorf("pager on an expired token: %v, want 410 Expired", err)
		}
	})
}

// TestWatchBookmarkBeforeTimeout: a watch with allowWatchBookmarks and
// timeoutSeconds ends with a BOOKMARK at (at least) the last event's
// resourceVersion just before the server closes it, with or without a
// selector; without allowWatchBookmarks there is no bookmark at all. Its
// timeout is 3s: kube-apiserver's cacher sends that bookmark 2s before the
// deadline, so none with a timeout of 2s or less, and nor does kapi.
func TestWatchBookmarkBeforeTimeout(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
	seedWidgets(t, ctx, widgets, 2)
	three := int64(3)
	for _, tc := range []struct {
		name      string
		opts      metav1.ListOptions
		bookmarks bool
		write     bool
	}{
		{"with-bookmarks", metav1.ListOptions{AllowWatchBookmarks: true}, true, true},
		{"with-bookmarks-idle", metav1.ListOptions{AllowWatchBookmarks: true}, true, false},
		{"with-bookmarks-and-selector", metav1.ListOptions{AllowWatchBookmarks: true, FieldSelector: "spec.color=Blue"}, true, true},
		{"without-bookmarks", metav1.ListOptions{}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := widgets.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			opts := tc.opts
			opts.ResourceVersion = l.GetResourceVersion()
			opts.TimeoutSeconds = &three
			// The write before the watch, which replays it from the list's
			// revision: a slow machine cannot have the watch's three seconds
			// run out before it.
			lastRV := l.GetResourceVersion()
			if tc.write {
				lastRV = setColor(t, ctx, widgets, "w-00", "Blue")
			}
			w, err := widgets.Watch(ctx, opts)
			if err != nil {
				t.Fatalf("watch %+v: %v", opts, err)
			}
			defer w.Stop()
			var events []watch.Event
			deadline := time.After(30 * time.Second)
		read:
			for {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						break read
					}
					events = append(events, ev)
				case <-deadline:
					t.Fatalf("the watch with timeoutSeconds=3 was still open after 30s; events so far: %v", describe(events))
				}
			}
			if tc.write {
				setColor(t, ctx, widgets, "w-00", "Red") // back, for the next case
			}
			var changes []string
			for _, ev := range events {
				if ev.Type != watch.Bookmark {
					changes = append(changes, describe([]watch.Event{ev})[0])
				}
			}
			var want []string
			switch {
			case !tc.write:
			case tc.opts.FieldSelector != "":
				want = []string{"ADDED w-00@" + lastRV} // it starts matching spec.color=Blue
			default:
				want = []string{"MODIFIED w-00@" + lastRV}
			}
			if !slices.Equal(changes, want) {
				t.Errorf("changes %v, want %v; events: %v", changes, want, describe(events))
			}
			if !tc.bookmarks {
				if len(changes) != len(events) {
					t.Errorf("a BOOKMARK without allowWatchBookmarks; events: %v", describe(events))
				}
				return
			}
			if len(events) == 0 || events[len(events)-1].Type != watch.Bookmark {
				t.Fatalf("the stream ended without a final BOOKMARK; events: %v", describe(events))
			}
			last := events[len(events)-1].Object.(*unstructured.Unstructured)
			if last.GetResourceVersion() != lastRV && !rvNewer(t, last.GetResourceVersion(), lastRV) {
				t.Errorf("final BOOKMARK at %s, before the last change %s; events: %v", last.GetResourceVersion(), lastRV, describe(events))
			}
			if last.GetKind() != "Widget" || last.GetAPIVersion() != "example.com/v1" {
				t.Errorf("final BOOKMARK object %s, want a Widget of example.com/v1", mustJSON(last.Object))
			}
		})
	}
}

func describe(events []watch.Event) []string {
	var out []string
	for _, ev := range events {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			out = append(out, fmt.Sprintf("%s %s@%s", ev.Type, u.GetName(), u.GetResourceVersion()))
		} else {
			out = append(out, fmt.Sprintf("%s %T", ev.Type, ev.Object))
		}
	}
	return out
}
