package gc_test

import (
	"context"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/gc"
)

// watchRecorder is Objects whose watches send the objects it holds of
// their resource and their sync (none for the resources in unsynced),
// and report when they start and end, and the deletions asked of it.
type watchRecorder struct {
	resources               []gc.Resource
	objects                 map[string]*kapi.ObjectMeta // by name, of gadgets
	unsynced                map[string]bool
	started, ended, deleted chan string
}

func newRecorder(resources ...gc.Resource) *watchRecorder {
	return &watchRecorder{resources: resources, objects: map[string]*kapi.ObjectMeta{}, unsynced: map[string]bool{},
		started: make(chan string, 8), ended: make(chan string, 8), deleted: make(chan string, 8)}
}

func (w *watchRecorder) Resources() []gc.Resource { return w.resources }
func (w *watchRecorder) Watch(ctx context.Context, res gc.Resource, changed func(gc.Change)) error {
	w.started <- res.Plural
	if !w.unsynced[res.Plural] {
		if res.Plural == "gadgets" {
			for _, m := range w.objects {
				changed(gc.Change{Meta: m, Revision: 1})
			}
		}
		changed(gc.Change{Synced: true, Revision: 1})
	}
	<-ctx.Done()
	w.ended <- res.Plural
	return ctx.Err()
}
func (w *watchRecorder) Sync(context.Context) error   { return nil }
func (w *watchRecorder) LastChange(gc.Resource) int64 { return 1 }
func (w *watchRecorder) Get(res gc.Resource, _, name string) (*kapi.ObjectMeta, error) {
	if res.Plural == "gadgets" {
		return w.objects[name], nil
	}
	return nil, nil
}
func (w *watchRecorder) Delete(_ context.Context, _ gc.Resource, _, name string, _ gc.DeleteOptions) error {
	w.deleted <- name
	return nil
}
func (w *watchRecorder) UpdateMetadata(context.Context, gc.Resource, string, string, string, func(*kapi.ObjectMeta) bool) error {
	return nil
}

// running is a collector running on objects until the test ends.
func running(t *testing.T, objects gc.Objects) *gc.Collector {
	t.Helper()
	c, err := gc.New(objects)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// Remove stops following a kind whether its follow began with Run or
// with Add: its watch ends, the others go on.
func TestRemoveStopsFollows(t *testing.T) {
	widgets := gc.Resource{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets"}
	gadgets := gc.Resource{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"}
	things := gc.Resource{Group: "example.com", Version: "v1", Kind: "Thing", Plural: "things"}
	objects := newRecorder(widgets, gadgets)
	c := running(t, objects)
	expect := func(ch chan string, what, want string) {
		t.Helper()
		select {
		case got := <-ch:
			if got != want {
				t.Fatalf("%s: %s, want %s", what, got, want)
			}
		case <-time.After(30 * time.Second): // turns a hang into a failure
			t.Fatalf("%s: no watch of %s", what, want)
		}
	}
	got := map[string]bool{<-objects.started: true, <-objects.started: true}
	if !got["widgets"] || !got["gadgets"] {
		t.Fatalf("watches started: %v", got)
	}
	c.Add(things)
	expect(objects.started, "started", "things")
	c.Remove("example.com", "Widget") // followed since Run began
	expect(objects.ended, "ended", "widgets")
	c.Remove("example.com", "Thing") // followed since Add
	expect(objects.ended, "ended", "things")
	select {
	case p := <-objects.ended:
		t.Errorf("the watch of %s ended too", p)
	default:
	}
}

// A kind removed before its first sync does not keep the collector from
// deciding: Run then waits for the others only, and deletes a gadget whose
// owner is gone.
func TestRemoveBeforeSync(t *testing.T) {
	widgets := gc.Resource{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets"}
	gadgets := gc.Resource{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"}
	objects := newRecorder(widgets, gadgets)
	objects.unsynced["widgets"] = true
	objects.objects["orphan"] = &kapi.ObjectMeta{Name: "orphan", UID: "u1", OwnerReferences: []kapi.OwnerReference{
		{APIVersion: "example.com/v1", Kind: "Gadget", Name: "gone", UID: "u0"}}}
	c := running(t, objects)
	<-objects.started
	<-objects.started
	c.Remove("example.com", "Widget")
	select {
	case name := <-objects.deleted:
		if name != "orphan" {
			t.Errorf("deleted %s", name)
		}
	case <-time.After(30 * time.Second): // turns a hang into a failure
		t.Fatal("the collector did not decide once the unsynced kind was removed")
	}
}
