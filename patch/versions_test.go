package patch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/patch"
)

// TestApplyAcrossVersions: a manager's fields are compared in the version
// it recorded them in. Here v0 holds spec.replicas in spec.color: an apply in v1
// that changes spec.replicas conflicts with the v0 manager of its color, and a
// manager in a version the kind no longer has is dropped.
func TestApplyAcrossVersions(t *testing.T) {
	s := widgetSchema(t)
	convert := func(obj []byte, apiVersion string) ([]byte, *patch.Schema, error) {
		if apiVersion != "example.com/v0" {
			return nil, nil, fmt.Errorf("%w: %s", patch.ErrUnknownVersion, apiVersion)
		}
		var m map[string]any
		if err := json.Unmarshal(obj, &m); err != nil {
			return nil, nil, err
		}
		if spec, ok := m["spec"].(map[string]any); ok {
			if n, ok := spec["replicas"]; ok {
				spec["color"] = fmt.Sprint("replicas-", n) // v0 keeps it in color
				delete(spec, "replicas")
			}
		}
		out, err := json.Marshal(m)
		return out, s, err
	}
	now := kapi.Now()
	// v0's manager owns spec.color (v1's spec.replicas) of an object of 3 replicas.
	live := obj(`},"spec":{"replicas":3}`)
	managed := []kapi.ManagedFieldsEntry{{
		Manager: "old", Operation: "Apply", APIVersion: "example.com/v0", FieldsType: "FieldsV1",
		FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:color":{}}}`)}, Time: &now,
	}}
	_, _, err := s.Apply([]byte(live), []byte(obj(`},"spec":{"replicas":4}`)), managed, patch.ApplyOptions{Manager: "new", APIVersion: gv, Convert: convert})
	var ce *patch.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `conflict with "old"`) {
		t.Fatalf("apply of spec.replicas over v0's manager of it: %v, want a conflict with old", err)
	}
	if _, _, err := s.Apply([]byte(live), []byte(obj(`},"spec":{"replicas":4}`)), managed, patch.ApplyOptions{Manager: "new", APIVersion: gv}); err != nil {
		t.Errorf("without a converter the paths are compared as they are (no conflict): %v", err)
	}
	managed[0].APIVersion = "example.com/v9"
	_, entries, err := s.Apply([]byte(live), []byte(obj(`},"spec":{"replicas":4}`)), managed, patch.ApplyOptions{Manager: "new", APIVersion: gv, Convert: convert})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Manager == "old" {
			t.Errorf("the manager in a version the kind no longer has was kept: %+v", entries)
		}
	}
	managed[0].APIVersion = "example.com/v0"
	entries, err = s.Update([]byte(live), []byte(obj(`},"spec":{"replicas":5}`)), managed, patch.UpdateOptions{Manager: "writer", APIVersion: gv, Convert: convert})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Manager == "old" {
			t.Errorf("an update of what v0's manager owned left it its field: %+v", entries)
		}
	}
}
