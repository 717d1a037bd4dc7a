package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Regression tests of bugs found in review, one test per bug.

// send is do for goroutines other than the test's own: it returns what went
// wrong rather than failing the test. A body gets the given Content-Type.
func (c *apiClient) send(method, path, body, contentType string) (*response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{Code: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// A store shared with other data, as WithKeyPrefix allows, moves its
// revision on writes the server does not serve; kube-apiserver's watch cache
// follows etcd's revision whatever the key, so reads and watches go on.
func TestSharedStoreWritesOutsideThePrefix(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store), apiserver.WithKeyPrefix("/kapi/"))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}

	a := c.create(newWidget("default", "a")) // serving has started
	for _, key := range []string{"/other/x", "/other/y"} {
		if _, err := store.Create(context.Background(), key, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	b := c.create(newWidget("default", "b"))
	if _, err := store.Create(context.Background(), "/other/z", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}

	if got := c.read("default", "a"); got.UID != a.UID || got.ResourceVersion != a.ResourceVersion {
		t.Errorf("GET a = uid %s rv %s, want %s %s", got.UID, got.ResourceVersion, a.UID, a.ResourceVersion)
	}
	if got := c.read("default", "b"); got.UID != b.UID || got.ResourceVersion != b.ResourceVersion {
		t.Errorf("GET b = uid %s rv %s, want %s %s", got.UID, got.ResourceVersion, b.UID, b.ResourceVersion)
	}
	if got := c.list(widgetsIn("default")).names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("LIST = %q, want a b", got)
	}
	// Without a resourceVersion the watch starts from the latest revision.
	ws := c.watch(widgetsIn("default") + "?watch=true")
	ws.expect("ADDED a", "ADDED b")
}

// kube-apiserver's cache_watcher counts events a selector hides as progress:
// they never postpone a bookmark, or a selector on a busy resource would get
// none and its informer would relist on every reconnect.
func TestSelectorWatchGetsBookmarks(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithBookmarkInterval(100*time.Millisecond))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	busy := c.create(newWidget("default", "busy"))
	ws := c.watch(widgetsIn("default") + "?watch=true&allowWatchBookmarks=true&labelSelector=app%3Dnone&resourceVersion=" + busy.ResourceVersion)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for size := 1; ; size++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			r, err := c.send(http.MethodPatch, widgetPath("default", "busy"), fmt.Sprintf(`{"spec":{"size":%d}}`, size), "application/merge-patch+json")
			if err != nil || r.Code != http.StatusOK {
				t.Errorf("patch of the busy widget: %v %+v", err, r)
				return
			}
		}
	})
	t.Cleanup(func() { close(stop); wg.Wait() })

	timeout := time.After(deadline)
	for {
		select {
		case ev := <-ws.events:
			if ev.Type != "BOOKMARK" {
				t.Fatalf("event %s through a selector that matches nothing", ev)
			}
			var b bookmark
			if err := json.Unmarshal(ev.Object, &b); err != nil {
				t.Fatalf("bookmark %s: %v", ev.Object, err)
			}
			mustRevision(t, "bookmark resourceVersion", b.Metadata.ResourceVersion)
			return
		case <-ws.done:
			t.Fatalf("the watch ended (%v) before a bookmark", ws.err)
		case <-timeout:
			t.Fatalf("no bookmark within %v while widgets the selector hides kept changing", deadline)
		}
	}
}

// slowCreates is a store whose creates take a while: requests that race to
// create an object all find it absent before the first create lands.
type slowCreates struct{ *memory.Store }

func (s slowCreates) Create(ctx context.Context, key string, value []byte) (int64, error) {
	time.Sleep(20 * time.Millisecond)
	return s.Store.Create(ctx, key, value)
}

