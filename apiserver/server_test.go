package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// Paths of the example resources.
const (
	groupVersionPath = "/apis/example.com/v1"
	allWidgets       = groupVersionPath + "/widgets"
	widgetClasses    = groupVersionPath + "/widgetclasses"
)

// widgetsIn is the collection of widgets in namespace ns.
func widgetsIn(ns string) string { return groupVersionPath + "/namespaces/" + ns + "/widgets" }

// widgetPath is the item path of one widget.
func widgetPath(ns, name string) string { return widgetsIn(ns) + "/" + name }

// deadline bounds every wait on the server; generous because the machine is
// shared. Tests never assert how long anything took.
const deadline = 30 * time.Second

// apiClient drives a kapi server over HTTP as a Kubernetes client would.
type apiClient struct {
	t    testing.TB
	base string
	hc   *http.Client
}

// response is a fully read HTTP response.
type response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// newTestServer starts the example API (widgets and widget classes) on
// loopback; it stops when the test ends.
func newTestServer(t testing.TB) (*apiservertest.Server, *apiClient) {
	t.Helper()
	srv := apiservertest.New(t, widgetapi.Register)
	return srv, &apiClient{t: t, base: srv.URL, hc: srv.Client()}
}

// request builds a request. body is nil, a string, a []byte or a value to
// marshal as JSON; header holds key, value pairs. A body gets Content-Type
// application/json unless header says otherwise.
func (c *apiClient) request(ctx context.Context, method, path string, body any, header ...string) *http.Request {
	c.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatalf("marshal request body: %v", err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		c.t.Fatalf("new request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// do sends a request and reads the whole response.
func (c *apiClient) do(method, path string, body any, header ...string) *response {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	resp, err := c.hc.Do(c.request(ctx, method, path, body, header...))
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return &response{Code: resp.StatusCode, Header: resp.Header, Body: data}
}

func (c *apiClient) get(path string) *response { c.t.Helper(); return c.do(http.MethodGet, path, nil) }

// mustCode fails the test unless the response has the code.
func (r *response) mustCode(t testing.TB, code int) *response {
	t.Helper()
	if r.Code != code {
		t.Fatalf("got HTTP %d, want %d; body: %s", r.Code, code, r.Body)
	}
	return r
}

// into decodes the body.
func (r *response) into(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, r.Body, err)
	}
}

// widget decodes the body as a Widget.
func (r *response) widget(t testing.TB) *widgetapi.Widget {
	t.Helper()
	var w widgetapi.Widget
	r.into(t, &w)
	return &w
}

// widgetList is a WidgetList on the wire.
type widgetList struct {
	kapi.TypeMeta `json:",inline"`
	Metadata      kapi.ListMeta      `json:"metadata"`
	Items         []widgetapi.Widget `json:"items"`
}

func (l *widgetList) names() []string {
	names := make([]string, len(l.Items))
	for i, w := range l.Items {
		names[i] = w.Name
	}
	return names
}

// list lists widgets at path and checks the list's envelope.
func (c *apiClient) list(path string) *widgetList {
	c.t.Helper()
	r := c.get(path).mustCode(c.t, http.StatusOK)
	var l widgetList
	r.into(c.t, &l)
	if l.Kind != "WidgetList" || l.APIVersion != "example.com/v1" {
		c.t.Fatalf("list %s: kind %q apiVersion %q, want WidgetList example.com/v1", path, l.Kind, l.APIVersion)
	}
	mustRevision(c.t, "list resourceVersion", l.Metadata.ResourceVersion)
	return &l
}

// failure checks that the response is a Status of a failure with the given
// code and reason, as every error response must be, and returns it.
func (r *response) failure(t testing.TB, code int, reason kapi.StatusReason) kapi.Status {
	t.Helper()
	if r.Code != code {
		t.Errorf("got HTTP %d, want %d; body: %.600s", r.Code, code, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var st kapi.Status
	if err := json.Unmarshal(r.Body, &st); err != nil {
		t.Fatalf("the body is not a JSON Status: %v; body: %s", err, r.Body)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" {
		t.Fatalf("kind %q apiVersion %q, want Status v1", st.Kind, st.APIVersion)
	}
	if st.Status != kapi.StatusFailure {
		t.Errorf("status %q, want Failure", st.Status)
	}
	if int(st.Code) != r.Code {
		t.Errorf("Status code %d, HTTP code %d", st.Code, r.Code)
	}
	if st.Reason == "" {
		t.Errorf("Status has no reason; body: %s", r.Body)
	}
	if reason != "" && st.Reason != reason {
		t.Errorf("reason %q, want %q; message: %s", st.Reason, reason, st.Message)
	}
	return st
}

// mustRevision fails unless rv is a positive decimal resourceVersion.
func mustRevision(t testing.TB, what, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("%s %q is not a positive integer", what, rv)
	}
	return n
}

// newWidget is a valid Red widget.
func newWidget(ns, name string) *widgetapi.Widget {
	return &widgetapi.Widget{
		TypeMeta:   kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"},
		ObjectMeta: kapi.ObjectMeta{Name: name, Namespace: ns},
		Spec:       widgetapi.WidgetSpec{Color: "Red"},
	}
}

// create POSTs a widget and returns what the server stored.
func (c *apiClient) create(w *widgetapi.Widget) *widgetapi.Widget {
	c.t.Helper()
	return c.do(http.MethodPost, widgetsIn(w.Namespace), w).mustCode(c.t, http.StatusCreated).widget(c.t)
}

// update PUTs a widget and returns what the server stored.
func (c *apiClient) update(w *widgetapi.Widget) *widgetapi.Widget {
	c.t.Helper()
	return c.do(http.MethodPut, widgetPath(w.Namespace, w.Name), w).mustCode(c.t, http.StatusOK).widget(c.t)
}

// read GETs a widget.
func (c *apiClient) read(ns, name string) *widgetapi.Widget {
	c.t.Helper()
	return c.get(widgetPath(ns, name)).mustCode(c.t, http.StatusOK).widget(c.t)
}

func ptr[T any](v T) *T { return &v }

// watchEvent is one event of a watch stream.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (e watchEvent) widget(t testing.TB) *widgetapi.Widget {
	t.Helper()
	var w widgetapi.Widget
	if err := json.Unmarshal(e.Object, &w); err != nil {
		t.Fatalf("decode %s event object: %v", e.Type, err)
	}
	return &w
}

func (e watchEvent) String() string {
	var o struct {
		Metadata kapi.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(e.Object, &o)
	return fmt.Sprintf("%s %s@%s", e.Type, o.Metadata.Name, o.Metadata.ResourceVersion)
}

// watchStream reads a watch response line by line.
type watchStream struct {
	t      testing.TB
	header http.Header
	events chan watchEvent
	done   chan struct{} // closed when the stream has ended
	err    error         // why it ended; valid after done
	cancel context.CancelFunc
}

// watch opens a watch (path includes the query) and checks it began;
// header holds key, value pairs.
func (c *apiClient) watch(path string, header ...string) *watchStream {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.hc.Do(c.request(ctx, http.MethodGet, path, nil, header...))
	if err != nil {
		cancel()
		c.t.Fatalf("watch %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		c.t.Fatalf("watch %s: HTTP %d: %s", path, resp.StatusCode, data)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		c.t.Errorf("watch %s: Content-Type %q, want application/json", path, ct)
	}
	ws := &watchStream{t: c.t, header: resp.Header, events: make(chan watchEvent), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(ws.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var ev watchEvent
			if err := json.Unmarshal(line, &ev); err != nil {
				ws.err = fmt.Errorf("undecodable watch event %q: %w", line, err)
				return
			}
			select {
			case ws.events <- ev:
			case <-ctx.Done():
				return
			}
		}
		ws.err = sc.Err()
	}()
	c.t.Cleanup(ws.stop)
	return ws
}

// stop closes the stream and waits for its reader.
func (ws *watchStream) stop() {
	ws.cancel()
	<-ws.done
}

// next is the next event; the test fails if none comes before the deadline
// or the stream ends.
func (ws *watchStream) next() watchEvent {
	ws.t.Helper()
	select {
	case ev := <-ws.events:
		return ev
	case <-ws.done:
		ws.t.Fatalf("the watch ended (%v), want another event", ws.err)
	case <-time.After(deadline):
		ws.t.Fatalf("no watch event within %v", deadline)
	}
	panic("unreachable")
}

// untilEnd reads the events left until the server ends the stream.
func (ws *watchStream) untilEnd() []watchEvent {
	ws.t.Helper()
	var evs []watchEvent
	timeout := time.After(2 * deadline)
	for {
		select {
		case ev := <-ws.events:
			evs = append(evs, ev)
		case <-ws.done:
			if ws.err != nil && !errors.Is(ws.err, context.Canceled) {
				ws.t.Errorf("the watch ended with %v", ws.err)
			}
			return evs
		case <-timeout:
			ws.t.Fatalf("the watch did not end within %v (events so far: %v)", 2*deadline, evs)
		}
	}
}

// expect reads len(want) events and checks their types and object names.
func (ws *watchStream) expect(want ...string) []watchEvent {
	ws.t.Helper()
	var got []watchEvent
	for range want {
		got = append(got, ws.next())
	}
	var gotS []string
	for _, ev := range got {
		var o struct {
			Metadata kapi.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(ev.Object, &o)
		gotS = append(gotS, ev.Type+" "+o.Metadata.Name)
	}
	if !slices.Equal(gotS, want) {
		ws.t.Fatalf("events %q, want %q", gotS, want)
	}
	return got
}

func TestHealthAndVersion(t *testing.T) {
	_, c := newTestServer(t)
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		t.Run(p, func(t *testing.T) {
			r := c.get(p).mustCode(t, http.StatusOK)
			if string(r.Body) != "ok" {
				t.Errorf("body %q, want ok", r.Body)
			}
		})
	}
	t.Run("/version", func(t *testing.T) {
		r := c.get("/version").mustCode(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		var v map[string]string
		r.into(t, &v)
		for _, k := range []string{"major", "minor", "gitVersion", "goVersion", "platform"} {
			if v[k] == "" {
				t.Errorf("/version has no %s: %s", k, r.Body)
			}
		}
		if !strings.HasPrefix(v["gitVersion"], "v"+v["major"]+"."+v["minor"]) {
			t.Errorf("gitVersion %q does not match major %q minor %q", v["gitVersion"], v["major"], v["minor"])
		}
	})
}

func TestDiscoveryLegacy(t *testing.T) {
	_, c := newTestServer(t)

	t.Run("/api", func(t *testing.T) {
		var doc struct {
			Kind     string   `json:"kind"`
			Versions []string `json:"versions"`
		}
		c.get("/api").mustCode(t, http.StatusOK).into(t, &doc)
		if doc.Kind != "APIVersions" || doc.Versions == nil || len(doc.Versions) != 0 {
			t.Errorf("/api = %+v, want APIVersions with no versions (no core resources are registered)", doc)
		}
	})

	type groupVersion struct {
		GroupVersion string `json:"groupVersion"`
		Version      string `json:"version"`
	}
	type apiGroup struct {
		Kind             string         `json:"kind"`
		APIVersion       string         `json:"apiVersion"`
		Name             string         `json:"name"`
		Versions         []groupVersion `json:"versions"`
		PreferredVersion groupVersion   `json:"preferredVersion"`
	}
	wantVersion := groupVersion{"example.com/v1", "v1"}
	// v1 is preferred: the example also serves the older v1beta1.
	wantVersions := []groupVersion{wantVersion, {"example.com/v1beta1", "v1beta1"}}

	t.Run("/apis", func(t *testing.T) {
		var doc struct {
			Kind       string     `json:"kind"`
			APIVersion string     `json:"apiVersion"`
			Groups     []apiGroup `json:"groups"`
		}
		r := c.get("/apis").mustCode(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		r.into(t, &doc)
		if doc.Kind != "APIGroupList" || doc.APIVersion != "v1" || len(doc.Groups) != 1 {
			t.Fatalf("/apis = %s", r.Body)
		}
		g := doc.Groups[0]
		if g.Name != "example.com" || !slices.Equal(g.Versions, wantVersions) || g.PreferredVersion != wantVersion {
			t.Errorf("group %+v", g)
		}
	})

	t.Run("/apis/example.com", func(t *testing.T) {
		var g apiGroup
		c.get("/apis/example.com").mustCode(t, http.StatusOK).into(t, &g)
		if g.Kind != "APIGroup" || g.APIVersion != "v1" || g.Name != "example.com" ||
			!slices.Equal(g.Versions, wantVersions) || g.PreferredVersion != wantVersion {
			t.Errorf("/apis/example.com = %+v", g)
		}
	})

	t.Run("/apis/example.com/v1", func(t *testing.T) {
		type apiResource struct {
			Name         string   `json:"name"`
			SingularName string   `json:"singularName"`
			Namespaced   bool     `json:"namespaced"`
			Kind         string   `json:"kind"`
			Verbs        []string `json:"verbs"`
			ShortNames   []string `json:"shortNames"`
		}
		var doc struct {
			Kind         string        `json:"kind"`
			APIVersion   string        `json:"apiVersion"`
			GroupVersion string        `json:"groupVersion"`
			Resources    []apiResource `json:"resources"`
		}
		c.get(groupVersionPath).mustCode(t, http.StatusOK).into(t, &doc)
		if doc.Kind != "APIResourceList" || doc.APIVersion != "v1" || doc.GroupVersion != "example.com/v1" {
			t.Errorf("envelope %q %q %q", doc.Kind, doc.APIVersion, doc.GroupVersion)
		}
		byName := map[string]apiResource{}
		for _, r := range doc.Resources {
			byName[r.Name] = r
		}
		var names []string
		for n := range byName {
			names = append(names, n)
		}
		slices.Sort(names)
		if want := []string{"widgetclasses", "widgets", "widgets/scale", "widgets/status"}; !slices.Equal(names, want) {
			t.Fatalf("resources %q, want %q", names, want)
		}
		allVerbs := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
		w := byName["widgets"]
		if !w.Namespaced || w.Kind != "Widget" || w.SingularName != "widget" || !slices.Equal(w.ShortNames, []string{"wd"}) || !slices.Equal(sorted(w.Verbs), allVerbs) {
			t.Errorf("widgets: %+v", w)
		}
		ws := byName["widgets/status"]
		if !ws.Namespaced || ws.Kind != "Widget" || !slices.Equal(sorted(ws.Verbs), []string{"get", "patch", "update"}) {
			t.Errorf("widgets/status: %+v", ws)
		}
		wc := byName["widgetclasses"]
		if wc.Namespaced || wc.Kind != "WidgetClass" || wc.SingularName != "widgetclass" || !slices.Equal(sorted(wc.Verbs), allVerbs) {
			t.Errorf("widgetclasses: %+v", wc)
		}
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestDiscoveryAggregated(t *testing.T) {
	_, c := newTestServer(t)
	// What kubectl sends.
	const accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
	const wantType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

	type gvk struct{ Group, Version, Kind string }
	type subresource struct {
		Subresource  string   `json:"subresource"`
		ResponseKind gvk      `json:"responseKind"`
		Verbs        []string `json:"verbs"`
	}
	type resource struct {
		Resource         string        `json:"resource"`
		ResponseKind     gvk           `json:"responseKind"`
		Scope            string        `json:"scope"`
		SingularResource string        `json:"singularResource"`
		Verbs            []string      `json:"verbs"`
		ShortNames       []string      `json:"shortNames"`
		Subresources     []subresource `json:"subresources"`
	}
	type discovery struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Items      []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Versions []struct {
				Version   string     `json:"version"`
				Resources []resource `json:"resources"`
				Freshness string     `json:"freshness"`
			} `json:"versions"`
		} `json:"items"`
	}

	t.Run("v2beta1 only", func(t *testing.T) {
		r := c.do(http.MethodGet, "/apis", nil, "Accept", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList").mustCode(t, http.StatusOK)
		if ct, want := r.Header.Get("Content-Type"), "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"; ct != want {
			t.Errorf("Content-Type %q, want %q", ct, want)
		}
	})
	t.Run("plain JSON is the legacy document", func(t *testing.T) {
		r := c.do(http.MethodGet, "/apis", nil, "Accept", "application/json").mustCode(t, http.StatusOK)
		var d struct{ Kind string }
		r.into(t, &d)
		if d.Kind != "APIGroupList" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("kind %q Content-Type %q", d.Kind, r.Header.Get("Content-Type"))
		}
	})
	for _, tc := range []struct {
		path   string
		groups int
	}{{"/api", 0}, {"/apis", 1}} {
		t.Run(tc.path, func(t *testing.T) {
			r := c.do(http.MethodGet, tc.path, nil, "Accept", accept).mustCode(t, http.StatusOK)
			if ct := r.Header.Get("Content-Type"); ct != wantType {
				t.Errorf("Content-Type %q, want %q", ct, wantType)
			}
			var d discovery
			r.into(t, &d)
			if d.Kind != "APIGroupDiscoveryList" || d.APIVersion != "apidiscovery.k8s.io/v2" || len(d.Items) != tc.groups {
				t.Fatalf("%s = %s", tc.path, r.Body)
			}
			if tc.groups == 0 {
				return
			}
			g := d.Items[0]
			if g.Metadata.Name != "example.com" || len(g.Versions) != 2 || g.Versions[0].Version != "v1" || g.Versions[1].Version != "v1beta1" {
				t.Fatalf("group %s", r.Body)
			}
			byName := map[string]resource{}
			for _, res := range g.Versions[0].Resources {
				byName[res.Resource] = res
			}
			allVerbs := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
			w, ok := byName["widgets"]
			if !ok || w.Scope != "Namespaced" || w.SingularResource != "widget" || w.ResponseKind != (gvk{"example.com", "v1", "Widget"}) ||
				!slices.Equal(w.ShortNames, []string{"wd"}) || !slices.Equal(sorted(w.Verbs), allVerbs) {
				t.Errorf("widgets: %+v", w)
			}
			if len(w.Subresources) != 2 || w.Subresources[0].Subresource != "status" || w.Subresources[1].Subresource != "scale" ||
				w.Subresources[1].ResponseKind != (gvk{"autoscaling", "v1", "Scale"}) ||
				!slices.Equal(sorted(w.Subresources[0].Verbs), []string{"get", "patch", "update"}) {
				t.Errorf("widgets subresources: %+v (want status and scale)", w.Subresources)
			}
			wc, ok := byName["widgetclasses"]
			if !ok || wc.Scope != "Cluster" || wc.SingularResource != "widgetclass" || len(wc.Subresources) != 0 || !slices.Equal(sorted(wc.Verbs), allVerbs) {
				t.Errorf("widgetclasses: %+v", wc)
			}
			if len(byName) != 2 {
				t.Errorf("resources %v, want widgets and widgetclasses", byName)
			}
		})
	}
}

func TestOpenAPIV3(t *testing.T) {
	_, c := newTestServer(t)
	var root struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	c.get("/openapi/v3").mustCode(t, http.StatusOK).into(t, &root)
	p, ok := root.Paths["apis/example.com/v1"]
	if !ok {
		t.Fatalf("/openapi/v3 paths %v lack apis/example.com/v1", root.Paths)
	}
	base, hash, ok := strings.Cut(p.ServerRelativeURL, "?hash=")
	if !ok || base != "/openapi/v3/apis/example.com/v1" || hash == "" {
		t.Fatalf("serverRelativeURL %q, want /openapi/v3/apis/example.com/v1?hash=...", p.ServerRelativeURL)
	}
	r := c.get(p.ServerRelativeURL).mustCode(t, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	r.into(t, &doc)
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q, want 3.x", doc.OpenAPI)
	}
	item := doc.Paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]
	patch := string(item["patch"])
	if !strings.Contains(patch, "x-kubernetes-group-version-kind") || !strings.Contains(patch, "fieldValidation") {
		t.Errorf("the PATCH operation of a widget lacks x-kubernetes-group-version-kind or fieldValidation: %.300s", patch)
	}
	// The same document again, byte for byte: the hash names it.
	if again := c.get(p.ServerRelativeURL).mustCode(t, http.StatusOK); !bytes.Equal(again.Body, r.Body) {
		t.Error("the OpenAPI document changed between two GETs")
	}
}

// gadget is a small type for registration tests.
type gadget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		Size int `json:"size"`
	} `json:"spec"`
}

func TestRegisterErrors(t *testing.T) {
	valid := apiserver.Resource[gadget]{Group: "toys.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"}
	cases := []struct {
		name  string
		setup func(*apiserver.Server) // runs before the registration under test
		res   func(r *apiserver.Resource[gadget])
	}{
		{name: "empty plural", res: func(r *apiserver.Resource[gadget]) { r.Plural = "" }},
		{name: "upper-case version", res: func(r *apiserver.Resource[gadget]) { r.Version = "V1" }},
		{name: "version with a dot", res: func(r *apiserver.Resource[gadget]) { r.Version = "v1.0" }},
		{name: "empty version", res: func(r *apiserver.Resource[gadget]) { r.Version = "" }},
		{name: "empty kind", res: func(r *apiserver.Resource[gadget]) { r.Kind = "" }},
		{name: "bad group", res: func(r *apiserver.Resource[gadget]) { r.Group = "Toys_Example" }},
		{name: "status without a status field", res: func(r *apiserver.Resource[gadget]) { r.Status = true }},
		{
			name:  "duplicate plural",
			setup: func(s *apiserver.Server) { mustRegister(t, s, valid) },
			res:   func(r *apiserver.Resource[gadget]) { r.Kind = "OtherGadget" },
		},
		{
			name:  "duplicate kind",
			setup: func(s *apiserver.Server) { mustRegister(t, s, valid) },
			res:   func(r *apiserver.Resource[gadget]) { r.Plural = "othergadgets" },
		},
		{
			name: "after serving started",
			setup: func(s *apiserver.Server) {
				s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := apiserver.New()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if tc.setup != nil {
				tc.setup(s)
			}
			r := valid
			if tc.res != nil {
				tc.res(&r)
			}
			err = func() (err error) {
				defer func() {
					if p := recover(); p != nil {
						err = nil
						t.Errorf("Register panicked: %v", p)
					}
				}()
				return apiserver.Register(s, r)
			}()
			if err == nil {
				t.Errorf("Register(%+v) succeeded, want an error", r)
			} else {
				t.Logf("error (as expected): %v", err)
			}
		})
	}

	t.Run("status on the example widgets is fine", func(t *testing.T) {
		s, err := apiserver.New()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := widgetapi.Register(s); err != nil {
			t.Fatal(err)
		}
	})
}

func mustRegister(t testing.TB, s *apiserver.Server, r apiserver.Resource[gadget]) {
	t.Helper()
	if err := apiserver.Register(s, r); err != nil {
		t.Fatal(err)
	}
}

func TestNewOptionErrors(t *testing.T) {
	for name, opt := range map[string]apiserver.Option{
		"zero body limit":       apiserver.WithMaxRequestBodyBytes(0),
		"negative bookmark":     apiserver.WithBookmarkInterval(-time.Second),
		"key prefix without /":  apiserver.WithKeyPrefix("kapi"),
		"empty key prefix":      apiserver.WithKeyPrefix(""),
		"key prefix without /$": apiserver.WithKeyPrefix("/kapi"),
		"zero watch timeout":    apiserver.WithMinWatchTimeout(0),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := apiserver.New(opt)
			if err == nil {
				s.Close()
				t.Fatal("New succeeded, want an error")
			}
		})
	}
}

// TestConcurrentReadModifyWrite has writers race on one widget through PUT
// with the resourceVersion they read; a 409 makes them read again. No
// increment may be lost.
func TestConcurrentReadModifyWrite(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "counter"))

	const writers, increments = 8, 50
	var wg sync.WaitGroup
	var conflicts sync.Map
	errs := make(chan error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- increment(c, g, increments, &conflicts)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	w := c.read("default", "counter")
	if w.Spec.Size != writers*increments {
		t.Errorf("spec.size = %d, want %d", w.Spec.Size, writers*increments)
	}
	if w.Generation != 1+writers*increments {
		t.Errorf("generation = %d, want %d (one per spec change)", w.Generation, 1+writers*increments)
	}
	n := 0
	conflicts.Range(func(_, _ any) bool { n++; return true })
	t.Logf("%d writers saw at least one 409", n)
}

