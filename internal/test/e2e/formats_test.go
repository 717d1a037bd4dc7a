package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/features"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// TestFormatsMetadataClient drives widgets through client-go's metadata
// client, which asks for PartialObjectMetadata(List) in protobuf: list, get,
// a protobuf watch stream, and a metadata informer (a streaming list over
// that watch). A transport wrapper proves protobuf is what travelled.
func TestFormatsMetadataClient(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 90*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)

	rvs := map[string]string{}
	uids := map[string]types.UID{}
	for i, name := range []string{"m-a", "m-b", "m-c"} {
		w := labeledWidget(name, "Red", map[string]string{"tier": "meta", "idx": strconv.Itoa(i)})
		w.SetAnnotations(map[string]string{"note": name})
		made, err := widgets.Create(ctx, w, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		rvs[name], uids[name] = made.GetResourceVersion(), made.GetUID()
	}

	log := &wireLog{}
	mc, err := metadata.NewForConfig(log.config(restConfig(srv, nil)))
	if err != nil {
		t.Fatal(err)
	}
	meta := mc.Resource(widgetsGVR).Namespace(testNamespace)

	// wantProtobuf checks the one response the last call got.
	wantProtobuf := func(t *testing.T, as string, stream bool) {
		t.Helper()
		entries := log.all()
		if len(entries) == 0 {
			t.Fatal("the metadata client made no request")
		}
		e := entries[len(entries)-1]
		mt, params := mediaTypeOf(e.ContentType)
		if mt != mediaProtobuf {
			t.Errorf("the response was %q, want protobuf; %s", e.ContentType, e)
		}
		if stream && params["stream"] != "watch" {
			t.Errorf("the watch response was %q, want ;stream=watch; %s", e.ContentType, e)
		}
		// kube-apiserver names no view in the Content-Type (observed from
		// v1.36: a metadata list in protobuf is bare
		// application/vnd.kubernetes.protobuf); the decoded body, a
		// PartialObjectMetadata(List), names it.
		if as != "" && len(params) != 0 && !stream {
			t.Errorf("the %s response was %q, want the bare media type; %s", as, e.ContentType, e)
		}
	}

	var listRV string
	t.Run("list", func(t *testing.T) {
		log.reset()
		list, err := meta.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v; requests:\n%s", err, log)
		}
		wantProtobuf(t, "PartialObjectMetadataList", false)
		listRV = list.ResourceVersion
		if listRV == "" {
			t.Error("the list has no resourceVersion")
		}
		var got []string
		for _, it := range list.Items {
			got = append(got, it.Name)
			if it.ResourceVersion != rvs[it.Name] || it.UID != uids[it.Name] || it.Namespace != testNamespace {
				t.Errorf("item %s: rv %q uid %q ns %q, want rv %q uid %q ns %q", it.Name, it.ResourceVersion, it.UID, it.Namespace, rvs[it.Name], uids[it.Name], testNamespace)
			}
			if it.Labels["tier"] != "meta" || it.Annotations["note"] != it.Name || it.Generation != 1 || it.CreationTimestamp.IsZero() {
				t.Errorf("item %s has labels %v annotations %v generation %d creationTimestamp %v", it.Name, it.Labels, it.Annotations, it.Generation, it.CreationTimestamp)
			}
		}
		if strings.Join(got, ",") != "m-a,m-b,m-c" {
			t.Errorf("list items = %v, want m-a, m-b, m-c", got)
		}
	})

	t.Run("get", func(t *testing.T) {
		log.reset()
		got, err := meta.Get(ctx, "m-b", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v; requests:\n%s", err, log)
		}
		wantProtobuf(t, "PartialObjectMetadata", false)
		if got.Name != "m-b" || got.ResourceVersion != rvs["m-b"] || got.UID != uids["m-b"] || got.Labels["idx"] != "1" || got.Annotations["note"] != "m-b" {
			t.Errorf("get m-b = %s", mustJSON(got))
		}

		log.reset()
		_, err = meta.Get(ctx, "missing", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("get missing: err = %v, want NotFound; requests:\n%s", err, log)
		}
		wantProtobuf(t, "", false) // the Status in the negotiated format
		wantStatus(t, err, 404, metav1.StatusReasonNotFound, "widgets", "missing", `widgets.example.com "missing" not found`)
	})

	t.Run("watch", func(t *testing.T) {
		if listRV == "" {
			t.Skip("the list failed")
		}
		log.reset()
		w, err := meta.Watch(ctx, metav1.ListOptions{ResourceVersion: listRV})
		if err != nil {
			t.Fatalf("watch: %v; requests:\n%s", err, log)
		}
		defer w.Stop()
		wantProtobuf(t, "", true)

		expect := func(typ watch.EventType, name, rv string, labels map[string]string) *metav1.PartialObjectMetadata {
			t.Helper()
			ev := nextWatchEvent(t, w, fmt.Sprintf("%s %s", typ, name))
			obj, ok := ev.Object.(*metav1.PartialObjectMetadata)
			if !ok {
				t.Fatalf("event %s carries %T, want *metav1.PartialObjectMetadata: %#v", ev.Type, ev.Object, ev.Object)
			}
			if ev.Type != typ || obj.Name != name || obj.Namespace != testNamespace {
				t.Fatalf("event = %s %s/%s, want %s %s/%s", ev.Type, obj.Namespace, obj.Name, typ, testNamespace, name)
			}
			if rv != "" && obj.ResourceVersion != rv {
				t.Errorf("%s %s has resourceVersion %s, want %s", typ, name, obj.ResourceVersion, rv)
			}
			for k, v := range labels {
				if obj.Labels[k] != v {
					t.Errorf("%s %s has labels %v, want %s=%s", typ, name, obj.Labels, k, v)
				}
			}
			return obj
		}

		made, err := widgets.Create(ctx, labeledWidget("m-new", "Blue", map[string]string{"tier": "meta", "fresh": "yes"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		added := expect(watch.Added, "m-new", made.GetResourceVersion(), map[string]string{"fresh": "yes"})
		if added.UID != made.GetUID() || added.Generation != 1 {
			t.Errorf("ADDED m-new uid %s generation %d, want %s and 1", added.UID, added.Generation, made.GetUID())
		}

		rv := modify(t, ctx, widgets, "m-a", func(u *unstructured.Unstructured) {
			setLabel(u, "touched", "once")
		})
		expect(watch.Modified, "m-a", rv, map[string]string{"touched": "once", "tier": "meta"})

		if err := widgets.Delete(ctx, "m-b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		deleted := expect(watch.Deleted, "m-b", "", map[string]string{"idx": "1"})
		if !rvNewer(t, deleted.ResourceVersion, rv) {
			t.Errorf("DELETED m-b has resourceVersion %s, want one after the update's %s", deleted.ResourceVersion, rv)
		}
	})

	t.Run("informer", func(t *testing.T) {
		ilog := &wireLog{}
		ic, err := metadata.NewForConfig(ilog.config(restConfig(srv, nil)))
		if err != nil {
			t.Fatal(err)
		}
		factory := metadatainformer.NewFilteredSharedInformerFactory(ic, 0, testNamespace, nil)
		informer := factory.ForResource(widgetsGVR).Informer()
		var mu sync.Mutex
		var seen []string
		record := func(what string, obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			m, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				t.Errorf("the informer delivered %T, want *metav1.PartialObjectMetadata", obj)
				return
			}
			mu.Lock()
			seen = append(seen, what+" "+m.Name)
			mu.Unlock()
		}
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { record("add", obj) },
			UpdateFunc: func(_, obj any) { record("update", obj) },
			DeleteFunc: func(obj any) { record("delete", obj) },
		}); err != nil {
			t.Fatal(err)
		}
		stop, cancel := context.WithCancel(context.Background())
		factory.Start(stop.Done())
		t.Cleanup(func() {
			cancel()
			factory.Shutdown()
		})
		syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
		defer syncCancel()
		if !cache.WaitForCacheSync(syncCtx.Done(), informer.HasSynced) {
			t.Fatalf("the metadata informer did not sync within 30s; its requests:\n%s", ilog)
		}
		for _, e := range ilog.all() {
			if e.Status == http.StatusOK {
				if mt, _ := mediaTypeOf(e.ContentType); mt != mediaProtobuf {
					t.Errorf("the informer got %q, want protobuf: %s", e.ContentType, e)
				}
			}
		}
		t.Logf("metadata informer requests until synced:\n%s", ilog)

		serverState := func() map[string]string {
			list, err := meta.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			state := map[string]string{}
			for _, it := range list.Items {
				state[testNamespace+"/"+it.Name] = it.ResourceVersion + " " + it.Labels["step"]
			}
			return state
		}
		cached := func() map[string]string {
			state := map[string]string{}
			for _, obj := range informer.GetStore().List() {
				m := obj.(*metav1.PartialObjectMetadata)
				state[m.Namespace+"/"+m.Name] = m.ResourceVersion + " " + m.Labels["step"]
			}
			return state
		}
		converge := func(what string) {
			t.Helper()
			want := serverState()
			eventually(t, 15*time.Second, func() bool { return stateDiff(want, cached()) == "" },
				func() string { return what + ": " + stateDiff(want, cached()) })
		}
		converge("after sync")

		if _, err := widgets.Create(ctx, labeledWidget("m-late", "Green", map[string]string{"step": "made"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		modify(t, ctx, widgets, "m-c", func(u *unstructured.Unstructured) { setLabel(u, "step", "changed") })
		if err := widgets.Delete(ctx, "m-new", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		converge("after a create, an update and a delete")
		mu.Lock()
		defer mu.Unlock()
		for _, want := range []string{"add m-late", "update m-c", "delete m-new"} {
			if !slices.Contains(seen, want) {
				t.Errorf("the informer's handler never saw %q; it saw %v", want, seen)
			}
		}
	})
}

// TestFormatsProtobuf reads and writes widgets over plain HTTP in Kubernetes
// protobuf and decodes every response with apimachinery's own protobuf
// serializer: PartialObjectMetadata (every ObjectMeta field), a paged
// PartialObjectMetadataList (ListMeta), a Status, and the Widget itself
// (envelope by the serializer, raw by its documented field numbers).
func TestFormatsProtobuf(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 90*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
	base := srv.URL + widgetsPath

	// pb-full: every ObjectMeta field a client can set, a spec with every
	// field, and a status with a condition.
	full := newWidget("pb-full", map[string]any{
		"color": "Green", "replicas": int64(4), "size": int64(9),
		"ports":    []any{map[string]any{"name": "http", "port": int64(80)}, map[string]any{"name": "dns", "port": int64(53), "protocol": "UDP"}},
		"selector": map[string]any{"app": "pb", "tier": "web"},
	})
	full.SetLabels(map[string]string{"app": "pb", "tier": "web"})
	full.SetAnnotations(map[string]string{"example.com/note": "protobuf", "empty": ""})
	full.SetFinalizers([]string{"example.com/keep"})
	// Its owner exists: the garbage collector would delete a widget whose
	// owner does not.
	gold, err := dynamicClient(t, srv, nil).Resource(widgetClassesGVR).Create(ctx, newWidgetClass("gold", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	goldUID := gold.GetUID()
	full.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: "example.com/v1", Kind: "WidgetClass", Name: "gold", UID: gold.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
	}})
	made, err := widgets.Create(ctx, full, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pb-full: %v", err)
	}
	_ = unstructured.SetNestedField(made.Object, int64(2), "status", "replicas")
	_ = unstructured.SetNestedField(made.Object, int64(1), "status", "observedGeneration")
	_ = unstructured.SetNestedSlice(made.Object, []any{map[string]any{
		"type": "Ready", "status": "True", "observedGeneration": int64(1),
		"lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "AllGood", "message": "ready to go",
	}}, "status", "conditions")
	if _, err := widgets.UpdateStatus(ctx, made, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status of pb-full: %v", err)
	}
	// pb-managed: with managedFields set by the client, so that
	// ManagedFieldsEntry travels too.
	managed := newWidget("pb-managed", map[string]any{"color": "Blue"})
	managed.SetLabels(map[string]string{"app": "pb"})
	managed.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager: "e2e-formats", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "example.com/v1",
		Time: &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:color":{}}}`),
	}, {
		Manager: "e2e-status", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "example.com/v1",
		Time: &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)}, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:replicas":{}}}`), Subresource: "status",
	}})
	if _, err := widgets.Create(ctx, managed, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pb-managed: %v", err)
	}
	for _, name := range []string{"pb-x1", "pb-x2"} {
		if _, err := widgets.Create(ctx, newWidget(name, map[string]any{"color": "Red"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}

	// jsonWidget is what JSON says of a widget, in the same Go structs.
	jsonWidget := func(t *testing.T, name string) pbWidget {
		t.Helper()
		r := rawDo(t, "GET", base+"/"+name, nil, "Accept", "application/json")
		if r.code != http.StatusOK {
			t.Fatalf("GET %s in JSON: %s", name, r)
		}
		var w pbWidget
		if err := json.Unmarshal(r.body, &w); err != nil {
			t.Fatalf("GET %s in JSON: %v", name, err)
		}
		return w
	}

	t.Run("partial-object-metadata", func(t *testing.T) {
		for _, name := range []string{"pb-full", "pb-managed"} {
			r := rawDo(t, "GET", base+"/"+name, nil, "Accept", mediaProtobuf+";as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
			if r.code != http.StatusOK {
				t.Fatalf("GET %s: %s", name, r)
			}
			if ct := r.contentType(); ct != mediaProtobuf { // bare, as kube-apiserver's
				t.Errorf("Content-Type = %q", ct)
			}
			obj, gvk := decodeProtobuf(t, r.body)
			pom, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				t.Fatalf("decoded %T (%v), want *metav1.PartialObjectMetadata", obj, gvk)
			}
			if gvk.Group != "meta.k8s.io" || gvk.Version != "v1" || gvk.Kind != "PartialObjectMetadata" {
				t.Errorf("envelope names %v", gvk)
			}
			want := jsonWidget(t, name).Metadata
			if !equality.Semantic.DeepEqual(pom.ObjectMeta, want) {
				t.Errorf("%s: protobuf ObjectMeta differs from JSON's:\nprotobuf: %s\njson:     %s", name, mustJSON(pom.ObjectMeta), mustJSON(want))
			}
			m := pom.ObjectMeta
			if m.Name != name || m.Namespace != testNamespace || m.UID == "" || m.ResourceVersion == "" || m.Generation != 1 || m.CreationTimestamp.IsZero() {
				t.Errorf("%s: name %q namespace %q uid %q rv %q generation %d created %v", name, m.Name, m.Namespace, m.UID, m.ResourceVersion, m.Generation, m.CreationTimestamp)
			}
			if time.Since(m.CreationTimestamp.Time).Abs() > 5*time.Minute {
				t.Errorf("%s: creationTimestamp %v is not about now", name, m.CreationTimestamp)
			}
			switch name {
			case "pb-full":
				if m.Labels["app"] != "pb" || m.Labels["tier"] != "web" || len(m.Labels) != 2 {
					t.Errorf("labels = %v", m.Labels)
				}
				if v, ok := m.Annotations["empty"]; !ok || v != "" || m.Annotations["example.com/note"] != "protobuf" {
					t.Errorf("annotations = %v (an empty value must survive)", m.Annotations)
				}
				if len(m.Finalizers) != 1 || m.Finalizers[0] != "example.com/keep" {
					t.Errorf("finalizers = %v", m.Finalizers)
				}
				if len(m.OwnerReferences) != 1 {
					t.Errorf("ownerReferences = %v", m.OwnerReferences)
				} else if o := m.OwnerReferences[0]; o.APIVersion != "example.com/v1" || o.Kind != "WidgetClass" || o.Name != "gold" ||
					o.UID != goldUID || o.Controller == nil || !*o.Controller || o.BlockOwnerDeletion == nil || *o.BlockOwnerDeletion {
					t.Errorf("ownerReferences[0] = %s", mustJSON(o))
				}
			case "pb-managed":
				// As kube-apiserver: the create is recorded on top of the
				// entries sent; it took every field e2e-formats claimed, so
				// that entry is gone, and e2e-status's stays as sent.
				if len(m.ManagedFields) != 2 {
					t.Fatalf("managedFields = %s, want e2e-status's and the creator's", mustJSON(m.ManagedFields))
				}
				if e := m.ManagedFields[0]; e.Manager != "e2e-status" || e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "status" ||
					e.FieldsType != "FieldsV1" || e.Time == nil || !e.Time.Time.Equal(time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)) ||
					e.FieldsV1 == nil || string(e.FieldsV1.GetRawBytes()) != `{"f:status":{"f:replicas":{}}}` {
					t.Errorf("managedFields[0] = %s", mustJSON(e))
				}
				e := m.ManagedFields[1]
				var fields map[string]any
				if e.Operation != metav1.ManagedFieldsOperationUpdate || e.APIVersion != "example.com/v1" || e.Subresource != "" ||
					e.FieldsV1 == nil || json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields) != nil || fields["f:spec"] == nil || fields["f:metadata"] == nil {
					t.Errorf("managedFields[1] = %s, want the creator's Update naming f:metadata and f:spec", mustJSON(e))
				}
			}
		}
	})

	t.Run("partial-object-metadata-list", func(t *testing.T) {
		const accept = mediaProtobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
		var names []string
		var rv string
		next := ""
		for page := 0; page < 10; page++ {
			q := url.Values{"limit": {"1"}}
			if next != "" {
				q.Set("continue", next)
			}
			r := rawDo(t, "GET", base+"?"+q.Encode(), nil, "Accept", accept)
			if r.code != http.StatusOK {
				t.Fatalf("page %d: %s", page, r)
			}
			if ct := r.contentType(); ct != mediaProtobuf {
				t.Errorf("page %d: Content-Type = %q, want %q", page, ct, mediaProtobuf)
			}
			obj, gvk := decodeProtobuf(t, r.body)
			list, ok := obj.(*metav1.PartialObjectMetadataList)
			if !ok {
				t.Fatalf("page %d decoded %T (%v), want *metav1.PartialObjectMetadataList", page, obj, gvk)
			}
			if gvk.Kind != "PartialObjectMetadataList" || gvk.Group != "meta.k8s.io" || gvk.Version != "v1" {
				t.Errorf("page %d: envelope names %v", page, gvk)
			}
			if len(list.Items) != 1 {
				t.Fatalf("page %d has %d items, want 1 (limit=1)", page, len(list.Items))
			}
			names = append(names, list.Items[0].Name)
			if list.Items[0].UID == "" || list.Items[0].ResourceVersion == "" || list.Items[0].Namespace != testNamespace {
				t.Errorf("page %d item = %s", page, mustJSON(list.Items[0]))
			}
			if page == 0 {
				rv = list.ResourceVersion
			} else if list.ResourceVersion != rv {
				t.Errorf("page %d has resourceVersion %s, the first page %s: pages of one list are one snapshot", page, list.ResourceVersion, rv)
			}
			left := 4 - 1 - page
			if left > 0 {
				if list.Continue == "" || list.RemainingItemCount == nil || *list.RemainingItemCount != int64(left) {
					t.Errorf("page %d: continue %q remainingItemCount %v, want a token and %d", page, list.Continue, list.RemainingItemCount, left)
				}
			} else if list.Continue != "" || list.RemainingItemCount != nil {
				t.Errorf("last page: continue %q remainingItemCount %v, want neither", list.Continue, list.RemainingItemCount)
			}
			next = list.Continue
			if next == "" {
				break
			}
		}
		if rv == "" {
			t.Error("the list has no resourceVersion")
		}
		if got := strings.Join(names, ","); got != "pb-full,pb-managed,pb-x1,pb-x2" {
			t.Errorf("pages held %s, want pb-full,pb-managed,pb-x1,pb-x2", got)
		}
	})

	t.Run("status", func(t *testing.T) {
		r := rawDo(t, "GET", base+"/missing", nil, "Accept", mediaProtobuf)
		if r.code != http.StatusNotFound {
			t.Fatalf("GET missing: %s", r)
		}
		if mt, _ := mediaTypeOf(r.contentType()); mt != mediaProtobuf {
			t.Errorf("Content-Type = %q, want protobuf (the format the client asked for)", r.contentType())
		}
		obj, gvk := decodeProtobuf(t, r.body)
		st, ok := obj.(*metav1.Status)
		if !ok {
			t.Fatalf("decoded %T (%v), want *metav1.Status", obj, gvk)
		}
		if gvk.Group != "" || gvk.Version != "v1" || gvk.Kind != "Status" {
			t.Errorf("envelope names %v, want v1 Status", gvk)
		}
		if st.Status != metav1.StatusFailure || st.Code != 404 || st.Reason != metav1.StatusReasonNotFound ||
			st.Message != `widgets.example.com "missing" not found` {
			t.Errorf("status = %s", mustJSON(st))
		}
		if d := st.Details; d == nil || d.Name != "missing" || d.Group != "example.com" || d.Kind != "widgets" {
			t.Errorf("status details = %s, want name missing, group example.com, kind widgets", mustJSON(st.Details))
		}
	})

	t.Run("widget", func(t *testing.T) {
		r := rawDo(t, "GET", base+"/pb-full", nil, "Accept", mediaProtobuf)
		if r.code != http.StatusOK {
			t.Fatalf("GET pb-full: %s", r)
		}
		if ct := r.contentType(); ct != mediaProtobuf {
			t.Errorf("Content-Type = %q, want %q", ct, mediaProtobuf)
		}
		if _, _, err := protobufSerializer.Decode(r.body, nil, nil); !runtime.IsNotRegisteredError(err) {
			t.Errorf("decoding a Widget with a scheme that does not know it: err = %v, want not registered", err)
		}
		unk := decodeEnvelope(t, r.body)
		// contentEncoding and contentType stay empty: raw is plain protobuf.
		// (The serializer fills contentType in only when raw itself starts
		// with the magic, which a bare message does not.)
		if unk.APIVersion != "example.com/v1" || unk.Kind != "Widget" || unk.ContentEncoding != "" || unk.ContentType != "" {
			t.Errorf("envelope = apiVersion %q kind %q contentEncoding %q contentType %q, want example.com/v1 Widget and neither encoding nor type",
				unk.APIVersion, unk.Kind, unk.ContentEncoding, unk.ContentType)
		}
		got, err := decodeWidgetProto(unk.Raw)
		if err != nil {
			t.Fatalf("decoding the raw Widget: %v", err)
		}
		got.TypeMeta = metav1.TypeMeta{APIVersion: unk.APIVersion, Kind: unk.Kind}
		want := jsonWidget(t, "pb-full")
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("the protobuf Widget differs from JSON's:\nprotobuf: %s\njson:     %s", mustJSON(got), mustJSON(want))
		}
		if got.Spec.Color != "Green" || got.Spec.Replicas == nil || *got.Spec.Replicas != 4 || got.Spec.Size != 9 ||
			len(got.Spec.Ports) != 2 || got.Spec.Ports[0].Protocol != "TCP" || got.Spec.Ports[1].Protocol != "UDP" || got.Spec.Selector["tier"] != "web" {
			t.Errorf("spec = %s", mustJSON(got.Spec))
		}
		if got.Status.Replicas != 2 || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Reason != "AllGood" ||
			!got.Status.Conditions[0].LastTransitionTime.Equal(&metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}) {
			t.Errorf("status = %s", mustJSON(got.Status))
		}
	})

	t.Run("widget-list", func(t *testing.T) {
		r := rawDo(t, "GET", base, nil, "Accept", mediaProtobuf)
		if r.code != http.StatusOK || r.contentType() != mediaProtobuf {
			t.Fatalf("GET list in protobuf: %s", r)
		}
		unk := decodeEnvelope(t, r.body)
		if unk.APIVersion != "example.com/v1" || unk.Kind != "WidgetList" {
			t.Errorf("envelope names %s %s, want example.com/v1 WidgetList", unk.APIVersion, unk.Kind)
		}
		lm, raws, err := decodeListProto(unk.Raw)
		if err != nil {
			t.Fatalf("decoding the raw list: %v", err)
		}
		jr := rawDo(t, "GET", base, nil, "Accept", "application/json")
		var jl struct {
			Metadata metav1.ListMeta `json:"metadata"`
			Items    []pbWidget      `json:"items"`
		}
		if err := json.Unmarshal(jr.body, &jl); err != nil {
			t.Fatalf("the JSON list: %v", err)
		}
		if lm.ResourceVersion == "" || lm.ResourceVersion != jl.Metadata.ResourceVersion {
			t.Errorf("protobuf list resourceVersion %q, JSON's %q", lm.ResourceVersion, jl.Metadata.ResourceVersion)
		}
		if len(raws) != len(jl.Items) || len(raws) != 4 {
			t.Fatalf("protobuf list has %d items, JSON's %d, want 4", len(raws), len(jl.Items))
		}
		for i, raw := range raws {
			w, err := decodeWidgetProto(raw)
			if err != nil {
				t.Fatalf("item %d: %v", i, err)
			}
			want := jl.Items[i]
			want.TypeMeta = metav1.TypeMeta{} // list items carry no type in protobuf
			if !equality.Semantic.DeepEqual(w, want) {
				t.Errorf("item %d differs from JSON's:\nprotobuf: %s\njson:     %s", i, mustJSON(w), mustJSON(want))
			}
		}
	})

	t.Run("widget-watch", func(t *testing.T) {
		list := rawDo(t, "GET", base+"?limit=1", nil, "Accept", mediaProtobuf+";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
		obj, _ := decodeProtobuf(t, list.body)
		from := obj.(*metav1.PartialObjectMetadataList).ResourceVersion

		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(wctx, "GET", base+"?watch=true&timeoutSeconds=20&resourceVersion="+from, nil)
		req.Header.Set("Accept", mediaProtobuf)
		resp, err := rawHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("watch: %d %q", resp.StatusCode, b)
		}
		if ct := resp.Header.Get("Content-Type"); ct != mediaProtobuf+";stream=watch" {
			t.Errorf("watch Content-Type = %q, want %s;stream=watch", ct, mediaProtobuf)
		}
		made, err := widgets.Create(ctx, newWidget("pb-watched", map[string]any{"color": "Blue", "size": int64(2)}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := readWatchFrame(resp.Body)
		if err != nil {
			t.Fatalf("reading the first frame: %v", err)
		}
		if ev.Type != "ADDED" {
			t.Errorf("event type %q, want ADDED", ev.Type)
		}
		unk := decodeEnvelope(t, ev.Object.Raw)
		if unk.APIVersion != "example.com/v1" || unk.Kind != "Widget" {
			t.Errorf("event object envelope names %s %s", unk.APIVersion, unk.Kind)
		}
		w, err := decodeWidgetProto(unk.Raw)
		if err != nil {
			t.Fatalf("the event's Widget: %v", err)
		}
		if w.Metadata.Name != "pb-watched" || w.Metadata.ResourceVersion != made.GetResourceVersion() || w.Spec.Color != "Blue" || w.Spec.Size != 2 {
			t.Errorf("ADDED %s", mustJSON(w))
		}
	})

	t.Run("delete-options", func(t *testing.T) {
		// A typed clientset whose content type is protobuf sends its
		// DeleteOptions in protobuf, typed in the client's group version.
		uid := jsonWidget(t, "pb-x2").Metadata.UID
		deleteBody := func(uid types.UID) []byte {
			raw, err := (&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			return envelope(t, "example.com/v1", "DeleteOptions", raw)
		}
		r := rawDo(t, "DELETE", base+"/pb-x2", deleteBody("not-the-uid"), "Content-Type", mediaProtobuf, "Accept", mediaProtobuf)
		if r.code != http.StatusConflict {
			t.Errorf("DELETE with protobuf DeleteOptions whose UID precondition is wrong: want 409 Conflict, got %s", r)
		}
		r = rawDo(t, "DELETE", base+"/pb-x2", deleteBody(uid), "Content-Type", mediaProtobuf, "Accept", mediaProtobuf)
		if r.code != http.StatusOK {
			t.Fatalf("DELETE with protobuf DeleteOptions: %s", r)
		}
		if r := rawDo(t, "GET", base+"/pb-x2", nil, "Accept", "application/json"); r.code != http.StatusNotFound {
			t.Errorf("GET after DELETE: %s", r)
		}
	})

	t.Run("create-and-update", func(t *testing.T) {
		spec := pbWidgetSpec{
			Color: "Blue", Replicas: ptr.To[int32](3), Size: 7,
			Ports:    []pbWidgetPort{{Name: "grpc", Port: 9090}},
			Selector: map[string]string{"app": "pb-made"},
		}
		raw := encodeWidgetProto(t, metav1.ObjectMeta{
			Name:        "pb-made",
			Labels:      map[string]string{"made": "protobuf"},
			Annotations: map[string]string{"example.com/by": "hand"},
		}, spec)
		body := envelope(t, "example.com/v1", "Widget", raw)
		r := rawDo(t, "POST", base, body, "Content-Type", mediaProtobuf, "Accept", mediaProtobuf)
		if r.code != http.StatusCreated {
			t.Fatalf("POST in protobuf: %s", r)
		}
		if r.contentType() != mediaProtobuf {
			t.Errorf("Content-Type = %q, want %q", r.contentType(), mediaProtobuf)
		}
		unk := decodeEnvelope(t, r.body)
		created, err := decodeWidgetProto(unk.Raw)
		if err != nil {
			t.Fatalf("the created Widget: %v", err)
		}
		created.TypeMeta = metav1.TypeMeta{APIVersion: unk.APIVersion, Kind: unk.Kind}
		stored := jsonWidget(t, "pb-made")
		if !equality.Semantic.DeepEqual(created, stored) {
			t.Errorf("the POST response differs from a JSON GET:\nprotobuf: %s\njson:     %s", mustJSON(created), mustJSON(stored))
		}
		wantSpec := spec
		wantSpec.Ports = []pbWidgetPort{{Name: "grpc", Port: 9090, Protocol: "TCP"}} // defaulted
		if !equality.Semantic.DeepEqual(stored.Spec, wantSpec) {
			t.Errorf("stored spec = %s, want %s", mustJSON(stored.Spec), mustJSON(wantSpec))
		}
		if stored.Metadata.Labels["made"] != "protobuf" || stored.Metadata.Annotations["example.com/by"] != "hand" ||
			stored.Metadata.UID == "" || stored.Metadata.Generation != 1 || stored.Metadata.Namespace != testNamespace {
			t.Errorf("stored metadata = %s", mustJSON(stored.Metadata))
		}

		// PUT in protobuf: the new color, at the current resourceVersion.
		spec.Color = "Red"
		raw = encodeWidgetProto(t, created.Metadata, spec)
		r = rawDo(t, "PUT", base+"/pb-made", envelope(t, "example.com/v1", "Widget", raw), "Content-Type", mediaProtobuf, "Accept", mediaProtobuf)
		if r.code != http.StatusOK {
			t.Fatalf("PUT in protobuf: %s", r)
		}
		updated, err := decodeWidgetProto(decodeEnvelope(t, r.body).Raw)
		if err != nil {
			t.Fatalf("the updated Widget: %v", err)
		}
		stored = jsonWidget(t, "pb-made")
		if stored.Spec.Color != "Red" || stored.Metadata.Generation != 2 || updated.Metadata.ResourceVersion != stored.Metadata.ResourceVersion ||
			stored.Metadata.ResourceVersion == created.Metadata.ResourceVersion {
			t.Errorf("after the PUT: response rv %s; stored %s", updated.Metadata.ResourceVersion, mustJSON(stored))
		}

		// A PUT at the old resourceVersion conflicts, and says so in protobuf.
		r = rawDo(t, "PUT", base+"/pb-made", envelope(t, "example.com/v1", "Widget", raw), "Content-Type", mediaProtobuf, "Accept", mediaProtobuf)
		if r.code != http.StatusConflict {
			t.Fatalf("stale PUT in protobuf: %s", r)
		}
		obj, _ := decodeProtobuf(t, r.body)
		if st, ok := obj.(*metav1.Status); !ok || st.Reason != metav1.StatusReasonConflict || st.Code != 409 {
			t.Errorf("stale PUT answered %s", mustJSON(obj))
		}
	})
}

// cborMarker is set in the child process that runs the CBOR test with
// client-go's CBOR feature gates on.
const cborMarker = "KAPI_E2E_CBOR_CHILD"

// TestFormatsCBORDynamicClient drives widgets through the dynamic client with
// KUBE_FEATURE_ClientsAllowCBOR and KUBE_FEATURE_ClientsPreferCBOR: client-go
// reads its feature gates once per process, from the environment, so the
// test runs in a child process. Every response must have been CBOR (watch:
// a CBOR sequence), and every object equal what JSON says of it.
func TestFormatsCBORDynamicClient(t *testing.T) {
	if !runInChildProcess(t, cborMarker, "KUBE_FEATURE_ClientsAllowCBOR=true", "KUBE_FEATURE_ClientsPreferCBOR=true") {
		return
	}
	if !features.FeatureGates().Enabled(features.ClientsAllowCBOR) || !features.FeatureGates().Enabled(features.ClientsPreferCBOR) {
		t.Fatal("client-go's CBOR feature gates are off in the child process")
	}
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	log := &wireLog{}
	client, err := dynamic.NewForConfig(log.config(restConfig(srv, nil)))
	if err != nil {
		t.Fatal(err)
	}
	widgets := client.Resource(widgetsGVR).Namespace(testNamespace)

	// wantCBOR checks every round trip since the last reset.
	wantCBOR := func(t *testing.T, what string, code int, requestCT string) {
		t.Helper()
		entries := log.all()
		log.reset()
		if len(entries) != 1 {
			t.Errorf("%s made %d requests, want 1:\n%s", what, len(entries), entriesString(entries))
		}
		for _, e := range entries {
			if e.Status != code || e.ContentType != mediaCBOR {
				t.Errorf("%s: response %d %q, want %d %s; %s", what, e.Status, e.ContentType, code, mediaCBOR, e)
			}
			if mt, _ := mediaTypeOf(e.RequestContentType); mt != requestCT {
				t.Errorf("%s: request Content-Type %q, want %q; %s", what, e.RequestContentType, requestCT, e)
			}
			if e.Accept != "application/json;q=0.9,application/cbor;q=1" {
				t.Errorf("%s: Accept %q", what, e.Accept)
			}
		}
	}
	jsonObject := func(t *testing.T, name string) *unstructured.Unstructured {
		t.Helper()
		r := rawDo(t, "GET", srv.URL+widgetsPath+"/"+name, nil, "Accept", "application/json")
		if r.code != http.StatusOK {
			t.Fatalf("GET %s in JSON: %s", name, r)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(r.body); err != nil {
			t.Fatalf("GET %s in JSON: %v", name, err)
		}
		return u
	}
	sameAsJSON := func(t *testing.T, what string, got *unstructured.Unstructured) {
		t.Helper()
		want := jsonObject(t, got.GetName())
		if !equality.Semantic.DeepEqual(got.Object, want.Object) {
			t.Errorf("%s: the CBOR object differs from JSON's:\ncbor: %s\njson: %s", what, mustJSON(got.Object), mustJSON(want.Object))
		}
	}

	log.reset()
	a := newWidget("cbor-a", map[string]any{
		"color": "Red", "size": int64(2),
		"ports":    []any{map[string]any{"name": "http", "port": int64(80)}},
		"selector": map[string]any{"app": "a"},
	})
	a.SetLabels(map[string]string{"via": "cbor"})
	created, err := widgets.Create(ctx, a, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v\n%s", err, log)
	}
	wantCBOR(t, "create", http.StatusCreated, mediaCBOR)
	sameAsJSON(t, "create", created)
	if p, _, _ := unstructured.NestedSlice(created.Object, "spec", "ports"); len(p) != 1 || p[0].(map[string]any)["protocol"] != "TCP" {
		t.Errorf("created spec.ports = %v, want the defaulted protocol", p)
	}

	got, err := widgets.Get(ctx, "cbor-a", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	wantCBOR(t, "get", http.StatusOK, "")
	sameAsJSON(t, "get", got)
	if !equality.Semantic.DeepEqual(got.Object, created.Object) {
		t.Errorf("get differs from create:\nget:    %s\ncreate: %s", mustJSON(got.Object), mustJSON(created.Object))
	}

	w, err := widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	if entries := log.all(); len(entries) != 1 || entries[0].Status != http.StatusOK || entries[0].ContentType != mediaCBORSeq {
		t.Errorf("watch: want one 200 %s response, got:\n%s", mediaCBORSeq, entriesString(entries))
	}
	log.reset()
	expect := func(typ watch.EventType, want *unstructured.Unstructured) {
		t.Helper()
		ev := nextWatchEvent(t, w, fmt.Sprintf("%s %s", typ, want.GetName()))
		obj, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			t.Fatalf("event %s carries %T", ev.Type, ev.Object)
		}
		if ev.Type != typ || !equality.Semantic.DeepEqual(obj.Object, want.Object) {
			t.Errorf("event %s %s, want %s:\ngot:  %s\nwant: %s", ev.Type, obj.GetName(), typ, mustJSON(obj.Object), mustJSON(want.Object))
		}
	}

	upd := got.DeepCopy()
	_ = unstructured.SetNestedField(upd.Object, "Green", "spec", "color")
	updated, err := widgets.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	wantCBOR(t, "update", http.StatusOK, mediaCBOR)
	sameAsJSON(t, "update", updated)
	if c, _, _ := unstructured.NestedString(updated.Object, "spec", "color"); c != "Green" || updated.GetGeneration() != 2 {
		t.Errorf("updated color %q generation %d, want Green and 2", c, updated.GetGeneration())
	}
	expect(watch.Modified, updated)

	patched, err := widgets.Patch(ctx, "cbor-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	wantCBOR(t, "merge patch", http.StatusOK, string(types.MergePatchType))
	sameAsJSON(t, "merge patch", patched)
	expect(watch.Modified, patched)

	b, err := widgets.Create(ctx, newWidget("cbor-b", map[string]any{"color": "Blue"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create cbor-b: %v", err)
	}
	wantCBOR(t, "create cbor-b", http.StatusCreated, mediaCBOR)
	expect(watch.Added, b)

	c, err := widgets.Create(ctx, newWidget("cbor-c", map[string]any{"color": "Red", "replicas": int64(2)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create cbor-c: %v", err)
	}
	wantCBOR(t, "create cbor-c", http.StatusCreated, mediaCBOR)
	expect(watch.Added, c)

	list, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	wantCBOR(t, "list", http.StatusOK, "")
	jr := rawDo(t, "GET", srv.URL+widgetsPath, nil, "Accept", "application/json")
	jsonList := &unstructured.UnstructuredList{}
	if err := jsonList.UnmarshalJSON(jr.body); err != nil {
		t.Fatalf("the JSON list: %v", err)
	}
	if list.GetResourceVersion() == "" || list.GetResourceVersion() != jsonList.GetResourceVersion() ||
		list.GetKind() != "WidgetList" || list.GetAPIVersion() != "example.com/v1" {
		t.Errorf("CBOR list %s %s rv %q; JSON list rv %q", list.GetAPIVersion(), list.GetKind(), list.GetResourceVersion(), jsonList.GetResourceVersion())
	}
	if len(list.Items) != 3 || len(jsonList.Items) != 3 {
		t.Fatalf("CBOR list has %d items, JSON's %d, want 3", len(list.Items), len(jsonList.Items))
	}
	for i := range list.Items {
		if !equality.Semantic.DeepEqual(list.Items[i].Object, jsonList.Items[i].Object) {
			t.Errorf("list item %d differs:\ncbor: %s\njson: %s", i, mustJSON(list.Items[i].Object), mustJSON(jsonList.Items[i].Object))
		}
	}

	// A list with a limit carries continue and remainingItemCount in CBOR too.
	page, err := widgets.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatalf("list with limit: %v", err)
	}
	wantCBOR(t, "list with limit", http.StatusOK, "")
	if len(page.Items) != 1 || page.GetContinue() == "" || page.GetRemainingItemCount() == nil || *page.GetRemainingItemCount() != 2 {
		t.Errorf("first page: %d items, continue %q, remainingItemCount %v", len(page.Items), page.GetContinue(), page.GetRemainingItemCount())
	}

	_, err = widgets.Get(ctx, "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	wantCBOR(t, "get missing", http.StatusNotFound, "")
	wantStatus(t, err, 404, metav1.StatusReasonNotFound, "widgets", "missing", `widgets.example.com "missing" not found`)

	// The DeleteOptions travel in CBOR: a precondition on a wrong UID must
	// be read and fail.
	err = widgets.Delete(ctx, "cbor-a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("not-the-uid"))}})
	if !apierrors.IsConflict(err) {
		t.Errorf("delete with a wrong UID precondition: err = %v, want Conflict (were the CBOR DeleteOptions read?); requests:\n%s", err, log)
		log.reset()
	} else {
		wantCBOR(t, "delete with a wrong precondition", http.StatusConflict, mediaCBOR)
	}
	last := jsonObject(t, "cbor-a")
	if err := widgets.Delete(ctx, "cbor-a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(created.GetUID())}}); err != nil {
		t.Errorf("delete: %v; requests:\n%s", err, log)
		log.reset()
		// The rest of the test goes on with a JSON DELETE.
		if r := rawDo(t, "DELETE", srv.URL+widgetsPath+"/cbor-a", []byte(`{}`), "Content-Type", "application/json"); r.code != http.StatusOK {
			t.Fatalf("DELETE in JSON: %s", r)
		}
	} else {
		wantCBOR(t, "delete", http.StatusOK, mediaCBOR)
	}
	if r := rawDo(t, "GET", srv.URL+widgetsPath+"/cbor-a", nil, "Accept", "application/json"); r.code != http.StatusNotFound {
		t.Errorf("GET after delete: %s", r)
	}
	ev := nextWatchEvent(t, w, "DELETED cbor-a")
	gone, _ := ev.Object.(*unstructured.Unstructured)
	if ev.Type != watch.Deleted || gone == nil || gone.GetName() != "cbor-a" || gone.GetUID() != last.GetUID() {
		t.Fatalf("event %s %v, want DELETED cbor-a", ev.Type, ev.Object)
	}
	if !rvNewer(t, gone.GetResourceVersion(), last.GetResourceVersion()) {
		t.Errorf("DELETED cbor-a has resourceVersion %s, want one after %s", gone.GetResourceVersion(), last.GetResourceVersion())
	}
	gone.SetResourceVersion(last.GetResourceVersion())
	if !equality.Semantic.DeepEqual(gone.Object, last.Object) {
		t.Errorf("DELETED object (but its resourceVersion) differs from the last JSON GET:\ncbor: %s\njson: %s", mustJSON(gone.Object), mustJSON(last.Object))
	}

	// Server-side apply: with ClientsPreferCBOR, client-go always sends
	// application/apply-patch+cbor (k8s.io/client-go/util/apply.NewRequest).
	// A 415 would make that client send JSON bodies from then on, so apply
	// runs last, on a client of its own.
	applyLog := &wireLog{}
	applyClient, err := dynamic.NewForConfig(applyLog.config(restConfig(srv, nil)))
	if err != nil {
		t.Fatal(err)
	}
	applied, err := applyClient.Resource(widgetsGVR).Namespace(testNamespace).Apply(ctx, "cbor-d",
		newWidget("cbor-d", map[string]any{"color": "Blue", "size": int64(4)}), metav1.ApplyOptions{FieldManager: "e2e-cbor"})
	if err != nil {
		t.Fatalf("server-side apply in CBOR: %v; requests:\n%s", err, applyLog)
	}
	if e := applyLog.all(); len(e) != 1 || e[0].RequestContentType != string(types.ApplyCBORPatchType) || e[0].Status != http.StatusCreated || e[0].ContentType != mediaCBOR {
		t.Errorf("apply: want one %s request answered 201 %s:\n%s", types.ApplyCBORPatchType, mediaCBOR, applyLog)
	}
	sameAsJSON(t, "apply", applied)
	if s, _, _ := unstructured.NestedInt64(applied.Object, "spec", "size"); s != 4 {
		t.Errorf("applied spec.size = %d, want 4", s)
	}
	expect(watch.Added, applied)
}

func entriesString(entries []wireEntry) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}

// TestFormatsKubectl checks what kubectl prints from the Tables kapi serves:
// the registered columns of widgets (get, get NAME, -o wide, -w) and the
// default Name and Created At of widget classes, with the dispatcher and
// the oldest and newest pinned kubectl.
func TestFormatsKubectl(t *testing.T) {
	bins := map[string]string{"dispatcher": dispatcherKubectl}
	if pinned := pinnedKubectls(); len(pinned) > 0 {
		sort.Strings(pinned)
		bins[strings.TrimPrefix(filepath.Base(pinned[0]), "kubectl.")] = pinned[0]
		bins[strings.TrimPrefix(filepath.Base(pinned[len(pinned)-1]), "kubectl.")] = pinned[len(pinned)-1]
	}
	for name, bin := range bins {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kubectlTables(t, bin)
		})
	}
}

var ageCell = regexp.MustCompile(`^[0-9]+[smhdy]([0-9]+[smh])?$`)

// tableLines splits kubectl's table output into rows of fields.
func tableLines(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	return rows
}

func kubectlTables(t *testing.T, bin string) {
	srv := startServer(t)
	k := newKubectl(t, bin, srv)
	ctx := ctxFor(t, 120*time.Second)
	dyn := dynamicClient(t, srv, nil)
	widgets := dyn.Resource(widgetsGVR).Namespace(testNamespace)
	for _, w := range []*unstructured.Unstructured{
		newWidget("alpha", map[string]any{"color": "Red"}),
		newWidget("beta", map[string]any{"color": "Green", "replicas": int64(3)}),
	} {
		if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dyn.Resource(widgetClassesGVR).Create(ctx, newWidgetClass("gold", map[string]any{"maxReplicas": int64(5)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	wantWidgetTable := func(t *testing.T, out string, names ...string) {
		t.Helper()
		rows := tableLines(out)
		if len(rows) == 0 || strings.Join(rows[0], " ") != "NAME COLOR REPLICAS AGE" {
			t.Fatalf("header is not NAME COLOR REPLICAS AGE:\n%s", out)
		}
		want := map[string][]string{"alpha": {"alpha", "Red", "1"}, "beta": {"beta", "Green", "3"}}
		if len(rows)-1 != len(names) {
			t.Errorf("%d rows, want %v:\n%s", len(rows)-1, names, out)
		}
		for i, name := range names {
			if i+1 >= len(rows) {
				break
			}
			row := rows[i+1]
			if len(row) != 4 || strings.Join(row[:3], " ") != strings.Join(want[name], " ") || !ageCell.MatchString(row[3]) {
				t.Errorf("row %d = %q, want %v and an age:\n%s", i+1, row, want[name], out)
			}
		}
	}

	t.Run("get-widgets", func(t *testing.T) {
		wantWidgetTable(t, k.must(t, "get", "widgets"), "alpha", "beta")
	})
	t.Run("get-widget", func(t *testing.T) {
		wantWidgetTable(t, k.must(t, "get", "widget", "beta"), "beta")
	})
	t.Run("get-widgets-wide", func(t *testing.T) {
		// Every column has priority 0: wide shows the same ones.
		wantWidgetTable(t, k.must(t, "get", "widgets", "-o", "wide"), "alpha", "beta")
	})
	t.Run("get-widgetclasses", func(t *testing.T) {
		out := k.must(t, "get", "widgetclasses")
		rows := tableLines(out)
		if len(rows) != 2 || strings.Join(rows[0], " ") != "NAME CREATED AT" {
			t.Fatalf("want the header NAME CREATED AT and one row:\n%s", out)
		}
		if len(rows[1]) != 2 || rows[1][0] != "gold" {
			t.Fatalf("row = %q, want gold and its creation time:\n%s", rows[1], out)
		}
		if ts, err := time.Parse(time.RFC3339, rows[1][1]); err != nil || time.Since(ts).Abs() > 5*time.Minute {
			t.Errorf("CREATED AT = %q (%v), want an RFC 3339 time about now", rows[1][1], err)
		}
	})
	t.Run("get-widgets-watch", func(t *testing.T) {
		w := k.start(t, "get", "widgets", "-w")
		header := w.waitLine(t, "the header", 30*time.Second, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "NAME") })
		if f := strings.Fields(header); strings.Join(f, " ") != "NAME COLOR REPLICAS AGE" {
			t.Errorf("header = %q, want NAME COLOR REPLICAS AGE", header)
		}
		w.waitLine(t, "the row for beta", 30*time.Second, rowNamed("beta"))
		modify(t, ctx, widgets, "beta", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
			_ = unstructured.SetNestedField(u.Object, "Blue", "spec", "color")
		})
		line := w.waitLine(t, "a new row for beta with 5 replicas", 30*time.Second, func(l string) bool {
			f := strings.Fields(l)
			return len(f) == 4 && f[0] == "beta" && f[2] == "5"
		})
		if f := strings.Fields(line); f[1] != "Blue" || !ageCell.MatchString(f[3]) {
			t.Errorf("updated row = %q, want beta Blue 5 <age>", line)
		}
		w.stop()
	})
}

// TestFormatsNegotiation checks what a server answers to Accept and
// Content-Type headers: protobuf for the typed clientset's Accept on a type
// with protobuf tags, 406 for a watch in YAML, 415 for an unknown body type,
// and 400 (never 500) for garbage protobuf and CBOR bodies, which change
// nothing.
func TestFormatsNegotiation(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	dyn := dynamicClient(t, srv, nil)
	classes := dyn.Resource(widgetClassesGVR)
	if _, err := classes.Create(ctx, newWidgetClass("silver", map[string]any{"description": "shiny", "maxReplicas": int64(7)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	keep, err := dyn.Resource(widgetsGVR).Namespace(testNamespace).Create(ctx, newWidget("keep", map[string]any{"color": "Red"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := srv.URL + widgetsPath
	typedAccept := "application/vnd.kubernetes.protobuf, */*"

	t.Run("typed-accept-widgetclass", func(t *testing.T) {
		// WidgetClass carries protobuf tags (examples/widgets/widgetapi), so
		// the typed clientset's first choice is what it gets.
		r := rawDo(t, "GET", srv.URL+"/apis/example.com/v1/widgetclasses/silver", nil, "Accept", typedAccept)
		if r.code != http.StatusOK || r.contentType() != mediaProtobuf {
			t.Fatalf("GET with Accept %q: %s", typedAccept, r)
		}
		unk := decodeEnvelope(t, r.body)
		if unk.APIVersion != "example.com/v1" || unk.Kind != "WidgetClass" {
			t.Errorf("envelope names %s %s", unk.APIVersion, unk.Kind)
		}
		var meta metav1.ObjectMeta
		var desc string
		var maxReplicas int64
		err := protoFields(unk.Raw, func(num protowire.Number, typ protowire.Type, value []byte, _ uint64) error {
			switch num {
			case 1:
				return meta.Unmarshal(value)
			case 2:
				return protoFields(value, func(num protowire.Number, _ protowire.Type, value []byte, v uint64) error {
					switch num {
					case 1:
						desc = string(value)
					case 2:
						maxReplicas = int64(v)
					default:
						return fmt.Errorf("spec field %d", num)
					}
					return nil
				})
			}
			return fmt.Errorf("WidgetClass field %d", num)
		})
		if err != nil {
			t.Fatalf("decoding the raw WidgetClass: %v", err)
		}
		if meta.Name != "silver" || meta.Namespace != "" || meta.UID == "" || desc != "shiny" || maxReplicas != 7 {
			t.Errorf("WidgetClass = %s, description %q, maxReplicas %d", mustJSON(meta), desc, maxReplicas)
		}

		r = rawDo(t, "GET", srv.URL+"/apis/example.com/v1/widgetclasses", nil, "Accept", typedAccept)
		if r.code != http.StatusOK || r.contentType() != mediaProtobuf {
			t.Fatalf("list with Accept %q: %s", typedAccept, r)
		}
		if unk := decodeEnvelope(t, r.body); unk.Kind != "WidgetClassList" || unk.APIVersion != "example.com/v1" {
			t.Errorf("list envelope names %s %s", unk.APIVersion, unk.Kind)
		} else if lm, items, err := decodeListProto(unk.Raw); err != nil || len(items) != 1 || lm.ResourceVersion == "" {
			t.Errorf("list: %d items, rv %q, err %v", len(items), lm.ResourceVersion, err)
		}
	})

	t.Run("yaml", func(t *testing.T) {
		r := rawDo(t, "GET", base+"/keep", nil, "Accept", "application/yaml")
		if r.code != http.StatusOK || r.contentType() != "application/yaml" || !bytes.Contains(r.body, []byte("name: keep")) {
			t.Errorf("GET in YAML: %s", r)
		}
		r = rawDo(t, "GET", base+"?watch=true&timeoutSeconds=1", nil, "Accept", "application/yaml")
		wantStatusBody(t, "watch in YAML", r, http.StatusNotAcceptable, "NotAcceptable")
	})

	t.Run("not-acceptable", func(t *testing.T) {
		r := rawDo(t, "GET", base+"/keep", nil, "Accept", "text/html")
		wantStatusBody(t, "GET with Accept text/html", r, http.StatusNotAcceptable, "NotAcceptable")
	})

	t.Run("table", func(t *testing.T) {
		for _, tc := range []struct{ version, includeObject, wantObject string }{
			{"v1", "", "PartialObjectMetadata"},
			{"v1", "None", ""},
			{"v1", "Metadata", "PartialObjectMetadata"},
			{"v1", "Object", "Widget"},
			{"v1beta1", "", "PartialObjectMetadata"},
		} {
			accept := "application/json;as=Table;g=meta.k8s.io;v=" + tc.version
			u := base
			if tc.includeObject != "" {
				u += "?includeObject=" + tc.includeObject
			}
			r := rawDo(t, "GET", u, nil, "Accept", accept+",application/json")
			if r.code != http.StatusOK || r.contentType() != "application/json" {
				t.Errorf("GET %s as a Table: %s", u, r)
				continue
			}
			var table metav1.Table
			if err := json.Unmarshal(r.body, &table); err != nil {
				t.Fatalf("the Table: %v", err)
			}
			var cols []string
			for _, c := range table.ColumnDefinitions {
				cols = append(cols, c.Name)
			}
			if table.Kind != "Table" || table.APIVersion != "meta.k8s.io/"+tc.version || strings.Join(cols, ",") != "Name,Color,Replicas,Age" || table.ResourceVersion == "" {
				t.Errorf("Table %s %s, columns %v, rv %q", table.APIVersion, table.Kind, cols, table.ResourceVersion)
			}
			if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 4 || table.Rows[0].Cells[0] != "keep" || table.Rows[0].Cells[1] != "Red" || table.Rows[0].Cells[2] != float64(1) {
				t.Errorf("rows = %s, want keep Red 1 <age>", mustJSON(table.Rows))
				continue
			}
			var obj struct {
				metav1.TypeMeta
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			raw := table.Rows[0].Object.Raw
			if tc.wantObject == "" {
				if len(raw) != 0 {
					t.Errorf("includeObject=None: the row carries %s", raw)
				}
				continue
			}
			if err := json.Unmarshal(raw, &obj); err != nil || obj.Kind != tc.wantObject || obj.Metadata.Name != "keep" || obj.Metadata.UID != keep.GetUID() {
				t.Errorf("includeObject=%q: row object %s, want a %s of keep", tc.includeObject, raw, tc.wantObject)
			}
		}
	})

	before := rawDo(t, "GET", base, nil, "Accept", "application/json").body

	t.Run("unsupported-media-type", func(t *testing.T) {
		body := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"color":"Red"}}`)
		for _, ct := range []string{"text/plain", "application/xml", "application/x-www-form-urlencoded"} {
			r := rawDo(t, "POST", base, body, "Content-Type", ct, "Accept", "application/json")
			wantStatusBody(t, "POST with Content-Type "+ct, r, http.StatusUnsupportedMediaType, "UnsupportedMediaType")
		}
	})

	widgetCBOR := func(specPairs ...string) []byte {
		// {"apiVersion":…,"kind":"Widget","metadata":{"name":"cbor-x"},"spec":{pairs}}
		b := []byte{0xd9, 0xd9, 0xf7, 0xa4} // self-described CBOR, map(4)
		b = cborText(cborText(b, "apiVersion"), "example.com/v1")
		b = cborText(cborText(b, "kind"), "Widget")
		b = append(cborText(b, "metadata"), 0xa1)
		b = cborText(cborText(b, "name"), "cbor-x")
		b = append(cborText(b, "spec"), 0xa0+byte(len(specPairs)/2))
		for _, s := range specPairs {
			b = cborText(b, s)
		}
		return b
	}
	t.Run("cbor-control", func(t *testing.T) {
		// The hand-made CBOR is valid: a dry run creates it.
		r := rawDo(t, "POST", base+"?dryRun=All", widgetCBOR("color", "Red"), "Content-Type", mediaCBOR, "Accept", "application/json")
		if r.code != http.StatusCreated || !bytes.Contains(r.body, []byte(`"name":"cbor-x"`)) {
			t.Errorf("dry-run POST of a valid CBOR widget: %s", r)
		}
	})

	validRaw := encodeWidgetProto(t, metav1.ObjectMeta{Name: "pb-x"}, pbWidgetSpec{Color: "Red"})
	garbage := []struct {
		name, method, path, contentType string
		body                            []byte
		accept                          string
		mention                         string // a substring of the message, if set
	}{
		{name: "protobuf-no-magic", method: "POST", path: base, contentType: mediaProtobuf, body: []byte("\x0a\x05hello")},
		{name: "protobuf-magic-only", method: "POST", path: base, contentType: mediaProtobuf, body: []byte("k8s\x00")},
		{name: "protobuf-bad-envelope", method: "POST", path: base, contentType: mediaProtobuf, body: []byte("k8s\x00\xff\xff\xff\xff\xff")},
		{name: "protobuf-truncated-envelope", method: "POST", path: base, contentType: mediaProtobuf, body: envelope(t, "example.com/v1", "Widget", validRaw)[:20]},
		{name: "protobuf-garbage-raw", method: "POST", path: base, contentType: mediaProtobuf, body: envelope(t, "example.com/v1", "Widget", []byte("\x0a\xff\x01garbage"))},
		{name: "protobuf-wrong-wire-type", method: "POST", path: base, contentType: mediaProtobuf, body: envelope(t, "example.com/v1", "Widget", []byte{0x08, 0x01})},
		{name: "protobuf-wrong-kind", method: "POST", path: base, contentType: mediaProtobuf, body: envelope(t, "example.com/v1", "Gadget", validRaw)},
		{name: "protobuf-json-inside", method: "POST", path: base, contentType: mediaProtobuf, body: envelope(t, "example.com/v1", "Widget", []byte(`{"metadata":{"name":"x"}}`))},
		{name: "protobuf-garbage-put", method: "PUT", path: base + "/keep", contentType: mediaProtobuf, body: []byte("k8s\x00\x12\x03abc")},
		{name: "protobuf-garbage-accept-protobuf", method: "POST", path: base, contentType: mediaProtobuf, body: []byte("k8s\x00\xff"), accept: mediaProtobuf},
		{name: "cbor-garbage", method: "POST", path: base, contentType: mediaCBOR, body: []byte{0xff, 0xfe, 0xfd}},
		{name: "cbor-truncated", method: "POST", path: base, contentType: mediaCBOR, body: widgetCBOR("color", "Red")[:30]},
		{name: "cbor-not-a-map", method: "POST", path: base, contentType: mediaCBOR, body: []byte{0xd9, 0xd9, 0xf7, 0x83, 0x01, 0x02, 0x03}},
		{name: "cbor-trailing-data", method: "POST", path: base, contentType: mediaCBOR, body: append(widgetCBOR("color", "Red"), 0x01)},
		{name: "cbor-deep-nesting", method: "POST", path: base, contentType: mediaCBOR, body: append(bytes.Repeat([]byte{0x81}, 10000), 0x01)},
		{name: "cbor-huge-length", method: "POST", path: base, contentType: mediaCBOR, body: []byte{0xbb, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{name: "cbor-garbage-put", method: "PUT", path: base + "/keep", contentType: mediaCBOR, body: []byte{0xa1, 0x61}},
		{name: "cbor-duplicate-strict", method: "POST", path: base + "?fieldValidation=Strict", contentType: mediaCBOR,
			body: widgetCBOR("color", "Red", "color", "Blue"), mention: `duplicate field "spec.color"`},
	}
	t.Run("garbage", func(t *testing.T) {
		for _, tc := range garbage {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				accept := tc.accept
				if accept == "" {
					accept = "application/json"
				}
				r := rawDo(t, tc.method, tc.path, tc.body, "Content-Type", tc.contentType, "Accept", accept)
				if r.code >= 500 {
					t.Fatalf("%s %s with %q: a server error: %s", tc.method, tc.contentType, tc.body, r)
				}
				if accept == mediaProtobuf {
					if r.code != http.StatusBadRequest || r.contentType() != mediaProtobuf {
						t.Fatalf("want 400 in protobuf: %s", r)
					}
					obj, _ := decodeProtobuf(t, r.body)
					if st, ok := obj.(*metav1.Status); !ok || st.Code != 400 || st.Reason != metav1.StatusReasonBadRequest {
						t.Errorf("Status = %s", mustJSON(obj))
					}
					return
				}
				st := wantStatusBody(t, fmt.Sprintf("%s with %s %q", tc.method, tc.contentType, tc.body), r, http.StatusBadRequest, "BadRequest")
				if tc.mention != "" && !strings.Contains(st.Message, tc.mention) {
					t.Errorf("message %q does not mention %q", st.Message, tc.mention)
				}
			})
		}
	})

	t.Run("store-unchanged", func(t *testing.T) {
		after := rawDo(t, "GET", base, nil, "Accept", "application/json").body
		if !bytes.Equal(before, after) {
			t.Errorf("the stored widgets changed:\nbefore: %s\nafter:  %s", before, after)
		}
		got, err := dyn.Resource(widgetsGVR).Namespace(testNamespace).Get(ctx, "keep", metav1.GetOptions{})
		if err != nil || got.GetResourceVersion() != keep.GetResourceVersion() {
			t.Errorf("keep: err %v, rv %s, want rv %s", err, got.GetResourceVersion(), keep.GetResourceVersion())
		}
	})
}

// cborText appends a CBOR text string shorter than 256 bytes.
func cborText(b []byte, s string) []byte {
	if len(s) < 24 {
		b = append(b, 0x60+byte(len(s)))
	} else {
		b = append(b, 0x78, byte(len(s)))
	}
	return append(b, s...)
}

// wantStatusBody checks that a response is a JSON Status with code and reason.
func wantStatusBody(t *testing.T, what string, r rawResponse, code int, reason metav1.StatusReason) metav1.Status {
	t.Helper()
	var st metav1.Status
	if r.code != code {
		t.Errorf("%s: want %d %s, got %s", what, code, reason, r)
		return st
	}
	if mt, _ := mediaTypeOf(r.contentType()); mt != "application/json" {
		t.Errorf("%s: Content-Type %q, want a JSON Status", what, r.contentType())
	}
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Errorf("%s: the body is not a JSON Status: %v: %q", what, err, r.body)
		return st
	}
	if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != metav1.StatusFailure || st.Code != int32(code) || st.Reason != reason || st.Message == "" {
		t.Errorf("%s: Status = %s, want code %d reason %s with a message", what, mustJSON(st), code, reason)
	}
	return st
}

// TestFormatsGzip checks that a large response is gzip-compressed for a
// client that accepts gzip (and decodes to the same bytes), a small one is
// not, and client-go gets its large lists compressed.
func TestFormatsGzip(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
	const n = 40
	filler := strings.Repeat("abcdefgh", 512) // 4 KiB per widget: 160 KiB in all
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWidget(fmt.Sprintf("gz-%02d", i), map[string]any{"color": "Red"})
			w.SetAnnotations(map[string]string{"filler": filler})
			w.SetLabels(map[string]string{"idx": strconv.Itoa(i)})
			if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	base := srv.URL + widgetsPath

	gunzip := func(t *testing.T, data []byte) []byte {
		t.Helper()
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("not gzip: %v", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("gunzip: %v", err)
		}
		return out
	}

	for _, accept := range []string{"application/json", mediaProtobuf, mediaCBOR, "application/yaml"} {
		t.Run("large-"+strings.TrimPrefix(accept, "application/"), func(t *testing.T) {
			t.Parallel()
			plain := rawDo(t, "GET", base, nil, "Accept", accept)
			if plain.code != http.StatusOK || plain.header.Get("Content-Encoding") != "" {
				t.Fatalf("list without Accept-Encoding: %d, Content-Encoding %q", plain.code, plain.header.Get("Content-Encoding"))
			}
			if len(plain.body) < 128<<10 {
				t.Fatalf("the list is %d bytes, want at least 128 KiB", len(plain.body))
			}
			zipped := rawDo(t, "GET", base, nil, "Accept", accept, "Accept-Encoding", "gzip")
			if zipped.code != http.StatusOK || zipped.header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("list of %d bytes with Accept-Encoding gzip: %d, Content-Encoding %q, want gzip", len(plain.body), zipped.code, zipped.header.Get("Content-Encoding"))
			}
			if zipped.contentType() != plain.contentType() {
				t.Errorf("Content-Type %q compressed, %q plain", zipped.contentType(), plain.contentType())
			}
			if len(zipped.body) >= len(plain.body)/4 {
				t.Errorf("compressed %d bytes to %d", len(plain.body), len(zipped.body))
			}
			if got := gunzip(t, zipped.body); !bytes.Equal(got, plain.body) {
				t.Errorf("the gunzipped list (%d bytes) differs from the plain one (%d bytes)", len(got), len(plain.body))
			}
		})
	}

	t.Run("small", func(t *testing.T) {
		t.Parallel()
		for _, u := range []string{base + "/gz-01", base + "?labelSelector=idx%3D3", base + "?limit=2"} {
			r := rawDo(t, "GET", u, nil, "Accept", "application/json", "Accept-Encoding", "gzip")
			if r.code != http.StatusOK || r.header.Get("Content-Encoding") != "" || !json.Valid(r.body) {
				t.Errorf("GET %s (%d bytes) with Accept-Encoding gzip: %d Content-Encoding %q, want a plain JSON body", u, len(r.body), r.code, r.header.Get("Content-Encoding"))
			}
		}
	})

	t.Run("pretty", func(t *testing.T) {
		t.Parallel()
		r := rawDo(t, "GET", base+"/gz-01?pretty=true", nil, "Accept", "application/json")
		if r.code != http.StatusOK || !bytes.Contains(r.body, []byte("\n  \"metadata\": {\n")) || !json.Valid(r.body) {
			t.Errorf("GET ?pretty=true: %s", r)
		}
	})

	t.Run("client-go", func(t *testing.T) {
		t.Parallel()
		log := &wireLog{}
		client, err := dynamic.NewForConfig(log.config(restConfig(srv, nil)))
		if err != nil {
			t.Fatal(err)
		}
		list, err := client.Resource(widgetsGVR).Namespace(testNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != n {
			t.Errorf("list has %d items, want %d", len(list.Items), n)
		}
		for _, it := range list.Items {
			if a := it.GetAnnotations()["filler"]; a != filler {
				t.Errorf("%s: annotation of %d bytes, want %d", it.GetName(), len(a), len(filler))
			}
		}
		if entries := log.all(); len(entries) != 1 || !entries[0].Uncompressed {
			t.Errorf("client-go's list was not gzip-compressed on the wire:\n%s", log)
		}
	})
}
