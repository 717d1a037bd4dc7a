package cel_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/validation"
	"github.com/kapi-dev/kapi/validation/cel"
)

type Range struct {
	Min int32 `json:"min"`
	Max int32 `json:"max"`
}

type PoolSpec struct {
	Range  Range             `json:"range" rule:"self.min <= self.max" ruleMessage:"min must not exceed max"`
	Ratio  float64           `json:"ratio,omitempty" rule:"self < 1"`
	Class  string            `json:"class,omitempty" rule:"self == oldSelf" ruleMessage:"class is immutable"`
	Hosts  []string          `json:"hosts,omitempty" rule:"self.all(h, h.endsWith('.example.com'))"`
	Labels map[string]string `json:"labels,omitempty" rule:"!('forbidden' in self)"`
	Size   int64             `json:"size,omitempty" rule:"oldSelf == null || self >= oldSelf" ruleMessage:"may not shrink"`
}

type Pool struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            PoolSpec `json:"spec"`
}

func mustEngine(t testing.TB) *cel.Engine {
	t.Helper()
	e, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRules(t *testing.T) {
	s, err := validation.For(reflect.TypeFor[Pool](), validation.WithRuleEngine(mustEngine(t)))
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{Spec: PoolSpec{
		Range: Range{Min: 3, Max: 2}, Ratio: 1.5, Hosts: []string{"a.example.com", "b.example.org"},
		Labels: map[string]string{"forbidden": "x"}, Class: "a", Size: 5,
	}}
	var got []string
	for _, e := range s.Validate(p, nil) {
		got = append(got, e.Error())
	}
	want := []string{
		`spec.range: Invalid value: min must not exceed max`,
		`spec.ratio: Invalid value: 1.5: failed rule: self < 1`,
		`spec.hosts: Invalid value: failed rule: self.all(h, h.endsWith('.example.com'))`,
		`spec.labels: Invalid value: failed rule: !('forbidden' in self)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("create:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	old := &Pool{Spec: PoolSpec{Range: Range{Max: 1}, Class: "a", Size: 5}}
	next := &Pool{Spec: PoolSpec{Range: Range{Max: 1}, Class: "b", Size: 4}}
	got = nil
	for _, e := range s.Validate(next, old) {
		got = append(got, e.Error())
	}
	want = []string{`spec.class: Invalid value: "b": class is immutable`, `spec.size: Invalid value: 4: may not shrink`}
	if !slices.Equal(got, want) {
		t.Errorf("update:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCompileErrors(t *testing.T) {
	e := mustEngine(t)
	for _, rule := range []string{"self.", "self + 1", "'a'", "unknownVar > 1"} {
		if _, err := e.Compile(rule); err == nil {
			t.Errorf("Compile(%q) accepted", rule)
		}
	}
	if p, err := e.Compile("self.size() < 3 && oldSelf != self"); err != nil || !p.Transition() {
		t.Errorf("a rule reading oldSelf: %v, transition %v", err, p != nil && p.Transition())
	}
}

func TestCostLimit(t *testing.T) {
	p, err := mustEngine(t).Compile("self.all(a, self.all(b, self.all(c, a + b + c != 'x')))")
	if err != nil {
		t.Fatal(err)
	}
	items := make([]any, 200)
	for i := range items {
		items[i] = "s"
	}
	if ok, err := p.Eval(items, nil); ok || err == nil || !strings.Contains(err.Error(), "cost limit") {
		t.Errorf("a rule over its cost: %v, %v", ok, err)
	}
}

// Over HTTP: the 422 and the OpenAPI schema, as for a CRD.
func TestRulesOverHTTP(t *testing.T) {
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[Pool]{Group: "example.com", Version: "v1", Kind: "Pool", Plural: "pools"})
	}, apiserver.WithRuleEngine(mustEngine(t)))
	do := func(method, path, contentType, body string) (int, []byte) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, data
	}
	code, body := do(http.MethodPost, "/apis/example.com/v1/pools", "application/json", `{"metadata":{"name":"p"},"spec":{"range":{"min":5,"max":1}}}`)
	var st kapi.Status
	_ = json.Unmarshal(body, &st)
	if want := `Pool.example.com "p" is invalid: spec.range: Invalid value: min must not exceed max`; code != http.StatusUnprocessableEntity || st.Message != want {
		t.Errorf("create: %d %s, want 422 %q", code, body, want)
	}
	if code, body = do(http.MethodPost, "/apis/example.com/v1/pools", "application/json", `{"metadata":{"name":"p"},"spec":{"range":{"max":1},"class":"a"}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body = do(http.MethodPatch, "/apis/example.com/v1/pools/p", "application/merge-patch+json", `{"spec":{"class":"b"}}`)
	_ = json.Unmarshal(body, &st)
	if want := `Pool.example.com "p" is invalid: spec.class: Invalid value: "b": class is immutable`; code != http.StatusUnprocessableEntity || st.Message != want {
		t.Errorf("patch: %d %s, want 422 %q", code, body, want)
	}

	_, body = do(http.MethodGet, "/openapi/v3/apis/example.com/v1", "", "")
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Properties map[string]struct {
						Rules json.RawMessage `json:"x-kubernetes-validations"`
					} `json:"properties"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	spec := doc.Components.Schemas["com.example.v1.Pool"].Properties["spec"].Properties
	// Compared as values: whether < is written \u003c is JSON's choice.
	rules := func(raw json.RawMessage) string {
		var v []map[string]string
		if err := json.Unmarshal(raw, &v); err != nil {
			return err.Error()
		}
		return fmt.Sprint(v)
	}
	if got, want := rules(spec["range"].Rules), `[map[message:min must not exceed max rule:self.min <= self.max]]`; got != want {
		t.Errorf("x-kubernetes-validations of spec.range %s, want %s", got, want)
	}
	if got, want := rules(spec["ratio"].Rules), `[map[rule:self < 1]]`; got != want {
		t.Errorf("x-kubernetes-validations of spec.ratio %s, want %s", got, want)
	}
}

func TestRegisterNeedsAnEngine(t *testing.T) {
	s, err := apiserver.New()
	if err != nil {
		t.Fatal(err)
	}
	err = apiserver.Register(s, apiserver.Resource[Pool]{Group: "example.com", Version: "v1", Kind: "Pool", Plural: "pools"})
	if err == nil || !strings.Contains(err.Error(), "no RuleEngine") {
		t.Errorf("Register without an engine: %v", err)
	}
}
