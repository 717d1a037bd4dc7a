package cel_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation/cel"
)

// poolSchema is a kind defined at run time with x-kubernetes-validations:
// a cross-field rule, a transition rule with a reason and field path, a
// rule on list items, and one on the object's name.
const poolSchema = `{
  "type": "object",
  "properties": {
    "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
    "spec": {
      "type": "object",
      "properties": {
        "min": {"type": "integer"}, "max": {"type": "integer"},
        "class": {"type": "string", "maxLength": 20},
        "zones": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 20,
          "x-kubernetes-validations": [{"rule": "self.startsWith('zone-')", "messageExpression": "'zone ' + self + ' must start with zone-'"}]}}
      },
      "x-kubernetes-validations": [
        {"rule": "self.min <= self.max", "message": "min must not exceed max"},
        {"rule": "self.class == oldSelf.class", "message": "class is immutable", "reason": "FieldValueForbidden", "fieldPath": ".class"}
      ]
    }
  },
  "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('pool-')", "message": "names start with pool-"}]
}`

// celServer is a server whose rule engine is CEL, closed when the test
// ends.
func celServer(t *testing.T) *apiserver.Server {
	t.Helper()
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New(apiserver.WithRuleEngine(engine))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func poolDefinition(t *testing.T, schemaJSON string) kinds.Definition {
	t.Helper()
	return kinds.Definition{
		Group: "example.com", Kind: "Pool", Plural: "pools", Namespaced: true,
		Versions: []kinds.Version{{Name: "v1", Served: true, Storage: true, Schema: mustSchema(t, schemaJSON)}},
	}
}

type poolClient struct {
	t   *testing.T
	url string
}

// send writes a pool and returns the response's code and Status.
// withResourceVersion puts the stored object's resourceVersion in body,
// as an update of a kind defined at run time must name it (as a custom
// resource's in kube-apiserver).
func (c poolClient) withResourceVersion(path, body string) string {
	c.t.Helper()
	resp, err := http.Get(c.url + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var cur, obj map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&cur); err != nil {
		c.t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(body), &obj); err != nil {
		c.t.Fatal(err)
	}
	rv, _ := cur["metadata"].(map[string]any)["resourceVersion"]
	obj["metadata"].(map[string]any)["resourceVersion"] = rv
	b, err := json.Marshal(obj)
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

func (c poolClient) send(method, name, body string) (int, kapi.Status) {
	c.t.Helper()
	path := "/apis/example.com/v1/namespaces/default/pools"
	if method != "POST" {
		path += "/" + name
	}
	if method == "PUT" {
		body = c.withResourceVersion(path, body)
	}
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st kapi.Status
	if resp.StatusCode >= 300 {
		if err := json.Unmarshal(data, &st); err != nil {
			c.t.Fatalf("%s %s: %d %s", method, name, resp.StatusCode, data)
		}
	}
	return resp.StatusCode, st
}

func pool(name, spec string) string {
	return `{"apiVersion":"example.com/v1","kind":"Pool","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

// A kind defined at run time on a server whose rule engine is CEL has its
// rules checked on every write through HTTP, with kube-apiserver's 422.
func TestKindRulesOverHTTP(t *testing.T) {
	srv := celServer(t)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	if err := kinds.Register(srv, poolDefinition(t, poolSchema)); err != nil {
		t.Fatal(err)
	}
	c := poolClient{t, hs.URL}

	refused := []struct{ name, body, message string }{
		{"cross-field", pool("pool-a", `{"min":3,"max":1,"class":"gold"}`),
			`Pool.example.com "pool-a" is invalid: spec: Invalid value: min must not exceed max`},
		{"list item", pool("pool-a", `{"min":1,"max":3,"class":"gold","zones":["zone-a","east"]}`),
			`Pool.example.com "pool-a" is invalid: spec.zones[1]: Invalid value: "east": zone east must start with zone-`},
		{"metadata", pool("a", `{"min":1,"max":3,"class":"gold"}`),
			`Pool.example.com "a" is invalid: <nil>: Invalid value: names start with pool-`},
	}
	for _, r := range refused {
		code, st := c.send("POST", "", r.body)
		if code != http.StatusUnprocessableEntity || st.Message != r.message || st.Reason != kapi.StatusReasonInvalid {
			t.Errorf("%s: %d %q (%s), want 422 %q", r.name, code, st.Message, st.Reason, r.message)
		}
	}
	if code, st := c.send("POST", "", pool("pool-a", `{"min":1,"max":3,"class":"gold","zones":["zone-a"]}`)); code != http.StatusCreated {
		t.Fatalf("a valid pool: %d %s", code, st.Message)
	}
	// The transition rule: on update only.
	code, st := c.send("PUT", "pool-a", pool("pool-a", `{"min":1,"max":3,"class":"silver"}`))
	if code != http.StatusUnprocessableEntity || st.Message != `Pool.example.com "pool-a" is invalid: spec.class: Forbidden: class is immutable` ||
		st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != kapi.CauseTypeFieldValueForbidden || st.Details.Causes[0].Field != "spec.class" {
		t.Errorf("changing the class: %d %+v", code, st)
	}
	if code, st := c.send("PUT", "pool-a", pool("pool-a", `{"min":2,"max":3,"class":"gold"}`)); code != http.StatusOK {
		t.Errorf("an update the rules allow: %d %s", code, st.Message)
	}

	// Ratcheting: a rule added after a pool was stored does not block
	// updates that leave what it refuses as it was.
	if code, st := c.send("POST", "", pool("pool-b", `{"min":1,"max":3,"class":"bronze","zones":["zone-a"]}`)); code != http.StatusCreated {
		t.Fatalf("pool-b: %d %s", code, st.Message)
	}
	stricter := strings.Replace(poolSchema, `"class": {"type": "string", "maxLength": 20}`,
		`"class": {"type": "string", "maxLength": 20, "x-kubernetes-validations": [{"rule": "self != 'bronze'", "message": "bronze is retired"}]}`, 1)
	if err := kinds.Register(srv, poolDefinition(t, stricter)); err != nil {
		t.Fatal(err)
	}
	if code, st := c.send("PUT", "pool-b", pool("pool-b", `{"min":1,"max":4,"class":"bronze","zones":["zone-a"]}`)); code != http.StatusOK {
		t.Errorf("an update leaving the retired class: %d %s", code, st.Message)
	}
	if code, st := c.send("POST", "", pool("pool-c", `{"min":1,"max":3,"class":"bronze"}`)); code != http.StatusUnprocessableEntity ||
		st.Message != `Pool.example.com "pool-c" is invalid: spec.class: Invalid value: "bronze": bronze is retired` {
		t.Errorf("a new pool of the retired class: %d %q", code, st.Message)
	}
}

// A server without a rule engine serves the kind without its rules, and
// with RulesFor a rule that does not compile fails registration.
func TestKindRulesRegistration(t *testing.T) {
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	bad := strings.Replace(poolSchema, "self.min <= self.max", "self.min <= self.maxx", 1)
	err = kinds.Register(srv, poolDefinition(t, bad), kinds.WithRules(func(s *schema.Schema) (kinds.Rules, error) { return engine.RulesFor(s) }))
	if err == nil || !strings.Contains(err.Error(), "undefined field 'maxx'") {
		t.Errorf("registering a misspelt rule: %v", err)
	}
	if err := kinds.Register(srv, poolDefinition(t, poolSchema), kinds.WithRules(func(s *schema.Schema) (kinds.Rules, error) { return engine.RulesFor(s) })); err != nil {
		t.Errorf("registering good rules: %v", err)
	}
}

// With the server's rule engine, a kind registered from Go is refused for
// a rule kube-apiserver would refuse its CustomResourceDefinition for,
// with kube-apiserver's message, not served with a rule that fails every
// write or is left out.
func TestServerEngineChecksKindRules(t *testing.T) {
	srv := celServer(t)
	for _, tc := range []struct{ name, schema, want string }{
		{"misspelt", strings.Replace(poolSchema, "self.min <= self.max", "self.min <= self.maxx", 1),
			`openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.min \u003c= self.maxx",` +
				`"Message":"min must not exceed max","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:17: undefined field 'maxx'`},
		{"untyped", strings.Replace(poolSchema, `"class": {"type": "string", "maxLength": 20}`,
			`"class": {"x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-validations": [{"rule": "self == 'gold'"}]}`, 1),
			`openAPIV3Schema.properties[spec].properties[class].x-kubernetes-validations: Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations`},
	} {
		err := kinds.Register(srv, poolDefinition(t, tc.schema))
		if !errors.Is(err, kinds.ErrDefinition) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
	if err := kinds.Register(srv, poolDefinition(t, poolSchema)); err != nil {
		t.Errorf("good rules: %v", err)
	}
}
