package kinds_test

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonpath"
	"github.com/kapi-dev/kapi/kinds"
)

// FuzzObject decodes documents as the objects of a kind without a Go type:
// no panic, and what decodes encodes to JSON that decodes to the same.
func FuzzObject(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"n":1,"f":1.5,"l":[1,"a",null]},"status":{"ok":true}}`,
		`{"metadata":null,"status":null}`, `{"metadata":{"bogus":1}}`, `[]`, `null`, `{"kind":1}`, `{"a":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var o kinds.Object
		if err := json.Unmarshal(data, &o); err != nil {
			return
		}
		out, err := json.Marshal(&o)
		if err != nil {
			t.Fatalf("%s: encode: %v", data, err)
		}
		var again kinds.Object
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("%s: what it encoded (%s) does not decode: %v", data, out, err)
		}
		out2, _ := json.Marshal(&again)
		if string(out) != string(out2) {
			t.Fatalf("encoded twice differently:\n%s\n%s", out, out2)
		}
	})
}

// FuzzJSONPath parses and evaluates the paths of printer columns: no
// panic whatever the path and the object.
func FuzzJSONPath(f *testing.F) {
	for _, s := range []string{".spec.replicas", `.status.conditions[?(@.type=="Ready")].status`, ".a[0].b", ".a[*]", `.a['b.c']`, ".", "[", `.a[?(@.x!=1)]`} {
		f.Add(s, []byte(`{"spec":{"replicas":3},"status":{"conditions":[{"type":"Ready","status":"True"}]},"a":[{"b":1,"x":{"y":1}}]}`))
	}
	f.Fuzz(func(t *testing.T, path string, doc []byte) {
		p, err := jsonpath.Parse(path)
		if err != nil {
			return
		}
		var v any
		if json.Unmarshal(doc, &v) != nil {
			return
		}
		p.Find(v)
	})
}
