package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/validation"
)

// This file checks the constraints declared in struct tags (package
// validation) the way a user meets them: kubectl 1.33 creating objects that
// break one constraint each, and kubectl explain. The reference for which
// objects are refused is a CustomResourceDefinition with the same schema:
// the schema kapi serves is handed to kube-openapi's validator, which is
// what apiextensions-apiserver runs for a CRD, and both must refuse the same
// field with the same cause type.

// Gadget declares every constraint in its tags.
type Gadget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            GadgetSpec `json:"spec"`
}

type GadgetSpec struct {
	Color    string   `json:"color" validate:"required,enum=Red;Green;Blue" description:"Color of the gadget."`
	Replicas *int32   `json:"replicas,omitempty" validate:"minimum=0" default:"1"`
	Port     int32    `json:"port,omitempty" validate:"minimum=1,maximum=65535"`
	Load     float64  `json:"load,omitempty" validate:"minimum=0,exclusiveMinimum,maximum=1,exclusiveMaximum"`
	Weight   int64    `json:"weight,omitempty" validate:"maximum=100"`
	Name     string   `json:"name,omitempty" validate:"minLength=2,maxLength=5" pattern:"^[a-z]+$"`
	Address  string   `json:"address,omitempty" validate:"format=ipv4"`
	Contact  string   `json:"contact,omitempty" validate:"format=email"`
	Tags     []string `json:"tags,omitempty" validate:"maxItems=2,items:maxLength=3"`
	Sizes    []int32  `json:"sizes,omitempty" validate:"items:minimum=1,items:maximum=9"`
	Steps    []string `json:"steps,omitempty" validate:"required,minItems=2"`
	Zone     string   `json:"zone,omitempty" validate:"immutable"`
	Mode     string   `json:"mode,omitempty" validate:"enum=fast;slow" default:"fast"`
	Parts    []Part   `json:"parts,omitempty"`
}

type Part struct {
	Name string `json:"name" validate:"required,maxLength=8"`
	Kind string `json:"kind,omitempty" validate:"enum=a;b" default:"a"`
}

// startDeclaredServer serves widgets and gadgets in this process.
func startDeclaredServer(t *testing.T) *server {
	t.Helper()
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		if err := widgetapi.Register(s); err != nil {
			return err
		}
		return apiserver.Register(s, apiserver.Resource[Gadget]{
			Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
		})
	})
	return &server{URL: srv.URL}
}

const kubectl133 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"

// cause is a refused field as a client sees it.
type cause struct {
	Field string
	Type  string
}

