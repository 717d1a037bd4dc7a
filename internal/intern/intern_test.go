package intern

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/kapi-dev/kapi"
)

// Shrink must leave an object equal to what it was, with its long
// annotations in the stored value's bytes and its repeated strings shared.
func TestShrinkSharesStrings(t *testing.T) {
	long := strings.Repeat("p", mapKeyMax) // too long for the map to be shared whole
	var table Table
	var objs [2]*storedThing
	var stored [2][]byte
	for i := range objs {
		obj := &storedThing{}
		obj.Kind, obj.APIVersion, obj.Name, obj.Namespace = "Thing", "example.com/v1", "a", "ns"
		obj.Labels = map[string]string{"app": "shop"}
		obj.ManagedFields = []kapi.ManagedFieldsEntry{{Manager: "m", Operation: "Update", FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}
		obj.Annotations = map[string]string{"pad": long, "escaped": strings.Repeat("<", 200)}
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var decoded storedThing
		if err := json.Unmarshal(data, &decoded); err != nil {
			t.Fatal(err)
		}
		table.Shrink(&decoded, data)
		if !reflect.DeepEqual(&decoded, obj) {
			t.Fatalf("Shrink changed the object: %+v, want %+v", decoded, obj)
		}
		objs[i], stored[i] = &decoded, data
	}
	if p, s := uintptr(unsafe.Pointer(unsafe.StringData(objs[1].Annotations["pad"]))), uintptr(unsafe.Pointer(&stored[1][0])); p < s || p >= s+uintptr(len(stored[1])) {
		t.Error("a long annotation is not shared with the stored value")
	}
	if reflect.ValueOf(objs[0].Labels).UnsafePointer() != reflect.ValueOf(objs[1].Labels).UnsafePointer() {
		t.Error("equal label sets are not shared")
	}
	if objs[0].ManagedFields[0].FieldsV1 != objs[1].ManagedFields[0].FieldsV1 {
		t.Error("equal field sets are not shared")
	}
	if unsafe.StringData(objs[0].Labels["app"]) != unsafe.StringData(objs[1].Labels["app"]) ||
		unsafe.StringData(objs[0].Kind) != unsafe.StringData(objs[1].Kind) {
		t.Error("repeated strings are not shared")
	}
}

type storedThing struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            map[string]string `json:"spec,omitempty"`
}
