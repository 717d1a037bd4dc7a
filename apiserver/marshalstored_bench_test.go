package apiserver

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/storedvalue"
)

type typedThing struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            typedThingSpec `json:"spec"`
}

type typedThingSpec struct {
	Color    string            `json:"color"`
	Size     int32             `json:"size,omitempty"`
	Selector map[string]string `json:"selector,omitempty"`
}

// BenchmarkMarshalStored compares marshalStored, which finds the object
// type's Encoder (storedvalue.Encoder), with json.Marshal, and times the
// finding alone.
func BenchmarkMarshalStored(b *testing.B) {
	now := kapi.Now()
	fields := []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:color":{},"f:selector":{".":{},"f:app":{}},"f:size":{}}}`)
	obj := &typedThing{TypeMeta: kapi.TypeMeta{Kind: "Thing", APIVersion: "example.dev/v1"},
		ObjectMeta: kapi.ObjectMeta{Name: "t", Namespace: "default", UID: "0b9d2a4c-1111-2222-3333-444455556666", Generation: 3, CreationTimestamp: now,
			Labels:        map[string]string{"app": "web"},
			ManagedFields: []kapi.ManagedFieldsEntry{{Manager: "kubectl", Operation: "Update", APIVersion: "example.dev/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: fields}}}},
		Spec: typedThingSpec{Color: "blue", Size: 12, Selector: map[string]string{"app": "web"}}}
	if got, _ := marshalStored(obj); storedvalue.Encoder(reflect.TypeOf(obj)) == nil || string(got) != string(must(json.Marshal(obj))) {
		b.Fatalf("marshalStored wrote %s", got)
	}
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(obj)
		}
	})
	b.Run("marshalStored", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = marshalStored(obj)
		}
	})
	b.Run("storedEncoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = storedvalue.Encoder(reflect.TypeOf(obj))
		}
	})
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
