package versions_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/versions"
)

// TestSort: the order of Kubernetes' documentation on CRD versions
// (GA, then beta, then alpha, higher numbers first, other names last in
// alphabetical order), as apimachinery's CompareKubeAwareVersionStrings.
func TestSort(t *testing.T) {
	want := []string{"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10"}
	got := slices.Clone(want)
	for i := range got { // any order in
		j := (i * 7) % len(got)
		got[i], got[j] = got[j], got[i]
	}
	versions.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Sort = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		a, b string
		sign int
	}{{"v1", "v1", 0}, {"v1", "v1beta1", 1}, {"v1beta1", "v1beta2", -1}, {"v2alpha1", "v1beta1", -1}, {"v1", "zeta", 1}, {"alpha", "beta", 1}} {
		if got := versions.Compare(tc.a, tc.b); sign(got) != tc.sign {
			t.Errorf("Compare(%s, %s) = %d, want sign %d", tc.a, tc.b, got, tc.sign)
		}
	}
}

func sign(n int) int {
	switch {
	case n > 0:
		return 1
	case n < 0:
		return -1
	}
	return 0
}

type (
	oldThing struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Length          int `json:"length"`
	}
	newThing struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Size            int    `json:"size"`
		Unit            string `json:"unit"`
	}
)

// oldVia converts through newThing, keeping the unit v1alpha1 lacks in an
// annotation; a negative length fails.
var oldVia = versions.Via(func(from *oldThing, to *newThing) error {
	if from.Length < 0 {
		return errors.New("negative length")
	}
	to.Size, to.Unit = from.Length, "m"
	_, err := versions.RestoreFromAnnotation(to, "things/unit", &to.Unit)
	return err
}, func(from *newThing, to *oldThing) error {
	to.Length = from.Size
	if from.Unit != "m" {
		return versions.SaveInAnnotation(to, "things/unit", from.Unit)
	}
	return nil
})

