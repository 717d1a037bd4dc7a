package apiserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/splice"
	"github.com/kapi-dev/kapi/watch"
)

type plainWidget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            map[string]any `json:"spec,omitempty"`
}

type selfMarshaling plainWidget

func (selfMarshaling) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }

// TestStoredJSONOfPlainTypes: for a type with plain metadata, the JSON made
// from stored bytes is the object's own JSON, byte for byte, however its
// uid and other strings look.
func TestStoredJSONOfPlainTypes(t *testing.T) {
	if !plainMetadata(reflect.TypeFor[plainWidget]()) {
		t.Fatal("plainWidget's metadata is not plain")
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[selfMarshaling](), reflect.TypeFor[kapi.Status](), reflect.TypeFor[struct {
		kapi.ObjectMeta `json:"meta"`
	}]()} {
		if plainMetadata(typ) {
			t.Errorf("%s has plain metadata", typ)
		}
	}
	uid := "0b8c2a8e-1f1e-4e0a-9c43-3c0f4d3b9a11"
	for _, tc := range []struct {
		name string
		obj  plainWidget
	}{
		{"minimal", plainWidget{ObjectMeta: kapi.ObjectMeta{Name: "a", UID: uid}}},
		{"full", plainWidget{
			TypeMeta: kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"},
			ObjectMeta: kapi.ObjectMeta{Name: "a", Namespace: "ns", UID: uid, Generation: 3, CreationTimestamp: kapi.Now(),
				Labels: map[string]string{"owner-uid": uid}, Finalizers: []string{"x"},
				ManagedFields: []kapi.ManagedFieldsEntry{{Manager: "m", Operation: "Update"}}},
			Spec: map[string]any{"note": `"uid":"` + uid + `"`, "n": 1},
		}},
		{"uid twice", plainWidget{ObjectMeta: kapi.ObjectMeta{Name: "a", UID: uid}, Spec: map[string]any{"uid": uid}}},
		{"owner is itself", plainWidget{ObjectMeta: kapi.ObjectMeta{Name: "a", UID: uid, OwnerReferences: []kapi.OwnerReference{{UID: uid}}}}},
		{"escaped uid", plainWidget{ObjectMeta: kapi.ObjectMeta{Name: "a", UID: "<a>"}}},
		{"no uid", plainWidget{ObjectMeta: kapi.ObjectMeta{Name: "a"}}},
		{"empty metadata", plainWidget{Spec: map[string]any{"a": 1}}},
		{"only later members", plainWidget{ObjectMeta: kapi.ObjectMeta{Generation: 2, Labels: map[string]string{"a": "b"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.obj
			obj.ResourceVersion = "42"
			stored, err := marshalStored(&obj)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(&obj)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := splice.Element(nil, stored, obj.ResourceVersion)
			if !ok || !bytes.Equal(got, want) {
				t.Errorf("made (%v)\n%s\nwant\n%s", ok, got, want)
			}
			// A list writes the same element in three pieces, twice from
			// one item (the second time from the offset kept in its
			// Mark); a GET and a watch write it whole.
			rq := &request{res: &resource{objType: objectType{plainMetadata: true}}}
			it := &watch.Item{Value: stored, Revision: 42}
			for range 2 {
				if got, ok := rq.buf.storedElement(it); !ok || !bytes.Equal(got, want) {
					t.Errorf("element (%v)\n%s\nwant\n%s", ok, got, want)
				}
			}
			rq.buf.release()
			members := make([]byte, 0, 2*splice.MemberRoom)
			for range 2 {
				before, member, after, ok := rq.storedPieces(it, members[len(members):])
				members = members[:len(members)+len(member)]
				if joined := append(append(append([]byte(nil), before...), member...), after...); !ok || !bytes.Equal(joined, want) {
					t.Errorf("pieces (%v)\n%s\nwant\n%s", ok, joined, want)
				}
			}
		})
	}
}
