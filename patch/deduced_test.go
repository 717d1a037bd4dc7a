package patch_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/patch"
)

// openSchema is a Widget whose spec.open is Deduced, as a custom
// resource's x-kubernetes-preserve-unknown-fields object is, and whose
// spec.kept keeps unknown members (Elem) beside a declared one.
func openSchema(t *testing.T) *patch.Schema {
	t.Helper()
	meta, err := patch.SchemaOf(reflect.TypeFor[kapi.ObjectMeta]())
	if err != nil {
		t.Fatal(err)
	}
	scalar := &patch.Schema{Kind: patch.Scalar}
	spec := &patch.Schema{Kind: patch.Struct, Fields: map[string]*patch.Schema{
		"open": {Kind: patch.Deduced},
		"kept": {Kind: patch.Struct, Fields: map[string]*patch.Schema{"name": scalar}, Elem: &patch.Schema{Kind: patch.Deduced}},
	}}
	return &patch.Schema{Kind: patch.Struct, Fields: map[string]*patch.Schema{
		"apiVersion": scalar, "kind": scalar, "metadata": meta, "spec": spec,
	}}
}

// TestDeduced: the members of a Deduced object are owned, merged and
// conflict apart, each list and scalar whole, as structured-merge-diff's
// deduced type has them (the crddiff goldens are kube-apiserver's answers
// for the same writes to a custom resource).
func TestDeduced(t *testing.T) {
	s := openSchema(t)
	for _, tc := range []struct {
		name       string
		steps      []step
		wantObject string
		wantFields []string
	}{
		{
			name:       "a create owns each member; a member not declared is in the set",
			steps:      []step{{update: "c", body: obj(`},"spec":{"open":{"x":1,"l":[1,2],"m":{"p":"q"},"e":{}},"kept":{"name":"n","more":{"a":1}}}`)}},
			wantFields: []string{`c Update @1 {"f:spec":{".":{},"f:kept":{".":{},"f:more":{".":{},"f:a":{}},"f:name":{}},"f:open":{".":{},"f:e":{},"f:l":{},"f:m":{".":{},"f:p":{}},"f:x":{}}}}`},
		},
		{
			name: "two appliers own different members without a conflict",
			steps: []step{
				{apply: "a", body: obj(`},"spec":{"open":{"x":1,"m":{"p":"q"}},"kept":{"more":{"a":1}}}`)},
				{apply: "b", body: obj(`},"spec":{"open":{"y":2,"m":{"r":"s"}},"kept":{"more":{"b":2}}}`)},
			},
			wantObject: obj(`},"spec":{"open":{"x":1,"y":2,"m":{"p":"q","r":"s"}},"kept":{"more":{"a":1,"b":2}}}`),
			wantFields: []string{
				`a Apply @1 {"f:spec":{"f:kept":{"f:more":{".":{},"f:a":{}}},"f:open":{"f:m":{".":{},"f:p":{}},"f:x":{}}}}`,
				`b Apply @2 {"f:spec":{"f:kept":{"f:more":{".":{},"f:b":{}}},"f:open":{"f:m":{".":{},"f:r":{}},"f:y":{}}}}`,
			},
		},
		{
			name: "the same member conflicts, and a list is one field",
			steps: []step{
				{apply: "a", body: obj(`},"spec":{"open":{"x":1,"l":[1]}}`)},
				{apply: "b", body: obj(`},"spec":{"open":{"x":2}}`), wantErr: `Apply failed with 1 conflict: conflict with "a": .spec.open.x`},
				{apply: "b", body: obj(`},"spec":{"open":{"l":[1,2]}}`), wantErr: `Apply failed with 1 conflict: conflict with "a": .spec.open.l`},
			},
		},
		{
			name: "an object made a scalar conflicts with its owner; forced, the owner loses what was in it",
			steps: []step{
				{apply: "a", body: obj(`},"spec":{"open":{"x":1,"m":{"p":"q"}}}`)},
				{apply: "b", body: obj(`},"spec":{"open":{"m":"flat"}}`), wantErr: `Apply failed with 1 conflict: conflict with "a": .spec.open.m`},
				{apply: "b", force: true, body: obj(`},"spec":{"open":{"m":"flat"}}`)},
			},
			wantObject: obj(`},"spec":{"open":{"x":1,"m":"flat"}}`),
			wantFields: []string{`a Apply @1 {"f:spec":{"f:open":{"f:x":{}}}}`, `b Apply @3 {"f:spec":{"f:open":{"f:m":{}}}}`},
		},
		{
			name: "an update that makes a list an object owns its members; what an applier drops goes",
			steps: []step{
				{apply: "a", body: obj(`},"spec":{"open":{"l":[1],"x":1}}`)},
				{update: "c", body: obj(`},"spec":{"open":{"l":{"now":"map"},"x":1}}`)},
				{apply: "a", body: obj(`},"spec":{"open":{}}`)},
			},
			wantObject: obj(`},"spec":{"open":{"l":{"now":"map"}}}`),
			wantFields: []string{`a Apply @3 {"f:spec":{"f:open":{}}}`, `c Update @2 {"f:spec":{"f:open":{"f:l":{".":{},"f:now":{}}}}}`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live, managed := runWith(t, s, tc.steps)
			if tc.wantObject != "" && !jsonEqual(t, []byte(live), []byte(tc.wantObject)) {
				t.Errorf("object:\n got %s\nwant %s", live, tc.wantObject)
			}
			if tc.wantFields == nil {
				return
			}
			var got []string
			for _, e := range managed {
				got = append(got, entry(e))
			}
			if strings.Join(got, "\n") != strings.Join(tc.wantFields, "\n") {
				t.Errorf("managedFields:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.wantFields, "\n     "))
			}
		})
	}
}
