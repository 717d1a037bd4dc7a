package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// The example serves widgets in v1 (stored) and in the deprecated v1beta1,
// whose spec has one port (v1's port named "default") for v1's ports.

var widgetsV1beta1GVR = schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "widgets"}

const deprecationWarning = "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"

// warnings collects what client-go's warning handler receives.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

func versionedClient(t *testing.T, srv *server, handler rest.WarningHandler) *dynamic.DynamicClient {
	t.Helper()
	cfg := restConfig(srv, nil)
	cfg.WarningHandler = handler
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func betaWidget(name string, spec map[string]any) *unstructured.Unstructured {
	w := newWidget(name, spec)
	w.SetAPIVersion("example.com/v1beta1")
	return w
}

// TestVersionsClientGo is the end-to-end test with client-go.
func TestVersionsClientGo(t *testing.T) {
	srv := startServer(t)
	var warned warnings
	client := versionedClient(t, srv, &warned)

	t.Run("writer and informer in different versions", func(t *testing.T) {
		for _, tc := range []struct{ write, follow schema.GroupVersionResource }{
			{widgetsV1beta1GVR, widgetsGVR}, {widgetsGVR, widgetsV1beta1GVR},
		} {
			t.Run("write "+tc.write.Version+", follow "+tc.follow.Version, func(t *testing.T) {
				followWhileWriting(t, client, tc.write, tc.follow)
			})
		}
	})

	t.Run("stale PUT across versions", func(t *testing.T) {
		ctx := ctxFor(t, 30*time.Second)
		v1, beta := client.Resource(widgetsGVR).Namespace(testNamespace), client.Resource(widgetsV1beta1GVR).Namespace(testNamespace)
		if _, err := beta.Create(ctx, betaWidget("occ", map[string]any{"color": "Red", "port": int64(80)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, order := range [][2]dynamic.ResourceInterface{{beta, v1}, {v1, beta}} {
			read, write := order[0], order[1]
			stale, err := read.Get(ctx, "occ", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cur, err := write.Get(ctx, "occ", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if cur.GetResourceVersion() != stale.GetResourceVersion() {
				t.Fatalf("resourceVersion %s in %s, %s in %s", stale.GetResourceVersion(), stale.GetAPIVersion(), cur.GetResourceVersion(), cur.GetAPIVersion())
			}
			_ = unstructured.SetNestedField(cur.Object, int64(cur.GetGeneration()), "spec", "size")
			if _, err := write.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			cur.SetResourceVersion(stale.GetResourceVersion()) // what the other version's GET said
			_ = unstructured.SetNestedField(cur.Object, "Blue", "spec", "color")
			if _, err := write.Update(ctx, cur, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("PUT in %s with the resourceVersion of a GET in %s before a change: %v, want 409 Conflict", cur.GetAPIVersion(), stale.GetAPIVersion(), err)
			}
		}
	})

	t.Run("apply conflicts between versions", func(t *testing.T) {
		ctx := ctxFor(t, 30*time.Second)
		apply := func(gvr schema.GroupVersionResource, manager string, replicas int64) error {
			w := newWidget("ssa", map[string]any{"color": "Red", "replicas": replicas})
			w.SetAPIVersion(gvr.Group + "/" + gvr.Version)
			_, err := client.Resource(gvr).Namespace(testNamespace).Apply(ctx, "ssa", w, metav1.ApplyOptions{FieldManager: manager})
			return err
		}
		if err := apply(widgetsV1beta1GVR, "manager-v1beta1", 2); err != nil {
			t.Fatal(err)
		}
		err := apply(widgetsGVR, "manager-v1", 3)
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "manager-v1beta1"`) || !strings.Contains(err.Error(), ".spec.replicas") {
			t.Fatalf("v1 apply over the v1beta1 manager's replicas: %v, want a 409 naming manager-v1beta1 and .spec.replicas", err)
		}
		if st := statusOfErr(t, err); len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != ".spec.replicas" {
			t.Errorf("causes %+v", st.Details.Causes)
		}
		w, err := client.Resource(widgetsGVR).Namespace(testNamespace).Apply(ctx, "ssa",
			newWidget("ssa", map[string]any{"color": "Red", "replicas": int64(3)}), metav1.ApplyOptions{FieldManager: "manager-v1", Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas"); r != 3 {
			t.Errorf("forced apply: replicas %d", r)
		}
		err = apply(widgetsV1beta1GVR, "manager-v1beta1", 4)
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "manager-v1"`) {
			t.Errorf("v1beta1 apply over the v1 manager's replicas: %v, want a 409 naming manager-v1", err)
		}
		managers := map[string]string{}
		for _, m := range w.GetManagedFields() {
			managers[m.Manager] = m.APIVersion
		}
		if managers["manager-v1"] != "example.com/v1" || managers["manager-v1beta1"] != "example.com/v1beta1" {
			t.Errorf("managedFields %v, want each manager in its version", managers)
		}
	})

	t.Run("deprecation warning", func(t *testing.T) {
		before := len(warned.all())
		ctx := ctxFor(t, 30*time.Second)
		if _, err := client.Resource(widgetsV1beta1GVR).Namespace(testNamespace).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		got := warned.all()[before:]
		if !slices.Contains(got, deprecationWarning) {
			t.Errorf("client-go's warning handler got %q, want %q", got, deprecationWarning)
		}
		before = len(warned.all())
		if _, err := client.Resource(widgetsGVR).Namespace(testNamespace).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := warned.all()[before:]; len(got) != 0 {
			t.Errorf("a v1 request warned %q", got)
		}
	})
}

// followWhileWriting runs an informer in one version while a dynamic
// client writes in the other, and checks that the informer ends holding
// what the server holds, in its version.
func followWhileWriting(t *testing.T, client *dynamic.DynamicClient, write, follow schema.GroupVersionResource) {
	ctx := ctxFor(t, 90*time.Second)
	ns := "follow-" + write.Version
	createNamespace(t, ctx, client, ns)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, ns, nil)
	informer := factory.ForResource(follow).Informer()
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() {
		close(stop)
		factory.Shutdown()
	})
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	writer := client.Resource(write).Namespace(ns)
	spec := func(i int) map[string]any {
		if write.Version == "v1beta1" {
			return map[string]any{"color": "Red", "port": int64(8000 + i)}
		}
		return map[string]any{"color": "Red", "ports": []any{map[string]any{"name": "default", "port": int64(8000 + i)}}}
	}
	const n = 30
	for i := range n {
		w := newWidget(fmt.Sprintf("w-%02d", i), spec(i))
		w.SetAPIVersion(write.Group + "/" + write.Version)
		if _, err := writer.Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 2 {
		cur, err := writer.Get(ctx, fmt.Sprintf("w-%02d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(cur.Object, "Blue", "spec", "color")
		if _, err := writer.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 5 {
		if err := writer.Delete(ctx, fmt.Sprintf("w-%02d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want, err := client.Resource(follow).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRV := map[string]string{}
	for _, it := range want.Items {
		wantRV[it.GetName()] = it.GetResourceVersion()
	}
	var got map[string]string
	for ctx.Err() == nil {
		got = map[string]string{}
		for _, o := range informer.GetStore().List() {
			u := o.(*unstructured.Unstructured)
			got[u.GetName()] = u.GetResourceVersion()
		}
		if fmt.Sprint(got) == fmt.Sprint(wantRV) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if fmt.Sprint(got) != fmt.Sprint(wantRV) {
		t.Fatalf("the informer holds %v, the server %v", got, wantRV)
	}
	for _, it := range want.Items {
		o, _, _ := informer.GetStore().Get(&it)
		u := o.(*unstructured.Unstructured)
		if u.GetAPIVersion() != follow.Group+"/"+follow.Version {
			t.Errorf("%s in the informer: apiVersion %s", u.GetName(), u.GetAPIVersion())
		}
		var port int64
		if follow.Version == "v1beta1" {
			port, _, _ = unstructured.NestedInt64(u.Object, "spec", "port")
		} else {
			ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
			if len(ports) == 1 {
				port, _, _ = unstructured.NestedInt64(ports[0].(map[string]any), "port")
			}
		}
		var i int
		fmt.Sscanf(u.GetName(), "w-%d", &i)
		if port != int64(8000+i) {
			t.Errorf("%s in the informer: port %d, want %d", u.GetName(), port, 8000+i)
		}
	}
	t.Logf("the %s informer holds the %d widgets the %s writer left", follow.Version, len(got), write.Version)
}

const widgetBetaApplied = `apiVersion: example.com/v1beta1
kind: Widget
metadata:
  name: beta
spec:
  color: Green
  port: 8443
`

// TestVersionsKubectl: kubectl 1.27 and 1.33 against a kind served in two
// versions.
func TestVersionsKubectl(t *testing.T) {
	for _, bin := range pinnedKubectls() {
		v := strings.TrimPrefix(filepath.Base(bin), "kubectl.")
		if v != "1.27" && v != "1.33" {
			continue
		}
		t.Run(v, func(t *testing.T) {
			srv := startServer(t)
			k := newKubectl(t, bin, srv)
			if out := k.must(t, "api-versions"); !strings.Contains(out, "example.com/v1\n") || !strings.Contains(out, "example.com/v1beta1\n") {
				t.Errorf("api-versions:\n%s", out)
			}
			r := k.run(t, "apply", "--server-side", "-f", writeFile(t, "beta.yaml", widgetBetaApplied))
			if r.err != nil || !strings.Contains(r.stdout, "widget.example.com/beta serverside-applied") {
				t.Fatalf("apply --server-side in v1beta1: %s", r)
			}
			if !strings.Contains(r.stderr, deprecationWarning) {
				t.Errorf("apply did not print the deprecation warning; stderr %q", r.stderr)
			}
			out := k.must(t, "get", "widgets.v1beta1.example.com")
			if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME COLOR PORT AGE" ||
				!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "beta Green 8443 ") {
				t.Errorf("get widgets.v1beta1.example.com (v1beta1's columns):\n%s", out)
			}
			obj := k.getJSON(t, "widget", "beta") // the preferred version, v1
			wantField(t, obj, "example.com/v1", "apiVersion")
			ports, _ := field(obj, "spec", "ports")
			if fmt.Sprint(ports) != "[map[name:default port:8443 protocol:TCP]]" {
				t.Errorf("in v1: spec.ports %v, want the converted port", ports)
			}
			yaml := k.must(t, "get", "widget", "beta", "-o", "yaml")
			if !strings.Contains(yaml, "apiVersion: example.com/v1\n") || !strings.Contains(yaml, "- name: default\n    port: 8443\n    protocol: TCP") {
				t.Errorf("get -o yaml in v1:\n%s", yaml)
			}
			explain := k.must(t, "explain", "widgets.spec", "--api-version=example.com/v1beta1")
			if !strings.Contains(explain, "port\t<integer>") && !strings.Contains(explain, "port <integer>") || strings.Contains(explain, "ports") {
				t.Errorf("explain --api-version=example.com/v1beta1 widgets.spec:\n%s", explain)
			}
			if explain := k.must(t, "explain", "widgets.spec", "--api-version=example.com/v1"); !strings.Contains(explain, "ports") {
				t.Errorf("explain --api-version=example.com/v1 widgets.spec:\n%s", explain)
			}
		})
	}
}