// declaredCases break one constraint each, on top of a valid gadget spec.
var declaredCases = []struct {
	name, spec string // spec: fields of the spec, in YAML flow style
	message    string // what kubectl prints after `The Gadget "NAME" is invalid: `
	cause      cause
	crd        string // the cause type a CRD gives where it differs, with why
}{
	{"required", `color: ""`, `spec.color: Required value`,
		cause{"spec.color", "FieldValueRequired"}, "FieldValueNotSupported: a CRD sees a present empty string, not in the enum"},
	{"required list", `steps: null`, `spec.steps: Required value`,
		cause{"spec.steps", "FieldValueRequired"}, ""},
	{"enum", `color: purple`, `spec.color: Unsupported value: "purple": supported values: "Red", "Green", "Blue"`,
		cause{"spec.color", "FieldValueNotSupported"}, ""},
	{"minimum", `replicas: -1`, `spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
		cause{"spec.replicas", "FieldValueInvalid"}, ""},
	{"maximum", `weight: 101`, `spec.weight: Invalid value: 101: must be less than or equal to 100`,
		cause{"spec.weight", "FieldValueInvalid"}, ""},
	{"minimum and maximum", `port: 70000`, `spec.port: Invalid value: 70000: must be between 1 and 65535, inclusive`,
		cause{"spec.port", "FieldValueInvalid"}, ""},
	{"exclusiveMinimum", `load: -0.5`, `spec.load: Invalid value: -0.5: must be greater than 0`,
		cause{"spec.load", "FieldValueInvalid"}, ""},
	{"exclusiveMaximum", `load: 1`, `spec.load: Invalid value: 1: must be less than 1`,
		cause{"spec.load", "FieldValueInvalid"}, ""},
	{"minLength", `name: a`, `spec.name: Invalid value: "a": must be at least 2 characters`,
		cause{"spec.name", "FieldValueInvalid"}, ""},
	{"maxLength", `name: abcdef`, `spec.name: Too long: may not be more than 5 bytes`,
		cause{"spec.name", "FieldValueTooLong"}, ""},
	{"pattern", `name: AB`, `spec.name: Invalid value: "AB": must match '^[a-z]+$'`,
		cause{"spec.name", "FieldValueInvalid"}, ""},
	{"format", `address: 10.0.0`, `spec.address: Invalid value: "10.0.0": must be of type ipv4`,
		cause{"spec.address", "FieldValueTypeInvalid"}, ""},
	{"format email", `contact: nobody`, `spec.contact: Invalid value: "nobody": must be of type email`,
		cause{"spec.contact", "FieldValueTypeInvalid"}, ""},
	{"minItems", `steps: [a]`, `spec.steps: Invalid value: 1: must have at least 2 items`,
		cause{"spec.steps", "FieldValueInvalid"}, ""},
	{"maxItems", `tags: [a, b, c]`, `spec.tags: Too many: 3: must have at most 2 items`,
		cause{"spec.tags", "FieldValueTooMany"}, ""},
	{"items:maxLength", `tags: [abcd]`, `spec.tags[0]: Too long: may not be more than 3 bytes`,
		cause{"spec.tags[0]", "FieldValueTooLong"}, ""},
	{"items:minimum and maximum", `sizes: [1, 10]`, `spec.sizes[1]: Invalid value: 10: must be between 1 and 9, inclusive`,
		cause{"spec.sizes[1]", "FieldValueInvalid"}, ""},
	{"in a list", `parts: [{name: a}, {name: b, kind: c}]`, `spec.parts[1].kind: Unsupported value: "c": supported values: "a", "b"`,
		cause{"spec.parts[1].kind", "FieldValueNotSupported"}, ""},
	{"required in a list", `parts: [{kind: a}]`, `spec.parts[0].name: Required value`,
		cause{"spec.parts[0].name", "FieldValueRequired"}, ""},
}

// gadgetSpec is a valid spec with the case's fields over it.
func gadgetSpec(t *testing.T, change string) map[string]any {
	t.Helper()
	spec := map[string]any{"color": "Red", "steps": []any{"a", "b"}}
	var over map[string]any
	if err := yamlToJSONInto("{"+change+"}", &over); err != nil {
		t.Fatalf("case spec %q: %v", change, err)
	}
	for k, v := range over {
		if v == nil {
			delete(spec, k)
		} else {
			spec[k] = v
		}
	}
	return spec
}

func TestKubectlDeclaredValidation(t *testing.T) {
	t.Parallel()
	srv := startDeclaredServer(t)
	k := newKubectl(t, kubectl133, srv)
	specSchema := servedSpecSchema(t, srv.URL, "com.example.v1.Gadget")
	dir := t.TempDir()
	for i, c := range declaredCases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("g%d", i)
			spec := gadgetSpec(t, c.spec)
			manifest, _ := json.Marshal(map[string]any{
				"apiVersion": "example.com/v1", "kind": "Gadget",
				"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec,
			})
			file := filepath.Join(dir, name+".json")
			if err := os.WriteFile(file, manifest, 0o600); err != nil {
				t.Fatal(err)
			}
			r := k.run(t, "create", "-f", file)
			want := `The Gadget "` + name + `" is invalid: ` + c.message
			if r.err == nil || strings.TrimSpace(r.stderr) != want {
				t.Errorf("%s\nwant stderr: %s", r, want)
			}

			// A CRD with the schema kapi serves refuses the same field.
			got := crdCauses(t, specSchema, spec)
			want1 := c.cause
			if c.crd != "" {
				want1.Type, _, _ = strings.Cut(c.crd, ":")
			}
			if !slices.Equal(got, []cause{want1}) {
				t.Errorf("a CRD with the same schema gives %+v, want %+v", got, want1)
			}
		})
	}

	// The valid gadget passes both, and comes back defaulted.
	spec := gadgetSpec(t, `zone: a, parts: [{name: p}]`)
	if got := crdCauses(t, specSchema, spec); len(got) > 0 {
		t.Fatalf("a CRD refuses the valid gadget: %+v", got)
	}
	manifest, _ := json.Marshal(map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "ok", "namespace": "default"}, "spec": spec})
	file := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	k.must(t, "create", "-f", file)
	got := k.getJSON(t, "gadget", "ok", "-n", "default")["spec"].(map[string]any)
	if got["replicas"] != 1.0 || got["mode"] != "fast" || got["parts"].([]any)[0].(map[string]any)["kind"] != "a" {
		t.Errorf("created spec %v, want replicas 1, mode fast, parts[0].kind a by default", got)
	}

	// Immutable: the change is refused server-side, whatever the verb.
	for _, args := range [][]string{
		{"patch", "gadget", "ok", "-n", "default", "--type", "merge", "-p", `{"spec":{"zone":"b"}}`},
		{"label", "gadget", "ok", "-n", "default", "x=y"}, // changes no zone: allowed
	} {
		r := k.run(t, args...)
		if args[0] == "label" {
			if r.err != nil {
				t.Errorf("%s", r)
			}
			continue
		}
		if want := `The Gadget "ok" is invalid: spec.zone: Invalid value: null: field is immutable`; r.err == nil || strings.TrimSpace(r.stderr) != want {
			t.Errorf("%s\nwant stderr: %s", r, want)
		}
	}
}

func TestKubectlExplainShowsDeclared(t *testing.T) {
	t.Parallel()
	srv := startDeclaredServer(t)
	for _, bin := range []string{kubectl133, dispatcherKubectl} {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			k := newKubectl(t, bin, srv)
			out := k.must(t, "explain", "widgets.spec.color")
			if !strings.Contains(out, "ENUM:\n    Red\n    Green\n    Blue\n") {
				t.Errorf("kubectl explain widgets.spec.color shows no enum:\n%s", out)
			}
			if !strings.Contains(out, "Color of the widget") {
				t.Errorf("kubectl explain widgets.spec.color shows no description:\n%s", out)
			}
			out = k.must(t, "explain", "widgets.spec.ports")
			if !strings.Contains(out, "enum: TCP, UDP, SCTP") {
				t.Errorf("kubectl explain widgets.spec.ports shows no enum for protocol:\n%s", out)
			}
		})
	}
}

// servedSpecSchema is the schema of the spec of the named component in the
// OpenAPI document the server at url serves for example.com/v1.
func servedSpecSchema(tb testing.TB, url, component string) *spec.Schema {
	tb.Helper()
	resp, err := http.Get(url + "/openapi/v3/apis/example.com/v1")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]*spec.Schema `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		tb.Fatal(err)
	}
	s := doc.Components.Schemas[component].Properties["spec"]
	if s == nil {
		tb.Fatalf("no schema of %s's spec", component)
	}
	return s
}

