package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fieldpath "k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
)

// Probe is a kind with conditions, declared as a Kubernetes type declares
// them (metav1.Condition's list is a map keyed by type).
type Probe struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Status          ProbeStatus `json:"status,omitempty"`
}

// StatusProbe is a Probe whose status is a subresource.
type StatusProbe Probe

type ProbeStatus struct {
	Conditions []kapi.Condition `json:"conditions,omitempty" listType:"map" listMapKey:"type"`
}

// TestConditionsDiff: a list of bad conditions is refused by kapi with the
// causes (type, field, message) and the message that kube-apiserver
// answers for a metav1.Condition list, which are apimachinery's
// ValidateConditions turned into a Status by apierrors.NewInvalid: the
// reference is computed here from the same JSON, not written down. The
// conditions arrive with a create, and with a merge patch of the status
// subresource.
func TestConditionsDiff(t *testing.T) {
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return errors.Join(
			apiserver.Register(s, apiserver.Resource[Probe]{
				Group: "example.com", Version: "v1", Kind: "Probe", Plural: "probes", Namespaced: true,
			}),
			apiserver.Register(s, apiserver.Resource[StatusProbe]{
				Group: "example.com", Version: "v1", Kind: "StatusProbe", Plural: "statusprobes", Namespaced: true, Status: true,
			}))
	})
	send := func(t *testing.T, method, url, contentType, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	collection := srv.URL + "/apis/example.com/v1/namespaces/default/"
	const ok = `"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"AllGood"`
	long := func(n int) string { return strings.Repeat("R", n) }
	cases := []struct{ name, conditions string }{
		{"valid", `[{` + ok + `,"message":""},{"type":"example.com/Synced","status":"Unknown","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"A,B:c_1","observedGeneration":3}]`},
		{"type missing", `[{"status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"type empty", `[{"type":"","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"type not a qualified name", `[{"type":"not ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"type name too long", `[{"type":"` + long(64) + `","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"type prefix not a subdomain", `[{"type":"Example_com/Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"type two slashes", `[{"type":"a/b/c","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"type empty prefix", `[{"type":"/Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"duplicate type", `[{` + ok + `},{` + ok + `}]`},
		{"duplicate type thrice", `[{` + ok + `},{"type":"B","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"},{` + ok + `},{` + ok + `}]`},
		{"duplicate empty types", `[{},{}]`},
		{"status missing", `[{"type":"Ready","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"status unsupported", `[{"type":"Ready","status":"Maybe","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"status lower case", `[{"type":"Ready","status":"true","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"R"}]`},
		{"observedGeneration negative", `[{` + ok + `,"observedGeneration":-1}]`},
		{"lastTransitionTime missing", `[{"type":"Ready","status":"True","reason":"R"}]`},
		{"reason missing", `[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z"}]`},
		{"reason starts with a digit", `[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"9lives"}]`},
		{"reason with a space", `[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"all good"}]`},
		{"reason ends with a comma", `[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"A,"}]`},
		{"reason too long", `[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"` + long(1025) + `"}]`},
		{"reason at the limit", `[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"` + long(1024) + `"}]`},
		{"reason too long and bad", `[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-28T10:00:00Z","reason":"` + long(1024) + `-"}]`},
		{"message too long", `[{` + ok + `,"message":"` + strings.Repeat("m", 32*1024+1) + `"}]`},
		{"message at the limit", `[{` + ok + `,"message":"` + strings.Repeat("m", 32*1024) + `"}]`},
		{"everything wrong", `[{"observedGeneration":-2}]`},
		{"everything wrong twice", `[{"type":"x y","status":"no","reason":"-","observedGeneration":-1,"message":"` + strings.Repeat("m", 32*1024+1) + `"},{"type":"x y"}]`},
	}
	for i, tc := range cases {
		var list []metav1.Condition
		if err := json.Unmarshal([]byte(tc.conditions), &list); err != nil {
			t.Fatal(err)
		}
		errs := metavalidation.ValidateConditions(list, fieldpath.NewPath("status", "conditions"))
		name := fmt.Sprintf("p%d", i)
		status := `"status":{"conditions":` + tc.conditions + `}`
		t.Run(tc.name+"/create", func(t *testing.T) {
			resp := send(t, http.MethodPost, collection+"probes", "application/json",
				`{"apiVersion":"example.com/v1","kind":"Probe","metadata":{"name":"`+name+`"},`+status+`}`)
			compareInvalid(t, resp, "Probe", name, errs, http.StatusCreated)
		})
		t.Run(tc.name+"/patch status", func(t *testing.T) {
			if r := send(t, http.MethodPost, collection+"statusprobes", "application/json",
				`{"apiVersion":"example.com/v1","kind":"StatusProbe","metadata":{"name":"`+name+`"}}`); r.StatusCode != http.StatusCreated {
				t.Fatalf("create: HTTP %d", r.StatusCode)
			}
			resp := send(t, http.MethodPatch, collection+"statusprobes/"+name+"/status", "application/merge-patch+json", `{`+status+`}`)
			compareInvalid(t, resp, "StatusProbe", name, errs, http.StatusOK)
		})
	}
}

// compareInvalid checks that resp is what kube-apiserver answers for errs:
// success (HTTP okCode) when there are none, else 422 Invalid with the
// message and causes apierrors.NewInvalid makes of them.
func compareInvalid(t *testing.T, resp *http.Response, kind, name string, errs fieldpath.ErrorList, okCode int) {
	t.Helper()
	if len(errs) == 0 {
		if resp.StatusCode != okCode {
			t.Fatalf("kube accepts these conditions, kapi answers HTTP %d", resp.StatusCode)
		}
		return
	}
	want := apierrors.NewInvalid(schema.GroupKind{Group: "example.com", Kind: kind}, name, errs).ErrStatus
	var got metav1.Status
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnprocessableEntity || got.Reason != metav1.StatusReasonInvalid || got.Details == nil {
		t.Fatalf("HTTP %d %+v, want 422 Invalid", resp.StatusCode, got)
	}
	if got.Message != want.Message {
		t.Errorf("message\n got %q\nwant %q", clip(got.Message), clip(want.Message))
	}
	if g, w := causeLines(got.Details.Causes), causeLines(want.Details.Causes); g != w {
		t.Errorf("causes\n got %s\nwant %s", g, w)
	}
}

// causeLines writes causes one a line, long messages clipped.
func causeLines(causes []metav1.StatusCause) string {
	var b strings.Builder
	for _, c := range causes {
		fmt.Fprintf(&b, "\n  %s %s %s", c.Type, c.Field, clip(c.Message))
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}