// increment adds 1 to spec.size n times, retrying on 409. It must not call
// t.Fatal: it runs on its own goroutine.
func increment(c *apiClient, g, n int, conflicts *sync.Map) error {
	path := widgetPath("default", "counter")
	roundTrip := func(method string, body []byte) (int, []byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.hc.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, data, err
	}
	for i := 0; i < n; {
		code, data, err := roundTrip(http.MethodGet, nil)
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("writer %d: GET: %d %s %v", g, code, data, err)
		}
		var w widgetapi.Widget
		if err := json.Unmarshal(data, &w); err != nil {
			return err
		}
		w.Spec.Size++
		body, _ := json.Marshal(&w)
		code, data, err = roundTrip(http.MethodPut, body)
		switch {
		case err != nil:
			return fmt.Errorf("writer %d: PUT: %v", g, err)
		case code == http.StatusConflict:
			conflicts.Store(g, true)
			continue
		case code != http.StatusOK:
			return fmt.Errorf("writer %d: PUT: %d %s", g, code, data)
		}
		i++
	}
	return nil
}

// TestCoreGroup serves a resource of the empty group under /api/v1, as
// Kubernetes serves pods.
func TestCoreGroup(t *testing.T) {
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[gadget]{Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true})
	})
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}

	var created struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata"`
	}
	c.do(http.MethodPost, "/api/v1/namespaces/default/gadgets", `{"apiVersion":"v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":1}}`).
		mustCode(t, http.StatusCreated).into(t, &created)
	if created.APIVersion != "v1" || created.Kind != "Gadget" || created.UID == "" {
		t.Errorf("created %+v", created)
	}
	c.get("/api/v1/namespaces/default/gadgets/g").mustCode(t, http.StatusOK)
	var l struct {
		Kind, APIVersion string
	}
	c.get("/api/v1/gadgets").mustCode(t, http.StatusOK).into(t, &l)
	if l.Kind != "GadgetList" || l.APIVersion != "v1" {
		t.Errorf("list kind %q apiVersion %q", l.Kind, l.APIVersion)
	}
	st := c.get("/api/v1/namespaces/default/gadgets/nope").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	if st.Message != `gadgets "nope" not found` || st.Details == nil || st.Details.Kind != "gadgets" || st.Details.Group != "" {
		t.Errorf("404 %+v", st)
	}

	var versions struct {
		Kind     string   `json:"kind"`
		Versions []string `json:"versions"`
	}
	c.get("/api").mustCode(t, http.StatusOK).into(t, &versions)
	if versions.Kind != "APIVersions" || !slices.Equal(versions.Versions, []string{"v1"}) {
		t.Errorf("/api = %+v", versions)
	}
	var groups struct {
		Groups []json.RawMessage `json:"groups"`
	}
	c.get("/apis").mustCode(t, http.StatusOK).into(t, &groups)
	if len(groups.Groups) != 0 {
		t.Errorf("/apis lists the core group: %s", groups.Groups)
	}
	var resources struct {
		Kind         string `json:"kind"`
		GroupVersion string `json:"groupVersion"`
		Resources    []struct {
			Name string `json:"name"`
		} `json:"resources"`
	}
	c.get("/api/v1").mustCode(t, http.StatusOK).into(t, &resources)
	if resources.Kind != "APIResourceList" || resources.GroupVersion != "v1" || len(resources.Resources) != 1 || resources.Resources[0].Name != "gadgets" {
		t.Errorf("/api/v1 = %+v", resources)
	}
}
