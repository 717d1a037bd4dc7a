package validation_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

// TestConditions: a list of conditions is refused as kube-apiserver refuses
// a list of metav1.Condition, each message word for word as
// k8s.io/apimachinery's ValidateConditions writes it (v0.37.2,
// pkg/apis/meta/v1/validation/validation.go).
func TestConditions(t *testing.T) {
	now := kapi.NewTime(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC))
	ok := kapi.Condition{Type: "Ready", Status: kapi.ConditionTrue, LastTransitionTime: now, Reason: "AllGood", Message: ""}
	with := func(change func(*kapi.Condition)) kapi.Condition {
		c := ok
		change(&c)
		return c
	}
	tests := []struct {
		name string
		list []kapi.Condition
		want []string
	}{
		{"valid, empty message", []kapi.Condition{ok, with(func(c *kapi.Condition) { c.Type = "example.com/Synced"; c.Reason = "A,B:c_1" })}, nil},
		{"type missing", []kapi.Condition{with(func(c *kapi.Condition) { c.Type = "" })},
			[]string{`status.conditions[0].type: Required value: is required`}},
		{"type not a qualified name", []kapi.Condition{with(func(c *kapi.Condition) { c.Type = "not ready" })},
			[]string{`status.conditions[0].type: Invalid value: "not ready": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{"duplicate type", []kapi.Condition{ok, ok},
			[]string{`status.conditions[1]: Duplicate value: "Ready"`}},
		{"status missing", []kapi.Condition{with(func(c *kapi.Condition) { c.Status = "" })},
			[]string{`status.conditions[0].status: Required value`}},
		{"status unsupported", []kapi.Condition{with(func(c *kapi.Condition) { c.Status = "Maybe" })},
			[]string{`status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"`}},
		{"observedGeneration negative", []kapi.Condition{with(func(c *kapi.Condition) { c.ObservedGeneration = -1 })},
			[]string{`status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to zero`}},
		{"lastTransitionTime missing", []kapi.Condition{with(func(c *kapi.Condition) { c.LastTransitionTime = kapi.Time{} })},
			[]string{`status.conditions[0].lastTransitionTime: Required value`}},
		{"reason missing", []kapi.Condition{with(func(c *kapi.Condition) { c.Reason = "" })},
			[]string{`status.conditions[0].reason: Required value`}},
		{"reason pattern", []kapi.Condition{with(func(c *kapi.Condition) { c.Reason = "all good" })},
			[]string{`status.conditions[0].reason: Invalid value: "all good": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')`}},
		{"reason too long", []kapi.Condition{with(func(c *kapi.Condition) { c.Reason = "R" + strings.Repeat("e", validation.MaxConditionReasonBytes) })},
			[]string{`status.conditions[0].reason: Too long: may not be more than 1024 bytes`}},
		{"message too long", []kapi.Condition{with(func(c *kapi.Condition) { c.Message = strings.Repeat("m", validation.MaxConditionMessageBytes+1) })},
			[]string{`status.conditions[0].message: Too long: may not be more than 32768 bytes`}},
		{"message at the limit", []kapi.Condition{with(func(c *kapi.Condition) { c.Message = strings.Repeat("m", validation.MaxConditionMessageBytes) })}, nil},
		{"everything wrong", []kapi.Condition{{ObservedGeneration: -2}}, []string{
			`status.conditions[0].type: Required value: is required`,
			`status.conditions[0].status: Required value`,
			`status.conditions[0].observedGeneration: Invalid value: -2: must be greater than or equal to zero`,
			`status.conditions[0].lastTransitionTime: Required value`,
			`status.conditions[0].reason: Required value`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range validation.Conditions(tt.list, "status.conditions") {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

type conditioned struct {
	Status conditionedStatus `json:"status"`
}

type conditionedStatus struct {
	Conditions []kapi.Condition `json:"conditions,omitempty"`
	embedded
}

type embedded struct {
	More []kapi.Condition `json:"more,omitempty"`
}

// TestSchemaChecksConditions: For's schema checks every []kapi.Condition
// field of the type, one promoted from an unexported embedded struct too,
// with nothing declared in tags.
func TestSchemaChecksConditions(t *testing.T) {
	s, err := validation.For(reflect.TypeFor[conditioned]())
	if err != nil || s.Empty() {
		t.Fatalf("For: %v, empty %v", err, s.Empty())
	}
	obj := &conditioned{Status: conditionedStatus{Conditions: []kapi.Condition{{Type: "Ready", Status: "Yes"}}}}
	obj.Status.More = []kapi.Condition{{Type: "A", Status: "True", LastTransitionTime: kapi.Now(), Reason: "R"}, {Type: "A", Status: "True", LastTransitionTime: kapi.Now(), Reason: "R"}}
	var got []string
	for _, e := range s.Validate(obj, nil) {
		got = append(got, e.Error())
	}
	want := []string{
		`status.conditions[0].status: Unsupported value: "Yes": supported values: "False", "True", "Unknown"`,
		`status.conditions[0].lastTransitionTime: Required value`,
		`status.conditions[0].reason: Required value`,
		`status.more[1]: Duplicate value: "A"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// An update that leaves the conditions as they were is not refused
	// for them (ratcheting, as every declared check).
	if errs := s.Validate(obj, obj); len(errs) != 0 {
		t.Errorf("an unchanged update: %v", errs)
	}
}

// FuzzConditions: any list of conditions decoded from JSON is judged
// without a panic, every error names a field of the condition it is about,
// and a list that passes has unique types and the statuses Kubernetes
// knows.
func FuzzConditions(f *testing.F) {
	f.Add(`[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"Up"}]`)
	f.Add(`[{"type":"a/b/c","status":"Maybe","reason":"9","observedGeneration":-1},{"type":"a/b/c"}]`)
	f.Add(`[{}]`)
	f.Fuzz(func(t *testing.T, doc string) {
		var list []kapi.Condition
		if json.Unmarshal([]byte(doc), &list) != nil {
			return
		}
		errs := validation.Conditions(list, "status.conditions")
		for _, e := range errs {
			if !strings.HasPrefix(e.Field, "status.conditions[") || e.Error() == "" {
				t.Fatalf("error %q at %q", e.Error(), e.Field)
			}
		}
		if len(errs) == 0 {
			seen := map[string]bool{}
			for _, c := range list {
				if seen[c.Type] || c.Type == "" || (c.Status != "True" && c.Status != "False" && c.Status != "Unknown") || c.Reason == "" {
					t.Fatalf("accepted %+v", list)
				}
				seen[c.Type] = true
			}
		}
	})
}
