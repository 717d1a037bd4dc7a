package cel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
	"github.com/kapi-dev/kapi/validation/cel"
)

const widgetSchema = `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "x-kubernetes-validations": [
        {"rule": "self.minReplicas <= self.replicas", "message": "replicas must not be below minReplicas"},
        {"rule": "!has(self.class) || self.class == oldSelf.class", "message": "class is immutable", "reason": "FieldValueForbidden", "fieldPath": ".class"},
        {"rule": "self.replicas < 100", "messageExpression": "self.replicas > 150 ? 'far too many replicas' : 'too many replicas'"}
      ],
      "properties": {
        "replicas": {"type": "integer"},
        "minReplicas": {"type": "integer"},
        "class": {"type": "string", "maxLength": 20},
        "ports": {
          "type": "array", "maxItems": 10,
          "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
          "items": {
            "type": "object", "required": ["name"],
            "properties": {"name": {"type": "string", "maxLength": 15}, "port": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.port > 0 && self.port < 65536", "message": "port out of range"}]
          }
        },
        "host": {"type": "string", "maxLength": 253, "x-kubernetes-validations": [{"rule": "!isIP(self)", "message": "must be a name, not an IP"}]},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
          "x-kubernetes-validations": [{"rule": "!has(self.metadata.name) || self.metadata.name.size() < 10", "message": "short names"}]}
      }
    }
  }
}`

func mustSchema(t testing.TB, text string) *schema.Schema {
	t.Helper()
	s, err := schema.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decode(t testing.TB, text string) any {
	t.Helper()
	v, err := schema.DecodeJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func texts(errs []*validation.Error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Error())
	}
	return out
}

func TestSchemaRules(t *testing.T) {
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	s := mustSchema(t, widgetSchema)
	if errs := engine.CheckRules(s, "openAPIV3Schema"); len(errs) > 0 {
		t.Fatalf("CheckRules: %v", texts(errs))
	}
	rules := engine.CompileRules(s)
	cases := []struct {
		name     string
		obj, old string
		want     []string
	}{
		{"valid", `{"spec":{"replicas":3,"minReplicas":1}}`, "", nil},
		{"cross-field", `{"spec":{"replicas":1,"minReplicas":2}}`, "",
			[]string{"FieldValueInvalid spec: Invalid value: replicas must not be below minReplicas"}},
		{"messageExpression", `{"spec":{"replicas":200,"minReplicas":1}}`, "",
			[]string{"FieldValueInvalid spec: Invalid value: far too many replicas"}},
		{"list item", `{"spec":{"replicas":1,"minReplicas":1,"ports":[{"name":"a","port":0}]}}`, "",
			[]string{"FieldValueInvalid spec.ports[0]: Invalid value: port out of range"}},
		{"scalar library", `{"spec":{"replicas":1,"minReplicas":1,"host":"10.0.0.1"}}`, "",
			[]string{"FieldValueInvalid spec.host: Invalid value: \"10.0.0.1\": must be a name, not an IP"}},
		{"transition skipped on create", `{"spec":{"replicas":1,"minReplicas":1,"class":"b"}}`, "", nil},
		{"transition", `{"spec":{"replicas":1,"minReplicas":1,"class":"b"}}`, `{"spec":{"replicas":1,"minReplicas":1,"class":"a"}}`,
			[]string{"FieldValueForbidden spec.class: Forbidden: class is immutable"}},
		{"ratcheted", `{"spec":{"replicas":1,"minReplicas":2,"class":"a"},"status":{}}`, `{"spec":{"replicas":1,"minReplicas":2,"class":"a"}}`, nil},
		{"not ratcheted when changed", `{"spec":{"replicas":1,"minReplicas":3,"class":"a"}}`, `{"spec":{"replicas":1,"minReplicas":2,"class":"a"}}`,
			[]string{"FieldValueInvalid spec: Invalid value: replicas must not be below minReplicas"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var old any
			if c.old != "" {
				old = decode(t, c.old)
			}
			got := texts(rules.Validate(decode(t, c.obj), old))
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestCheckRules(t *testing.T) {
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ schema, want string }{
		{`{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.replicaz > 0"}]}}}`,
			`openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.replicaz \u003e 0","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:5: undefined field 'replicaz'`},
		{`{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.replicas"}]}}}`,
			`cel expression must evaluate to a bool`},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},"x-kubernetes-validations":[{"rule":"self.all(x, self.all(y, self.all(z, x + y + z != '')))"}]}}}`,
			`estimated rule cost exceeds budget by factor of more than 100x`},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","maxLength":5,"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}`,
			`oldSelf cannot be used on the uncorrelatable portion of the schema within openAPIV3Schema.properties[l]`},
		{`{"type":"object","properties":{"s":{"type":"string","maxLength":5,"x-kubernetes-validations":[{"rule":"self != ''","optionalOldSelf":true}]}}}`,
			`may not be set if oldSelf is not used in rule`},
	}
	for _, c := range cases {
		got := strings.Join(texts(engine.CheckRules(mustSchema(t, c.schema), "openAPIV3Schema")), "\n")
		if !strings.Contains(got, c.want) {
			t.Errorf("CheckRules(%s):\n got  %s\n want %s", c.schema, got, c.want)
		}
	}
}

