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
