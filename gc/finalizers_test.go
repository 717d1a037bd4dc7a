package gc_test

import (
	"context"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/gc"
)

// TestDeletionFinalizers: as kube-apiserver decides for a custom resource,
// orphanDependents wins over propagationPolicy, which wins over the
// finalizer the object has; without either, Background: no finalizer.
func TestDeletionFinalizers(t *testing.T) {
	yes, no := true, false
	policy := func(p string) *string { return &p }
	for _, tc := range []struct {
		name       string
		finalizers []string
		orphan     *bool
		policy     *string
		want       []string
		changed    bool
	}{
		{"no options", nil, nil, nil, nil, false},
		{"background", []string{"a"}, nil, policy("Background"), []string{"a"}, false},
		{"foreground", []string{"a"}, nil, policy("Foreground"), []string{"a", "foregroundDeletion"}, true},
		{"orphan", nil, nil, policy("Orphan"), []string{"orphan"}, true},
		{"orphanDependents", nil, &yes, nil, []string{"orphan"}, true},
		{"orphanDependents false removes orphan", []string{"orphan", "a"}, &no, nil, []string{"a"}, true},
		{"background removes foreground", []string{"foregroundDeletion"}, nil, policy("Background"), []string{}, true},
		{"orphan replaces foreground", []string{"foregroundDeletion", "a"}, nil, policy("Orphan"), []string{"a", "orphan"}, true},
		{"kept without options", []string{"foregroundDeletion"}, nil, nil, []string{"foregroundDeletion"}, false},
		{"same policy again", []string{"orphan"}, nil, policy("Orphan"), []string{"orphan"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.finalizers)
			got, changed := gc.DeletionFinalizers(tc.finalizers, tc.orphan, tc.policy)
			if !slices.Equal(got, tc.want) || changed != tc.changed {
				t.Errorf("got %q %t, want %q %t", got, changed, tc.want, tc.changed)
			}
			if !slices.Equal(tc.finalizers, before) {
				t.Errorf("the object's finalizers changed in place: %q", tc.finalizers)
			}
		})
	}
}

// TestNewErrors: bad options are an error from New, not a surprise later.
func TestNewErrors(t *testing.T) {
	if _, err := gc.New(noObjects{}, gc.WithWorkers(0)); err == nil {
		t.Error("New with no workers succeeded")
	}
	if _, err := gc.New(noObjects{}, gc.WithLogger(nil)); err == nil {
		t.Error("New without a logger succeeded")
	}
	c, err := gc.New(noObjects{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Run(ctx) // nothing to watch: returns when ctx ends
}

type noObjects struct{}

func (noObjects) Resources() []gc.Resource                                  { return nil }
func (noObjects) Watch(context.Context, gc.Resource, func(gc.Change)) error { return nil }
func (noObjects) Sync(context.Context) error                                { return nil }
func (noObjects) LastChange(gc.Resource) int64                              { return 0 }
func (noObjects) Get(gc.Resource, string, string) (*kapi.ObjectMeta, error) {
	return nil, nil
}
func (noObjects) Delete(context.Context, gc.Resource, string, string, gc.DeleteOptions) error {
	return nil
}
func (noObjects) UpdateMetadata(context.Context, gc.Resource, string, string, string, func(*kapi.ObjectMeta) bool) error {
	return nil
}

var _ gc.Objects = noObjects{}
