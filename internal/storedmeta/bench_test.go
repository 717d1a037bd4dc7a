package storedmeta

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/watch"
)

// BenchmarkMeta is the collector's look at a stored widget the size of the
// load harness's (labels, spec, managedFields): read from the value
// (stored) against decoding the object as the watch cache does (decoded).
func BenchmarkMeta(b *testing.B) {
	now := kapi.Now()
	w := &widget{TypeMeta: kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}, Metadata: kapi.ObjectMeta{
		Name: "w-0000001", Namespace: "objects", UID: "0d8e5f4a-6c1b-4d1e-9a53-2f1f0c6b7e11", Generation: 1, CreationTimestamp: now,
		Labels:        map[string]string{"app": "loadtest", "tier": "backend", "team": "platform", "shard": "3"},
		ManagedFields: []kapi.ManagedFieldsEntry{{Manager: "loadtest", Operation: "Update", APIVersion: "example.com/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:shard":{},"f:team":{},"f:tier":{}}},"f:spec":{".":{},"f:color":{},"f:ports":{},"f:replicas":{},"f:selector":{".":{},"f:app":{},"f:tier":{}},"f:size":{}}}`)}}},
	}, Spec: map[string]string{"color": "Red", "selector": "app=loadtest,tier=backend", "ports": "http:8080/TCP,metrics:9090/TCP"}}
	value, err := json.Marshal(w)
	if err != nil {
		b.Fatal(err)
	}
	it := &watch.Item{Key: "k", Revision: 42, Value: value}
	decode := func(it *watch.Item) (kapi.Object, error) {
		w := &widget{}
		return w, codec.UnmarshalJSON(it.Value, w)
	}
	for _, c := range []struct {
		name  string
		plain bool
	}{{"stored", true}, {"decoded", false}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(value)))
			for b.Loop() {
				if _, err := Meta(it, c.plain, decode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