func thingSet(t *testing.T, deprecated ...versions.Version) *versions.Set {
	t.Helper()
	vs := []versions.Version{
		{Name: "v1", Type: reflect.TypeFor[newThing](), Served: true, Storage: true},
		{Name: "v1alpha1", Type: reflect.TypeFor[oldThing](), Served: true, Deprecated: true, Conversion: oldVia},
	}
	s, err := versions.NewSet("example.com", "Thing", append(vs, deprecated...))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConvert(t *testing.T) {
	s := thingSet(t)
	in := &newThing{ObjectMeta: kapi.ObjectMeta{Name: "a", Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"keep": "me"}}, Size: 3, Unit: "km"}
	out, err := s.Convert(in, "v1", "v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	old := out.(*oldThing)
	if old.Length != 3 || old.Name != "a" || old.Labels["l"] != "1" || old.Annotations["things/unit"] != `"km"` || old.Kind != "Thing" || old.APIVersion != "example.com/v1alpha1" {
		t.Errorf("to v1alpha1: %+v", old)
	}
	if len(in.Annotations) != 1 {
		t.Errorf("the source's annotations changed: %v", in.Annotations)
	}
	back, err := s.Convert(old, "v1alpha1", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if b := back.(*newThing); b.Size != 3 || b.Unit != "km" || len(b.Annotations) != 1 || b.APIVersion != "example.com/v1" {
		t.Errorf("round trip: %+v, want the unit back from the annotation, and the annotation gone", b)
	}
	if same, _ := s.Convert(in, "v1", "v1"); same != kapi.Object(in) {
		t.Error("a conversion to the same version made a copy")
	}
	if _, err := s.Convert(&oldThing{Length: -1}, "v1alpha1", "v1"); err == nil || !strings.Contains(err.Error(), "negative length") {
		t.Errorf("a failing conversion: %v", err)
	}
	if _, err := s.Convert(in, "v1", "v9"); err == nil {
		t.Error("a conversion to a version the set lacks succeeded")
	}
	bad := &oldThing{ObjectMeta: kapi.ObjectMeta{Annotations: map[string]string{"things/unit": "{"}}}
	if _, err := s.Convert(bad, "v1alpha1", "v1"); err == nil {
		t.Error("an annotation that does not decode was accepted")
	}
}

func TestWarning(t *testing.T) {
	s := thingSet(t)
	if got, want := s.Warning("v1alpha1"), "example.com/v1alpha1 Thing is deprecated; use example.com/v1 Thing"; got != want {
		t.Errorf("Warning = %q, want %q", got, want)
	}
	if got := s.Warning("v1"); got != "" {
		t.Errorf("a version not deprecated warns %q", got)
	}
	text, empty := "use the new API", ""
	s2, err := versions.NewSet("example.com", "Thing", []versions.Version{
		{Name: "v2", Type: reflect.TypeFor[v2wrap](), Served: true, Deprecated: true, DeprecationWarning: &text, Conversion: versions.Via(
			func(*v2wrap, *newThing) error { return nil }, func(*newThing, *v2wrap) error { return nil })},
		{Name: "v1", Type: reflect.TypeFor[newThing](), Served: true, Storage: true, Deprecated: true},
		{Name: "v1alpha1", Type: reflect.TypeFor[oldThing](), Served: true, Deprecated: true, DeprecationWarning: &empty, Conversion: oldVia},
	})
	if err != nil {
		t.Fatal(err)
	}
	for version, want := range map[string]string{"v2": text, "v1": "example.com/v1 Thing is deprecated", "v1alpha1": ""} {
		if got := s2.Warning(version); got != want {
			t.Errorf("Warning(%s) = %q, want %q", version, got, want)
		}
	}
	if got := s2.Served(); !slices.Equal(got, []string{"v2", "v1", "v1alpha1"}) {
		t.Errorf("Served = %q", got)
	}
}

type v2wrap struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
}

func TestNewSetErrors(t *testing.T) {
	old := reflect.TypeFor[oldThing]()
	for name, vs := range map[string][]versions.Version{
		"none served":   {{Name: "v1", Type: old, Storage: true}},
		"no storage":    {{Name: "v1", Type: reflect.TypeFor[newThing](), Served: true}, {Name: "v1alpha1", Type: old, Served: true, Conversion: oldVia}},
		"a name twice":  {{Name: "v1", Type: reflect.TypeFor[newThing](), Served: true, Storage: true}, {Name: "v1", Type: old, Served: true, Conversion: oldVia}},
		"no conversion": {{Name: "v1", Type: reflect.TypeFor[newThing](), Served: true, Storage: true}, {Name: "v1alpha1", Type: old, Served: true}},
		"the hub's own": {{Name: "v1", Type: reflect.TypeFor[newThing](), Served: true, Storage: true, Conversion: oldVia}, {Name: "v1alpha1", Type: old, Served: true, Conversion: oldVia}},
		"two storage":   {{Name: "v1", Type: reflect.TypeFor[newThing](), Served: true, Storage: true}, {Name: "v1alpha1", Type: old, Served: true, Storage: true, Conversion: oldVia}},
		"one direction": {{Name: "v1", Type: reflect.TypeFor[newThing](), Served: true, Storage: true}, {Name: "v1alpha1", Type: old, Served: true, Conversion: versions.Via[oldThing, newThing](nil, nil)}},
		"a shared type": {{Name: "v1", Type: old, Served: true, Storage: true}, {Name: "v2", Type: old, Served: true, Conversion: oldVia}},
	} {
		if _, err := versions.NewSet("example.com", "Thing", vs); err == nil {
			t.Errorf("%s: NewSet succeeded", name)
		}
	}
}

// TestOtherGroup: a version of another group shares the set, named
// group/version, and converts to its own apiVersion; its name does not
// clash with the version of the same name in the set's group.
func TestOtherGroup(t *testing.T) {
	s, err := versions.NewSet("example.com", "Thing", []versions.Version{
		{Name: "v1", Group: "other.example.com", Type: reflect.TypeFor[oldThing](), Served: true, Deprecated: true, Conversion: oldVia},
		{Name: "v1", Type: reflect.TypeFor[newThing](), Served: true, Storage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Served(); !slices.Equal(got, []string{"v1", "other.example.com/v1"}) {
		t.Errorf("Served = %q", got)
	}
	out, err := s.Convert(&newThing{Size: 2, Unit: "m"}, "v1", "other.example.com/v1")
	if err != nil {
		t.Fatal(err)
	}
	if o := out.(*oldThing); o.Length != 2 || o.APIVersion != "other.example.com/v1" || o.Kind != "Thing" {
		t.Errorf("to the other group: %+v", o)
	}
	if got, want := s.Warning("other.example.com/v1"), "other.example.com/v1 Thing is deprecated"; got != want {
		t.Errorf("Warning = %q, want %q (no version of its group to use instead)", got, want)
	}
	if _, err := s.Convert(out, "other.example.com/v2", "v1"); err == nil {
		t.Error("a conversion from a version the other group lacks succeeded")
	}
}
