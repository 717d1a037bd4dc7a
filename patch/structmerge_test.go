package patch

import (
	"reflect"
	"testing"
)

// TestMergeKeepsLivePart: a map of the live object that the configuration
// changes nothing in (a part of it, as an apply's metadata is of the live
// metadata) is the live map itself after merging, which the comparison
// with the live object then passes over; a map it changes is a new one.
func TestMergeKeepsLivePart(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	live, err := s.liveObject([]byte(`{"metadata":{"name":"w","uid":"u","labels":{"a":"b"}},"spec":{"color":"red","replicas":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfiguration([]byte(`{"metadata":{"name":"w","labels":{"a":"b"}},"spec":{"color":"red","replicas":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	merged, _ := merge(live, true, cfg.tree, true, s)
	m := merged.(map[string]any)
	if !sameMap(m["metadata"].(map[string]any), live["metadata"].(map[string]any)) {
		t.Error("metadata, which the configuration changes nothing in, made again")
	}
	if sameMap(m["spec"].(map[string]any), live["spec"].(map[string]any)) {
		t.Error("spec, which the configuration changes, is the live one")
	}
	if sameMap(m, live) {
		t.Error("the object, which the configuration changes, is the live one")
	}
}
