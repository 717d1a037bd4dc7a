// Package gctest is the garbage collector's suite, run on every storage
// backend: Run drives the example's widgets and widget classes over HTTP,
// through servers it starts, restarts and doubles on one store.
package gctest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
)

// Run runs the suite on stores newStores makes: each test gets new data,
// which outlives the servers the test starts on it, through two handles
// (the same store twice where a backend has no other, two clients of etcd)
// for two replicas.
func Run(t *testing.T, newStores func(t *testing.T) (storage.Interface, storage.Interface)) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, store, other storage.Interface)
	}{
		{"Background", testBackground},
		{"ForegroundThreeLevels", testForeground},
		{"ForegroundCycle", testForegroundCycle},
		{"Orphan", testOrphan},
		{"PolicyChangedMidway", testPolicyChanged},
		{"DanglingAndSolid", testDanglingAndSolid},
		{"NamespacedOwnerOfClusterScoped", testInvalidOwner},
		{"OwnerDeletedWhileStopped", testOwnerDeletedWhileStopped},
		{"ForegroundAcrossRestart", testForegroundAcrossRestart},
		{"TwoReplicas", testTwoReplicas},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, other := newStores(t)
			tc.run(t, store, other)
		})
	}
}

// Server is one kapi server of the example's resources on a store.
type Server struct {
	URL  string
	api  *apiserver.Server
	http *httptest.Server
}

// Start serves the example's resources on store until Stop or the test's end.
func Start(t *testing.T, store storage.Interface) *Server {
	t.Helper()
	api, err := apiserver.New(apiserver.WithStorage(store), apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := widgetapi.Register(api); err != nil {
		t.Fatal(err)
	}
	s := &Server{api: api, http: httptest.NewServer(api)}
	s.URL = s.http.URL
	t.Cleanup(s.Stop)
	waitFor(t, "the server to be ready", func() bool { return s.do(t, http.MethodGet, "/readyz", "").code == http.StatusOK })
	return s
}

// Stop ends the server (its collector with it); the store stays.
func (s *Server) Stop() {
	_ = s.api.Close() // first: it ends the watches Close below would wait for
	s.http.Close()
}

type response struct {
	code int
	body map[string]any
	raw  string
}

func (s *Server) do(t *testing.T, method, path, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case method == http.MethodPatch:
		req.Header.Set("Content-Type", "application/merge-patch+json")
	case body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := response{code: resp.StatusCode, raw: string(data)}
	_ = json.Unmarshal(data, &r.body)
	return r
}

func (s *Server) must(t *testing.T, code int, method, path, body string) map[string]any {
	t.Helper()
	r := s.do(t, method, path, body)
	if r.code != code {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, r.code, code, r.raw)
	}
	return r.body
}

const (
	classes = "/apis/example.com/v1/widgetclasses"
	widgets = "/apis/example.com/v1/namespaces/default/widgets"
)

// owner is an owner reference to obj.
type owner struct {
	kind, name, uid string
	block           bool
}

func ownerOf(obj map[string]any, block bool) owner {
	meta := obj["metadata"].(map[string]any)
	return owner{obj["kind"].(string), meta["name"].(string), meta["uid"].(string), block}
}

func refs(owners []owner) string {
	var out []string
	for _, o := range owners {
		out = append(out, fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":%q,"name":%q,"uid":%q,"blockOwnerDeletion":%t}`, o.kind, o.name, o.uid, o.block))
	}
	return "[" + strings.Join(out, ",") + "]"
}

func (s *Server) class(t *testing.T, name string, owners ...owner) map[string]any {
	t.Helper()
	return s.must(t, http.StatusCreated, http.MethodPost, classes,
		fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"WidgetClass","metadata":{"name":%q,"ownerReferences":%s}}`, name, refs(owners)))
}

func (s *Server) widget(t *testing.T, name string, finalizers []string, owners ...owner) map[string]any {
	t.Helper()
	fin, _ := json.Marshal(finalizers)
	return s.must(t, http.StatusCreated, http.MethodPost, widgets,
		fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q,"finalizers":%s,"ownerReferences":%s},"spec":{"color":"Red"}}`, name, fin, refs(owners)))
}