// crdCauses validates a spec as apiextensions-apiserver validates a custom
// resource against its schema, and maps the result to causes as it does
// (kubeOpenAPIResultToFieldErrors). As for a CRD, null values are dropped
// first (a structural schema prunes them).
func crdCauses(t *testing.T, s *spec.Schema, specValue map[string]any) []cause {
	t.Helper()
	data, _ := json.Marshal(specValue)
	var v any
	_ = json.Unmarshal(data, &v)
	v = dropNulls(v)
	res := validate.NewSchemaValidator(s, nil, "spec", strfmt.Default).Validate(v)
	var out []cause
	for _, err := range res.Errors {
		e, ok := err.(*openapierrors.Validation)
		if !ok {
			out = append(out, cause{"spec", "FieldValueInvalid"})
			continue
		}
		typ := "FieldValueInvalid"
		switch e.Code() {
		case openapierrors.RequiredFailCode:
			typ = "FieldValueRequired"
		case openapierrors.EnumFailCode:
			typ = "FieldValueNotSupported"
		case openapierrors.TooLongFailCode:
			typ = "FieldValueTooLong"
		case openapierrors.MaxItemsFailCode:
			typ = "FieldValueTooMany"
		case openapierrors.InvalidTypeCode:
			typ = "FieldValueTypeInvalid"
		}
		out = append(out, cause{strings.TrimPrefix(e.Name, "."), typ})
	}
	slices.SortFunc(out, func(a, b cause) int { return strings.Compare(a.Field+a.Type, b.Field+b.Type) })
	return slices.Compact(out)
}

func dropNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
			} else {
				v[k] = dropNulls(e)
			}
		}
	case []any:
		for i := range v {
			v[i] = dropNulls(v[i])
		}
	}
	return v
}

// FuzzDeclaredMatchesCRD: for any gadget spec, kapi's declared validation
// and a CRD with the schema kapi writes refuse the same fields. The gadget
// is taken as kapi stores it — decoded into the Go type, defaulted, encoded
// again — since a Go struct cannot hold what its JSON form drops.
func FuzzDeclaredMatchesCRD(f *testing.F) {
	for _, c := range declaredCases {
		f.Add(`{` + c.spec + `}`)
	}
	f.Add(`{parts: [{name: abcdefghij, kind: ""}], load: 0.5, address: "010.1.1.1", contact: "a@b.c"}`)
	schema, err := validation.For(reflect.TypeFor[Gadget]())
	if err != nil {
		f.Fatal(err)
	}
	srv := apiservertest.New(f, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[Gadget]{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true})
	})
	specSchema := servedSpecSchema(f, srv.URL, "com.example.v1.Gadget")
	f.Fuzz(func(t *testing.T, change string) {
		var over map[string]any
		if yamlToJSONInto(change, &over) != nil {
			return
		}
		base := map[string]any{"color": "Red", "steps": []any{"a", "b"}}
		for k, v := range over {
			base[k] = v
		}
		data, _ := json.Marshal(map[string]any{"spec": base})
		var g Gadget
		if json.Unmarshal(data, &g) != nil {
			return
		}
		schema.Default(&g)
		stored, _ := json.Marshal(g.Spec)
		var specValue map[string]any
		if err := json.Unmarshal(stored, &specValue); err != nil {
			t.Fatal(err)
		}
		// One difference is by design: kapi's required refuses an empty
		// value as +k8s:required does, a CRD's only a missing one.
		emptyRequired := map[string]bool{}
		var ours []string
		for _, e := range schema.Validate(&g, nil) {
			if e.Type == kapi.CauseTypeFieldValueRequired {
				emptyRequired[e.Field] = true
			}
			ours = append(ours, e.Field)
		}
		var theirs []string
		for _, c := range crdCauses(t, specSchema, specValue) {
			theirs = append(theirs, c.Field)
		}
		isEmptyRequired := func(field string) bool { return emptyRequired[field] }
		ours = slices.DeleteFunc(ours, isEmptyRequired)
		theirs = slices.DeleteFunc(theirs, isEmptyRequired)
		slices.Sort(ours)
		ours = slices.Compact(ours)
		theirs = slices.Compact(theirs)
		if !slices.Equal(ours, theirs) {
			t.Errorf("spec %s: kapi refuses %q, a CRD %q", stored, ours, theirs)
		}
	})
}

// yamlToJSONInto decodes YAML (or JSON) as JSON values.
func yamlToJSONInto(text string, v any) error { return yaml.Unmarshal([]byte(text), v) }
