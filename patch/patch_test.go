package patch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/patch"
)

const original = `{"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"color":"red","ports":[{"name":"http","port":80}]}}`

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		typ     patch.Type
		doc     string
		want    string
		wantErr error
	}{
		{"merge sets", patch.MergePatch, `{"spec":{"color":"blue"}}`, `{"metadata":{"labels":{"x":"1"},"name":"a"},"spec":{"color":"blue","ports":[{"name":"http","port":80}]}}`, nil},
		{"merge null removes", patch.MergePatch, `{"metadata":{"labels":{"x":null}}}`, `{"metadata":{"labels":{},"name":"a"},"spec":{"color":"red","ports":[{"name":"http","port":80}]}}`, nil},
		{"merge replaces lists", patch.MergePatch, `{"spec":{"ports":[]}}`, `{"metadata":{"labels":{"x":"1"},"name":"a"},"spec":{"color":"red","ports":[]}}`, nil},
		{"merge malformed", patch.MergePatch, `{`, "", patch.ErrMalformed},
		{"json replace", patch.JSONPatch, `[{"op":"replace","path":"/spec/color","value":"green"}]`, `{"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"color":"green","ports":[{"name":"http","port":80}]}}`, nil},
		{"json test passes", patch.JSONPatch, `[{"op":"test","path":"/spec/color","value":"red"},{"op":"remove","path":"/spec/ports/0"}]`, `{"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"color":"red","ports":[]}}`, nil},
		{"json test fails", patch.JSONPatch, `[{"op":"test","path":"/spec/color","value":"blue"}]`, "", patch.ErrNotApplicable},
		{"json bad path", patch.JSONPatch, `[{"op":"remove","path":"/spec/nothing"}]`, "", patch.ErrNotApplicable},
		{"json malformed", patch.JSONPatch, `{"op":"add"}`, "", patch.ErrMalformed},
		{"unsupported type", patch.StrategicMergePatch, `{}`, "", patch.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := patch.Apply(tc.typ, []byte(original), []byte(tc.doc))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || !jsonEqual(t, got, []byte(tc.want)) {
				t.Fatalf("Apply = %s, %v\nwant %s", got, err, tc.want)
			}
		})
	}
}

func FuzzApply(f *testing.F) {
	f.Add(string(patch.MergePatch), `{"spec":{"color":null}}`)
	f.Add(string(patch.JSONPatch), `[{"op":"add","path":"/spec/ports/-","value":{"name":"x"}}]`)
	f.Add(string(patch.JSONPatch), `[{"op":"move","from":"/spec","path":"/spec/x"}]`)
	f.Add(string(patch.JSONPatch), `[{"op":"copy","from":"/metadata","path":"/metadata/x"}]`)
	f.Fuzz(func(t *testing.T, typ, doc string) {
		out, err := patch.Apply(patch.Type(typ), []byte(original), []byte(doc))
		if err != nil && !errors.Is(err, patch.ErrMalformed) && !errors.Is(err, patch.ErrNotApplicable) {
			t.Fatalf("Apply(%s, %q): error %v is neither ErrMalformed nor ErrNotApplicable", typ, doc, err)
		}
		if err == nil && len(out) == 0 {
			t.Fatalf("Apply(%s, %q): no error and no output", typ, doc)
		}
	})
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return reflect.DeepEqual(va, vb)
}

