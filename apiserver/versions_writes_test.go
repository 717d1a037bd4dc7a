package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/versions"
)

func readBeta(t testing.TB, c *apiClient, ns, name string) *widgetapi.WidgetV1beta1 {
	t.Helper()
	var w widgetapi.WidgetV1beta1
	c.get(betaPath(ns, name)).mustCode(t, http.StatusOK).into(t, &w)
	return &w
}

// storedAPIVersion is the apiVersion of the value stored under key.
func storedAPIVersion(t testing.TB, store storage.Interface, key string) string {
	t.Helper()
	kv, err := store.Get(context.Background(), key, 0)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	var tm kapi.TypeMeta
	if err := json.Unmarshal(kv.Value, &tm); err != nil {
		t.Fatal(err)
	}
	return tm.APIVersion
}

// TestVersionWrites: writes in one version seen in the other, as the
// issue's points 5 and 6 ask.
func TestVersionWrites(t *testing.T) {
	store := memory.New()
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	const ns = "writes"

	t.Run("stored in the storage version", func(t *testing.T) {
		c.do(http.MethodPost, betaIn(ns), newBeta(ns, "stored", 80)).mustCode(t, http.StatusCreated)
		if got := storedAPIVersion(t, store, "/widgets.example.com/"+ns+"/stored"); got != "example.com/v1" {
			t.Errorf("stored in %q, want example.com/v1", got)
		}
	})

	t.Run("defaults are per version", func(t *testing.T) {
		b := newBeta(ns, "defaults", 80)
		w := betaOf(t, c.do(http.MethodPost, betaIn(ns), b).mustCode(t, http.StatusCreated).Body)
		if w.Spec.Replicas == nil || *w.Spec.Replicas != 1 {
			t.Errorf("v1beta1's defaulting did not run: replicas %v", w.Spec.Replicas)
		}
	})

	t.Run("validation on the converted object", func(t *testing.T) {
		b := newBeta(ns, "bad", 70000)
		b.Spec.Color = "purple"
		r := c.do(http.MethodPost, betaIn(ns), b)
		mustWarn(t, r)
		st := r.failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
		var fields []string
		for _, cause := range st.Details.Causes {
			fields = append(fields, cause.Field)
		}
		if !slices.Equal(fields, []string{"spec.color", "spec.ports[0].port"}) || !strings.HasPrefix(st.Message, `Widget.example.com "bad" is invalid: `) {
			t.Errorf("422 %q with fields %q, want spec.color and spec.ports[0].port (v1's validation)", st.Message, fields)
		}
	})

	t.Run("lossless round trip", func(t *testing.T) {
		w := newWidget(ns, "ports")
		w.Spec.Ports = []widgetapi.WidgetPort{{Name: "metrics", Port: 9090, Protocol: "TCP"}, {Name: "default", Port: 80, Protocol: "TCP"}, {Name: "dns", Port: 53, Protocol: "UDP"}}
		c.create(w)
		b := readBeta(t, c, ns, "ports")
		if b.Spec.Port == nil || *b.Spec.Port != 80 || b.Annotations[widgetapi.PortsAnnotation] == "" {
			t.Fatalf("v1beta1: port %v annotations %v, want 80 and the other ports kept", b.Spec.Port, b.Annotations)
		}
		// A v1beta1 client changes what it knows and writes back the rest.
		b.Spec.Color, b.Spec.Port = "Blue", ptr(int32(81))
		c.do(http.MethodPut, betaPath(ns, "ports"), b).mustCode(t, http.StatusOK)
		v1 := c.read(ns, "ports")
		if got := portsOf(v1); got != "metrics:9090/TCP,default:81/TCP,dns:53/UDP" || v1.Spec.Color != "Blue" {
			t.Errorf("v1 after a v1beta1 PUT: ports %q color %s, want the others kept in place", got, v1.Spec.Color)
		}
		if _, ok := v1.Annotations[widgetapi.PortsAnnotation]; ok {
			t.Errorf("v1 shows the annotation of v1beta1: %v", v1.Annotations)
		}
		// Patches in v1beta1 that leave the port alone keep them too.
		c.do(http.MethodPatch, betaPath(ns, "ports"), `{"spec":{"size":2}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
		if got := portsOf(c.read(ns, "ports")); got != "metrics:9090/TCP,default:81/TCP,dns:53/UDP" {
			t.Errorf("v1 after a v1beta1 merge patch: %q", got)
		}
		// Removing the port in v1beta1 removes v1's default port only.
		c.do(http.MethodPatch, betaPath(ns, "ports"), `[{"op":"remove","path":"/spec/port"}]`, "Content-Type", "application/json-patch+json").mustCode(t, http.StatusOK)
		if got := portsOf(c.read(ns, "ports")); got != "metrics:9090/TCP,dns:53/UDP" {
			t.Errorf("v1 after removing the v1beta1 port: %q", got)
		}
	})

	t.Run("optimistic concurrency across versions", func(t *testing.T) {
		c.do(http.MethodPost, betaIn(ns), newBeta(ns, "occ", 80)).mustCode(t, http.StatusCreated)
		stale := readBeta(t, c, ns, "occ")
		v1 := c.read(ns, "occ")
		if v1.ResourceVersion != stale.ResourceVersion {
			t.Fatalf("resourceVersion %s in v1, %s in v1beta1", v1.ResourceVersion, stale.ResourceVersion)
		}
		v1.Spec.Size = 5
		c.update(v1) // moves it on
		old := c.read(ns, "occ")
		old.ResourceVersion = stale.ResourceVersion
		st := c.do(http.MethodPut, widgetPath(ns, "occ"), old).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
		if !strings.Contains(st.Message, "the object has been modified") {
			t.Errorf("409 %q", st.Message)
		}
		stale.Spec.Color = "Green"
		c.do(http.MethodPut, betaPath(ns, "occ"), stale).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
		cur := readBeta(t, c, ns, "occ")
		v1 = c.read(ns, "occ")
		v1.ResourceVersion = cur.ResourceVersion // a v1beta1 GET's resourceVersion is good in v1
		v1.Spec.Color = "Green"
		c.do(http.MethodPut, widgetPath(ns, "occ"), v1).mustCode(t, http.StatusOK)
	})

	t.Run("managedFields keep their managers' versions", func(t *testing.T) {
		c.do(http.MethodPost, betaIn(ns)+"?fieldManager=old-client", newBeta(ns, "managed", 80)).mustCode(t, http.StatusCreated)
		v1 := c.read(ns, "managed")
		v1.Spec.Size = 9
		c.do(http.MethodPut, widgetPath(ns, "managed")+"?fieldManager=new-client", v1).mustCode(t, http.StatusOK)
		got := map[string]string{}
		for _, m := range c.read(ns, "managed").ManagedFields {
			got[m.Manager] = m.APIVersion
		}
		if got["old-client"] != "example.com/v1beta1" || got["new-client"] != "example.com/v1" {
			t.Errorf("managers %v, want old-client in v1beta1 and new-client in v1", got)
		}
	})

	t.Run("server-side apply conflicts across versions", func(t *testing.T) {
		apply := func(path, version, manager string, replicas int, force bool) *response {
			t.Helper()
			name := path[strings.LastIndex(path, "/")+1:]
			q := "?fieldManager=" + manager
			if force {
				q += "&force=true"
			}
			cfg := fmt.Sprintf(`{"apiVersion":"example.com/%s","kind":"Widget","metadata":{"name":%q},"spec":{"color":"Red","replicas":%d}}`, version, name, replicas)
			return c.do(http.MethodPatch, path+q, cfg, "Content-Type", "application/apply-patch+yaml")
		}
		for _, order := range [][2]string{{"v1beta1", "v1"}, {"v1", "v1beta1"}} {
			name := "ssa-" + order[0] + "-first"
			path := map[string]string{"v1": widgetPath(ns, name), "v1beta1": betaPath(ns, name)}
			first, second := "applier-"+order[0], "applier-"+order[1]
			apply(path[order[0]], order[0], first, 2, false).mustCode(t, http.StatusCreated)
			st := apply(path[order[1]], order[1], second, 3, false).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
			want := fmt.Sprintf(`conflict with %q`, first)
			if len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != ".spec.replicas" || !strings.Contains(st.Details.Causes[0].Message, want) {
				t.Errorf("%s then %s: causes %+v, want .spec.replicas %s", order[0], order[1], st.Details.Causes, want)
			}
			// The same value is no conflict; force takes the field over.
			apply(path[order[1]], order[1], second, 2, false).mustCode(t, http.StatusOK)
			apply(path[order[1]], order[1], second, 3, true).mustCode(t, http.StatusOK)
			st = apply(path[order[0]], order[0], first, 4, false).failure(t, http.StatusConflict, kapi.StatusReasonConflict)
			if len(st.Details.Causes) != 1 || !strings.Contains(st.Details.Causes[0].Message, fmt.Sprintf("conflict with %q", second)) {
				t.Errorf("after force: causes %+v, want a conflict with %s", st.Details.Causes, second)
			}
		}
	})

	t.Run("server-side apply conflicts on fields the versions name apart", func(t *testing.T) {
		// v1's manager owns .spec.ports[name="default"].port; v1beta1 calls
		// it .spec.port. The field sets are compared in the owner's version.
		c.do(http.MethodPatch, widgetPath(ns, "ssa-ports")+"?fieldManager=ports-v1",
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"ssa-ports"},"spec":{"color":"Red","ports":[{"name":"default","port":80}]}}`,
			"Content-Type", "application/apply-patch+yaml").mustCode(t, http.StatusCreated)
		st := c.do(http.MethodPatch, betaPath(ns, "ssa-ports")+"?fieldManager=port-v1beta1",
			`{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"ssa-ports"},"spec":{"port":81}}`,
			"Content-Type", "application/apply-patch+yaml").failure(t, http.StatusConflict, kapi.StatusReasonConflict)
		if len(st.Details.Causes) != 1 || !strings.HasPrefix(st.Details.Causes[0].Field, ".spec.ports[") || !strings.Contains(st.Details.Causes[0].Message, `conflict with "ports-v1"`) {
			t.Errorf("causes %+v, want the v1 manager's port", st.Details.Causes)
		}
	})
}

