package schema_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

func mustParse(t testing.TB, doc string) *schema.Schema {
	t.Helper()
	s, err := schema.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse(%s): %v", doc, err)
	}
	return s
}

func mustDecode(t testing.TB, doc string) any {
	t.Helper()
	v, err := schema.DecodeJSON([]byte(doc))
	if err != nil {
		t.Fatalf("DecodeJSON(%s): %v", doc, err)
	}
	return v
}

func texts(errs []*validation.Error) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

func TestParse(t *testing.T) {
	for _, c := range []struct{ name, doc, err string }{
		{"unknown keyword", `{"type":"object","properties":{"spec":{"type":"string","maxlength":3}}}`, `properties.spec: unknown field "maxlength"`},
		{"wrong type", `{"type":"object","properties":{"spec":{"type":1}}}`, `properties.spec.type: must be a string, not number`},
		{"fraction for an integer", `{"type":"string","maxLength":1.5}`, `maxLength: must be an integer, not 1.5`},
		{"not an object", `[]`, `must be an object, not array`},
		{"unknown rule field", `{"type":"string","x-kubernetes-validations":[{"rule":"true","severity":"x"}]}`, `x-kubernetes-validations[0]: unknown field "severity"`},
		{"bad JSON", `{"type":`, `unexpected EOF`},
		{"items array element", `{"type":"array","items":[1]}`, `items[0]: must be an object, not number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := schema.Parse([]byte(c.doc))
			var pe *schema.ParseError
			if !errors.As(err, &pe) || err.Error() != c.err {
				t.Fatalf("Parse(%s) = %v, want ParseError %q", c.doc, err, c.err)
			}
		})
	}
	t.Run("every keyword", func(t *testing.T) {
		s := mustParse(t, `{"type":"object","description":"d","title":"t","default":{},"example":{"a":1},"nullable":null,
			"maxProperties":3,"minProperties":1,"required":["a"],"externalDocs":{"url":"u","description":"x"},
			"x-kubernetes-map-type":"granular","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,
			"x-kubernetes-validations":[{"rule":"self.a > 1","message":"m","messageExpression":"'m'","reason":"FieldValueInvalid","fieldPath":".a","optionalOldSelf":true}],
			"properties":{"a":{"type":"integer","format":"int32","minimum":1,"maximum":9,"exclusiveMinimum":true,"exclusiveMaximum":false,"multipleOf":2,"enum":[2,4]},
			  "l":{"type":"array","items":{"type":"string","pattern":"^a","minLength":1,"maxLength":2},"minItems":1,"maxItems":2,"uniqueItems":false,
			    "x-kubernetes-list-type":"set"},
			  "m":{"type":"object","additionalProperties":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}},
			  "n":{"type":"string","allOf":[{"maxLength":1}],"oneOf":[{"pattern":"a"}],"not":{"enum":["b"]}}}}`)
		if s.Default == nil || s.Properties["a"].MultipleOf == nil || *s.Properties["a"].MultipleOf != 2 ||
			!s.Properties["m"].AdditionalProperties.IntOrString || s.Validations[0].Reason == nil || *s.Validations[0].OptionalOldSelf != true ||
			s.ExternalDocs.URL != "u" || !reflect.DeepEqual(s.Properties["a"].Enum, []any{int64(2), int64(4)}) || s.Nullable {
			t.Fatalf("Parse lost keywords: %+v", s)
		}
	})
}

func TestValidate(t *testing.T) {
	s := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","required":["color"],"properties":{
		"color":{"type":"string","enum":["red","green","blue"]},
		"replicas":{"type":"integer","minimum":0,"maximum":10},
		"name":{"type":"string","maxLength":3,"pattern":"^[a-z]+$"},
		"ports":{"type":"array","maxItems":1,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port"],
		  "items":{"type":"object","required":["port"],"properties":{"port":{"type":"integer"}}}},
		"tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
		"size":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
		"when":{"type":"string","format":"date-time"}}}}}`)
	for _, c := range []struct {
		name, obj string
		want      []string
	}{
		{"valid", `{"spec":{"color":"red","replicas":3,"size":"10%"}}`, nil},
		{"enum", `{"spec":{"color":"purple"}}`, []string{`spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"`}},
		{"required", `{"spec":{}}`, []string{`spec.color: Required value`}},
		{"type", `{"spec":{"color":"red","replicas":"3"}}`, []string{`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`}},
		{"range", `{"spec":{"color":"red","replicas":11}}`, []string{`spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`}},
		{"too long", `{"spec":{"color":"red","name":"ABCD"}}`, []string{`spec.name: Too long: may not be more than 3 bytes`}},
		{"pattern", `{"spec":{"color":"red","name":"AB"}}`, []string{`spec.name: Invalid value: "AB": spec.name in body should match '^[a-z]+$'`}},
		{"too many", `{"spec":{"color":"red","ports":[{"port":1},{"port":1}]}}`, []string{
			`spec.ports: Too many: 2: must have at most 1 item`, `spec.ports[1]: Duplicate value: {"port":1}`}},
		{"set", `{"spec":{"color":"red","tags":["a","b","a"]}}`, []string{`spec.tags[2]: Duplicate value: "a"`}},
		{"int-or-string", `{"spec":{"color":"red","size":true}}`, []string{
			`<nil>: Invalid value: "": "spec.size" must validate at least one schema (anyOf)`,
			`spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean"`,
			`spec.size: Invalid value: "boolean": spec.size in body must be of type integer: "boolean"`}},
		{"format", `{"spec":{"color":"red","when":"yesterday"}}`, []string{`spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"`}},
		{"null", `{"spec":{"color":null}}`, []string{
			`spec.color: Invalid value: "null": spec.color in body must be of type string: "null"`,
			`spec.color: Unsupported value: null: supported values: "red", "green", "blue"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := texts(s.Validate(mustDecode(t, c.obj)))
			if !slices.Equal(got, c.want) {
				t.Errorf("Validate(%s):\n got  %q\n want %q", c.obj, got, c.want)
			}
		})
	}
}

func TestPrune(t *testing.T) {
	s := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
		"a":{"type":"string"},
		"keep":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"inner":{"type":"object"}}},
		"list":{"type":"array","items":{"type":"object","properties":{"b":{"type":"string"}}}},
		"pod":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true},
		"map":{"type":"object","additionalProperties":{"type":"object","properties":{"c":{"type":"string"}}}}}}}}`)
	obj := mustDecode(t, `{"apiVersion":"v1","kind":"K","metadata":{"name":"x"},"status":{},
		"spec":{"a":"x","z":1,"keep":{"any":1,"inner":{"gone":1}},"list":[{"b":"x","c":1}],
		"pod":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","bogus":1},"spec":{"x":1}},
		"map":{"k":{"c":"x","d":1}}}}`)
	got := s.Prune(obj)
	want := []string{"spec.keep.inner.gone", "spec.list[0].c", "spec.map.k.d", "spec.pod.metadata.bogus", "spec.z", "status"}
	if !slices.Equal(got, want) {
		t.Errorf("Prune paths:\n got  %q\n want %q", got, want)
	}
	b, _ := json.Marshal(obj)
	const after = `{"apiVersion":"v1","kind":"K","metadata":{"name":"x"},"spec":{"a":"x","keep":{"any":1,"inner":{}},"list":[{"b":"x"}],"map":{"k":{"c":"x"}},"pod":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"x":1}}}}`
	if string(b) != after {
		t.Errorf("pruned object:\n got  %s\n want %s", b, after)
	}
}

func TestSetDefaults(t *testing.T) {
	s := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","default":{},"properties":{
		"replicas":{"type":"integer","default":1},
		"mode":{"type":"string","nullable":true,"default":"auto"},
		"ports":{"type":"array","items":{"type":"object","properties":{"protocol":{"type":"string","default":"TCP"}}}},
		"labels":{"type":"object","additionalProperties":{"type":"string","default":"x"}}}}}}`).PrunedDefaults()
	for _, c := range []struct{ name, in, out string }{
		{"nested from an absent parent", `{}`, `{"spec":{"mode":"auto","replicas":1}}`},
		{"nullable null stays", `{"spec":{"mode":null}}`, `{"spec":{"mode":null,"replicas":1}}`},
		{"non-nullable null defaulted", `{"spec":{"mode":"manual","replicas":null}}`, `{"spec":{"mode":"manual","replicas":1}}`},
		{"items", `{"spec":{"mode":null,"ports":[{},{"protocol":"UDP"}]}}`, `{"spec":{"mode":null,"ports":[{"protocol":"TCP"},{"protocol":"UDP"}],"replicas":1}}`},
		{"map values", `{"spec":{"mode":null,"labels":{"a":null,"b":"y"}}}`, `{"spec":{"labels":{"a":"x","b":"y"},"mode":null,"replicas":1}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := mustDecode(t, c.in)
			s.SetDefaults(obj)
			if b, _ := json.Marshal(obj); string(b) != c.out {
				t.Errorf("SetDefaults(%s) = %s, want %s", c.in, b, c.out)
			}
		})
	}
	t.Run("defaults are copies", func(t *testing.T) {
		a, b := mustDecode(t, `{}`), mustDecode(t, `{}`)
		s.SetDefaults(a)
		s.SetDefaults(b)
		a.(map[string]any)["spec"].(map[string]any)["replicas"] = int64(5)
		if b.(map[string]any)["spec"].(map[string]any)["replicas"] != int64(1) {
			t.Fatal("two objects share a default")
		}
	})
}

