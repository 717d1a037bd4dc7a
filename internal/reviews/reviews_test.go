package reviews_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/internal/reviews"
)

func TestAccessSpec(t *testing.T) {
	u := auth.User{Name: "alice"}
	if got := (reviews.AccessSpec{}).Invalid(); !strings.Contains(got, `Invalid value: "null": exactly one of`) {
		t.Errorf("Invalid of an empty spec = %q", got)
	}
	both := reviews.AccessSpec{ResourceAttributes: &reviews.ResourceAttributes{}, NonResourceAttributes: &reviews.NonResourceAttributes{Path: "/x", Verb: "get"}}
	if got := both.Invalid(); !strings.Contains(got, `Invalid value: "{\"path\":\"/x\",\"verb\":\"get\"}"`) {
		t.Errorf("Invalid of a spec with both = %q", got)
	}

	nr := reviews.AccessSpec{NonResourceAttributes: &reviews.NonResourceAttributes{Path: "/healthz", Verb: "get"}}
	if got := nr.Invalid(); got != "" {
		t.Errorf("Invalid of a valid spec = %q", got)
	}
	if got, want := nr.Attributes(u), (auth.Attributes{User: u, Verb: "get", Path: "/healthz"}); !reflect.DeepEqual(got, want) {
		t.Errorf("Attributes = %+v, want %+v", got, want)
	}

	r := reviews.AccessSpec{ResourceAttributes: &reviews.ResourceAttributes{Namespace: "ns", Verb: "list", Group: "example.com", Version: "v1",
		Resource: "widgets", LabelSelector: &reviews.Selector{RawSelector: "app=web"},
		FieldSelector: &reviews.Selector{Requirements: []reviews.SelectorRequirement{{Key: "spec.x", Operator: "NotIn", Values: []string{"a"}}}}}}
	got := r.Attributes(u)
	want := auth.Attributes{User: u, Verb: "list", ResourceRequest: true, APIGroup: "example.com", APIVersion: "v1", Namespace: "ns", Resource: "widgets",
		LabelSelector: []auth.SelectorRequirement{{Key: "app", Operator: "=", Values: []string{"web"}}},
		FieldSelector: []auth.SelectorRequirement{{Key: "spec.x", Operator: "notin", Values: []string{"a"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Attributes = %+v\nwant %+v", got, want)
	}
	r.ResourceAttributes.FieldSelector.Requirements[0].Operator = "Near"
	if got := r.Attributes(u); got.SelectorError == nil || got.FieldSelector != nil {
		t.Errorf("Attributes with a bad operator = %+v, want a SelectorError", got)
	}
}

// notResolver is an authorizer that cannot list its rules.
type notResolver struct{}

func (notResolver) Authorize(context.Context, auth.Attributes) (auth.Decision, string, error) {
	return auth.DecisionNoOpinion, "", nil
}

func TestRulesFor(t *testing.T) {
	u := auth.User{Name: "alice"}
	rbac, err := auth.RulesAuthorizer(auth.Binding{Users: []string{"alice"}, Rules: []auth.Rule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}})
	if err != nil {
		t.Fatal(err)
	}
	rules, incomplete, err := reviews.RulesFor(context.Background(), []auth.Authorizer{rbac}, u, "ns")
	if err != nil || incomplete || len(rules) != 1 || rules[0].Resources[0] != "pods" {
		t.Fatalf("RulesFor = %+v, %v, %v", rules, incomplete, err)
	}
	_, incomplete, _ = reviews.RulesFor(context.Background(), []auth.Authorizer{rbac, notResolver{}}, u, "ns")
	if !incomplete {
		t.Error("RulesFor with an authorizer that cannot list is complete")
	}
	answer := reviews.RulesAnswer(reviews.RulesSpec{Namespace: "ns"}, append(rules, reviews.AllowAll()...), true, errors.New("boom"))
	st := answer.Status
	if len(st.ResourceRules) != 2 || len(st.NonResourceRules) != 1 || !st.Incomplete || st.EvaluationError != "boom" {
		t.Errorf("RulesAnswer status = %+v", st)
	}
}
