package apiserver

import (
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/splice"
)

func BenchmarkRemarshalManaged(b *testing.B) {
	now := kapi.Now()
	fields := []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}},"f:spec":{".":{},"f:color":{},"f:ports":{".":{},"k:{\"port\":80}":{".":{},"f:name":{},"f:port":{}},"k:{\"port\":443}":{".":{},"f:name":{},"f:port":{}}},"f:selector":{".":{},"f:app":{}},"f:size":{}}}`)
	obj := storedThing{TypeMeta: kapi.TypeMeta{Kind: "Widget", APIVersion: "example.dev/v1"},
		ObjectMeta: kapi.ObjectMeta{Name: "w", Namespace: "default", UID: "0b9d2a4c-1111-2222-3333-444455556666", Generation: 3, CreationTimestamp: now,
			Labels:        map[string]string{"app": "web", "tier": "frontend"},
			ManagedFields: []kapi.ManagedFieldsEntry{{Manager: "kubectl", Operation: "Update", APIVersion: "example.dev/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: fields}}}},
		Spec: map[string]any{"color": "Blue", "size": 12, "selector": map[string]any{"app": "web"},
			"ports": []any{map[string]any{"name": "http", "port": 80}, map[string]any{"name": "https", "port": 443}}}}
	stored, _ := marshalStored(&obj)
	b.Logf("%d bytes", len(stored))
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = marshalStored(&obj)
		}
	})
	b.Run("splice", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _, _ = splice.WithManagedFields(stored, obj.ManagedFields)
		}
	})
}
