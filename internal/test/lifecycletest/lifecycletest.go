// Package lifecycletest checks the lifecycle of namespaces and the paths of
// leases on a storage backend, over HTTP, as clients see them: the same
// suite runs on memory and bolt (package apiserver's tests) and on etcd
// (its own module), with servers restarted midway and two servers sharing
// one store.
package lifecycletest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
)

// Open returns a store on the backend's data: every call the same data (a
// new connection where the backend has them), each closed when the test
// ends.
type Open func(t *testing.T) storage.Interface

// Run runs the suite; newBackend makes a fresh backend for each case.
func Run(t *testing.T, newBackend func(t *testing.T) Open) {
	t.Run("Admission", func(t *testing.T) { testAdmission(t, newBackend(t)) })
	t.Run("Leases", func(t *testing.T) { testLeases(t, newBackend(t)) })
	t.Run("DeletionAcrossRestart", func(t *testing.T) { testDeletionAcrossRestart(t, newBackend(t)) })
	t.Run("TwoServers", func(t *testing.T) { testTwoServers(t, newBackend(t)) })
}

// server is one kapi server with namespaces and leases, serving the
// example's widgets on a store.
type server struct {
	t    *testing.T
	api  *apiserver.Server
	http *httptest.Server
}

func start(t *testing.T, store storage.Interface) *server {
	t.Helper()
	api, err := apiserver.New(apiserver.WithStorage(store), apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents(),
		apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := widgetapi.Register(api); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, api: api, http: httptest.NewServer(api)}
	t.Cleanup(s.stop)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if code, _ := s.do(http.MethodGet, "/readyz", ""); code == http.StatusOK {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatal("the server is not ready after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stop stops the server; the store stays. Stopping twice is harmless.
func (s *server) stop() {
	_ = s.api.Close() // first: it ends the watches that Close below would wait for
	s.http.Close()
}

// do sends a request with a JSON body (or none) and returns the status code
// and the decoded JSON answer.
func (s *server) do(method, path, body string) (int, map[string]any) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.http.URL+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
	}
	resp, err := s.http.Client().Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(data)) > 0 && data[0] == '{' {
		if err := json.Unmarshal(data, &out); err != nil {
			s.t.Fatalf("%s %s: %v\n%s", method, path, err, data)
		}
	}
	return resp.StatusCode, out
}

// must is do, failing the test unless the answer has the code.
func (s *server) must(code int, method, path, body string) map[string]any {
	s.t.Helper()
	got, out := s.do(method, path, body)
	if got != code {
		s.t.Fatalf("%s %s: %d %v; want %d", method, path, got, out, code)
	}
	return out
}

