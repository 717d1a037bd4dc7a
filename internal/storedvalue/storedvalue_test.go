package storedvalue_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/storedvalue"
)

type thing struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            map[string]string `json:"spec,omitempty"`
}

func newThing(name string, labels int) *thing {
	now := kapi.Now()
	th := &thing{TypeMeta: kapi.TypeMeta{Kind: "Thing", APIVersion: "example.dev/v1"},
		ObjectMeta: kapi.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: "42", Labels: map[string]string{},
			ManagedFields: []kapi.ManagedFieldsEntry{{Manager: "m", Operation: "Update", APIVersion: "example.dev/v1", Time: &now,
				FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{".":{},"f:a":{}}}`)}}}},
		Spec: map[string]string{"a": name}}
	for i := range labels {
		th.Labels[fmt.Sprintf("l%d", i)] = strings.Repeat("v", i)
	}
	return th
}

// storedJSON is what Marshal must write: json.Marshal without the
// resourceVersion.
func storedJSON(t *testing.T, th *thing) []byte {
	t.Helper()
	c := *th
	c.ResourceVersion = ""
	want, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

func TestMarshal(t *testing.T) {
	th := newThing("a", 3)
	got, err := storedvalue.Marshal(th)
	if err != nil || !bytes.Equal(got, storedJSON(t, th)) {
		t.Fatalf("Marshal wrote %s (%v), want %s", got, err, storedJSON(t, th))
	}
	if th.ResourceVersion != "42" {
		t.Errorf("Marshal left the resourceVersion %q", th.ResourceVersion)
	}
}

// The value WithManaged makes is the stored value, in a slice of its own:
// the buffer the bare value was written in, given back, is written over
// by the next encoding, and what was stored stays as it was.
func TestWithManagedOutlivesTheBuffer(t *testing.T) {
	th := newThing("a", 2)
	v, err := storedvalue.Unmanaged(th, true)
	if err != nil || !v.Bare {
		t.Fatalf("Unmanaged: bare %v, %v", v.Bare, err)
	}
	if len(th.ManagedFields) != 1 {
		t.Fatal("Unmanaged left the object without its managedFields")
	}
	if bytes.Contains(v.Bytes, []byte("managedFields")) {
		t.Fatalf("the bare value has managedFields: %s", v.Bytes)
	}
	stored, err := v.WithManaged(th, true, true)
	if err != nil {
		t.Fatal(err)
	}
	v.Done()
	want := storedJSON(t, th)
	if !bytes.Equal(stored, want) {
		t.Fatalf("WithManaged wrote\n%s\nwant\n%s", stored, want)
	}
	for i := range 20 { // a pool may drop what it is given: encode until the buffer comes back
		next, err := storedvalue.Unmanaged(newThing(strings.Repeat("b", i+1), 10), true)
		if err != nil {
			t.Fatal(err)
		}
		next.Done()
	}
	if !bytes.Equal(stored, want) {
		t.Fatalf("the stored value changed after its buffer was given back:\n%s\nwant\n%s", stored, want)
	}
}

func TestUnchanged(t *testing.T) {
	cur := newThing("a", 2)
	stored := storedJSON(t, cur)
	for _, tc := range []struct {
		name string
		edit func(*thing)
		want bool
	}{
		{"the same", func(*thing) {}, true},
		{"a label more", func(th *thing) { th.Labels["x"] = "y" }, false},
		{"other managedFields", func(th *thing) { th.ManagedFields[0].Manager = "n" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := newThing("a", 2)
			next.ManagedFields[0].Time = cur.ManagedFields[0].Time
			tc.edit(next)
			v, err := storedvalue.Unmanaged(next, true)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Done()
			if got, err := v.Unchanged(next, cur, stored); err != nil || got != tc.want {
				t.Errorf("Unchanged = %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

// bareThing has metadata that may be left out, and is then where none
// closes.
type bareThing struct {
	kapi.TypeMeta `json:",inline"`
	Meta          kapi.ObjectMeta   `json:"metadata,omitzero"`
	Spec          map[string]string `json:"spec,omitempty"`
}

func (b *bareThing) GetObjectMeta() *kapi.ObjectMeta { return &b.Meta }

// The value WithManaged makes from the bare one, put together where the
// encoder said metadata closes, is json.Marshal's, whatever metadata
// holds and whatever managedFields become; and the encoder said where
// metadata closes wherever it wrote some.
func TestWithManagedIsMarshal(t *testing.T) {
	now := kapi.Now()
	some := []kapi.ManagedFieldsEntry{{Manager: "m", Operation: "Update", APIVersion: "v1", Time: &now,
		FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:a":{}}}`)}}}
	escaped := []kapi.ManagedFieldsEntry{{Manager: "m<&>", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{ "f:a": {} }`)}}, {Manager: "n", Subresource: "status"}}
	metas := []kapi.ObjectMeta{{}, {Name: "a"}, {Name: `a"\}{`, Labels: map[string]string{"x": "}"}, Finalizers: []string{"{"}},
		{Annotations: map[string]string{"managedFields": `"managedFields":[]}`}}, {Namespace: "n", ManagedFields: some}}
	for _, meta := range metas {
		for _, managed := range [][]kapi.ManagedFieldsEntry{nil, {}, some, escaped} {
			objects := []kapi.Object{
				&thing{TypeMeta: kapi.TypeMeta{Kind: "Thing"}, ObjectMeta: meta, Spec: map[string]string{"managedFields": "}"}},
				&bareThing{Meta: meta},
			}
			for _, obj := range objects {
				v, err := storedvalue.Unmanaged(obj, true)
				if err != nil {
					t.Fatal(err)
				}
				if _, left := obj.(*bareThing); left && meta.Name == "" && meta.Namespace == "" && meta.Annotations == nil {
					if storedvalue.MetaEnd(v) != -1 {
						t.Errorf("metadata was left out of %s, yet closes at %d", v.Bytes, storedvalue.MetaEnd(v))
					}
				} else if at := storedvalue.MetaEnd(v); at < 0 || v.Bytes[at] != '}' {
					t.Errorf("Unmanaged(%s): metadata closes at %d", v.Bytes, at)
				}
				obj.GetObjectMeta().ManagedFields = managed
				got, err := v.WithManaged(obj, true, true)
				v.Done()
				want, wantErr := json.Marshal(obj)
				if err != nil || wantErr != nil || !bytes.Equal(got, want) {
					t.Errorf("WithManaged wrote\n%s (%v)\njson.Marshal\n%s (%v)", got, err, want, wantErr)
				}
			}
		}
	}
}
