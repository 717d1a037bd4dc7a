package kinds_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
)

// gadgetSchema leaves two objects open, as kube-apiserver's field manager
// reads them (structured-merge-diff's deduced type): free keeps unknown
// fields; template is an embedded resource, whose apiVersion, kind and
// metadata (an ObjectMeta) are fields.
const gadgetSchema = `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "properties": {
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
      }
    }
  }
}`

// TestDeducedFields: managedFields track the members of an object a
// schema leaves open, as kube-apiserver does, so that two managers apply
// different members of it without a conflict, and conflict on the same
// one; before, the object was one field, owned whole by its last writer
// (the crddiff goldens hold the FieldsV1 to kube-apiserver's).
func TestDeducedFields(t *testing.T) {
	srv, c := newServer(t)
	s, err := schema.Parse([]byte(gadgetSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := kinds.Register(srv, kinds.Definition{Group: "example.com", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
		Versions: []kinds.Version{{Name: "v1", Served: true, Storage: true, Schema: s}}}); err != nil {
		t.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/default/gadgets/g"
	apply := func(manager, spec string, code int) string {
		t.Helper()
		return c.want("PATCH", path+"?fieldManager="+manager, "application/apply-patch+yaml",
			`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":`+spec+`}`, code)
	}
	fields := func(out, manager string) string {
		t.Helper()
		var obj struct {
			Metadata struct {
				ManagedFields []struct {
					Manager  string
					FieldsV1 json.RawMessage
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatal(err)
		}
		for _, e := range obj.Metadata.ManagedFields {
			if e.Manager == manager {
				return string(e.FieldsV1)
			}
		}
		return ""
	}

	out := apply("a", `{"free":{"x":1,"list":[1,2],"nested":{"p":"q"}},"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t","labels":{"k":"v"}},"data":{"k":"v"}}}`, 201)
	// A member the schema does not declare is itself a member of the set
	// ("."), as structured-merge-diff's ToFieldSet lists it.
	want := `{"f:spec":{"f:free":{"f:list":{},"f:nested":{".":{},"f:p":{}},"f:x":{}},"f:template":{"f:apiVersion":{},"f:data":{".":{},"f:k":{}},"f:kind":{},"f:metadata":{"f:labels":{"f:k":{}},"f:name":{}}}}}`
	if got := fields(out, "a"); got != want {
		t.Errorf("a's fields:\n got %s\nwant %s", got, want)
	}
	// Other members of both objects: no conflict, both kept.
	out = apply("b", `{"free":{"y":2},"template":{"apiVersion":"v1","kind":"ConfigMap","data":{"other":"w"}}}`, 200)
	if !strings.Contains(out, `"free":{"list":[1,2],"nested":{"p":"q"},"x":1,"y":2}`) || !strings.Contains(out, `"data":{"k":"v","other":"w"}`) {
		t.Errorf("b's apply did not merge: %s", out)
	}
	// The same member with another value: a conflict on it alone.
	if out := apply("b", `{"free":{"x":3}}`, 409); !strings.Contains(out, `Apply failed with 1 conflict: conflict with \"a\": .spec.free.x`) {
		t.Errorf("b's apply of x: %s", out)
	}
	if out := apply("b", `{"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"}}}`, 409); !strings.Contains(out, `conflict with \"a\": .spec.template.metadata.name`) {
		t.Errorf("b's apply of the template's name: %s", out)
	}
	// What a stops applying goes; b's members stay.
	out = apply("a", `{"free":{"nested":{"p":"q"}},"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t"}}}`, 200)
	if !strings.Contains(out, `"free":{"nested":{"p":"q"},"y":2}`) || !strings.Contains(out, `"data":{"other":"w"}`) {
		t.Errorf("a's second apply: %s", out)
	}
}
