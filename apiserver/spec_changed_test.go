package apiserver

import (
	"testing"

	"github.com/kapi-dev/kapi"
)

// specFieldsChanged says what encoding both objects outside metadata and
// status says, or that it cannot tell.
func TestSpecFieldsChanged(t *testing.T) {
	srv, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := Register(srv, Resource[gadget]{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true, Status: true}); err != nil {
		t.Fatal(err)
	}
	res := srv.resources[len(srv.resources)-1]
	if res.Plural != "gadgets" || len(res.specFields) != 2 { // TypeMeta, Spec
		t.Fatalf("spec fields of %s: %+v", res.Plural, res.specFields)
	}
	base := func() *gadget {
		return &gadget{
			TypeMeta:   kapi.TypeMeta{Kind: "Gadget", APIVersion: "example.com/v1"},
			ObjectMeta: kapi.ObjectMeta{Name: "g", Labels: map[string]string{"a": "1"}},
			Spec:       gadgetSpec{Size: 1, Parts: map[string]string{"p": "x"}},
			Status:     gadgetStatus{Counts: map[string]int{"c": 1}},
		}
	}
	for _, tc := range []struct {
		name          string
		change        func(*gadget)
		changed, told bool
	}{
		{"nothing", func(*gadget) {}, false, true},
		{"metadata", func(g *gadget) { g.Labels = nil; g.Generation = 9 }, false, true},
		{"status", func(g *gadget) { g.Status.Counts["c"] = 7 }, false, true},
		{"spec", func(g *gadget) { g.Spec.Size = 3 }, true, true},
		{"a map of its own, the same", func(g *gadget) { g.Spec.Parts = map[string]string{"p": "x"} }, false, true},
		{"kind", func(g *gadget) { g.Kind = "Other" }, true, true},
		{"empty parts, written as none", func(g *gadget) { g.Spec.Parts = map[string]string{} }, false, false},
		{"a string that is not UTF-8", func(g *gadget) { g.Spec.Parts["p"] = "\xff" }, false, false},
	} {
		b := base()
		tc.change(b)
		changed, told := res.specFieldsChanged(base(), b, false)
		if changed != tc.changed || told != tc.told {
			t.Errorf("%s: changed %v told %v, want %v %v", tc.name, changed, told, tc.changed, tc.told)
		}
		// base() is what decoding its JSON gives: said so (as of the
		// image a write offered, see prepareUpdate), the answer stands.
		if c, k := res.specFieldsChanged(base(), b, true); c != changed || k != told {
			t.Errorf("%s, the old object known an image: changed %v told %v, want %v %v", tc.name, c, k, changed, told)
		}
		// What it tells is what encoding says.
		if want, err := res.specChanged(base(), b, false); err != nil || told && want != changed {
			t.Errorf("%s: specChanged %v (%v), specFieldsChanged %v", tc.name, want, err, changed)
		}
	}
}

// hiddenPart is embedded unexported: JSON promotes its fields, but
// reflection may not hand the struct itself to DeepEqual.
type hiddenPart struct {
	Size int `json:"size,omitempty"`
}

type hidden struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	hiddenPart
}

// A type with an unexported field outside metadata and status is compared
// the general way, without a panic.
func TestSpecFieldsChangedUnexported(t *testing.T) {
	srv, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := Register(srv, Resource[hidden]{Group: "example.com", Version: "v1", Kind: "Hidden", Plural: "hiddens", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	res := srv.resources[len(srv.resources)-1]
	if res.specFields != nil {
		t.Fatalf("spec fields of a type with an unexported one: %+v", res.specFields)
	}
	a, b := &hidden{hiddenPart: hiddenPart{Size: 1}}, &hidden{hiddenPart: hiddenPart{Size: 2}}
	if changed, err := res.specChanged(a, b, false); err != nil || !changed {
		t.Errorf("specChanged %v, %v; want true", changed, err)
	}
}