// Server-side apply creates an absent object; when concurrent applies race
// to create it, kube-apiserver applies the losers to the winner's object
// (200), never 409 AlreadyExists.
func TestConcurrentApplyCreates(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(slowCreates{store}))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	const rounds, appliers = 10, 8
	var names []string
	for round := range rounds {
		name := fmt.Sprintf("applied-%02d", round)
		names = append(names, name)
		doc := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: " + name + "\nspec:\n  color: Blue\n"
		start := make(chan struct{})
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		for range appliers {
			wg.Go(func() {
				<-start
				r, err := c.send(http.MethodPatch, widgetPath("default", name)+"?fieldManager=test", doc, "application/apply-patch+yaml")
				if err != nil {
					t.Errorf("apply %s: %v", name, err)
					return
				}
				mu.Lock()
				codes[r.Code]++
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		if codes[http.StatusCreated] != 1 || codes[http.StatusOK] != appliers-1 {
			t.Errorf("%s: HTTP codes %v, want one 201 and %d 200", name, codes, appliers-1)
		}
	}
	if got := c.list(widgetsIn("default")).names(); !slices.Equal(got, names) {
		t.Errorf("LIST = %q, want each applied widget once: %q", got, names)
	}
}

// Close may be called more than once, as http.Server.Close, also on a
// server that never served a request.
func TestCloseTwiceWithoutServing(t *testing.T) {
	s, err := apiserver.New()
	if err != nil {
		t.Fatal(err)
	}
	mustRegister(t, s, apiserver.Resource[gadget]{Group: "toys.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"})
	done := make(chan [2]error, 1)
	go func() {
		first := s.Close()
		done <- [2]error{first, s.Close()}
	}()
	select {
	case errs := <-done:
		if errs[0] != nil || errs[1] != nil {
			t.Errorf("Close: %v, then %v", errs[0], errs[1])
		}
	case <-time.After(deadline):
		t.Fatalf("Close twice did not return within %v", deadline)
	}
}

// kube-apiserver lists each group once, with all its versions by priority
// (v2 before v1), however the versions were registered.
func TestDiscoveryInterleavedGroups(t *testing.T) {
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		for _, gvk := range [][3]string{{"a.example.com", "v1", "Gadget"}, {"b.example.com", "v1", "Gadget"}, {"a.example.com", "v2", "Gizmo"}} {
			r := apiserver.Resource[gadget]{Group: gvk[0], Version: gvk[1], Kind: gvk[2], Plural: strings.ToLower(gvk[2]) + "s"}
			if err := apiserver.Register(s, r); err != nil {
				return err
			}
		}
		return nil
	})
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}

	type apiGroup struct {
		Name     string `json:"name"`
		Versions []struct {
			GroupVersion string `json:"groupVersion"`
		} `json:"versions"`
	}
	versionsOf := func(g apiGroup) []string {
		var gvs []string
		for _, v := range g.Versions {
			gvs = append(gvs, v.GroupVersion)
		}
		return gvs
	}
	wantA := []string{"a.example.com/v2", "a.example.com/v1"}

	t.Run("/apis", func(t *testing.T) {
		var doc struct {
			Groups []apiGroup `json:"groups"`
		}
		c.get("/apis").mustCode(t, http.StatusOK).into(t, &doc)
		if len(doc.Groups) != 2 || doc.Groups[0].Name != "a.example.com" || doc.Groups[1].Name != "b.example.com" {
			t.Fatalf("groups %+v, want a.example.com and b.example.com once each", doc.Groups)
		}
		if got := versionsOf(doc.Groups[0]); !slices.Equal(got, wantA) {
			t.Errorf("a.example.com versions %q, want %q", got, wantA)
		}
	})
	t.Run("/apis/a.example.com", func(t *testing.T) {
		var g apiGroup
		c.get("/apis/a.example.com").mustCode(t, http.StatusOK).into(t, &g)
		if got := versionsOf(g); !slices.Equal(got, wantA) {
			t.Errorf("versions %q, want %q", got, wantA)
		}
	})
	t.Run("aggregated /apis", func(t *testing.T) {
		var doc struct {
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
				Versions []struct {
					Version string `json:"version"`
				} `json:"versions"`
			} `json:"items"`
		}
		c.do(http.MethodGet, "/apis", nil, "Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").
			mustCode(t, http.StatusOK).into(t, &doc)
		if len(doc.Items) != 2 || doc.Items[0].Metadata.Name != "a.example.com" || doc.Items[1].Metadata.Name != "b.example.com" {
			t.Fatalf("items %+v, want a.example.com and b.example.com once each", doc.Items)
		}
		if n := len(doc.Items[0].Versions); n != 2 {
			t.Errorf("a.example.com has %d versions, want 2", n)
		}
	})
}

