package jsonfields_test

import (
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonfields"
)

type pathInner struct {
	Name  string `json:"name"`
	Count *int32 `json:"count"`
	On    bool   `json:"on"`
	Float float64
}

type PathEmbedded struct {
	Shared string `json:"shared"`
}

type pathObject struct {
	*PathEmbedded
	Spec   pathInner  `json:"spec"`
	Status *pathInner `json:"status"`
}

func TestStringGetter(t *testing.T) {
	typ := reflect.TypeFor[pathObject]()
	n := int32(7)
	obj := &pathObject{Spec: pathInner{Name: "a", Count: &n, On: true}}
	for path, want := range map[string]string{"spec.name": "a", "spec.count": "7", "spec.on": "true", "status.name": "", "shared": ""} {
		get, err := jsonfields.StringGetter(typ, path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got := get(obj); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	obj.PathEmbedded = &PathEmbedded{Shared: "s"}
	if get, _ := jsonfields.StringGetter(typ, "shared"); get(obj) != "s" {
		t.Errorf("shared = %q, want s", get(obj))
	}
	for _, path := range []string{"spec.Float", "spec.none", "spec.name.x"} {
		if _, err := jsonfields.StringGetter(typ, path); err == nil {
			t.Errorf("%s: no error", path)
		}
	}
}

func TestFieldIndex(t *testing.T) {
	typ := reflect.TypeFor[pathObject]()
	index, leaf, err := jsonfields.FieldIndex(typ, "status.count")
	if err != nil || leaf != reflect.TypeFor[*int32]() {
		t.Fatalf("FieldIndex = %v, %v, %v", index, leaf, err)
	}
	var obj pathObject
	if v := jsonfields.FieldValue(reflect.ValueOf(&obj).Elem(), index, false); v.IsValid() {
		t.Errorf("read through a nil pointer: %v, want an invalid Value", v)
	}
	orig := &pathInner{Name: "orig"}
	obj.Status = orig
	copied := obj // shallow: shares Status
	v := jsonfields.FieldValue(reflect.ValueOf(&copied).Elem(), index, true)
	n := int32(3)
	v.Set(reflect.ValueOf(&n))
	if *copied.Status.Count != 3 || orig.Count != nil || copied.Status.Name != "orig" {
		t.Errorf("write: copy %+v, original %+v; want the copy changed, the original not", copied.Status, orig)
	}
	if _, _, err := jsonfields.FieldIndex(typ, "shared"); err == nil {
		t.Error("a field promoted through an embedded pointer resolved")
	}
}
