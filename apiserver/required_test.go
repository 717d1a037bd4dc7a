package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
)

// requiredKind declares what it requires in three ways, and leaves out
// omitempty where it requires nothing.
type requiredKind struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            requiredSpec   `json:"spec"`
	Status          requiredStatus `json:"status,omitempty"`
}

type requiredSpec struct {
	Name  string   `json:"name" validate:"required"`
	Count int32    `json:"count"` // no omitempty: the server still accepts its absence
	Steps []string `json:"steps,omitempty" validate:"required,minItems=1"`
	Note  string   `json:"note" validate:"optional"`
}

type requiredStatus struct {
	Conditions []kapi.Condition `json:"conditions,omitempty" listType:"map" listMapKey:"type"`
}

func (r *requiredKind) GetObjectMeta() *kapi.ObjectMeta { return &r.ObjectMeta }
func (r *requiredKind) GetTypeMeta() *kapi.TypeMeta     { return &r.TypeMeta }

const requiredKinds = "/apis/example.com/v1/namespaces/default/requireds"

func newRequiredServer(t *testing.T) *apiClient {
	t.Helper()
	srv := apiservertest.New(t, registerRequired)
	return &apiClient{t: t, base: srv.URL, hc: srv.Client()}
}

// TestRequiredAgreesWithOpenAPI: every property the served OpenAPI lists
// as required is refused when missing, with kube's cause
// (`spec.name: Required value`), and every property it does not list is
// accepted when missing: the schema says what the server holds. The same
// holds of a condition's properties in status.conditions.
func TestRequiredAgreesWithOpenAPI(t *testing.T) {
	c := newRequiredServer(t)
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	c.get("/openapi/v3/apis/example.com/v1").mustCode(t, http.StatusOK).into(t, &doc)
	type objectSchema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var kind struct {
		Properties struct {
			Spec objectSchema `json:"spec"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(doc.Components.Schemas["com.example.v1.Required"], &kind); err != nil {
		t.Fatal(err)
	}
	spec := kind.Properties.Spec
	if !slices.Equal(spec.Required, []string{"name", "steps"}) {
		t.Errorf("spec required %q, want name and steps (declared), not count (no omitempty only)", spec.Required)
	}
	valid := func() map[string]any {
		return map[string]any{"name": "a", "count": 1, "steps": []any{"x"}, "note": "n"}
	}
	for i, prop := range slices.Sorted(func(yield func(string) bool) {
		for p := range spec.Properties {
			if !yield(p) {
				return
			}
		}
	}) {
		s := valid()
		delete(s, prop)
		name := fmt.Sprintf("r%d", i)
		body := map[string]any{"apiVersion": "example.com/v1", "kind": "Required", "metadata": map[string]any{"name": name}, "spec": s}
		r := c.do(http.MethodPost, requiredKinds, body)
		if slices.Contains(spec.Required, prop) {
			st := r.failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
			if want := fmt.Sprintf(`Required.example.com %q is invalid: spec.%s: Required value`, name, prop); st.Message != want {
				t.Errorf("without %s: %q, want %q", prop, st.Message, want)
			}
		} else if r.Code != http.StatusCreated {
			t.Errorf("without %s, which the schema does not require: HTTP %d %s", prop, r.Code, r.Body)
		}
	}

	var cond objectSchema
	if err := json.Unmarshal(doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Condition"], &cond); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cond.Required, []string{"type", "status", "lastTransitionTime", "reason"}) {
		t.Errorf("Condition required %q", cond.Required)
	}
	c.do(http.MethodPost, requiredKinds, map[string]any{"apiVersion": "example.com/v1", "kind": "Required",
		"metadata": map[string]any{"name": "c"}, "spec": valid()}).mustCode(t, http.StatusCreated)
	for prop := range cond.Properties {
		condition := map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "Done", "message": "m", "observedGeneration": 1}
		delete(condition, prop)
		body := map[string]any{"apiVersion": "example.com/v1", "kind": "Required", "metadata": map[string]any{"name": "c"},
			"spec": valid(), "status": map[string]any{"conditions": []any{condition}}}
		r := c.do(http.MethodPut, requiredKinds+"/c/status", body)
		if slices.Contains(cond.Required, prop) {
			st := r.failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
			if !strings.Contains(st.Message, fmt.Sprintf("status.conditions[0].%s: Required value", prop)) || !hasCause(st, "status.conditions[0]."+prop, kapi.CauseTypeFieldValueRequired) {
				t.Errorf("a condition without %s: %q", prop, st.Message)
			}
		} else if r.Code != http.StatusOK {
			t.Errorf("a condition without %s, which the schema does not require: HTTP %d %s", prop, r.Code, r.Body)
		}
	}
}

// TestConditionsValidated: the conditions of a registered type are
// validated as kube-apiserver validates metav1.Condition, over HTTP, with
// kube's messages; a valid list is stored.
func TestConditionsValidated(t *testing.T) {
	c := newRequiredServer(t)
	spec := map[string]any{"name": "a", "steps": []any{"x"}}
	c.do(http.MethodPost, requiredKinds, map[string]any{"apiVersion": "example.com/v1", "kind": "Required",
		"metadata": map[string]any{"name": "c"}, "spec": spec}).mustCode(t, http.StatusCreated)
	status := func(conditions ...map[string]any) map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": "Required", "metadata": map[string]any{"name": "c"},
			"spec": spec, "status": map[string]any{"conditions": conditions}}
	}
	good := map[string]any{"type": "example.com/Ready", "status": "False", "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "Waiting:Deps,1"}
	bad := map[string]any{"type": "not ready", "status": "Maybe", "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "9lives", "message": strings.Repeat("m", 32769), "observedGeneration": -1}
	st := c.do(http.MethodPut, requiredKinds+"/c/status", status(good, bad, good)).failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
	for _, want := range []struct {
		field string
		typ   kapi.CauseType
		text  string
	}{
		{"status.conditions[1].type", kapi.CauseTypeFieldValueInvalid, `status.conditions[1].type: Invalid value: "not ready": name part must consist of`},
		{"status.conditions[1].status", kapi.CauseTypeFieldValueNotSupported, `status.conditions[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"`},
		{"status.conditions[1].observedGeneration", kapi.CauseTypeFieldValueInvalid, `status.conditions[1].observedGeneration: Invalid value: -1: must be greater than or equal to zero`},
		{"status.conditions[1].reason", kapi.CauseTypeFieldValueInvalid, `status.conditions[1].reason: Invalid value: "9lives": a condition reason must start with alphabetic character`},
		{"status.conditions[1].message", kapi.CauseTypeFieldValueTooLong, `status.conditions[1].message: Too long: may not be more than 32768 bytes`},
	} {
		if !hasCause(st, want.field, want.typ) || !strings.Contains(st.Message, want.text) {
			t.Errorf("no %s cause %q in %q", want.typ, want.text, st.Message)
		}
	}
	var stored requiredKind
	c.do(http.MethodPut, requiredKinds+"/c/status", status(good)).mustCode(t, http.StatusOK)
	c.get(requiredKinds+"/c").mustCode(t, http.StatusOK).into(t, &stored)
	if cs := stored.Status.Conditions; len(cs) != 1 || cs[0].Reason != "Waiting:Deps,1" || cs[0].Type != "example.com/Ready" {
		t.Errorf("stored conditions %+v", cs)
	}
}
