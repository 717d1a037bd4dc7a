package cel_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/validation/cel"
)

// Gateway API's HTTPRoute carries some of the most involved rules of any
// CRD: they check as kube-apiserver checks them, and hold of a route or
// refuse it with their own messages.
func TestGatewayHTTPRoute(t *testing.T) {
	schemaJSON, err := os.ReadFile("../../schema/testdata/httproute.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../schema/testdata/httproute.json")
	if err != nil {
		t.Fatal(err)
	}
	s := mustSchema(t, string(schemaJSON))
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	if errs := engine.CheckRules(s, "spec.validation.openAPIV3Schema"); len(errs) > 0 {
		t.Fatalf("CheckRules: %q", texts(errs))
	}
	rules := engine.CompileRules(s)
	route := func() map[string]any {
		v := decode(t, string(data))
		s.PrunedDefaults().SetDefaults(v)
		return v.(map[string]any)
	}
	if errs := rules.Validate(route(), nil); len(errs) > 0 {
		t.Fatalf("the sample route fails: %q", texts(errs))
	}
	bad := route()
	backend := bad["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["backendRefs"].([]any)[0].(map[string]any)
	delete(backend, "port")
	got := strings.Join(texts(rules.Validate(bad, nil)), "\n")
	if want := `FieldValueInvalid spec.rules[0].backendRefs[0]: Invalid value: Must have port for Service reference`; got != want {
		t.Errorf("a Service backend without a port:\n got  %s\n want %s", got, want)
	}
	// The same route stored before the rule existed still updates.
	if errs := rules.Validate(bad, deepCopy(bad)); len(errs) > 0 {
		t.Errorf("an unchanged invalid route is not ratcheted: %q", texts(errs))
	}
}

// deepCopy is a deep copy of a decoded object.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