func TestPrunedDefaults(t *testing.T) {
	s := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","default":{"a":"x","b":"y"},"properties":{"a":{"type":"string"}}}}}`)
	obj := mustDecode(t, `{}`)
	s.PrunedDefaults().SetDefaults(obj)
	if b, _ := json.Marshal(obj); string(b) != `{"spec":{"a":"x"}}` {
		t.Errorf("defaulted with a pruned default: %s", b)
	}
	if got := texts(s.Check("openAPIV3Schema")); !slices.Equal(got, []string{
		`openAPIV3Schema.properties[spec].default: Invalid value: {"a":"x","b":"y"}: must not have unknown fields`}) {
		t.Errorf("Check: %q", got)
	}
}

// TestPrunedDefaultsShares checks that pruning copies only the nodes on
// the way to a default: a served kind holds both schemas.
func TestPrunedDefaultsShares(t *testing.T) {
	none := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}}}}}`)
	if none.PrunedDefaults() != none {
		t.Error("a schema without defaults was copied")
	}
	s := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
		"d":{"type":"object","default":{"a":"x","b":"y"},"properties":{"a":{"type":"string"}}},
		"plain":{"type":"object","properties":{"z":{"type":"string"}}}}}}}`)
	p := s.PrunedDefaults()
	spec, pspec := s.Properties["spec"], p.Properties["spec"]
	if p == s || pspec == spec || pspec.Properties["d"] == spec.Properties["d"] {
		t.Error("the nodes on the way to the pruned default are not copies")
	}
	if pspec.Properties["plain"] != spec.Properties["plain"] {
		t.Error("a subtree without defaults was copied")
	}
	if b, _ := json.Marshal(pspec.Properties["d"].Default); string(b) != `{"a":"x"}` {
		t.Errorf("pruned default %s", b)
	}
	if b, _ := json.Marshal(spec.Properties["d"].Default); string(b) != `{"a":"x","b":"y"}` {
		t.Errorf("the original's default changed: %s", b)
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      []string
	}{
		{"structural", `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}}}}}`, nil},
		{"no type", `{"type":"object","properties":{"spec":{"properties":{"a":{"type":"string"}}}}}`,
			[]string{"openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"}},
		{"metadata", `{"type":"object","properties":{"metadata":{"type":"object","properties":{"labels":{"type":"object"}}}}}`,
			[]string{"openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"}},
		{"nested type", `{"type":"object","properties":{"spec":{"type":"string","anyOf":[{"type":"string"}]}}}`,
			[]string{"openAPIV3Schema.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural"}},
		{"list-map keys", `{"type":"object","properties":{"spec":{"type":"array","x-kubernetes-list-type":"map","items":{"type":"object"}}}}`,
			[]string{"openAPIV3Schema.properties[spec].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"}},
		{"uniqueItems", `{"type":"object","properties":{"spec":{"type":"array","uniqueItems":true,"items":{"type":"string"}}}}`,
			[]string{"openAPIV3Schema.properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"}},
		{"bad default", `{"type":"object","properties":{"spec":{"type":"integer","default":"x"}}}`,
			// kube-openapi names the default's own path "", so two spaces.
			[]string{`openAPIV3Schema.properties[spec].default: Invalid value: "string":  in body must be of type integer: "string"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := texts(mustParse(t, c.doc).Check("openAPIV3Schema"))
			if !slices.Equal(got, c.want) {
				t.Errorf("Check:\n got  %q\n want %q", got, c.want)
			}
		})
	}
}

func TestStrategies(t *testing.T) {
	s := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
		"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","protocol"],
		  "items":{"type":"object","properties":{"name":{"type":"string"},"protocol":{"type":"string"},
		    "selector":{"type":"object","x-kubernetes-map-type":"atomic"}}}},
		"args":{"type":"array","items":{"type":"string"}},
		"labels":{"type":"object","additionalProperties":{"type":"string"}}}}}}`)
	if lt, keys := s.At("spec", "ports").ListStrategy(); lt != schema.ListMap || !slices.Equal(keys, []string{"name", "protocol"}) {
		t.Errorf("ports: %s %v", lt, keys)
	}
	if lt, _ := s.At("spec", "args").ListStrategy(); lt != schema.ListAtomic {
		t.Errorf("args: %s", lt)
	}
	if mt := s.At("spec", "ports", "[]", "selector").MapStrategy(); mt != schema.MapAtomic {
		t.Errorf("selector: %s", mt)
	}
	if mt := s.At("spec", "labels").MapStrategy(); mt != schema.MapGranular {
		t.Errorf("labels: %s", mt)
	}
	if s.At("spec", "labels", "anykey").Type != "string" || s.At("spec", "nothing", "deeper") != nil {
		t.Error("At does not follow additionalProperties or finds what is not there")
	}
}

func TestValidFieldPath(t *testing.T) {
	s := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"a.b":{"type":"string"},
		"m":{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"string"}}}}}}}}`)
	for path, want := range map[string]bool{
		".spec":             true,
		".spec['a.b']":      true,
		".spec.m.any.x":     true,
		".spec.m['k'].x":    true,
		".spec.nope":        false,
		"spec":              false,
		".spec[0]":          false,
		".spec['a.b'":       false,
		".spec['\\q']":      false,
		".spec['a\\.b']":    false,
		".spec.m.any.x.too": false,
	} {
		if got := s.ValidFieldPath(path); got != want {
			t.Errorf("ValidFieldPath(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestRealSchema(t *testing.T) {
	s, obj := httpRoute(t)
	if errs := s.Check("openAPIV3Schema"); len(errs) > 0 {
		t.Fatalf("Check: %v", errs)
	}
	if got := s.Prune(obj); !slices.Equal(got, []string{"spec.rules[2].legacyField"}) {
		t.Errorf("Prune: %q", got)
	}
	s.PrunedDefaults().SetDefaults(obj)
	if errs := s.Validate(obj); len(errs) > 0 {
		t.Errorf("Validate: %v", errs)
	}
	b, _ := json.Marshal(obj)
	for _, want := range []string{`{"group":"","kind":"Service","name":"health","port":9000,"weight":1}`, `"path":{"type":"PathPrefix","value":"/status"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("defaulted object lacks %s: %s", want, b)
		}
	}
}

