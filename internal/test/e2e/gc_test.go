package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// TestKubectlCascade: kubectl delete --cascade=background|foreground|orphan
// on a widget class that owns widgets, as against kube-apiserver with its
// garbage collector: foreground returns once the dependents are gone,
// background once the owner is (the dependents follow), orphan leaves the
// dependents without the reference.
func TestKubectlCascade(t *testing.T) {
	bins := []string{dispatcherKubectl}
	if pinned := pinnedKubectls(); len(pinned) > 0 {
		bins = append(bins, pinned[0]) // the oldest, as well
	}
	for _, bin := range bins {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			srv := startServer(t)
			k := newKubectl(t, bin, srv)
			create := func(doc string) {
				t.Helper()
				f := filepath.Join(t.TempDir(), "obj.yaml")
				if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
					t.Fatal(err)
				}
				k.must(t, "create", "-f", f)
			}
			owned := func(class string) []string {
				create(fmt.Sprintf("apiVersion: example.com/v1\nkind: WidgetClass\nmetadata:\n  name: %s\n", class))
				uid := k.must(t, "get", "widgetclass", class, "-o", "jsonpath={.metadata.uid}")
				var names []string
				for i := range 3 {
					name := fmt.Sprintf("%s-%d", class, i)
					create(fmt.Sprintf(`apiVersion: example.com/v1
kind: Widget
metadata:
  name: %s
  namespace: default
  ownerReferences:
  - apiVersion: example.com/v1
    kind: WidgetClass
    name: %s
    uid: %s
    blockOwnerDeletion: true
spec:
  color: Red
`, name, class, uid))
					names = append(names, name)
				}
				return names
			}
			left := func(names []string) []string {
				t.Helper()
				out := k.must(t, "get", "wd", "-n", "default", "-o", "name", "--ignore-not-found")
				var found []string
				for _, n := range names {
					if strings.Contains(out, "widget.example.com/"+n+"\n") {
						found = append(found, n)
					}
				}
				return found
			}

			names := owned("fg")
			out := k.must(t, "delete", "widgetclass", "fg", "--cascade=foreground")
			if strings.TrimSpace(out) != `widgetclass.example.com "fg" deleted` {
				t.Errorf("kubectl delete --cascade=foreground printed %q", out)
			}
			if got := left(names); len(got) != 0 {
				t.Fatalf("kubectl delete --cascade=foreground returned with dependents left: %v", got)
			}

			names = owned("bg")
			out = k.must(t, "delete", "widgetclass", "bg", "--cascade=background")
			if strings.TrimSpace(out) != `widgetclass.example.com "bg" deleted` {
				t.Errorf("kubectl delete --cascade=background printed %q", out)
			}
			k.mustFail(t, "get", "widgetclass", "bg")
			waitUntil(t, "the background delete's dependents to go", func() bool { return len(left(names)) == 0 })

			names = owned("or")
			out = k.must(t, "delete", "widgetclass", "or", "--cascade=orphan")
			if strings.TrimSpace(out) != `widgetclass.example.com "or" deleted` {
				t.Errorf("kubectl delete --cascade=orphan printed %q", out)
			}
			k.mustFail(t, "get", "widgetclass", "or")
			if got := left(names); !slices.Equal(got, names) {
				t.Fatalf("kubectl delete --cascade=orphan: dependents left %v, want %v", got, names)
			}
			for _, n := range names {
				if refs := k.must(t, "get", "wd", n, "-n", "default", "-o", "jsonpath={.metadata.ownerReferences}"); refs != "" {
					t.Errorf("orphan %s keeps its owner references: %s", n, refs)
				}
			}
		})
	}
}

func (k *kubectl) mustFail(t *testing.T, args ...string) {
	t.Helper()
	if r := k.run(t, args...); r.err == nil {
		t.Fatalf("%s: succeeded, want a failure", r)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClientGoForegroundThreeLevels: a widget class owns widgets that own
// widgets that own widgets, each reference blocking its owner. Deleted in
// the foreground through client-go, every owner's DELETED event comes after
// those of all its dependents, and the delete answers the owner marked for
// deletion with the foregroundDeletion finalizer.
func TestClientGoForegroundThreeLevels(t *testing.T) {
	srv := startServer(t)
	client := dynamicClient(t, srv, nil)
	ctx := ctxFor(t, 60*time.Second)
	widgets, classes := client.Resource(widgetsGVR).Namespace("default"), client.Resource(widgetClassesGVR)

	ref := func(obj *unstructured.Unstructured) map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": obj.GetKind(), "name": obj.GetName(), "uid": string(obj.GetUID()), "blockOwnerDeletion": true}
	}
	class, err := classes.Create(ctx, newWidgetClass("three", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{} // widget name → its owner's name
	var create func(owner *unstructured.Unstructured, name string, depth int)
	create = func(owner *unstructured.Unstructured, name string, depth int) {
		w := newWidget(name, map[string]any{"color": "Red"})
		_ = unstructured.SetNestedSlice(w.Object, []any{ref(owner)}, "metadata", "ownerReferences")
		got, err := widgets.Create(ctx, w, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		owners[name] = owner.GetName()
		if depth < 3 {
			for i := range 2 {
				create(got, fmt.Sprintf("%s-%d", name, i), depth+1)
			}
		}
	}
	for i := range 2 {
		create(class, fmt.Sprintf("three-%d", i), 1)
	}

	var mu sync.Mutex
	var order []string // names, in the order of their DELETED events
	wWidgets, err := widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: class.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer wWidgets.Stop()
	wClasses, err := classes.Watch(ctx, metav1.ListOptions{ResourceVersion: class.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer wClasses.Stop()
	var events sync.WaitGroup
	for _, w := range []watch.Interface{wWidgets, wClasses} {
		events.Go(func() {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Deleted {
					mu.Lock()
					order = append(order, ev.Object.(*unstructured.Unstructured).GetName())
					mu.Unlock()
				}
			}
		})
	}

	policy := metav1.DeletePropagationForeground
	if err := classes.Delete(ctx, "three", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatal(err)
	}
	marked, err := classes.Get(ctx, "three", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err): // already done
	case err != nil:
		t.Fatal(err)
	case marked.GetDeletionTimestamp() == nil || !slices.Contains(marked.GetFinalizers(), "foregroundDeletion"):
		t.Fatalf("the owner in foreground deletion: deletionTimestamp %v, finalizers %v", marked.GetDeletionTimestamp(), marked.GetFinalizers())
	}
	waitUntil(t, "the class to go", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(order, "three")
	})
	// Every widget was gone when the class went (the class's DELETED event
	// and its dependents' arrive on two watches, in no order between them).
	list, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("widgets left after their class went in the foreground: %d", len(list.Items))
	}
	waitUntil(t, "every DELETED event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) >= len(owners)+1
	})
	wWidgets.Stop()
	wClasses.Stop()
	events.Wait()
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	for name, owner := range owners {
		if owner == "three" {
			continue // on the other watch
		}
		if pos[name] > pos[owner] {
			t.Errorf("%s was deleted after its owner %s: %v", name, owner, order)
		}
	}
	if len(pos) != len(owners)+1 {
		t.Errorf("DELETED events for %d objects, want %d: %v", len(pos), len(owners)+1, order)
	}
}
