package validation_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

type Gizmo struct {
	Spec GizmoSpec `json:"spec"`
}

type Color string

type GizmoSpec struct {
	Color     Color             `json:"color" validate:"required,enum=red;green;blue"`
	Replicas  *int32            `json:"replicas,omitempty" validate:"minimum=0" default:"1"`
	Port      int32             `json:"port,omitempty" validate:"minimum=1,maximum=65535"`
	Ratio     float64           `json:"ratio,omitempty" validate:"minimum=0,exclusiveMinimum,maximum=1,exclusiveMaximum"`
	Count     uint8             `json:"count,omitempty" validate:"maximum=10"`
	Level     int               `json:"level,omitempty" validate:"enum=1;2;3"`
	Name      string            `json:"name,omitempty" validate:"minLength=2,maxLength=5" pattern:"^[a-z]+$"`
	Address   string            `json:"address,omitempty" validate:"format=ipv4"`
	Tags      []string          `json:"tags,omitempty" validate:"minItems=1,maxItems=2"`
	Steps     []string          `json:"steps" validate:"minItems=1"`
	Zones     []string          `json:"zones,omitempty" validate:"maxItems=3,items:enum=a;b,items:maxLength=1"`
	Ports     []*int32          `json:"ports,omitempty" validate:"items:minimum=1"`
	Zone      string            `json:"zone,omitempty" validate:"immutable"`
	Mode      string            `json:"mode,omitempty" validate:"enum=fast;slow" default:"fast"`
	Parts     []Part            `json:"parts,omitempty"`
	PartsByID map[string]Part   `json:"partsByID,omitempty"`
	Extra     *Part             `json:"extra,omitempty"`
	Labels    map[string]string `json:"labels,omitempty" validate:"required"`
}

type Part struct {
	Name string `json:"name" validate:"required"`
	Kind string `json:"kind,omitempty" validate:"enum=a;b" default:"a"`
}

