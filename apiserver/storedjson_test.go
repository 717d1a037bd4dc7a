package apiserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/splice"
)

type storedThing struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            map[string]any `json:"spec,omitempty"`
}

// splice.Element must make the very bytes json.Marshal makes of the object,
// whichever ObjectMeta fields surround the resourceVersion.
func TestStoredElementIsMarshal(t *testing.T) {
	tests := []struct {
		name string
		obj  storedThing
	}{
		{"empty metadata", storedThing{}},
		{"only name", storedThing{ObjectMeta: kapi.ObjectMeta{Name: "a"}}},
		{"only generation", storedThing{ObjectMeta: kapi.ObjectMeta{Generation: 3}}},
		{"name and labels", storedThing{ObjectMeta: kapi.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"}}}},
		{"every field before it", storedThing{
			TypeMeta: kapi.TypeMeta{Kind: "Thing", APIVersion: "example.com/v1"},
			ObjectMeta: kapi.ObjectMeta{Name: `a"\}{`, GenerateName: "g-", Namespace: "ns", UID: "u",
				Generation: 1, Annotations: map[string]string{"a": `<&>"{}[]`}},
			Spec: map[string]any{"metadata": map[string]any{"resourceVersion": "1"}, "list": []any{"}", "]", 1.5, nil, true}},
		}},
		{"metadata after spec", storedThing{Spec: map[string]any{"a": `"{"`}, ObjectMeta: kapi.ObjectMeta{UID: "u"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stored, err := marshalStored(&tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			obj := tt.obj
			obj.ResourceVersion = "12345"
			want, _ := json.Marshal(&obj)
			got, ok := splice.Element(nil, stored, obj.ResourceVersion)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("storedElement(%s) = %s, %v; want %s", stored, got, ok, want)
			}
		})
	}
}

// A value splice.Element cannot splice into is left to the caller to
// marshal.
func TestStoredElementDeclines(t *testing.T) {
	for _, stored := range []string{
		``, `[]`, `{}`, `{"kind":"X"}`, `{"metadata":[]}`, `{"metadata":{"name":"a","resourceVersion":"1"}}`,
		`{"metadata":{"name":"a`, `{"kind":"X`, `{"spec":{"a":[}`,
	} {
		if got, ok := splice.Element(nil, []byte(stored), "7"); ok {
			t.Errorf("storedElement(%s) = %s, want it declined", stored, got)
		}
	}
	if _, ok := splice.Element(nil, []byte(`{"metadata":{}}`), `7"`); ok {
		t.Error("a resourceVersion that is not a revision was spliced in")
	}
}

// splice.WithManagedFields must make the very bytes marshalStored makes of the
// object once its managedFields change, from none to some, some to other,
// and some to none, whatever metadata holds besides.
func TestWithManagedFieldsIsMarshal(t *testing.T) {
	now := kapi.Now()
	some := []kapi.ManagedFieldsEntry{{Manager: "m<&>", Operation: "Update", APIVersion: "v1", Time: &now,
		FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:a":{}}}`)}}}
	other := append(some, kapi.ManagedFieldsEntry{Manager: "n", Operation: "Apply", Subresource: "status"})
	plain := []kapi.ManagedFieldsEntry{{Manager: "kubectl", Operation: "Update", APIVersion: "v1", Time: &now,
		FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:a":{}}}`)}}, {Manager: "n", Subresource: "status"}}
	metas := []kapi.ObjectMeta{
		{}, {Name: "a"}, {Name: `a"\}{`, Labels: map[string]string{"x": "y"}, Finalizers: []string{"f"}},
		{ManagedFields: some}, {Name: "a", ManagedFields: other}, {Annotations: map[string]string{"managedFields": `"managedFields":[]`}, ManagedFields: some},
		{Name: "a", ManagedFields: []kapi.ManagedFieldsEntry{}},
	}
	for _, meta := range metas {
		for _, managed := range [][]kapi.ManagedFieldsEntry{nil, {}, some, other, plain} {
			obj := storedThing{TypeMeta: kapi.TypeMeta{Kind: "Thing"}, ObjectMeta: meta, Spec: map[string]any{"managedFields": []any{"}"}}}
			stored, err := marshalStored(&obj)
			if err != nil {
				t.Fatal(err)
			}
			obj.ManagedFields = managed
			want, _ := marshalStored(&obj)
			got, ok, err := splice.WithManagedFields(stored, managed)
			if !ok || err != nil || !bytes.Equal(got, want) {
				t.Fatalf("splice.WithManagedFields(%s, %d entries) = %s, %v, %v; want %s", stored, len(managed), got, ok, err, want)
			}
		}
	}
	for _, stored := range []string{``, `[]`, `{"metadata":[]}`, `{"metadata":{"managedFields":[],"name":"a"}}`, `{"metadata":{"name":"a`} {
		if got, ok, _ := splice.WithManagedFields([]byte(stored), some); ok {
			t.Errorf("splice.WithManagedFields(%s) = %s: want it declined", stored, got)
		}
	}
}

// marshalManaged writes what json.Marshal writes, or fails as it does.
func TestMarshalManagedIsMarshal(t *testing.T) {
	now := kapi.Now()
	var zero kapi.Time
	for _, m := range [][]kapi.ManagedFieldsEntry{
		nil,
		{},
		{{}},
		{{Manager: "kubectl", Operation: "Apply", APIVersion: "example.com/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{".":{},"f:size":{}}}`)}}},
		{{Manager: "m", Operation: "Update", Subresource: "status", FieldsV1: &kapi.FieldsV1{}}, {Manager: "n", Time: &zero}},
		{{Manager: "<x&y>", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:a":{}}`)}}},
		{{Manager: "tab\there"}},
		{{Manager: "quote\"back\\"}},
		{{Manager: "é"}},
		{{FieldsV1: &kapi.FieldsV1{Raw: []byte(`{ "f:a" : {} }`)}}},
		{{FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"k:{\"name\":\"a b\"}":{}}`)}}},
		{{FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"v:\"<x>\"":{}}`)}}},
		{{FieldsV1: &kapi.FieldsV1{Raw: []byte("{\"v:\\\"\u2028\\\"\":{}}")}}},
		{{FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:a":`)}}},
		{{FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:a":{}}x`)}}},
	} {
		checkMarshalManaged(t, m)
	}
}

// Plain entries are written into one buffer made to their estimated size,
// however long their strings, their times included.
func TestMarshalManagedAllocatesOnce(t *testing.T) {
	now := kapi.Now()
	long := strings.Repeat("x", 300)
	m := []kapi.ManagedFieldsEntry{{Manager: long, Operation: long, APIVersion: long, Time: &now, FieldsType: long,
		FieldsV1: &kapi.FieldsV1{}, Subresource: long}}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = marshalManaged(m) }); allocs != 1 {
		t.Errorf("%v allocations, want 1", allocs)
	}
	// splice.WithManagedFields writes entries over its pooled room (8 KiB)
	// the same way, and those within it (a kilobyte or two, as a
	// manager's entry of a whole object takes) into the room: then only
	// the value's allocation is left.
	stored := []byte(`{"metadata":{"name":"a"}}`)
	longer := strings.Repeat("x", 3000)
	over := []kapi.ManagedFieldsEntry{{Manager: longer, Operation: longer, APIVersion: longer, Time: &now, FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{}}}
	short := []kapi.ManagedFieldsEntry{{Manager: "m", Operation: "Update", Time: &now, FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}
	for _, tc := range []struct {
		name    string
		managed []kapi.ManagedFieldsEntry
		want    float64
	}{{"over the room", over, 2}, {"within it", m, 1}, {"short", short, 1}} {
		if allocs := testing.AllocsPerRun(100, func() { _, _, _ = splice.WithManagedFields(stored, tc.managed) }); allocs != tc.want {
			t.Errorf("splice.WithManagedFields, %s: %v allocations, want %v", tc.name, allocs, tc.want)
		}
	}
}

// marshalManaged is json.Marshal(managed) the way splice.WithManagedFields writes
// managed, with no room of its own.
func marshalManaged(managed []kapi.ManagedFieldsEntry) ([]byte, error) {
	if managed == nil {
		return []byte("null"), nil
	}
	return splice.ManagedJSON(nil, managed)
}

// checkMarshalManaged holds marshalManaged to json.Marshal, and
// splice.WithManagedFields, which writes m into an object's encoding, to
// marshalStored.
func checkMarshalManaged(t *testing.T, m []kapi.ManagedFieldsEntry) {
	t.Helper()
	want, wantErr := json.Marshal(m)
	got, err := marshalManaged(m)
	if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
		t.Errorf("marshalManaged(%+v) = %s, %v; json.Marshal: %s, %v", m, got, err, want, wantErr)
	}
	obj := storedThing{TypeMeta: kapi.TypeMeta{Kind: "Thing"}, ObjectMeta: kapi.ObjectMeta{Name: "a"}}
	stored, err := marshalStored(&obj)
	if err != nil {
		t.Fatal(err)
	}
	obj.ManagedFields = m
	want, wantErr = marshalStored(&obj)
	got, ok, err := splice.WithManagedFields(stored, m)
	if (err != nil) != (wantErr != nil) || err == nil && (!ok || !bytes.Equal(got, want)) {
		t.Errorf("splice.WithManagedFields(%s, %+v) = %s, %v, %v; marshalStored: %s, %v", stored, m, got, ok, err, want, wantErr)
	}
}

func FuzzMarshalManaged(f *testing.F) {
	f.Add("kubectl", "Apply", "example.com/v1", "status", []byte(`{"f:spec":{".":{},"f:size":{}}}`), true, true)
	f.Add("<", "", "", "", []byte(`{ "f:a":{}}`), false, true)
	f.Add("", "", "", "", []byte(nil), false, false)
	f.Fuzz(func(t *testing.T, manager, operation, apiVersion, subresource string, raw []byte, withTime, withFields bool) {
		e := kapi.ManagedFieldsEntry{Manager: manager, Operation: operation, APIVersion: apiVersion, FieldsType: "FieldsV1", Subresource: subresource}
		if withTime {
			now := kapi.Now()
			e.Time = &now
		}
		if withFields {
			e.FieldsV1 = &kapi.FieldsV1{Raw: raw}
		}
		checkMarshalManaged(t, []kapi.ManagedFieldsEntry{e, {Manager: manager}})
	})
}