// Types the handlers cannot serve.
type (
	// Handlers copy objects shallowly: copies would share the metadata.
	pointerMetadata struct {
		kapi.TypeMeta    `json:",inline"`
		*kapi.ObjectMeta `json:"metadata,omitempty"`
	}
	// kind and apiVersion would not be at the top of the object.
	typeMetaNotInline struct {
		kapi.TypeMeta   `json:"typeMeta"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
	}
	// Neither JSON nor OpenAPI can describe a channel.
	chanField struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Spec            struct {
			Events chan int `json:"events"`
		} `json:"spec"`
	}
)

// A type the handlers cannot serve is refused by Register, with an error,
// rather than failing or panicking at its first request.
func TestRegisterRejectsPointerMetadata(t *testing.T) {
	for name, register := range map[string]func(*apiserver.Server) error{
		"pointer metadata": func(s *apiserver.Server) error {
			return apiserver.Register(s, apiserver.Resource[pointerMetadata]{Group: "toys.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"})
		},
		"TypeMeta not inline": func(s *apiserver.Server) error {
			return apiserver.Register(s, apiserver.Resource[typeMetaNotInline]{Group: "toys.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"})
		},
		"chan field": func(s *apiserver.Server) error {
			return apiserver.Register(s, apiserver.Resource[chanField]{Group: "toys.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"})
		},
		"incomplete protobuf tags": func(s *apiserver.Server) error {
			return apiserver.Register(s, apiserver.Resource[halfTagged]{Group: "toys.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"})
		},
		"bad columns": func(s *apiserver.Server) error {
			return apiserver.Register(s, apiserver.Resource[halfTagged]{Group: "toys.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets",
				Columns: []apiserver.Column[halfTagged]{{Name: "Size", Type: "float", Value: func(*halfTagged) any { return 1 }}}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := apiserver.New()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = func() (err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
						t.Errorf("Register panicked: %v", p)
					}
				}()
				return register(s)
			}()
			if err == nil {
				t.Fatal("Register succeeded, want an error")
			}
			t.Logf("error (as expected): %v", err)
		})
	}
}

// kube-apiserver sends each warning once per request, however often the body
// is decoded (an apply decodes its configuration, then the merged object).
func TestApplyWarnsOnce(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "existing"))
	for name, code := range map[string]int{"existing": http.StatusOK, "absent": http.StatusCreated} {
		t.Run(name, func(t *testing.T) {
			doc := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{"color":"Green","bogus":1}}`
			r := c.do(http.MethodPatch, widgetPath("default", name)+"?fieldManager=test&force=true", doc, "Content-Type", "application/apply-patch+yaml").mustCode(t, code)
			want := []string{`299 - "unknown field \"spec.bogus\""`}
			if got := r.Header.Values("Warning"); !slices.Equal(got, want) {
				t.Errorf("Warning headers %q, want %q", got, want)
			}
		})
	}
}

// kube-apiserver reads a body without Content-Type as JSON, its first
// serializer.
func TestCreateWithoutContentType(t *testing.T) {
	_, c := newTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	req := c.request(ctx, http.MethodPost, widgetsIn("default"), newWidget("default", "a"))
	req.Header.Del("Content-Type")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST without Content-Type: HTTP %d %s, want 201", resp.StatusCode, data)
	}
	if w := c.read("default", "a"); w.Spec.Color != "Red" {
		t.Errorf("stored %+v", w.Spec)
	}
}