func mustSchema(t *testing.T) *validation.Schema {
	t.Helper()
	s, err := validation.For(reflect.TypeFor[Gizmo]())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// valid is a spec that passes every check.
func valid() *Gizmo {
	return &Gizmo{Spec: GizmoSpec{Color: "red", Labels: map[string]string{"a": "b"}}}
}

func messages(errs []*validation.Error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestValidateEachConstraint(t *testing.T) {
	s := mustSchema(t)
	cases := []struct {
		name   string
		change func(*GizmoSpec)
		typ    kapi.CauseType
		want   string
	}{
		{"required string", func(s *GizmoSpec) { s.Color = "" }, kapi.CauseTypeFieldValueRequired,
			`spec.color: Required value`},
		{"required map", func(s *GizmoSpec) { s.Labels = map[string]string{} }, kapi.CauseTypeFieldValueRequired,
			`spec.labels: Required value`},
		{"enum", func(s *GizmoSpec) { s.Color = "purple" }, kapi.CauseTypeFieldValueNotSupported,
			`spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"`},
		{"enum of integers", func(s *GizmoSpec) { s.Level = 7 }, kapi.CauseTypeFieldValueNotSupported,
			`spec.level: Unsupported value: 7: supported values: "1", "2", "3"`},
		{"minimum", func(s *GizmoSpec) { s.Replicas = ptr(int32(-1)) }, kapi.CauseTypeFieldValueInvalid,
			`spec.replicas: Invalid value: -1: must be greater than or equal to 0`},
		{"minimum and maximum, under", func(s *GizmoSpec) { s.Port = -5 }, kapi.CauseTypeFieldValueInvalid,
			`spec.port: Invalid value: -5: must be between 1 and 65535, inclusive`},
		{"minimum and maximum, over", func(s *GizmoSpec) { s.Port = 65536 }, kapi.CauseTypeFieldValueInvalid,
			`spec.port: Invalid value: 65536: must be between 1 and 65535, inclusive`},
		{"maximum", func(s *GizmoSpec) { s.Count = 11 }, kapi.CauseTypeFieldValueInvalid,
			`spec.count: Invalid value: 11: must be less than or equal to 10`},
		{"exclusiveMinimum", func(s *GizmoSpec) { s.Ratio = -0.5 }, kapi.CauseTypeFieldValueInvalid,
			`spec.ratio: Invalid value: -0.5: must be greater than 0`},
		{"exclusiveMaximum", func(s *GizmoSpec) { s.Ratio = 1 }, kapi.CauseTypeFieldValueInvalid,
			`spec.ratio: Invalid value: 1: must be less than 1`},
		{"minLength", func(s *GizmoSpec) { s.Name = "a" }, kapi.CauseTypeFieldValueInvalid,
			`spec.name: Invalid value: "a": must be at least 2 characters`},
		{"maxLength", func(s *GizmoSpec) { s.Name = "abcdef" }, kapi.CauseTypeFieldValueTooLong,
			`spec.name: Too long: may not be more than 5 bytes`},
		{"pattern", func(s *GizmoSpec) { s.Name = "ABC" }, kapi.CauseTypeFieldValueInvalid,
			`spec.name: Invalid value: "ABC": must match '^[a-z]+$'`},
		{"format", func(s *GizmoSpec) { s.Address = "1.2.3" }, kapi.CauseTypeFieldValueTypeInvalid,
			`spec.address: Invalid value: "1.2.3": must be of type ipv4`},
		{"minItems", func(s *GizmoSpec) { s.Steps = []string{} }, kapi.CauseTypeFieldValueInvalid,
			`spec.steps: Invalid value: 0: must have at least 1 item`},
		{"minItems, omitted", func(s *GizmoSpec) { s.Tags = []string{} }, "", ""}, // not in the JSON: not checked
		{"maxItems", func(s *GizmoSpec) { s.Tags = []string{"a", "b", "c"} }, kapi.CauseTypeTooMany,
			`spec.tags: Too many: 3: must have at most 2 items`},
		{"items:enum", func(s *GizmoSpec) { s.Zones = []string{"a", "c"} }, kapi.CauseTypeFieldValueNotSupported,
			`spec.zones[1]: Unsupported value: "c": supported values: "a", "b"`},
		{"items:minimum", func(s *GizmoSpec) { s.Ports = []*int32{ptr(int32(1)), nil, ptr(int32(0))} }, kapi.CauseTypeFieldValueInvalid,
			`spec.ports[2]: Invalid value: 0: must be greater than or equal to 1`},
		{"in a list", func(s *GizmoSpec) { s.Parts = []Part{{Name: "x"}, {Kind: "c", Name: "y"}} }, kapi.CauseTypeFieldValueNotSupported,
			`spec.parts[1].kind: Unsupported value: "c": supported values: "a", "b"`},
		{"in a map", func(s *GizmoSpec) { s.PartsByID = map[string]Part{"p1": {Name: "x"}, "p2": {}} }, kapi.CauseTypeFieldValueRequired,
			`spec.partsByID[p2].name: Required value`},
		{"behind a pointer", func(s *GizmoSpec) { s.Extra = &Part{Name: "x", Kind: "z"} }, kapi.CauseTypeFieldValueNotSupported,
			`spec.extra.kind: Unsupported value: "z": supported values: "a", "b"`},
	}
	if errs := s.Validate(valid(), nil); len(errs) > 0 {
		t.Fatalf("the valid gizmo: %q", messages(errs))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := valid()
			c.change(&g.Spec)
			errs := s.Validate(g, nil)
			if c.want == "" {
				if len(errs) > 0 {
					t.Fatalf("errors %q, want none", messages(errs))
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("errors %q, want one: %s", messages(errs), c.want)
			}
			if got := errs[0].Error(); got != c.want {
				t.Errorf("message\n%s\nwant\n%s", got, c.want)
			}
			if errs[0].Type != c.typ {
				t.Errorf("type %s, want %s", errs[0].Type, c.typ)
			}
		})
	}
}

func TestValidateSeveralFieldsInOrder(t *testing.T) {
	g := &Gizmo{Spec: GizmoSpec{Color: "pink", Replicas: ptr(int32(-2)), Name: "TooLong", Tags: []string{"a", "b", "c"}}}
	got := messages(mustSchema(t).Validate(g, nil))
	want := []string{
		`spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"`,
		`spec.replicas: Invalid value: -2: must be greater than or equal to 0`,
		`spec.name: Too long: may not be more than 5 bytes`,
		`spec.name: Invalid value: "TooLong": must match '^[a-z]+$'`,
		`spec.tags: Too many: 3: must have at most 2 items`,
		`spec.labels: Required value`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestImmutable(t *testing.T) {
	s := mustSchema(t)
	old := valid()
	old.Spec.Zone = "a"
	for _, c := range []struct {
		name string
		zone string
		old  *Gizmo
		ok   bool
	}{
		{"create", "b", nil, true},
		{"unchanged", "a", old, true},
		{"changed", "b", old, false},
		{"cleared", "", old, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := valid()
			g.Spec.Zone = c.zone
			errs := s.Validate(g, c.old)
			if c.ok != (len(errs) == 0) {
				t.Fatalf("errors %q, want ok=%v", messages(errs), c.ok)
			}
			if !c.ok && errs[0].Error() != "spec.zone: Invalid value: null: field is immutable" {
				t.Errorf("message %q", errs[0].Error())
			}
		})
	}
}

func TestDefault(t *testing.T) {
	s := mustSchema(t)
	g := valid()
	g.Spec.Parts = []Part{{Name: "x"}, {Name: "y", Kind: "b"}}
	g.Spec.PartsByID = map[string]Part{"p": {Name: "z"}}
	g.Spec.Extra = &Part{Name: "e"}
	s.Default(g)
	if g.Spec.Replicas == nil || *g.Spec.Replicas != 1 {
		t.Errorf("replicas %v, want the default 1", g.Spec.Replicas)
	}
	if g.Spec.Mode != "fast" {
		t.Errorf("mode %q, want the default fast", g.Spec.Mode)
	}
	if g.Spec.Parts[0].Kind != "a" || g.Spec.Parts[1].Kind != "b" {
		t.Errorf("parts %+v, want the first defaulted to a, the second kept", g.Spec.Parts)
	}
	if g.Spec.PartsByID["p"].Kind != "a" || g.Spec.Extra.Kind != "a" {
		t.Errorf("map value %+v, pointer %+v: want kind a in both", g.Spec.PartsByID["p"], *g.Spec.Extra)
	}
	// Each object gets a value of its own.
	h := valid()
	s.Default(h)
	*h.Spec.Replicas = 5
	if *g.Spec.Replicas != 1 {
		t.Error("two objects share a default")
	}
	// Given values stay.
	k := valid()
	k.Spec.Replicas, k.Spec.Mode = ptr(int32(0)), "slow"
	s.Default(k)
	if *k.Spec.Replicas != 0 || k.Spec.Mode != "slow" {
		t.Errorf("given values changed: %d %q", *k.Spec.Replicas, k.Spec.Mode)
	}
}

func TestBadTags(t *testing.T) {
	cases := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"unknown keyword", reflect.TypeFor[struct {
			A string `validate:"colour=red"`
		}](), `unknown keyword "colour"`},
		{"unknown keyword names the known ones", reflect.TypeFor[struct {
			A string `validate:"minlen=1"`
		}](), `the keywords are enum, exclusiveMaximum, exclusiveMinimum, format, immutable, maxItems, maxLength, maximum, minItems, minLength, minimum, optional, required, and items:`},
		{"enum on a struct", reflect.TypeFor[struct {
			A struct{} `validate:"enum=x"`
		}](), "enum: applies to strings, numbers and booleans"},
		{"minimum on a string", reflect.TypeFor[struct {
			A string `validate:"minimum=1"`
		}](), "minimum: applies to numbers"},
		{"maxLength on a number", reflect.TypeFor[struct {
			A int `validate:"maxLength=1"`
		}](), "maxLength: applies to strings"},
		{"maxItems on a string", reflect.TypeFor[struct {
			A string `validate:"maxItems=1"`
		}](), "maxItems: applies to lists"},
		{"fraction for an integer", reflect.TypeFor[struct {
			A int32 `validate:"minimum=0.5"`
		}](), `"0.5" is not an integer`},
		{"negative for an unsigned", reflect.TypeFor[struct {
			A uint `validate:"minimum=-1"`
		}](), `"-1" is not a non-negative integer`},
		{"empty range", reflect.TypeFor[struct {
			A int `validate:"minimum=5,maximum=1"`
		}](), "minimum 5 is greater than maximum 1"},
		{"exclusive without bound", reflect.TypeFor[struct {
			A int `validate:"exclusiveMinimum"`
		}](), "exclusiveMinimum needs a minimum"},
		{"negative length", reflect.TypeFor[struct {
			A string `validate:"maxLength=-1"`
		}](), "is not a count"},
		{"required and optional", reflect.TypeFor[struct {
			A string `validate:"required,optional"`
		}](), "required and optional together"},
		{"twice", reflect.TypeFor[struct {
			A string `validate:"required,required"`
		}](), "required given twice"},
		{"value on a flag", reflect.TypeFor[struct {
			A string `validate:"required=yes"`
		}](), "required takes no value"},
		{"no value", reflect.TypeFor[struct {
			A string `validate:"maxLength"`
		}](), "maxLength needs a value"},
		{"unknown format", reflect.TypeFor[struct {
			A string `validate:"format=colour"`
		}](), `unknown format "colour"`},
		{"bad pattern", reflect.TypeFor[struct {
			A string `pattern:"(["`
		}](), "pattern: error parsing regexp"},
		{"enum value of the wrong type", reflect.TypeFor[struct {
			A int `validate:"enum=1;x"`
		}](), `"x" is not a int`},
		{"enum value twice", reflect.TypeFor[struct {
			A string `validate:"enum=a;a"`
		}](), "value a listed twice"},
		{"default of the wrong type", reflect.TypeFor[struct {
			A *int32 `default:"one"`
		}](), `default: "one" is not a JSON int32`},
		{"default outside the enum", reflect.TypeFor[struct {
			A string `validate:"enum=a;b" default:"c"`
		}](), `default "c" does not pass the field's checks`},
		{"maxItems on bytes", reflect.TypeFor[struct {
			A []byte `validate:"maxItems=1"`
		}](), "maxItems: applies to lists, not []uint8"},
		{"items on a string", reflect.TypeFor[struct {
			A string `validate:"items:enum=a"`
		}](), "items: applies to lists, not string"},
		{"items of structs", reflect.TypeFor[struct {
			A []struct{} `validate:"items:enum=a"`
		}](), "items: applies to lists of strings, numbers and booleans"},
		{"items:required", reflect.TypeFor[struct {
			A []string `validate:"items:required"`
		}](), "items:required: not a keyword for items"},
		{"items:minimum on strings", reflect.TypeFor[struct {
			A []string `validate:"items:minimum=1"`
		}](), "items: validate: minimum: applies to numbers, not string"},
		{"immutable in a list", reflect.TypeFor[struct {
			A []struct {
				B string `json:"b" validate:"immutable"`
			} `json:"a"`
		}](), "a[].b (struct { B string \"json:\\\"b\\\" validate:\\\"immutable\\\"\" }): immutable fields must be reached through structs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := validation.For(c.typ)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestRulesOfShowsKeywords(t *testing.T) {
	f, _ := reflect.TypeFor[GizmoSpec]().FieldByName("Ratio")
	r, err := validation.RulesOf(f)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(r)
	want := `{"Required":false,"Optional":false,"Immutable":false,"Enum":null,"Minimum":0,"Maximum":1,"ExclusiveMinimum":true,"ExclusiveMaximum":true,"MinLength":-1,"MaxLength":-1,"MinItems":-1,"MaxItems":-1,"Pattern":"","Format":"","Default":null,"Rule":"","RuleMessage":"","Items":null}`
	if string(got) != want {
		t.Errorf("rules\n%s\nwant\n%s", got, want)
	}
	f, _ = reflect.TypeFor[GizmoSpec]().FieldByName("Level")
	if r, _ = validation.RulesOf(f); !reflect.DeepEqual(r.Enum, []any{1.0, 2.0, 3.0}) {
		t.Errorf("enum of integers %#v, want JSON numbers", r.Enum)
	}
	f, _ = reflect.TypeFor[GizmoSpec]().FieldByName("Parts")
	if r, err = validation.RulesOf(f); r != nil || err != nil {
		t.Errorf("a field without tags: %+v, %v", r, err)
	}
}

func TestRecursiveTypes(t *testing.T) {
	type Tree map[string]Tree
	type Node struct {
		Name string   `json:"name" validate:"required"`
		Kids []Node   `json:"kids,omitempty"`
		Next *Node    `json:"next,omitempty"`
		More Tree     `json:"more,omitempty"`
		Up   **Node   `json:"up,omitempty"`
		All  [][]Node `json:"all,omitempty"`
	}
	s, err := validation.For(reflect.TypeFor[Node]())
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{Name: "a", Kids: []Node{{Name: "b", Next: &Node{}}}}
	if got := messages(s.Validate(n, nil)); !slices.Equal(got, []string{"kids[0].next.name: Required value"}) {
		t.Errorf("got %q", got)
	}
}

func ptr[T any](v T) *T { return &v }

// BenchmarkWrite is what a write of a typical object costs: defaults, then
// checks, as apiserver runs them.
func BenchmarkWrite(b *testing.B) {
	s, err := validation.For(reflect.TypeFor[Gizmo]())
	if err != nil {
		b.Fatal(err)
	}
	g := valid()
	g.Spec.Name, g.Spec.Address, g.Spec.Steps = "abc", "10.0.0.1", []string{"a"}
	g.Spec.Parts = []Part{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	b.ReportAllocs()
	for b.Loop() {
		s.Default(g)
		if errs := s.Validate(g, g); len(errs) > 0 {
			b.Fatal(messages(errs))
		}
	}
}

func TestRatcheting(t *testing.T) {
	s := mustSchema(t)
	// Stored before the constraints were declared.
	old := valid()
	old.Spec.Replicas, old.Spec.Name = ptr(int32(-1)), "TOOLONGNAME"
	old.Spec.Parts = []Part{{Name: "p", Kind: "z"}}

	g := valid()
	g.Spec.Replicas, g.Spec.Name = ptr(int32(-1)), "TOOLONGNAME"
	g.Spec.Parts = []Part{{Name: "p", Kind: "z"}}
	g.Spec.Port = 80 // the change the update is for
	if errs := s.Validate(g, old); len(errs) > 0 {
		t.Errorf("an update that leaves the invalid fields alone: %q", messages(errs))
	}
	if errs := s.Validate(g, nil); len(errs) != 4 {
		t.Errorf("a create of the same: %q, want replicas, name twice and parts[0].kind", messages(errs))
	}

	// Changed fields are checked, the others still ratchet.
	g.Spec.Replicas = ptr(int32(-2))
	g.Spec.Parts = append(g.Spec.Parts, Part{Name: "q"})
	want := []string{
		`spec.replicas: Invalid value: -2: must be greater than or equal to 0`,
		`spec.parts[0].kind: Unsupported value: "z": supported values: "a", "b"`, // a list ratchets as a whole
	}
	if got := messages(s.Validate(g, old)); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Required is the parent's to check, and the parent changed.
	g.Spec.Color, old.Spec.Color = "", ""
	if got := messages(s.Validate(g, old)); !slices.Contains(got, "spec.color: Required value") {
		t.Errorf("got %q, want spec.color required", got)
	}
}

// BenchmarkRatcheting is the checks of an update that changed one field of
// a typical object: each field with a rule is compared with its old value
// (ratcheting), the spec whole and then field by field.
func BenchmarkRatcheting(b *testing.B) {
	s, err := validation.For(reflect.TypeFor[Gizmo]())
	if err != nil {
		b.Fatal(err)
	}
	gizmo := func(port int32) *Gizmo {
		g := valid()
		g.Spec.Name, g.Spec.Address, g.Spec.Steps, g.Spec.Port = "abc", "10.0.0.1", []string{"a"}, port
		g.Spec.Parts = []Part{{Name: "a"}, {Name: "b"}, {Name: "c"}}
		g.Spec.Labels = map[string]string{"app": "shop", "tier": "web", "team": "storefront"}
		return g
	}
	old, g := gizmo(80), gizmo(8080)
	b.ReportAllocs()
	for b.Loop() {
		if errs := s.Validate(g, old); len(errs) > 0 {
			b.Fatal(messages(errs))
		}
	}
}