func (s *Server) exists(t *testing.T, path string) bool {
	t.Helper()
	r := s.do(t, http.MethodGet, path, "")
	if r.code != http.StatusOK && r.code != http.StatusNotFound {
		t.Fatalf("GET %s: %d: %s", path, r.code, r.raw)
	}
	return r.code == http.StatusOK
}

func (s *Server) meta(t *testing.T, path string) map[string]any {
	t.Helper()
	return s.must(t, http.StatusOK, http.MethodGet, path, "")["metadata"].(map[string]any)
}

func (s *Server) waitGone(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		waitFor(t, p+" to be deleted", func() bool { return !s.exists(t, p) })
	}
}

// waitFor polls until cond holds; the limit is a hang's, not a speed's.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func strs(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		out = append(out, x.(string))
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func ownerUIDs(meta map[string]any) []string {
	var out []string
	for _, r := range asSlice(meta["ownerReferences"]) {
		out = append(out, r.(map[string]any)["uid"].(string))
	}
	return out
}

// testBackground: the owner goes at once, then its dependents, and theirs.
func testBackground(t *testing.T, store, _ storage.Interface) {
	s := Start(t, store)
	c := ownerOf(s.class(t, "bg"), false)
	a := ownerOf(s.widget(t, "bg-a", nil, c), false)
	s.widget(t, "bg-b", nil, c)
	s.widget(t, "bg-a-child", nil, a)
	keep := s.widget(t, "bg-unowned", nil)

	st := s.must(t, http.StatusOK, http.MethodDelete, classes+"/bg", `{"propagationPolicy":"Background"}`)
	if st["kind"] != "Status" || st["status"] != "Success" {
		t.Fatalf("a background delete answers the Status of success, got %v", st)
	}
	if s.exists(t, classes+"/bg") {
		t.Fatal("the owner of a background delete is still there")
	}
	s.waitGone(t, widgets+"/bg-a", widgets+"/bg-b", widgets+"/bg-a-child")
	if !s.exists(t, widgets+"/bg-unowned") {
		t.Fatalf("an object without owners was deleted: %v", keep)
	}
	// Without a policy, as for custom resources in Kubernetes: Background.
	c = ownerOf(s.class(t, "bg2"), false)
	s.widget(t, "bg2-a", nil, c)
	s.must(t, http.StatusOK, http.MethodDelete, classes+"/bg2", "")
	s.waitGone(t, widgets+"/bg2-a")
}