// TestHostileInputs adds to TestErrorMatrix requests that are wrong in ways a
// fuzzer or a confused client finds: each is answered with a Status, a 4xx
// unless it names a revision the store has not reached (504, kube-apiserver's
// "Too large resource version"), never a 500, and changes nothing.
func TestHostileInputs(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "a"))
	before := c.get(allWidgets).mustCode(t, http.StatusOK)

	const (
		jsonType  = "application/json"
		mergeType = "application/merge-patch+json"
		jsonPatch = "application/json-patch+json"
		applyType = "application/apply-patch+yaml"
	)
	a := widgetPath("default", "a")
	apply := func(name string) string { return widgetPath("default", name) + "?fieldManager=test" }
	cases := []struct {
		name, method, path, body, contentType string
		future                                bool // names a revision the store has not reached
	}{
		{"POST null", "POST", widgetsIn("default"), `null`, jsonType, false},
		{"POST metadata not an object", "POST", widgetsIn("default"), `{"metadata":"x"}`, jsonType, false},
		{"PUT negative resourceVersion", "PUT", a, `{"metadata":{"name":"a","resourceVersion":"-1"},"spec":{"color":"Red"}}`, jsonType, false},
		{"PUT resourceVersion over int64", "PUT", a, `{"metadata":{"name":"a","resourceVersion":"99999999999999999999"},"spec":{"color":"Red"}}`, jsonType, false},
		{"merge patch of an array", "PATCH", a, `[]`, mergeType, false},
		{"merge patch of a string", "PATCH", a, `"x"`, mergeType, false},
		{"JSON patch removing metadata", "PATCH", a, `[{"op":"replace","path":"/metadata","value":null}]`, jsonPatch, false},
		{"JSON patch of an invalid resourceVersion", "PATCH", a, `[{"op":"replace","path":"/metadata/resourceVersion","value":"abc"}]`, jsonPatch, false},
		{"JSON patch of a numeric resourceVersion", "PATCH", a, `[{"op":"replace","path":"/metadata/resourceVersion","value":5}]`, jsonPatch, false},
		{"JSON patch making spec an array", "PATCH", a, `[{"op":"replace","path":"/spec","value":[1]}]`, jsonPatch, false},
		{"JSON patch making the object an array", "PATCH", a, `[{"op":"replace","path":"","value":[1]}]`, jsonPatch, false},
		{"JSON patch making the object null", "PATCH", a, `[{"op":"replace","path":"","value":null}]`, jsonPatch, false},
		{"apply of malformed YAML", "PATCH", apply("a"), "a: [", applyType, false},
		{"apply of a YAML list", "PATCH", apply("a"), "- 1", applyType, false},
		{"apply of null", "PATCH", apply("a"), "null", applyType, false},
		{"apply of null to an absent object", "PATCH", apply("absent"), "null", applyType, false},
		{"status patch making status a string", "PATCH", a + "/status", `{"status":"x"}`, mergeType, false},
		{"status patch of an invalid resourceVersion", "PATCH", a + "/status", `{"metadata":{"resourceVersion":"zz"}}`, mergeType, false},
		{"DELETE with preconditions not an object", "DELETE", a, `{"preconditions":"x"}`, jsonType, false},
		{"labelSelector Gt without a value", "GET", widgetsIn("default") + "?labelSelector=a%3E", "", "", false},
		{"labelSelector of a parenthesis", "GET", widgetsIn("default") + "?labelSelector=(", "", "", false},
		{"continue token at a future revision", "GET", widgetsIn("default") + "?continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5OSwic3RhcnQiOiJhIn0", "", "", true},
		{"Exact list at a future revision", "GET", widgetsIn("default") + "?resourceVersion=99999&resourceVersionMatch=Exact", "", "", true},
		{"Exact page at a future revision", "GET", widgetsIn("default") + "?resourceVersion=99999&resourceVersionMatch=Exact&limit=1", "", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			var header []string
			if tc.body != "" {
				body, header = tc.body, []string{"Content-Type", tc.contentType}
			}
			r := c.do(tc.method, tc.path, body, header...)
			switch {
			case tc.future:
				r.failure(t, http.StatusGatewayTimeout, kapi.StatusReasonTimeout)
			case r.Code < 400 || r.Code > 499:
				t.Errorf("HTTP %d, want a 4xx; body: %.300s", r.Code, r.Body)
			default:
				r.failure(t, r.Code, "")
			}
		})
	}

	if after := c.get(allWidgets).mustCode(t, http.StatusOK); string(after.Body) != string(before.Body) {
		t.Errorf("the requests changed what is stored:\nbefore %s\nafter  %s", before.Body, after.Body)
	}
}

