package lifecycle

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/storage"
)

// fakeObjects serves a fixed list of objects of one resource and records
// deletions.
type fakeObjects struct {
	objs    []kapi.Object
	deleted []string
}

var _ Objects = (*fakeObjects)(nil)

func (f *fakeObjects) Resources() []Resource { return nil }
func (f *fakeObjects) Read(context.Context, Resource, string, string) (kapi.Object, error) {
	return nil, storage.ErrNotFound
}
func (f *fakeObjects) List(context.Context, Resource, string) ([]kapi.Object, error) {
	return f.objs, nil
}
func (f *fakeObjects) Update(context.Context, Resource, kapi.Object, string) (kapi.Object, error) {
	return nil, errors.New("not here")
}
func (f *fakeObjects) Delete(_ context.Context, _ Resource, namespace, name string, _ DeleteOptions) error {
	f.deleted = append(f.deleted, namespace+"/"+name)
	return nil
}
func (f *fakeObjects) Watch(ctx context.Context, _ Resource, _ func(Change)) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestEventExpirySweep: an event goes once its last write, its creation or
// the latest of its managed fields' times, is a time to live old.
func TestEventExpirySweep(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *kapi.Time { t := kapi.NewTime(now.Add(-d)); return &t }
	event := func(name string, created time.Duration, written ...time.Duration) kapi.Object {
		e := &builtin.Event{ObjectMeta: kapi.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: *at(created)}}
		for _, w := range written {
			e.ManagedFields = append(e.ManagedFields, kapi.ManagedFieldsEntry{Manager: "m", Time: at(w)})
		}
		return e
	}
	objects := &fakeObjects{objs: []kapi.Object{
		event("old", 2*time.Hour),
		event("just-expired", time.Hour),
		event("young", 59*time.Minute),
		event("old-but-rewritten", 3*time.Hour, 2*time.Hour, 10*time.Minute),
		event("old-and-not-rewritten", 3*time.Hour, 2*time.Hour, 61*time.Minute),
	}}
	expiry, err := NewEventExpiry(objects, []Resource{{Version: "v1", Plural: "events", Namespaced: true}}, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	expiry.sweep(t.Context(), now)
	if want := []string{"ns/old", "ns/just-expired", "ns/old-and-not-rewritten"}; !slices.Equal(objects.deleted, want) {
		t.Errorf("deleted %v, want %v", objects.deleted, want)
	}
	if _, err := NewEventExpiry(objects, nil, 0, nil); err == nil {
		t.Error("a time to live of 0: no error")
	}
}

// TestSetConditions: every condition of the controller is written, true
// ones as given and the others false with kube's reasons; a condition keeps
// its transition time while its status stays, and nothing changes when
// nothing did.
func TestSetConditions(t *testing.T) {
	var status builtin.NamespaceStatus
	remaining := contentConditions(map[string]int{"widgets.example.com": 2}, map[string]int{"example.com/hold": 1}, nil)
	if !setConditions(&status, remaining) || len(status.Conditions) != 5 {
		t.Fatalf("first conditions: %+v", status.Conditions)
	}
	byType := func(typ string) builtin.NamespaceCondition {
		i := slices.IndexFunc(status.Conditions, func(c builtin.NamespaceCondition) bool { return c.Type == typ })
		return status.Conditions[i]
	}
	if c := byType(builtin.NamespaceContentRemaining); c.Status != "True" || c.Reason != "SomeResourcesRemain" ||
		c.Message != "Some resources are remaining: widgets.example.com has 2 resource instances" {
		t.Errorf("content remaining: %+v", c)
	}
	if c := byType(builtin.NamespaceDeletionContentFailure); c.Status != "False" || c.Reason != "ContentDeleted" {
		t.Errorf("content failure: %+v", c)
	}
	if setConditions(&status, remaining) {
		t.Error("the same conditions again: changed")
	}
	failed := byType(builtin.NamespaceDeletionContentFailure).LastTransitionTime
	status.Conditions[slices.IndexFunc(status.Conditions, func(c builtin.NamespaceCondition) bool {
		return c.Type == builtin.NamespaceFinalizersRemaining
	})].LastTransitionTime = kapi.Time{}
	if !setConditions(&status, contentConditions(map[string]int{"widgets.example.com": 1}, map[string]int{"example.com/hold": 1}, nil)) {
		t.Error("a new count: not changed")
	}
	if byType(builtin.NamespaceFinalizersRemaining).LastTransitionTime != (kapi.Time{}) || byType(builtin.NamespaceDeletionContentFailure).LastTransitionTime != failed {
		t.Error("a condition whose status stayed got a new transition time")
	}
}