// TestVersionWatchesAgree: a watch in v1beta1 and one in v1 see the same
// events at the same resourceVersions, whatever version wrote them.
func TestVersionWatchesAgree(t *testing.T) {
	_, c := newTestServer(t)
	const ns = "agree"
	rv := c.list(widgetsIn(ns)).Metadata.ResourceVersion
	v1w := openStream(t, c, widgetsIn(ns)+"?watch=true&resourceVersion="+rv, mtJSON, mtJSON)
	betaw := openStream(t, c, betaIn(ns)+"?watch=true&resourceVersion="+rv, mtJSON, mtJSON)
	c.do(http.MethodPost, betaIn(ns), newBeta(ns, "a", 80)).mustCode(t, http.StatusCreated)
	c.create(newWidget(ns, "b"))
	c.do(http.MethodPatch, betaPath(ns, "b"), `{"spec":{"port":81}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	c.do(http.MethodDelete, widgetPath(ns, "a"), nil).mustCode(t, http.StatusOK)
	a, b := v1w.NextN(4, true), betaw.NextN(4, true)
	rvs := func(evs []apiservertest.Event) []string {
		var out []string
		for _, ev := range evs {
			var o struct {
				APIVersion string          `json:"apiVersion"`
				Metadata   kapi.ObjectMeta `json:"metadata"`
			}
			apiservertest.DecodeJSON(t, ev.Object, &o)
			out = append(out, ev.Type+" "+o.Metadata.Name+" "+o.Metadata.ResourceVersion+" "+o.APIVersion)
		}
		return out
	}
	ra, rb := rvs(a), rvs(b)
	for i := range ra {
		if strings.TrimSuffix(ra[i], "example.com/v1") != strings.TrimSuffix(rb[i], "example.com/v1beta1") {
			t.Errorf("event %d: v1 %q, v1beta1 %q", i, ra[i], rb[i])
		}
	}
	t.Logf("v1: %q\nv1beta1: %q", ra, rb)
}

// TestVersionDiscovery: every served version by priority, the preferred
// first, in legacy and aggregated discovery and in OpenAPI; a version not
// served is nowhere and answers 404.
func TestVersionDiscovery(t *testing.T) {
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		hidden := gizmoBeta()
		hidden.NotServed = true
		return errors.Join(widgetapi.Register(s), apiserver.Register(s, gizmoV1()), apiserver.Register(s, hidden))
	})
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}

	var g struct {
		Versions []struct {
			GroupVersion string `json:"groupVersion"`
		} `json:"versions"`
		PreferredVersion struct {
			GroupVersion string `json:"groupVersion"`
		} `json:"preferredVersion"`
	}
	c.get("/apis/example.com").mustCode(t, http.StatusOK).into(t, &g)
	if len(g.Versions) != 2 || g.Versions[0].GroupVersion != "example.com/v1" || g.Versions[1].GroupVersion != "example.com/v1beta1" || g.PreferredVersion.GroupVersion != "example.com/v1" {
		t.Errorf("/apis/example.com: %+v, want v1 then v1beta1, v1 preferred", g)
	}
	c.get("/apis/toys.example.com").mustCode(t, http.StatusOK).into(t, &g)
	if len(g.Versions) != 1 || g.Versions[0].GroupVersion != "toys.example.com/v1" {
		t.Errorf("/apis/toys.example.com: %+v, want v1 alone (v1beta1 is not served)", g)
	}
	c.get("/apis/toys.example.com/v1beta1/gizmos").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)
	c.get("/apis/toys.example.com/v1beta1").failure(t, http.StatusNotFound, kapi.StatusReasonNotFound)

	var agg struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Versions []struct {
				Version   string `json:"version"`
				Resources []struct {
					Resource string `json:"resource"`
				} `json:"resources"`
			} `json:"versions"`
		} `json:"items"`
	}
	c.do(http.MethodGet, "/apis", nil, "Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").mustCode(t, http.StatusOK).into(t, &agg)
	got := map[string][]string{}
	for _, it := range agg.Items {
		for _, v := range it.Versions {
			var rs []string
			for _, r := range v.Resources {
				rs = append(rs, r.Resource)
			}
			got[it.Metadata.Name] = append(got[it.Metadata.Name], v.Version+":"+strings.Join(rs, "+"))
		}
	}
	if want := []string{"v1:widgets+widgetclasses", "v1beta1:widgets"}; !slices.Equal(got["example.com"], want) {
		t.Errorf("aggregated example.com: %q, want %q", got["example.com"], want)
	}
	if want := []string{"v1:gizmos"}; !slices.Equal(got["toys.example.com"], want) {
		t.Errorf("aggregated toys.example.com: %q, want %q", got["toys.example.com"], want)
	}

	var res struct {
		Resources []struct {
			Name               string `json:"name"`
			StorageVersionHash string `json:"storageVersionHash"`
		} `json:"resources"`
	}
	c.get("/apis/example.com/v1beta1").mustCode(t, http.StatusOK).into(t, &res)
	hashBeta := res.Resources[0].StorageVersionHash
	c.get("/apis/example.com/v1").mustCode(t, http.StatusOK).into(t, &res)
	if res.Resources[0].Name != "widgets" || res.Resources[0].StorageVersionHash != hashBeta {
		t.Errorf("storageVersionHash %q in v1, %q in v1beta1: want one, the storage version's", res.Resources[0].StorageVersionHash, hashBeta)
	}

	var root struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	c.get("/openapi/v3").mustCode(t, http.StatusOK).into(t, &root)
	if _, ok := root.Paths["apis/example.com/v1beta1"]; !ok {
		t.Errorf("/openapi/v3 lists no apis/example.com/v1beta1: %v", root.Paths)
	}
	if _, ok := root.Paths["apis/toys.example.com/v1beta1"]; ok {
		t.Errorf("/openapi/v3 lists a version not served")
	}
	doc := string(c.get("/openapi/v3/apis/example.com/v1beta1").mustCode(t, http.StatusOK).Body)
	if !strings.Contains(doc, `"port"`) || strings.Contains(doc, `"ports"`) || !strings.Contains(doc, `"version":"v1beta1"`) {
		t.Errorf("the v1beta1 OpenAPI document does not describe v1beta1's widgets: %.400s", doc)
	}
}

// TestVersionStorageMigration is the migration test: widgets
// written while v1beta1 was the storage version (bbolt), the server
// restarted with v1 as storage reads them correctly, MigrateStorage
// rewrites them in v1, and the file holds them in v1 after a restart.
func TestVersionStorageMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kapi.db")
	const ns = "migrate"
	open := func(t *testing.T) *bolt.Store {
		t.Helper()
		store, err := bolt.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return store
	}
	key := func(name string) string { return "/widgets.example.com/" + ns + "/" + name }

	t.Run("stored in v1beta1", func(t *testing.T) {
		store := open(t)
		defer store.Close()
		srv := apiservertest.New(t, func(s *apiserver.Server) error { return widgetapi.RegisterStoringIn(s, "v1beta1") }, apiserver.WithStorage(store))
		c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
		for i := range 5 {
			c.do(http.MethodPost, betaIn(ns), newBeta(ns, fmt.Sprintf("b%d", i), int32(8000+i))).mustCode(t, http.StatusCreated)
		}
		w := newWidget(ns, "ports")
		w.Spec.Ports = []widgetapi.WidgetPort{{Name: "default", Port: 80}, {Name: "metrics", Port: 9090}}
		c.create(w)
		if got := storedAPIVersion(t, store, key("ports")); got != "example.com/v1beta1" {
			t.Fatalf("stored in %s, want example.com/v1beta1", got)
		}
		srv.API.Close()
	})

	t.Run("read after the storage version changed", func(t *testing.T) {
		store := open(t)
		defer store.Close()
		srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
		c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
		if got := portsOf(c.read(ns, "ports")); got != "default:80/TCP,metrics:9090/TCP" {
			t.Errorf("v1 from a v1beta1 value: ports %q", got)
		}
		if got := len(c.list(widgetsIn(ns)).Items); got != 6 {
			t.Errorf("list: %d widgets, want 6", got)
		}
		if b := readBeta(t, c, ns, "b3"); *b.Spec.Port != 8003 {
			t.Errorf("v1beta1 read: port %d", *b.Spec.Port)
		}
		// A write in the meantime stores the object in v1.
		w := c.read(ns, "b4")
		w.Spec.Size = 1
		c.update(w)
		if got := storedAPIVersion(t, store, key("b4")); got != "example.com/v1" {
			t.Errorf("an update stored %s, want example.com/v1", got)
		}
		// Migration, in pages of two, resumed after an interruption.
		var pages []versions.Progress
		p, err := srv.API.MigrateStorage(context.Background(), "widgets", "example.com", versions.MigrateOptions{
			PageSize: 2, Progress: func(p versions.Progress) { pages = append(pages, p) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if p.Seen != 6 || p.Rewritten != 5 || len(pages) != 3 || pages[0].Remaining != 4 || p.Key != key("ports") {
			t.Errorf("progress %+v, pages %+v; want 6 seen, 5 rewritten (b4 was current), 3 pages", p, pages)
		}
		again, err := srv.API.MigrateStorage(context.Background(), "widgets", "example.com", versions.MigrateOptions{After: key("b2")})
		if err != nil || again.Seen != 3 || again.Rewritten != 0 {
			t.Errorf("resumed after b2: %+v, %v; want 3 seen, none rewritten", again, err)
		}
		if got := portsOf(c.read(ns, "ports")); got != "default:80/TCP,metrics:9090/TCP" {
			t.Errorf("after migration: ports %q", got)
		}
		if _, err := srv.API.MigrateStorage(context.Background(), "gadgets", "example.com", versions.MigrateOptions{}); err == nil {
			t.Error("migrating an unknown resource succeeded")
		}
		srv.API.Close()
	})

	t.Run("the file holds v1", func(t *testing.T) {
		store := open(t)
		defer store.Close()
		page, err := store.List(context.Background(), "/widgets.example.com/", storage.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range page.Items {
			var w widgetapi.Widget
			if err := json.Unmarshal(kv.Value, &w); err != nil || w.APIVersion != "example.com/v1" {
				t.Errorf("%s: %s", kv.Key, kv.Value)
			}
			if strings.HasSuffix(kv.Key, "/ports") && portsOf(&w) != "default:80/TCP,metrics:9090/TCP" {
				t.Errorf("ports stored as %q", portsOf(&w))
			}
		}
		if len(page.Items) != 6 {
			t.Errorf("%d widgets in the file, want 6", len(page.Items))
		}
	})
}