// TestWarningsAreBounded: a body with very many unknown fields gets its
// warnings bounded as kube-apiserver bounds them (4 Ki runes in all, long
// ones cut to 256), not one header per field without end.
func TestWarningsAreBounded(t *testing.T) {
	_, c := newTestServer(t)
	var body strings.Builder
	body.WriteString(`{"metadata":{"name":"many"},"spec":{"color":"Red"`)
	for i := range 500 {
		fmt.Fprintf(&body, `,"unknown%03d_%s":1`, i, strings.Repeat("x", 300))
	}
	body.WriteString(`}}`)
	resp := c.do(http.MethodPost, widgetsIn("default"), body.String()).mustCode(t, http.StatusCreated)
	warnings := resp.Header.Values("Warning")
	total := 0
	for _, w := range warnings {
		total += utf8.RuneCountInString(w)
	}
	if len(warnings) == 0 || len(warnings) >= 500 || total > 2*4096 {
		t.Errorf("%d Warning headers, %d runes in all; want some, bounded near 4 Ki runes", len(warnings), total)
	}
}

// TestDuplicateFieldsOnly: a body whose only problem is a duplicate field is
// decoded with the last value winning (Warn warns, Ignore does not), as
// kube-apiserver decodes it.
func TestDuplicateFieldsOnly(t *testing.T) {
	_, c := newTestServer(t)
	for _, mode := range []string{"", "Warn", "Ignore"} {
		t.Run("mode "+mode, func(t *testing.T) {
			name := "dup-" + strings.ToLower(mode)
			if mode == "" {
				name = "dup-default"
			}
			body := `{"metadata":{"name":"` + name + `"},"spec":{"color":"Red","color":"Blue"}}`
			resp := c.do(http.MethodPost, widgetsIn("default")+"?fieldValidation="+mode, body).mustCode(t, http.StatusCreated)
			var w widgetapi.Widget
			resp.into(t, &w)
			if w.Spec.Color != "Blue" {
				t.Errorf("color %q, want the last duplicate, Blue", w.Spec.Color)
			}
			warned := slices.Contains(resp.Header.Values("Warning"), `299 - "duplicate field \"spec.color\""`)
			if warned != (mode != "Ignore") {
				t.Errorf("warned %v with fieldValidation=%q: %q", warned, mode, resp.Header.Values("Warning"))
			}
		})
	}
}

