package e2e

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDynamicCRUD drives widgets through client-go's dynamic client: create,
// get, list, update with the current and with a stale resourceVersion,
// duplicate create, get of a missing object, a no-op update, generateName, and
// delete.
func TestDynamicCRUD(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)

	created, err := widgets.Create(ctx, newWidget("crud", map[string]any{"color": "Red"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetCreationTimestamp().Time.IsZero() {
		t.Errorf("create returned no uid/resourceVersion/creationTimestamp: %s", mustJSON(created.Object))
	}
	if created.GetGeneration() != 1 || created.GetNamespace() != testNamespace {
		t.Errorf("created generation %d namespace %q, want 1 and %q", created.GetGeneration(), created.GetNamespace(), testNamespace)
	}
	if r, _, _ := unstructured.NestedInt64(created.Object, "spec", "replicas"); r != 1 {
		t.Errorf("spec.replicas = %d, want the default 1: %s", r, mustJSON(created.Object))
	}

	got, err := widgets.Get(ctx, "crud", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.GetResourceVersion() != created.GetResourceVersion() || got.GetUID() != created.GetUID() {
		t.Errorf("get returned rv %s uid %s, create returned rv %s uid %s",
			got.GetResourceVersion(), got.GetUID(), created.GetResourceVersion(), created.GetUID())
	}

	list, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != "crud" || list.GetResourceVersion() == "" {
		t.Errorf("list = %d items (rv %q), want just crud with a list resourceVersion", len(list.Items), list.GetResourceVersion())
	}

	t.Run("update", func(t *testing.T) {
		obj := got.DeepCopy()
		_ = unstructured.SetNestedField(obj.Object, "Green", "spec", "color")
		updated, err := widgets.Update(ctx, obj, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update with the current resourceVersion: %v", err)
		}
		if updated.GetResourceVersion() == got.GetResourceVersion() {
			t.Errorf("update kept resourceVersion %s", updated.GetResourceVersion())
		}
		if updated.GetGeneration() != 2 {
			t.Errorf("generation after a spec change = %d, want 2", updated.GetGeneration())
		}
		if c, _, _ := unstructured.NestedString(updated.Object, "spec", "color"); c != "Green" {
			t.Errorf("spec.color = %q, want Green", c)
		}

		// got still carries the old resourceVersion.
		stale := got.DeepCopy()
		_ = unstructured.SetNestedField(stale.Object, "Blue", "spec", "color")
		_, err = widgets.Update(ctx, stale, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			t.Fatalf("update with a stale resourceVersion: err = %v, want Conflict", err)
		}
		wantStatus(t, err, 409, metav1.StatusReasonConflict, "widgets", "crud",
			`Operation cannot be fulfilled on widgets.example.com "crud": the object has been modified; please apply your changes to the latest version and try again`)

		// An update that changes nothing writes nothing.
		same, err := widgets.Update(ctx, updated, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("no-op update: %v", err)
		}
		if same.GetResourceVersion() != updated.GetResourceVersion() || same.GetGeneration() != updated.GetGeneration() {
			t.Errorf("no-op update changed resourceVersion %s -> %s, generation %d -> %d",
				updated.GetResourceVersion(), same.GetResourceVersion(), updated.GetGeneration(), same.GetGeneration())
		}
	})

	t.Run("create-duplicate", func(t *testing.T) {
		_, err := widgets.Create(ctx, newWidget("crud", map[string]any{"color": "Blue"}), metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			t.Fatalf("duplicate create: err = %v, want AlreadyExists", err)
		}
		wantStatus(t, err, 409, metav1.StatusReasonAlreadyExists, "widgets", "crud", `widgets.example.com "crud" already exists`)
	})

	t.Run("get-missing", func(t *testing.T) {
		_, err := widgets.Get(ctx, "missing", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("get missing: err = %v, want NotFound", err)
		}
		wantStatus(t, err, 404, metav1.StatusReasonNotFound, "widgets", "missing", `widgets.example.com "missing" not found`)
	})

	t.Run("generate-name", func(t *testing.T) {
		obj := newWidget("", map[string]any{"color": "Blue"})
		obj.SetGenerateName("gen-")
		made, err := widgets.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create with generateName: %v", err)
		}
		if !strings.HasPrefix(made.GetName(), "gen-") || len(made.GetName()) <= len("gen-") {
			t.Errorf("generated name %q, want gen- and a random suffix", made.GetName())
		}
		if err := widgets.Delete(ctx, made.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete %s: %v", made.GetName(), err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := widgets.Delete(ctx, "crud", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if _, err := widgets.Get(ctx, "crud", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after delete: err = %v, want NotFound", err)
		}
		err := widgets.Delete(ctx, "crud", metav1.DeleteOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("second delete: err = %v, want NotFound", err)
		}
		wantStatus(t, err, 404, metav1.StatusReasonNotFound, "widgets", "crud", `widgets.example.com "crud" not found`)
	})
}

// TestDynamicStatusSubresource checks that /status changes only status and the
// main resource ignores status.
func TestDynamicStatusSubresource(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)

	obj := newWidget("st", map[string]any{"color": "Red"})
	obj.Object["status"] = map[string]any{"replicas": int64(9)}
	created, err := widgets.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if r, found, _ := unstructured.NestedInt64(created.Object, "status", "replicas"); found && r != 0 {
		t.Errorf("create stored status.replicas = %d; status must be ignored on create", r)
	}

	// UpdateStatus: status changes, the spec change riding along does not.
	withStatus := created.DeepCopy()
	_ = unstructured.SetNestedField(withStatus.Object, int64(3), "status", "replicas")
	_ = unstructured.SetNestedField(withStatus.Object, int64(1), "status", "observedGeneration")
	_ = unstructured.SetNestedField(withStatus.Object, "Blue", "spec", "color")
	afterStatus, err := widgets.UpdateStatus(ctx, withStatus, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(afterStatus.Object, "status", "replicas"); r != 3 {
		t.Errorf("status.replicas after UpdateStatus = %d, want 3", r)
	}
	if c, _, _ := unstructured.NestedString(afterStatus.Object, "spec", "color"); c != "Red" {
		t.Errorf("spec.color after UpdateStatus = %q, want Red (status updates ignore spec)", c)
	}
	if afterStatus.GetGeneration() != created.GetGeneration() {
		t.Errorf("generation after UpdateStatus = %d, want %d", afterStatus.GetGeneration(), created.GetGeneration())
	}
	if afterStatus.GetResourceVersion() == created.GetResourceVersion() {
		t.Errorf("UpdateStatus kept resourceVersion %s", created.GetResourceVersion())
	}

	// Update on the main resource: spec changes, status does not.
	withSpec := afterStatus.DeepCopy()
	_ = unstructured.SetNestedField(withSpec.Object, int64(5), "spec", "size")
	_ = unstructured.SetNestedField(withSpec.Object, int64(7), "status", "replicas")
	afterSpec, err := widgets.Update(ctx, withSpec, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if s, _, _ := unstructured.NestedInt64(afterSpec.Object, "spec", "size"); s != 5 {
		t.Errorf("spec.size after Update = %d, want 5", s)
	}
	if r, _, _ := unstructured.NestedInt64(afterSpec.Object, "status", "replicas"); r != 3 {
		t.Errorf("status.replicas after Update = %d, want 3 (updates of the main resource ignore status)", r)
	}
	if afterSpec.GetGeneration() != created.GetGeneration()+1 {
		t.Errorf("generation after a spec update = %d, want %d", afterSpec.GetGeneration(), created.GetGeneration()+1)
	}

	stored, err := widgets.Get(ctx, "st", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(stored.Object, "status", "replicas"); r != 3 {
		t.Errorf("stored status.replicas = %d, want 3", r)
	}
	if s, _, _ := unstructured.NestedInt64(stored.Object, "spec", "size"); s != 5 {
		t.Errorf("stored spec.size = %d, want 5", s)
	}
	if c, _, _ := unstructured.NestedString(stored.Object, "spec", "color"); c != "Red" {
		t.Errorf("stored spec.color = %q, want Red", c)
	}

	// GET on the status subresource returns the whole object.
	viaStatus, err := widgets.Get(ctx, "st", metav1.GetOptions{}, "status")
	if err != nil {
		t.Fatalf("get status: %v", err)
	}
	if viaStatus.GetResourceVersion() != stored.GetResourceVersion() {
		t.Errorf("GET /status rv %s, GET rv %s", viaStatus.GetResourceVersion(), stored.GetResourceVersion())
	}
}

// TestDynamicClusterScoped drives widgetclasses, which live outside namespaces.
func TestDynamicClusterScoped(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	classes := dynamicClient(t, srv, nil).Resource(widgetClassesGVR)

	created, err := classes.Create(ctx, newWidgetClass("gold", map[string]any{"description": "shiny", "maxReplicas": int64(5)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.GetNamespace() != "" || created.GetUID() == "" || created.GetResourceVersion() == "" {
		t.Errorf("created namespace %q uid %q rv %q, want no namespace and server-set uid and rv",
			created.GetNamespace(), created.GetUID(), created.GetResourceVersion())
	}
	got, err := classes.Get(ctx, "gold", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if m, _, _ := unstructured.NestedInt64(got.Object, "spec", "maxReplicas"); m != 5 {
		t.Errorf("spec.maxReplicas = %d, want 5", m)
	}
	_ = unstructured.SetNestedField(got.Object, "shinier", "spec", "description")
	updated, err := classes.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if d, _, _ := unstructured.NestedString(updated.Object, "spec", "description"); d != "shinier" {
		t.Errorf("spec.description = %q, want shinier", d)
	}
	list, err := classes.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != "gold" {
		t.Errorf("list has %d items, want gold only", len(list.Items))
	}
	_, err = classes.Create(ctx, newWidgetClass("gold", map[string]any{}), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Errorf("duplicate create: err = %v, want AlreadyExists", err)
	} else {
		wantStatus(t, err, 409, metav1.StatusReasonAlreadyExists, "widgetclasses", "gold", `widgetclasses.example.com "gold" already exists`)
	}
	if err := classes.Delete(ctx, "gold", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = classes.Get(ctx, "gold", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: err = %v, want NotFound", err)
	}
	wantStatus(t, err, 404, metav1.StatusReasonNotFound, "widgetclasses", "gold", `widgetclasses.example.com "gold" not found`)
}
