package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// change is one write the test made, as a watcher must see it.
type change struct {
	typ  watch.EventType
	name string
	rv   string // the resourceVersion the write returned; "" for deletes (the dynamic client does not return it)
}

func (c change) String() string { return fmt.Sprintf("%s %s@%s", c.typ, c.name, c.rv) }

// TestWatchResume watches widgets from a list's resourceVersion, reads part of
// the changes, stops, makes more changes, and watches again from the last
// resourceVersion it saw: every change arrives exactly once, in order.
func TestWatchResume(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)

	var changes []change
	write := func(typ watch.EventType, name, color string) {
		t.Helper()
		switch typ {
		case watch.Added:
			obj, err := widgets.Create(ctx, newWidget(name, map[string]any{"color": color}), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
			changes = append(changes, change{typ, name, obj.GetResourceVersion()})
		case watch.Modified:
			obj, err := widgets.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get %s: %v", name, err)
			}
			_ = unstructured.SetNestedField(obj.Object, color, "spec", "color")
			obj, err = widgets.Update(ctx, obj, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update %s: %v", name, err)
			}
			changes = append(changes, change{typ, name, obj.GetResourceVersion()})
		case watch.Deleted:
			if err := widgets.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete %s: %v", name, err)
			}
			changes = append(changes, change{typ, name, ""})
		}
	}

	write(watch.Added, "a", "Red")
	write(watch.Added, "b", "Red")
	list, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	changes = nil

	first, err := widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch from list rv %s: %v", list.GetResourceVersion(), err)
	}
	write(watch.Added, "c", "Red")
	write(watch.Modified, "a", "Green")
	write(watch.Deleted, "b", "")
	write(watch.Added, "d", "Blue")
	write(watch.Modified, "c", "Blue")
	write(watch.Modified, "d", "Green")
	write(watch.Deleted, "a", "")
	write(watch.Added, "e", "Red")

	const readFirst = 5
	prevRV := list.GetResourceVersion()
	for i := range readFirst {
		prevRV = expectEvent(t, first, changes[i], prevRV)
	}
	first.Stop()

	write(watch.Modified, "e", "Blue")
	write(watch.Deleted, "c", "")
	write(watch.Added, "b", "Green") // the same name again: a new object
	write(watch.Modified, "b", "Red")
	write(watch.Deleted, "d", "")
	write(watch.Added, "f", "Red")

	second, err := widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: prevRV})
	if err != nil {
		t.Fatalf("watch from rv %s: %v", prevRV, err)
	}
	defer second.Stop()
	for _, c := range changes[readFirst:] {
		prevRV = expectEvent(t, second, c, prevRV)
	}
	// Nothing else may be pending: the next event is a fresh write.
	changes = nil
	write(watch.Added, "sentinel", "Red")
	expectEvent(t, second, changes[0], prevRV)
}

// expectEvent reads the next non-bookmark event and checks it is want, with a
// resourceVersion newer than prevRV. It returns the event's resourceVersion.
func expectEvent(t *testing.T, w watch.Interface, want change, prevRV string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed; want %v", want)
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			obj, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj {
				t.Fatalf("event %s with a %T (%v); want %v", ev.Type, ev.Object, ev.Object, want)
			}
			got := change{ev.Type, obj.GetName(), obj.GetResourceVersion()}
			if got.typ != want.typ || got.name != want.name || (want.rv != "" && got.rv != want.rv) {
				t.Fatalf("event %v, want %v", got, want)
			}
			if !rvNewer(t, got.rv, prevRV) {
				t.Fatalf("event %v is not newer than the previous resourceVersion %s", got, prevRV)
			}
			return got.rv
		case <-timeout:
			t.Fatalf("no event within 10s; want %v", want)
			return ""
		}
	}
}

// rvNewer compares resourceVersions as kapi defines them: decimal revisions.
func rvNewer(t *testing.T, rv, than string) bool {
	t.Helper()
	a, err1 := strconv.ParseInt(rv, 10, 64)
	b, err2 := strconv.ParseInt(than, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("resourceVersions %q and %q are not decimal revisions", rv, than)
	}
	return a > b
}
