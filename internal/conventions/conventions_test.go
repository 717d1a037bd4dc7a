package conventions_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/conventions"
)

type offender struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            offenderSpec   `json:"spec"`
	Status          offenderStatus `json:"status,omitempty"`
}

type offenderSpec struct {
	Weight   float64              `json:"weight"`
	Sizes    []float32            `json:"sizes,omitempty"`
	Count    uint32               `json:"count"`
	Replicas int                  `json:"replicas"`
	Ports    map[string]port      `json:"ports,omitempty"`
	Backends map[string]*port     `json:"backends,omitempty"`
	Labels   map[string]string    `json:"labels,omitempty"`
	Mode     string               `json:"mode" validate:"enum=Fast;slow_mode"`
	Zones    []string             `json:"zones,omitempty" validate:"items:enum=eu-west;US"`
	Proto    string               `json:"proto" validate:"enum=TCP;UDP"`
	Data     []byte               `json:"data,omitempty"`
	Self     *offenderSpec        `json:"self,omitempty"`
	Times    map[string]kapi.Time `json:"times,omitempty"`
}

type port struct {
	Port int32 `json:"port"`
}

type offenderStatus struct {
	Load       float64          `json:"load,omitempty"` // floats in status are not spec's
	Conditions []kapi.Condition `json:"conditions,omitempty"`
}

// TestCheck: each convention a type breaks is found once, at its JSON
// path; Kubernetes' own types, bytes, maps of strings and floats in status
// are not findings.
func TestCheck(t *testing.T) {
	var got []string
	for _, f := range conventions.Check(reflect.TypeFor[offender]()) {
		got = append(got, f.Rule+" "+f.Field)
	}
	want := []string{
		"float-in-spec spec.weight",
		"float-in-spec spec.sizes[]",
		"unsigned-integer spec.count",
		"platform-int spec.replicas",
		"map-of-objects spec.ports",
		"map-of-objects spec.backends",
		"enum-not-camelcase spec.mode",
		"enum-not-camelcase spec.zones",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	f := conventions.Check(reflect.TypeFor[offender]())[6]
	if !strings.Contains(f.Advice, `"slow_mode"`) || strings.Contains(f.Advice, `"Fast"`) {
		t.Errorf("enum advice %q names what is not CamelCase only", f.Advice)
	}
	if got := conventions.Check(reflect.TypeFor[kapi.ObjectMeta]()); len(got) != 0 {
		t.Errorf("kapi.ObjectMeta: %v", got)
	}
}

type tree map[string]tree

type node struct {
	Kids  []node         `json:"kids"`
	Tree  tree           `json:"tree"`
	Self  *node          `json:"self"`
	Named map[string]bag `json:"named"`
	A     []float64      `json:"a"`
	B     []float64      `json:"b"`
}

type bag struct {
	N    int  `json:"n"`
	Back *bag `json:"back"`
}

type recursive struct {
	Spec node `json:"spec"`
}

// TestCheckRecursiveTypes: types that hold themselves are walked once;
// two fields of one unnamed type are each reported.
func TestCheckRecursiveTypes(t *testing.T) {
	var got []string
	for _, f := range conventions.Check(reflect.TypeFor[recursive]()) {
		got = append(got, f.Rule+" "+f.Field)
	}
	want := []string{
		"map-of-objects spec.named",
		"platform-int spec.named[*].n",
		"float-in-spec spec.a[]",
		"float-in-spec spec.b[]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