// TestJSONPatchReplaceMissingMember: a replace of a member an object lacks
// adds it, as kube-apiserver's JSON Patch library (evanphx/json-patch v4)
// does (kube-apiserver answers 200 to [{"op":"replace","path":"/spec/commonName",...}]
// on a Certificate without one); a replace under a missing object or past
// an array's end still fails.
func TestJSONPatchReplaceMissingMember(t *testing.T) {
	out, err := patch.Apply(patch.JSONPatch, []byte(original),
		[]byte(`[{"op":"replace","path":"/spec/size","value":3},{"op":"replace","path":"/spec/color","value":"blue"},{"op":"test","path":"/spec/size","value":3}]`))
	if err != nil || string(out) != `{"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"color":"blue","ports":[{"name":"http","port":80}],"size":3}}` {
		t.Errorf("replace of a missing member: %s %v", out, err)
	}
	for _, doc := range []string{
		`[{"op":"replace","path":"/status/phase","value":"x"}]`,
		`[{"op":"replace","path":"/spec/ports/1","value":{}}]`,
		`[{"op":"replace","path":"/spec/color/x","value":1}]`,
		`[{"op":"replace","path":"/spec/~2","value":1}]`,
		`[{"op":"replace","path":"/metadata/labels/7/x","value":"1"}]`,
	} {
		if out, err := patch.Apply(patch.JSONPatch, []byte(original), []byte(doc)); !errors.Is(err, patch.ErrNotApplicable) {
			t.Errorf("%s: %s %v, want ErrNotApplicable", doc, out, err)
		}
	}
	// A member whose name is digits is a member too (the slow path), and
	// a replace of an element still replaces it.
	out, err = patch.Apply(patch.JSONPatch, []byte(original),
		[]byte(`[{"op":"replace","path":"/metadata/labels/7","value":"y"},{"op":"replace","path":"/spec/ports/0","value":{"name":"h","port":1}}]`))
	if err != nil || string(out) != `{"metadata":{"name":"a","labels":{"x":"1","7":"y"}},"spec":{"color":"red","ports":[{"name":"h","port":1}]}}` {
		t.Errorf("replace of a missing numeric member and of an element: %s %v", out, err)
	}
}

// TestJSONPatchWithoutValue: an add or replace without a value sets null,
// as evanphx/json-patch v4 (kube-apiserver's) applies it: kube-apiserver
// v1.37.2 answers 200 to [{"op":"replace","path":"/spec/note"}] on a
// custom resource, its note null (crddiff's "json patch replace nullable
// without value").
func TestJSONPatchWithoutValue(t *testing.T) {
	out, err := patch.Apply(patch.JSONPatch, []byte(original),
		[]byte(`[{"op":"replace","path":"/spec/color"},{"op":"add","path":"/spec/size"},{"op":"replace","path":"/spec/gone"}]`))
	if err != nil || string(out) != `{"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"color":null,"ports":[{"name":"http","port":80}],"size":null,"gone":null}}` {
		t.Errorf("add and replace without a value: %s %v", out, err)
	}
}

// TestJSONPatchBounded: more than kube's 10,000 operations is refused
// with its message; a patch of many replaces of missing members that
// fails at its end reports the operation that failed, and without it
// applies every replace. (Its cost is not asserted here: on a 512 KiB
// object, 1,000 replaces and a failing test took 50 s per request when
// each operation was a pass over the document, 54 ms as one pass.)
func TestJSONPatchBounded(t *testing.T) {
	var ops []string
	for i := range patch.MaxJSONPatchOperations + 1 {
		ops = append(ops, fmt.Sprintf(`{"op":"replace","path":"/metadata/labels/l%d","value":"v"}`, i))
	}
	_, err := patch.Apply(patch.JSONPatch, []byte(original), []byte("["+strings.Join(ops, ",")+"]"))
	if !errors.Is(err, patch.ErrTooManyOperations) || !strings.HasSuffix(err.Error(), ": The allowed maximum operations in a JSON patch is 10000, got 10001") {
		t.Errorf("10,001 operations: %v", err)
	}
	ops = append(ops[:1000], `{"op":"test","path":"/spec/color","value":"blue"}`)
	_, err = patch.Apply(patch.JSONPatch, []byte(original), []byte("["+strings.Join(ops, ",")+"]"))
	if !errors.Is(err, patch.ErrNotApplicable) || !strings.Contains(err.Error(), "test") {
		t.Errorf("1,000 replaces and a failing test: %v, want the test's ErrNotApplicable", err)
	}
	out, err := patch.Apply(patch.JSONPatch, []byte(original), []byte("["+strings.Join(ops[:1000], ",")+"]"))
	if err != nil || strings.Count(string(out), `":"v"`) != 1000 {
		t.Errorf("1,000 replaces of missing labels: %v, %d set", err, strings.Count(string(out), `":"v"`))
	}
}