// eventually polls check until it returns "", failing after 30 s with what
// it last returned.
func eventually(t *testing.T, check func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: %s", msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func widget(name string, finalizers ...string) string {
	f, _ := json.Marshal(finalizers)
	return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q,"finalizers":%s},"spec":{"color":"Red"}}`, name, f)
}

func namespace(name string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, name)
}

func widgets(ns string) string { return "/apis/example.com/v1/namespaces/" + ns + "/widgets" }

func field(obj map[string]any, path ...string) any {
	var v any = obj
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// testAdmission: objects go only into namespaces that exist and are not
// terminating, with kube's answers.
func testAdmission(t *testing.T, open Open) {
	s := start(t, open(t))
	st := s.must(http.StatusNotFound, http.MethodPost, widgets("nowhere"), widget("a"))
	if st["message"] != `namespaces "nowhere" not found` || field(st, "details", "kind") != "namespaces" {
		t.Errorf("create into a missing namespace: %v", st)
	}
	ns := s.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", namespace("x"))
	if field(ns, "status", "phase") != "Active" || fmt.Sprint(field(ns, "spec", "finalizers")) != "[kubernetes]" {
		t.Errorf("a new namespace: %v", ns)
	}
	// A namespace's subresource is routed like a collection in it: reading
	// one must leave the collections alone.
	if st := s.must(http.StatusOK, http.MethodGet, "/api/v1/namespaces/x/status", ""); st["kind"] != "Namespace" {
		t.Errorf("GET /api/v1/namespaces/x/status: %v", st)
	}
	s.must(http.StatusMethodNotAllowed, http.MethodGet, "/api/v1/namespaces/x/finalize", "")
	s.must(http.StatusCreated, http.MethodPost, widgets("x"), widget("a", "example.com/hold"))
	if list := s.must(http.StatusOK, http.MethodGet, "/api/v1/namespaces/x/events", ""); list["kind"] != "EventList" {
		t.Errorf("list after reading a namespace's status: %v", list)
	}
	s.must(http.StatusOK, http.MethodDelete, "/api/v1/namespaces/x", "")
	st = s.must(http.StatusForbidden, http.MethodPost, widgets("x"), widget("b"))
	causes, _ := field(st, "details", "causes").([]any)
	if st["message"] != `widgets.example.com "b" is forbidden: unable to create new content in namespace x because it is being terminated` ||
		len(causes) != 1 || field(causes[0].(map[string]any), "reason") != "NamespaceTerminating" {
		t.Errorf("create into a terminating namespace: %v", st)
	}
	// Updates of what is there are allowed: that is how finalizers go.
	s.must(http.StatusOK, http.MethodPatch, widgets("x")+"/a", `{"metadata":{"finalizers":null}}`)
	eventually(t, func() string {
		if code, ns := s.do(http.MethodGet, "/api/v1/namespaces/x", ""); code != http.StatusNotFound {
			return fmt.Sprintf("the namespace is still there: %d %v", code, ns)
		}
		return ""
	})
	st = s.must(http.StatusForbidden, http.MethodDelete, "/api/v1/namespaces/kube-system", "")
	if st["message"] != `namespaces "kube-system" is forbidden: this namespace may not be deleted` {
		t.Errorf("delete kube-system: %v", st)
	}
}

// testLeases: a lease is created, renewed with its resourceVersion,
// refused when stale, listed with a field selector, and its times keep
// their microseconds.
func testLeases(t *testing.T, open Open) {
	s := start(t, open(t))
	const leases = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
	l := s.must(http.StatusCreated, http.MethodPost, leases,
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"leader"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"renewTime":"2026-11-25T11:00:00.123456Z"}}`)
	if field(l, "spec", "renewTime") != "2026-11-25T11:00:00.123456Z" {
		t.Errorf("renewTime: %v, want its microseconds", field(l, "spec", "renewTime"))
	}
	rv := field(l, "metadata", "resourceVersion").(string)
	renew := func(rv, holder string) string {
		return fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"leader","resourceVersion":%q},"spec":{"holderIdentity":%q,"leaseDurationSeconds":15,"renewTime":"2026-11-25T11:00:05.000001Z"}}`, rv, holder)
	}
	s.must(http.StatusOK, http.MethodPut, leases+"/leader", renew(rv, "a"))
	s.must(http.StatusConflict, http.MethodPut, leases+"/leader", renew(rv, "b")) // b read it before a renewed
	list := s.must(http.StatusOK, http.MethodGet, leases+"?fieldSelector=spec.holderIdentity%3Da", "")
	if items, _ := list["items"].([]any); len(items) != 1 {
		t.Errorf("leases held by a: %v", list)
	}
	s.must(http.StatusNotFound, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/nowhere/leases",
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"leader"}}`)
}

