package patch

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// FuzzMergeStored: a merge patch applied as written makes the value
// jsonpatch.MergePatch makes, numbers as they are written included, or
// leaves the patch to it.
func FuzzMergeStored(f *testing.F) {
	orig := `{"kind":"Widget","metadata":{"name":"a","labels":{"x":"1","y":null},"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},"spec":{"color":"red","size":1.0,"ports":[{"name":"http","port":80}],"extra":null,"list":[1,2]}}`
	for _, p := range []string{
		`{}`, `{"spec":{"size":13}}`, `{"spec":{"color":null,"new":{"a":null,"b":[null,{"c":null,"d":1}]}}}`,
		`{"metadata":{"labels":{"x":null,"z":"2"}}}`, `{"spec":{"extra":{"a":null,"b":{"c":null}}}}`,
		`{"spec":{"list":{"a":null}}}`, `{"spec":{"ports":[{"name":null}]}}`, `{"spec":"x"}`, `{"spec":null}`,
		`{"kind":{"a":null}}`, `{"metadata":{"labels":[{"a":null}]}}`, `{"a":1,"a":2}`, `[]`, `null`, `{"a":"\u00e9"}`,
		`{ "spec" : { "size" : 1e2 } }`, `{"spec":{"size":-0.0}}`, `{"new":[[{"a":null}],"{"]}`, `{"a\"b":1}`,
	} {
		f.Add(orig, p)
	}
	f.Add(`{}`, `{"a":{"b":null}}`)
	f.Add(`{"a":[]}`, `{"a":{"b":{"c":null}}}`)
	f.Add(`[]`, `{}`)
	f.Fuzz(func(t *testing.T, original, patch string) {
		got, ok := mergeStored([]byte(original), []byte(patch))
		if !ok {
			return
		}
		want, err := jsonpatch.MergePatch([]byte(original), []byte(patch))
		if err != nil {
			t.Fatalf("merged as written to %s, but jsonpatch fails: %v", got, err)
		}
		if g, w := numbersAsWritten(t, got), numbersAsWritten(t, want); !reflect.DeepEqual(g, w) {
			t.Fatalf("merged as written to\n%s\njsonpatch:\n%s", got, want)
		}
	})
}

// numbersAsWritten decodes JSON keeping numbers as they are written.
func numbersAsWritten(t *testing.T, b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %s: %v", b, err)
	}
	return v
}