// TestSelectableFields: fields a resource registers as selectable work in
// field selectors on list, watch and deletecollection, as a CRD's
// selectableFields do; others are 400.
func TestSelectableFields(t *testing.T) {
	_, c := newTestServer(t)
	for name, color := range map[string]string{"r1": "Red", "r2": "Red", "g": "Green", "b": "Blue"} {
		w := newWidget("default", name)
		w.Spec.Color = color
		c.create(w)
	}
	for sel, want := range map[string][]string{
		"spec.color=Red":                             {"r1", "r2"},
		"spec.color==Green":                          {"g"},
		"spec.color!=Red":                            {"b", "g"},
		"spec.color=Red,metadata.name!=r1":           {"r2"},
		"spec.color=purple":                          {},
		"metadata.namespace=default,spec.color=Blue": {"b"},
	} {
		if got := c.list(widgetsIn("default") + "?fieldSelector=" + url.QueryEscape(sel)).names(); !slices.Equal(got, want) {
			t.Errorf("fieldSelector %s: %v, want %v", sel, got, want)
		}
	}
	c.do(http.MethodGet, widgetsIn("default")+"?fieldSelector=spec.size%3D1", nil).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)

	ws := c.watch(widgetsIn("default") + "?watch=true&fieldSelector=spec.color%3DBlue&resourceVersion=" + c.list(widgetsIn("default")).Metadata.ResourceVersion)
	defer ws.stop()
	g := c.read("default", "g")
	g.Spec.Color = "Blue"
	c.update(g) // starts matching
	ws.expect("ADDED g")

	c.do(http.MethodDelete, widgetsIn("default")+"?fieldSelector=spec.color%3DRed", nil).mustCode(t, http.StatusOK)
	if got := c.list(widgetsIn("default")).names(); !slices.Equal(got, []string{"b", "g"}) {
		t.Errorf("after deleting spec.color=Red: %v, want [b g]", got)
	}
}

func TestSelectableFieldsRegistration(t *testing.T) {
	type spec struct {
		Color   string            `json:"color"`
		Count   *int32            `json:"count,omitempty"`
		Labels  map[string]string `json:"labels,omitempty"`
		Enabled bool              `json:"enabled"`
	}
	type thing struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Spec            *spec `json:"spec,omitempty"`
	}
	register := func(fields ...string) error {
		srv, err := apiserver.New()
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		return apiserver.Register(srv, apiserver.Resource[thing]{Group: "example.com", Version: "v1", Kind: "Thing", Plural: "things", SelectableFields: fields})
	}
	if err := register("spec.color", "spec.count", "spec.enabled"); err != nil {
		t.Errorf("string, *int32 and bool fields: %v", err)
	}
	for _, bad := range []string{"spec.labels", "spec.nothing", "spec", "metadata.name", "spec.color.x"} {
		if err := register(bad); err == nil {
			t.Errorf("SelectableFields %q registered, want an error", bad)
		}
	}
}

// TestExactListWaitsForTheRevision: an Exact list at a revision the store
// has not reached waits briefly for it, as every other read does, and
// answers the list at that revision once it is written.
func TestExactListWaitsForTheRevision(t *testing.T) {
	_, c := newTestServer(t)
	next := mustRevision(t, "list", c.list(widgetsIn("default")).Metadata.ResourceVersion) + 1
	got := make(chan *response, 1)
	go func() {
		resp, err := c.send(http.MethodGet, widgetsIn("default")+fmt.Sprintf("?resourceVersion=%d&resourceVersionMatch=Exact", next), "", "")
		if err != nil {
			t.Error(err)
		}
		got <- resp
	}()
	time.Sleep(100 * time.Millisecond) // let the list start waiting; the assertion does not depend on it
	c.create(newWidget("default", "late"))
	resp := <-got
	if resp == nil || resp.Code != http.StatusOK {
		t.Fatalf("Exact list at %d: %+v, want 200 once written", next, resp)
	}
	var l widgetList
	resp.into(t, &l)
	if names := l.names(); !slices.Equal(names, []string{"late"}) || l.Metadata.ResourceVersion != fmt.Sprint(next) {
		t.Errorf("Exact list at %d = %v at %s, want [late]", next, names, l.Metadata.ResourceVersion)
	}
}

// halfTagged is meant for protobuf, but its spec lost its tag.
type halfTagged struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec            struct {
		Size int32 `json:"size"`
	} `json:"spec"`
}
