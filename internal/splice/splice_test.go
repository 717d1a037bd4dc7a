package splice_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/splice"
)

func TestElement(t *testing.T) {
	for _, tc := range []struct {
		name, stored, rv, want string
		ok                     bool
	}{
		{"after uid", `{"kind":"W","metadata":{"name":"a","uid":"u","generation":1},"spec":{}}`, "7",
			`{"kind":"W","metadata":{"name":"a","uid":"u","resourceVersion":"7","generation":1},"spec":{}}`, true},
		{"last member", `{"metadata":{"name":"a"}}`, "12", `{"metadata":{"name":"a","resourceVersion":"12"}}`, true},
		{"empty metadata", `{"metadata":{}}`, "1", `{"metadata":{"resourceVersion":"1"}}`, true},
		{"first member", `{"metadata":{"labels":{"a":"b"}}}`, "3", `{"metadata":{"resourceVersion":"3","labels":{"a":"b"}}}`, true},
		{"no revision", `{"metadata":{"name":"a"}}`, "", `{"metadata":{"name":"a"}}`, true},
		{"already has one", `{"metadata":{"resourceVersion":"1"}}`, "2", "", false},
		{"not a revision", `{"metadata":{}}`, `7"`, "", false},
		{"no metadata", `{"spec":{}}`, "2", "", false},
		{"not JSON", `{"metadata":{"name":"a}`, "2", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := splice.Element(nil, []byte(tc.stored), tc.rv)
			if ok != tc.ok || ok && string(got) != tc.want {
				t.Errorf("Element(%s, %q) = %s, %v; want %s, %v", tc.stored, tc.rv, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestWithManagedFields(t *testing.T) {
	managed := []kapi.ManagedFieldsEntry{{Manager: "m", Operation: "Update", FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}
	for _, tc := range []struct {
		name, stored, want string
	}{
		{"added", `{"metadata":{"name":"a"},"spec":{}}`, `{"metadata":{"name":"a","managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},"spec":{}}`},
		{"replaced", `{"metadata":{"name":"a","managedFields":[{"manager":"x"}]}}`, `{"metadata":{"name":"a","managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]}}`},
		{"alone", `{"metadata":{}}`, `{"metadata":{"managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := splice.WithManagedFields([]byte(tc.stored), managed)
			if !ok || err != nil || string(got) != tc.want {
				t.Fatalf("WithManagedFields(%s) = %s, %v, %v; want %s", tc.stored, got, ok, err, tc.want)
			}
			bare, _, _ := splice.WithManagedFields([]byte(tc.stored), nil)
			if !splice.EqualUnmanaged(bare, got) {
				t.Errorf("EqualUnmanaged(%s, %s) = false", bare, got)
			}
		})
	}
	if _, ok, _ := splice.WithManagedFields([]byte(`{"metadata":{"managedFields":[],"name":"a"}}`), managed); ok {
		t.Error("WithManagedFields spliced where managedFields is not metadata's last member")
	}
}

// FuzzElement: an element made from a JSON object is that object with
// metadata.resourceVersion set.
func FuzzElement(f *testing.F) {
	f.Add([]byte(`{"kind":"W","metadata":{"name":"a","uid":"u","generation":1},"spec":{}}`), uint32(7))
	f.Add([]byte(`{ "metadata" : { } }`), uint32(0))
	f.Fuzz(func(t *testing.T, stored []byte, rev uint32) {
		rv := strconv.FormatUint(uint64(rev), 10)
		got, ok := splice.Element(nil, stored, rv)
		var want map[string]any
		if !ok || json.Unmarshal(stored, &want) != nil || bytes.Count(stored, []byte(`"metadata"`)) != 1 || bytes.IndexByte(stored, '\\') >= 0 {
			return // declined, or a document whose decoding hides what is spliced
		}
		meta, _ := want["metadata"].(map[string]any)
		meta["resourceVersion"] = rv
		var have map[string]any
		if err := json.Unmarshal(got, &have); err != nil || !reflect.DeepEqual(have, want) {
			t.Fatalf("Element(%s, %s) = %s (%v); want the object with resourceVersion %s", stored, rv, got, err, rv)
		}
	})
}