func TestRuleLimitsAndErrors(t *testing.T) {
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	big := `{"l":[` + strings.Repeat("1,", 99) + `1]}`
	cases := []struct{ name, schema, obj, want string }{
		{"per-call cost limit", `{"type":"object","properties":{"l":{"type":"array","maxItems":100,"items":{"type":"integer"}}},"x-kubernetes-validations":[{"rule":"self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))","message":"sums"}]}`,
			big, `FieldValueInvalid <nil>: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: sums`},
		{"compile error when served", `{"type":"object","properties":{"a":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.b > 0"}]}`,
			`{"a":1}`, `FieldValueInvalid <nil>: Invalid value: "object": rule compile error: compilation failed: ERROR: <input>:1:5: undefined field 'b'` + "\n | self.b > 0\n | ....^"},
		{"runtime error", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}},"x-kubernetes-validations":[{"rule":"self.m['x'] > 0"}]}`,
			`{"m":{}}`, `FieldValueInvalid <nil>: Invalid value: "object": no such key: x evaluating rule: self.m['x'] > 0`},
		{"optionalOldSelf on create", `{"type":"object","properties":{"a":{"type":"string"}},"x-kubernetes-validations":[{"rule":"oldSelf.hasValue() || self.a == 'first'","optionalOldSelf":true,"message":"starts as first"}]}`,
			`{"a":"second"}`, `FieldValueInvalid <nil>: Invalid value: starts as first`},
		// A fieldPath that starts with a map key follows its field without a dot.
		{"fieldPath of a map key", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"},"x-kubernetes-validations":[{"rule":"false","fieldPath":"['x']","message":"no"}]}}}`,
			`{"m":{"x":"a"}}`, `FieldValueInvalid m[x]: Invalid value: no`},
		// The message is evaluated with the rule's own variables, oldSelf
		// optional, as in kube-apiserver.
		{"optionalOldSelf in messageExpression", `{"type":"object","properties":{"a":{"type":"string"}},"x-kubernetes-validations":[{"rule":"oldSelf.hasValue() || self.a == 'first'","optionalOldSelf":true,"messageExpression":"oldSelf.hasValue() ? 'may not change' : 'starts as first, not ' + self.a"}]}`,
			`{"a":"second"}`, `FieldValueInvalid <nil>: Invalid value: starts as first, not second`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(texts(engine.CompileRules(mustSchema(t, c.schema)).Validate(decode(t, c.obj), nil)), "\n")
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// A compiled schema is used by every request at once.
func TestRulesConcurrently(t *testing.T) {
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	rules := engine.CompileRules(mustSchema(t, widgetSchema))
	obj := `{"spec":{"replicas":1,"minReplicas":2,"ports":[{"name":"a","port":0}],"template":{"metadata":{"name":"a-very-long-name"}}}}`
	done := make(chan []string)
	for range 8 {
		go func() {
			done <- texts(rules.Validate(decode(t, obj), decode(t, `{"spec":{"replicas":1,"minReplicas":1}}`)))
		}()
	}
	first := <-done
	if len(first) != 3 {
		t.Fatalf("got %q, want three errors", first)
	}
	for range 7 {
		if got := <-done; strings.Join(got, "|") != strings.Join(first, "|") {
			t.Errorf("got %q, then %q", first, got)
		}
	}
}

func TestNoRules(t *testing.T) {
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	s := mustSchema(t, `{"type":"object","properties":{"a":{"type":"integer"}}}`)
	if engine.CompileRules(s) != nil || engine.CheckRules(s, "x") != nil {
		t.Error("a schema without rules has compiled rules")
	}
}

func TestRulesFor(t *testing.T) {
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.RulesFor(mustSchema(t, `{"type":"object","properties":{"a":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.b > 0"}]}`)); !errors.Is(err, cel.ErrRules) ||
		!strings.Contains(err.Error(), "openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value") || !strings.Contains(err.Error(), "undefined field 'b'") {
		t.Errorf("a rule on a misspelt field: %v", err)
	}
	rules, err := engine.RulesFor(mustSchema(t, widgetSchema))
	if err != nil || rules == nil {
		t.Fatalf("RulesFor(widget) = %v, %v", rules, err)
	}
	if rules, err := engine.RulesFor(mustSchema(t, `{"type":"object"}`)); rules != nil || err != nil {
		t.Errorf("RulesFor of a schema without rules = %v, %v", rules, err)
	}
}