// testDeletionAcrossRestart: a namespace is deleted while one of its
// widgets is held by a finalizer; the server stops midway and another
// starts on the same store; once the finalizer goes, the namespace and
// everything in it are gone.
func testDeletionAcrossRestart(t *testing.T, open Open) {
	s := start(t, open(t))
	s.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", namespace("doomed"))
	s.must(http.StatusCreated, http.MethodPost, widgets("doomed"), widget("held", "example.com/hold"))
	for _, name := range []string{"b", "c"} {
		s.must(http.StatusCreated, http.MethodPost, widgets("doomed"), widget(name))
	}
	s.must(http.StatusCreated, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/doomed/leases",
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"}}`)
	ns := s.must(http.StatusOK, http.MethodDelete, "/api/v1/namespaces/doomed", "")
	if field(ns, "status", "phase") != "Terminating" || field(ns, "metadata", "deletionTimestamp") == nil {
		t.Errorf("the answer to DELETE: %v; want it Terminating", ns)
	}
	eventually(t, func() string {
		_, ns := s.do(http.MethodGet, "/api/v1/namespaces/doomed", "")
		conditions := map[string]string{}
		list, _ := field(ns, "status", "conditions").([]any)
		for _, c := range list {
			c := c.(map[string]any)
			conditions[c["type"].(string)] = c["status"].(string) + " " + c["message"].(string)
		}
		if conditions["NamespaceContentRemaining"] != "True Some resources are remaining: widgets.example.com has 1 resource instances" ||
			conditions["NamespaceFinalizersRemaining"] != "True Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances" ||
			conditions["NamespaceDeletionContentFailure"] != "False All content successfully deleted, may be waiting on finalization" {
			return fmt.Sprintf("conditions %v", conditions)
		}
		return ""
	})
	list := s.must(http.StatusOK, http.MethodGet, widgets("doomed"), "")
	if items, _ := list["items"].([]any); len(items) != 1 {
		t.Errorf("widgets left in the terminating namespace: %v; want only the held one", list)
	}

	s.stop()
	s = start(t, open(t))
	s.must(http.StatusOK, http.MethodPatch, widgets("doomed")+"/held", `{"metadata":{"finalizers":null}}`)
	eventually(t, func() string {
		if code, ns := s.do(http.MethodGet, "/api/v1/namespaces/doomed", ""); code != http.StatusNotFound {
			return fmt.Sprintf("the namespace after its content went: %d %v", code, ns)
		}
		return ""
	})
	for _, path := range []string{widgets("doomed"), "/apis/coordination.k8s.io/v1/namespaces/doomed/leases"} {
		list := s.must(http.StatusOK, http.MethodGet, path, "")
		if items, _ := list["items"].([]any); len(items) != 0 {
			t.Errorf("%s after the namespace went: %v", path, list)
		}
	}
}

// testTwoServers: two servers on one store each run the namespace
// controller; namespaces deleted through either are emptied and removed
// once, whichever acts.
func testTwoServers(t *testing.T, open Open) {
	a, b := start(t, open(t)), start(t, open(t))
	for i := range 4 {
		name := fmt.Sprintf("ns%d", i)
		a.must(http.StatusCreated, http.MethodPost, "/api/v1/namespaces", namespace(name))
		for j := range 5 {
			b.must(http.StatusCreated, http.MethodPost, widgets(name), widget(fmt.Sprintf("w%d", j)))
		}
	}
	for i := range 4 {
		s := []*server{a, b}[i%2]
		s.must(http.StatusOK, http.MethodDelete, fmt.Sprintf("/api/v1/namespaces/ns%d", i), "")
	}
	for _, s := range []*server{a, b} {
		eventually(t, func() string {
			list := s.must(http.StatusOK, http.MethodGet, "/api/v1/namespaces", "")
			var names []string
			for _, it := range list["items"].([]any) {
				names = append(names, field(it.(map[string]any), "metadata", "name").(string))
			}
			if strings.Join(names, " ") != "default kube-node-lease kube-public kube-system" {
				return fmt.Sprintf("namespaces %v", names)
			}
			if items, _ := s.must(http.StatusOK, http.MethodGet, "/apis/example.com/v1/widgets", "")["items"].([]any); len(items) != 0 {
				return fmt.Sprintf("%d widgets left", len(items))
			}
			return ""
		})
	}
}