// testForeground: a class owns widgets that own widgets that own widgets;
// a foreground delete holds each owner until its blocking dependents are
// gone. A finalizer on the deepest widget holds the whole chain.
func testForeground(t *testing.T, store, _ storage.Interface) {
	s := Start(t, store)
	c := ownerOf(s.class(t, "fg"), true)
	var level3 []string
	for i := range 2 {
		l1 := ownerOf(s.widget(t, fmt.Sprintf("fg-%d", i), nil, c), true)
		for j := range 2 {
			l2 := ownerOf(s.widget(t, fmt.Sprintf("fg-%d-%d", i, j), nil, l1), true)
			var fin []string
			if i == 0 && j == 0 {
				fin = []string{"example.com/hold"}
			}
			s.widget(t, fmt.Sprintf("fg-%d-%d-0", i, j), fin, l2)
			level3 = append(level3, widgets+fmt.Sprintf("/fg-%d-%d-0", i, j))
		}
	}
	// A dependent that does not block its owner goes too.
	s.widget(t, "fg-loose", nil, owner{c.kind, c.name, c.uid, false})

	got := s.must(t, http.StatusOK, http.MethodDelete, classes+"/fg", `{"propagationPolicy":"Foreground"}`)
	meta := got["metadata"].(map[string]any)
	if meta["deletionTimestamp"] == nil || !slices.Equal(strs(meta["finalizers"]), []string{"foregroundDeletion"}) {
		t.Fatalf("a foreground delete answers the owner with a deletionTimestamp and the foregroundDeletion finalizer, got %v", meta)
	}
	// The held widget is reached (its deletion starts) while everything
	// above it stays, in foreground deletion.
	waitFor(t, "the held widget's deletion", func() bool { return s.meta(t, widgets+"/fg-0-0-0")["deletionTimestamp"] != nil })
	s.waitGone(t, widgets+"/fg-loose", widgets+"/fg-1", widgets+"/fg-0-1", level3[1])
	for _, p := range []string{classes + "/fg", widgets + "/fg-0", widgets + "/fg-0-0"} {
		m := s.meta(t, p)
		if m["deletionTimestamp"] == nil || !slices.Contains(strs(m["finalizers"]), "foregroundDeletion") {
			t.Fatalf("%s is not in foreground deletion while a dependent below it is held: %v", p, m)
		}
	}
	s.must(t, http.StatusOK, http.MethodPatch, widgets+"/fg-0-0-0", `{"metadata":{"finalizers":null}}`)
	s.waitGone(t, widgets+"/fg-0-0-0", widgets+"/fg-0-0", widgets+"/fg-0", classes+"/fg")
}

// testForegroundCycle: two widgets that own each other, blocking, do not
// hold each other for ever when one is deleted in the foreground: the
// other stops blocking, as in Kubernetes, and both go.
func testForegroundCycle(t *testing.T, store, _ storage.Interface) {
	s := Start(t, store)
	a := ownerOf(s.widget(t, "cy-a", nil), true)
	b := ownerOf(s.widget(t, "cy-b", nil, a), true)
	s.must(t, http.StatusOK, http.MethodPatch, widgets+"/cy-a", `{"metadata":{"ownerReferences":`+refs([]owner{b})+`}}`)
	s.must(t, http.StatusOK, http.MethodDelete, widgets+"/cy-a", `{"propagationPolicy":"Foreground"}`)
	s.waitGone(t, widgets+"/cy-a", widgets+"/cy-b")
}

// testOrphan: the owner goes, its dependents stay without the reference.
func testOrphan(t *testing.T, store, _ storage.Interface) {
	s := Start(t, store)
	for _, tc := range []struct{ name, query, body string }{
		{"or-policy", "", `{"propagationPolicy":"Orphan"}`},
		{"or-query", "?orphanDependents=true", ""},
	} {
		c := ownerOf(s.class(t, tc.name), true)
		other := ownerOf(s.class(t, tc.name+"-other"), false)
		s.widget(t, tc.name+"-a", nil, c)
		s.widget(t, tc.name+"-b", nil, c, other)
		got := s.must(t, http.StatusOK, http.MethodDelete, classes+"/"+tc.name+tc.query, tc.body)
		if m := got["metadata"].(map[string]any); !slices.Equal(strs(m["finalizers"]), []string{"orphan"}) {
			t.Fatalf("%s: an orphaning delete answers the owner with the orphan finalizer, got %v", tc.name, m)
		}
		s.waitGone(t, classes+"/"+tc.name)
		if uids := ownerUIDs(s.meta(t, widgets+"/"+tc.name+"-a")); len(uids) != 0 {
			t.Fatalf("%s: an orphan keeps references %v", tc.name, uids)
		}
		if uids := ownerUIDs(s.meta(t, widgets+"/"+tc.name+"-b")); !slices.Equal(uids, []string{other.uid}) {
			t.Fatalf("%s: an orphan with another owner has references %v, want only %s", tc.name, uids, other.uid)
		}
	}
}

