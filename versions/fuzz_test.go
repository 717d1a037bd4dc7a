package versions_test

import (
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/versions"
)

// FuzzRestoreFromAnnotation: an annotation a client sends back is input.
// Reading it never panics, removes it, and what reads back is what
// SaveInAnnotation writes again.
func FuzzRestoreFromAnnotation(f *testing.F) {
	for _, seed := range []string{`[{"name":"a","port":80}]`, `[]`, `null`, `{`, `[{"port":"x"}]`, `[{"name":"\u0000"}]`, `1e999`} {
		f.Add(seed)
	}
	type port struct {
		Name string `json:"name"`
		Port int32  `json:"port"`
	}
	const key = "example.com/ports"
	f.Fuzz(func(t *testing.T, annotation string) {
		obj := &oldThing{ObjectMeta: kapi.ObjectMeta{Annotations: map[string]string{key: annotation, "other": "x"}}}
		var ports []port
		ok, err := versions.RestoreFromAnnotation(obj, key, &ports)
		if !ok {
			t.Fatal("the annotation was not found")
		}
		if _, still := obj.Annotations[key]; still || obj.Annotations["other"] != "x" {
			t.Fatalf("annotations after reading: %v", obj.Annotations)
		}
		if err != nil {
			return
		}
		if err := versions.SaveInAnnotation(obj, key, ports); err != nil {
			t.Fatal(err)
		}
		var again []port
		if _, err := versions.RestoreFromAnnotation(obj, key, &again); err != nil {
			t.Fatalf("reading what was saved: %v", err)
		}
		if len(ports) > 0 && !reflect.DeepEqual(again, ports) {
			t.Fatalf("saved %v, read back %v", ports, again)
		}
	})
}
