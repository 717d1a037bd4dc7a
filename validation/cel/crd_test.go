package cel_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/crd"
	"github.com/kapi-dev/kapi/validation/cel"
)

// poolCRD is a CustomResourceDefinition of the kind poolSchema describes,
// with the root rule replaced by rule.
func poolCRD(t *testing.T, rule string) string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal([]byte(poolSchema), &s); err != nil {
		t.Fatal(err)
	}
	s["x-kubernetes-validations"] = []any{map[string]any{"rule": rule, "message": "names start with pool-"}}
	def := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "pools.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names":    map[string]any{"plural": "pools", "singular": "pool", "kind": "Pool", "listKind": "PoolList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": s}}},
		},
	}
	data, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A server whose rule engine is CEL refuses a CustomResourceDefinition
// whose rules do not compile, with kube-apiserver's message under the
// rule's path, and enforces the rules of one it accepts on the objects of
// its kind.
func TestDefinitionRulesOverHTTP(t *testing.T) {
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New(apiserver.WithRuleEngine(engine))
	if err != nil {
		t.Fatal(err)
	}
	if err := crd.Serve(srv); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	post := func(body string) (int, kapi.Status) {
		t.Helper()
		resp, err := http.Post(hs.URL+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var st kapi.Status
		if resp.StatusCode >= 300 {
			if err := json.Unmarshal(data, &st); err != nil {
				t.Fatalf("%d %s", resp.StatusCode, data)
			}
		}
		return resp.StatusCode, st
	}

	code, st := post(poolCRD(t, "self.metadata.nmae.startsWith('pool-')"))
	const field = "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule"
	if code != http.StatusUnprocessableEntity || st.Details == nil || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Field != field || !strings.Contains(st.Details.Causes[0].Message, "undefined field 'nmae'") {
		t.Fatalf("a rule naming no field: %d %+v, want 422 with one cause at %s saying undefined field 'nmae'", code, st, field)
	}

	if code, st := post(poolCRD(t, "self.metadata.name.startsWith('pool-')")); code != http.StatusCreated {
		t.Fatalf("a definition whose rules compile: %d %s", code, st.Message)
	}
	c := poolClient{t, hs.URL}
	// The kind is served once the controller has established it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, st := c.send("POST", "", pool("a", `{"min":1,"max":3,"class":"gold"}`))
		if code == http.StatusUnprocessableEntity {
			if want := `Pool.example.com "a" is invalid: <nil>: Invalid value: names start with pool-`; st.Message != want {
				t.Errorf("a pool the root rule refuses: %q, want %q", st.Message, want)
			}
			break
		}
		if code != http.StatusNotFound || time.Now().After(deadline) {
			t.Fatalf("a pool the root rule refuses: %d %s, want 422", code, st.Message)
		}
	}
	if code, st := c.send("POST", "", pool("pool-a", `{"min":1,"max":3,"class":"gold"}`)); code != http.StatusCreated {
		t.Errorf("a pool the rules allow: %d %s", code, st.Message)
	}
}