// testDanglingAndSolid: references to owners that are gone or have another
// uid are let go of by an object with a live owner; one without is deleted.
func testDanglingAndSolid(t *testing.T, store, _ storage.Interface) {
	s := Start(t, store)
	live := ownerOf(s.class(t, "ds-live"), false)
	s.class(t, "ds-renamed")
	stale := owner{"WidgetClass", "ds-renamed", "00000000-0000-4000-8000-000000000000", false}
	missing := owner{"WidgetClass", "ds-missing", "00000000-0000-4000-8000-000000000001", false}
	s.widget(t, "ds-kept", nil, live, stale, missing)
	s.widget(t, "ds-stale", nil, stale)
	s.widget(t, "ds-missing", nil, missing)
	// A namespaced owner is looked for in its dependent's namespace: one
	// in another namespace is absent.
	elsewhere := ownerOf(s.must(t, http.StatusCreated, http.MethodPost, "/apis/example.com/v1/namespaces/other/widgets",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"ds-elsewhere"},"spec":{"color":"Red"}}`), false)
	s.widget(t, "ds-cross-namespace", nil, elsewhere)
	s.waitGone(t, widgets+"/ds-stale", widgets+"/ds-missing", widgets+"/ds-cross-namespace")
	waitFor(t, "the dangling references to be removed", func() bool {
		return slices.Equal(ownerUIDs(s.meta(t, widgets+"/ds-kept")), []string{live.uid})
	})
}

// testPolicyChanged: a second DELETE with another policy changes the
// finalizer of an owner already being deleted, as on kube: a foreground
// deletion held by a dependent becomes an orphaning one.
func testPolicyChanged(t *testing.T, store, _ storage.Interface) {
	s := Start(t, store)
	c := ownerOf(s.class(t, "pc"), true)
	s.widget(t, "pc-held", []string{"example.com/hold"}, c)
	s.widget(t, "pc-later", []string{"example.com/hold"}, owner{c.kind, c.name, c.uid, false})
	s.must(t, http.StatusOK, http.MethodDelete, classes+"/pc", `{"propagationPolicy":"Foreground"}`)
	waitFor(t, "the held widget's deletion", func() bool { return s.meta(t, widgets+"/pc-held")["deletionTimestamp"] != nil })
	got := s.must(t, http.StatusOK, http.MethodDelete, classes+"/pc", `{"propagationPolicy":"Orphan"}`)
	if m := got["metadata"].(map[string]any); !slices.Equal(strs(m["finalizers"]), []string{"orphan"}) {
		t.Fatalf("a second DELETE with Orphan answers finalizers %v, want [orphan]", m["finalizers"])
	}
	s.waitGone(t, classes+"/pc")
	for _, name := range []string{"pc-held", "pc-later"} {
		if uids := ownerUIDs(s.meta(t, widgets+"/"+name)); len(uids) != 0 {
			t.Fatalf("%s keeps references %v after its owner was orphaning-deleted", name, uids)
		}
	}
}

// testInvalidOwner: a cluster-scoped object that names a namespaced owner is
// left alone, as Kubernetes' collector leaves it, even when that owner does
// not exist; a namespaced object's cluster-scoped owner is followed.
func testInvalidOwner(t *testing.T, store, _ storage.Interface) {
	s := Start(t, store)
	s.class(t, "io-invalid", owner{"Widget", "io-nobody", "00000000-0000-4000-8000-000000000002", false})
	s.widget(t, "io-valid", nil, owner{"WidgetClass", "io-nobody", "00000000-0000-4000-8000-000000000003", false})
	s.waitGone(t, widgets+"/io-valid")
	// Another change of the invalid one is decided on again: still kept.
	s.must(t, http.StatusOK, http.MethodPatch, classes+"/io-invalid", `{"metadata":{"labels":{"x":"y"}}}`)
	s.widget(t, "io-valid-2", nil, owner{"WidgetClass", "io-nobody", "00000000-0000-4000-8000-000000000003", false})
	s.waitGone(t, widgets+"/io-valid-2")
	if !s.exists(t, classes+"/io-invalid") {
		t.Fatal("a cluster-scoped object with a namespaced owner was collected")
	}
}

// testOwnerDeletedWhileStopped: an owner removed while no server ran (from
// the store itself) leaves dependents that the next server collects.
func testOwnerDeletedWhileStopped(t *testing.T, store, _ storage.Interface) {
	s := Start(t, store)
	c := ownerOf(s.class(t, "st"), false)
	s.widget(t, "st-a", nil, c)
	s.widget(t, "st-b", nil, c)
	s.Stop()
	if _, err := store.Delete(context.Background(), "/widgetclasses.example.com/st", 0); err != nil {
		t.Fatal(err)
	}
	s = Start(t, store)
	s.waitGone(t, widgets+"/st-a", widgets+"/st-b")
}

// testForegroundAcrossRestart: a foreground delete begun by one server is
// finished by the next.
func testForegroundAcrossRestart(t *testing.T, store, _ storage.Interface) {
	s := Start(t, store)
	c := ownerOf(s.class(t, "fr"), true)
	a := ownerOf(s.widget(t, "fr-a", nil, c), true)
	s.widget(t, "fr-a-0", []string{"example.com/hold"}, a)
	s.must(t, http.StatusOK, http.MethodDelete, classes+"/fr", `{"propagationPolicy":"Foreground"}`)
	waitFor(t, "the held widget's deletion", func() bool { return s.meta(t, widgets+"/fr-a-0")["deletionTimestamp"] != nil })
	s.Stop()
	s = Start(t, store)
	if !s.exists(t, classes+"/fr") || !s.exists(t, widgets+"/fr-a") {
		t.Fatal("the owners went before their held dependent")
	}
	s.must(t, http.StatusOK, http.MethodPatch, widgets+"/fr-a-0", `{"metadata":{"finalizers":null}}`)
	s.waitGone(t, widgets+"/fr-a-0", widgets+"/fr-a", classes+"/fr")
}

// testTwoReplicas: two servers, two collectors, one store: each policy
// works whichever replica is asked, and nothing is left behind.
func testTwoReplicas(t *testing.T, store, other storage.Interface) {
	a, b := Start(t, store), Start(t, other)
	for i, policy := range []string{"Background", "Foreground", "Background", "Foreground"} {
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		name := fmt.Sprintf("tr-%d", i)
		c := ownerOf(first.class(t, name), true)
		var paths []string
		for j := range 5 {
			w := ownerOf(first.widget(t, fmt.Sprintf("%s-%d", name, j), nil, c), true)
			first.widget(t, fmt.Sprintf("%s-%d-0", name, j), nil, w)
			paths = append(paths, widgets+fmt.Sprintf("/%s-%d", name, j), widgets+fmt.Sprintf("/%s-%d-0", name, j))
		}
		waitFor(t, "the other replica to see the widgets", func() bool { return second.exists(t, paths[len(paths)-1]) })
		second.must(t, http.StatusOK, http.MethodDelete, classes+"/"+name, fmt.Sprintf(`{"propagationPolicy":%q}`, policy))
		first.waitGone(t, append(paths, classes+"/"+name)...)
		second.waitGone(t, append(paths, classes+"/"+name)...)
	}
	c := ownerOf(a.class(t, "tr-orphan"), false)
	a.widget(t, "tr-orphan-a", nil, c)
	b.must(t, http.StatusOK, http.MethodDelete, classes+"/tr-orphan?propagationPolicy=Orphan", "")
	a.waitGone(t, classes+"/tr-orphan")
	if uids := ownerUIDs(a.meta(t, widgets+"/tr-orphan-a")); len(uids) != 0 {
		t.Fatalf("an orphan keeps references %v", uids)
	}
}