// httpRoute is the Gateway API's HTTPRoute schema and an object for it.
func httpRoute(t testing.TB) (*schema.Schema, any) {
	t.Helper()
	doc, err := os.ReadFile("testdata/httproute.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/httproute.json")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := schema.DecodeJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return s, obj
}

func TestValidateUpdate(t *testing.T) {
	s := mustParse(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
		"name":{"type":"string","maxLength":3},
		"size":{"type":"integer","maximum":10},
		"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
		  "items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer","maximum":100}}}},
		"args":{"type":"array","items":{"type":"string","maxLength":1}}}}}}`)
	old := `{"spec":{"name":"toolong","size":1,"ports":[{"name":"a","port":1000},{"name":"b","port":1}],"args":["xx"]}}`
	for _, c := range []struct {
		name, obj string
		want      []string
	}{
		{"unchanged", old, nil},
		{"other field changed", `{"spec":{"name":"toolong","size":2,"ports":[{"name":"a","port":1000},{"name":"b","port":1}],"args":["xx"]}}`, nil},
		{"bad field changed", `{"spec":{"name":"stilltoolong","size":1,"ports":[{"name":"a","port":1000},{"name":"b","port":1}],"args":["xx"]}}`,
			[]string{"spec.name: Too long: may not be more than 3 bytes"}},
		{"map items by key", `{"spec":{"name":"toolong","ports":[{"name":"b","port":2},{"name":"a","port":1000}],"args":["xx"]}}`, nil},
		{"new bad item", `{"spec":{"name":"toolong","ports":[{"name":"c","port":1000}],"args":["xx"]}}`,
			[]string{"spec.ports[0].port: Invalid value: 1000: spec.ports[0].port in body should be less than or equal to 100"}},
		{"atomic list items are not matched", `{"spec":{"name":"toolong","args":["xx","y"]}}`,
			[]string{"spec.args[0]: Too long: may not be more than 1 byte"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := texts(s.ValidateUpdate(mustDecode(t, c.obj), mustDecode(t, old)))
			if !slices.Equal(got, c.want) {
				t.Errorf("ValidateUpdate(%s):\n got  %q\n want %q", c.obj, got, c.want)
			}
		})
	}
}
