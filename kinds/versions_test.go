package kinds_test

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
)

// twoSchemas is a kind whose versions' schemas differ: v1 (stored) allows
// sizes up to 10 and defaults to 1; v1beta1 allows up to 5, defaults to 3,
// and its rules refuse green.
func twoSchemas(t *testing.T) kinds.Definition {
	t.Helper()
	parse := func(doc string) *schema.Schema {
		s, err := schema.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	v1 := parse(`{"type":"object","properties":{"spec":{"type":"object","properties":{
		"size":{"type":"integer","maximum":10,"default":1},"color":{"type":"string"}}}}}`)
	beta := parse(`{"type":"object","description":"beta","properties":{"spec":{"type":"object","properties":{
		"size":{"type":"integer","maximum":5,"default":3},"color":{"type":"string"}}}}}`)
	return kinds.Definition{
		Group: "example.com", Kind: "Widget", Plural: "widgets", Namespaced: true,
		Versions: []kinds.Version{
			{Name: "v1", Served: true, Storage: true, Schema: v1,
				PrinterColumns: []kinds.PrinterColumn{{Name: "Size", Type: "integer", JSONPath: ".spec.size"}}},
			{Name: "v1beta1", Served: true, Schema: beta,
				PrinterColumns: []kinds.PrinterColumn{{Name: "Colour", Type: "string", JSONPath: ".spec.color"}}},
		},
	}
}

// TestEachVersionItsSchema checks that a request is validated, defaulted
// and checked by the rules of the version it was sent in, as
// kube-apiserver does (each version of a CRD has its own storage with its
// own schema validator, CEL validator and defaulter), with ratcheting
// against the old object in that version.
func TestEachVersionItsSchema(t *testing.T) {
	srv, c := newServer(t)
	rules := func(s *schema.Schema) (kinds.Rules, error) {
		if s.Description == "beta" {
			return noGreen{}, nil
		}
		return nil, nil
	}
	if err := kinds.Register(srv, twoSchemas(t), kinds.WithRules(rules)); err != nil {
		t.Fatal(err)
	}
	const v1, beta = "/apis/example.com/v1/namespaces/default/widgets", "/apis/example.com/v1beta1/namespaces/default/widgets"
	body := func(version, name, spec string) string {
		return `{"apiVersion":"example.com/` + version + `","kind":"Widget","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
	}

	out := c.want("POST", beta, "application/json", body("v1beta1", "a", `{"size":7}`), 422)
	if !strings.Contains(out, `spec.size: Invalid value: 7: spec.size in body should be less than or equal to 5`) {
		t.Errorf("v1beta1's maximum: %s", out)
	}
	c.want("POST", v1, "application/json", body("v1", "a", `{"size":7}`), 201)
	out = c.want("POST", v1, "application/json", body("v1", "b", `{"size":12}`), 422)
	if !strings.Contains(out, "less than or equal to 10") {
		t.Errorf("v1's maximum: %s", out)
	}

	// The rules are v1beta1's only.
	out = c.want("POST", beta, "application/json", body("v1beta1", "g", `{"color":"green"}`), 422)
	if !strings.Contains(out, "no green") {
		t.Errorf("v1beta1's rules: %s", out)
	}
	if out := c.want("POST", v1, "application/json", body("v1", "g", `{"color":"green"}`), 201); !strings.Contains(out, `"size":1`) {
		t.Errorf("v1's default: %s", out)
	}
	if out := c.want("POST", beta, "application/json", body("v1beta1", "d", `{}`), 201); !strings.Contains(out, `"size":3`) {
		t.Errorf("v1beta1's default: %s", out)
	}

	// Ratcheting in v1beta1: a size v1beta1 refuses may stay as it is,
	// not be set anew.
	c.want("PATCH", beta+"/a", "application/merge-patch+json", `{"spec":{"color":"red"}}`, 200)
	out = c.want("PATCH", beta+"/a", "application/merge-patch+json", `{"spec":{"size":8}}`, 422)
	if !strings.Contains(out, "less than or equal to 5") {
		t.Errorf("update in v1beta1: %s", out)
	}
	c.want("PATCH", v1+"/a", "application/merge-patch+json", `{"spec":{"size":8}}`, 200)

	// Each version's printer columns.
	for path, col := range map[string]string{v1: `"name":"Size"`, beta: `"name":"Colour"`} {
		if data := c.table(path); !strings.Contains(string(data), col) {
			t.Errorf("%s: columns: %s", path, data)
		}
	}
}

// Printer columns make their cells as kube-apiserver's table convertor
// does: the first value a path finds, nil where the value is not of the
// column's type, "<invalid>" for a date that does not parse, any value as
// text in a string column.
func TestColumnCellsAsKube(t *testing.T) {
	srv, c := newServer(t)
	def := kinds.Definition{Group: "example.com", Kind: "Gadget", Plural: "gadgets", Versions: []kinds.Version{{
		Name: "v1", Served: true, Storage: true,
		PrinterColumns: []kinds.PrinterColumn{
			{Name: "Port", Type: "integer", JSONPath: ".spec.ports[*].port"},
			{Name: "Size", Type: "integer", JSONPath: ".spec.name"},
			{Name: "Ratio", Type: "number", JSONPath: ".spec.size"},
			{Name: "When", Type: "date", JSONPath: ".spec.name"},
			{Name: "Ports", Type: "string", JSONPath: ".spec.ports[0]"},
		},
	}}}
	if err := kinds.Register(srv, def); err != nil {
		t.Fatal(err)
	}
	c.want("POST", "/apis/example.com/v1/gadgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"name":"x","size":2,"ports":[{"port":80},{"port":443}]}}`, 201)
	data := c.table("/apis/example.com/v1/gadgets")
	if want := `"cells":["g",80,null,2,"\u003cinvalid\u003e","{\"port\":80}"]`; !strings.Contains(string(data), want) {
		t.Errorf("cells: %s, want %s", data, want)
	}
}
