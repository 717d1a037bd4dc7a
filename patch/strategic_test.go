package patch_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/patch"
)

type smpWidget struct {
	Metadata smpMeta `json:"metadata,omitempty"`
	Spec     smpSpec `json:"spec,omitempty"`
}

type smpMeta struct {
	Name       string            `json:"name,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Finalizers []string          `json:"finalizers,omitempty" patchStrategy:"merge"`
}

type smpSpec struct {
	Color      string             `json:"color,omitempty"`
	Replicas   int64              `json:"replicas,omitempty"`
	Ports      []smpPort          `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Tags       []string           `json:"tags,omitempty" patchStrategy:"merge"`
	Args       []string           `json:"args,omitempty"`
	Containers []smpContainer     `json:"containers,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Volume     *smpVolume         `json:"volume,omitempty" patchStrategy:"retainKeys"`
	Selector   map[string]string  `json:"selector,omitempty" patchStrategy:"replace"`
	Extra      any                `json:"extra,omitempty"`
	Raw        json.RawMessage    `json:"raw,omitempty"`
	Backends   map[string]smpPort `json:"backends,omitempty"`
}

type smpPort struct {
	Name     string `json:"name"`
	Port     int    `json:"port,omitempty"`
	Protocol string `json:"protocol,omitempty"`
}

type smpContainer struct {
	Name  string   `json:"name"`
	Image string   `json:"image,omitempty"`
	Env   []smpEnv `json:"env,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

type smpEnv struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

type smpVolume struct {
	Name     string   `json:"name,omitempty"`
	HostPath *smpPath `json:"hostPath,omitempty"`
	EmptyDir *smpPath `json:"emptyDir,omitempty"`
}

type smpPath struct {
	Path string `json:"path,omitempty"`
}

func smpSchema(t testing.TB) *patch.Schema {
	t.Helper()
	s, err := patch.SchemaOf(reflect.TypeFor[smpWidget]())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const smpOriginal = `{"metadata":{"name":"a","labels":{"app":"x"},"finalizers":["f1","f2"]},` +
	`"spec":{"color":"red","replicas":2,` +
	`"ports":[{"name":"http","port":80},{"name":"https","port":443},{"name":"metrics","port":9090}],` +
	`"tags":["a","b","c"],"args":["-v"],` +
	`"containers":[{"name":"app","image":"app:1","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}],` +
	`"volume":{"name":"v","hostPath":{"path":"/data"}},"selector":{"app":"x","tier":"web"},` +
	`"extra":{"k":{"a":1,"b":2},"l":[1,2]},"backends":{"one":{"name":"one","port":1}}}}`

// smpCases are the table of strategic merge patches, and the fuzz seeds.
// want is compared as JSON, whole or, if wantPath is set, at that path.
var smpCases = []struct {
	name     string
	original string // smpOriginal if empty
	doc      string
	wantPath string // dot-separated path into the result
	want     string
	wantErr  error
}{
	// Objects and scalars.
	{name: "scalar set", doc: `{"spec":{"color":"blue"}}`, wantPath: "spec.color", want: `"blue"`},
	{name: "null deletes", doc: `{"spec":{"color":null}}`, wantPath: "spec.color", want: `null`},
	{name: "null of an absent field", doc: `{"spec":{"nothing":null}}`, wantPath: "spec.nothing", want: `null`},
	{name: "map merges", doc: `{"metadata":{"labels":{"tier":"web","app":null}}}`, wantPath: "metadata.labels", want: `{"tier":"web"}`},
	{name: "new object drops its nulls", original: `{}`, doc: `{"spec":{"color":"x","replicas":null,"volume":{"name":null}}}`, want: `{"spec":{"color":"x","volume":{}}}`},
	{name: "integers keep their digits", doc: `{"spec":{"replicas":9007199254740993}}`, wantPath: "spec.replicas", want: `9007199254740993`},
	{name: "a float that is an integer", doc: `{"spec":{"replicas":3.0}}`, wantPath: "spec.replicas", want: `3`},
	{name: "a number beyond float64", doc: `{"spec":{"replicas":1e400}}`, wantErr: patch.ErrMalformed},
	{name: "an integer and a float in one set", original: `{"spec":{"tags":[1]}}`, doc: `{"spec":{"tags":[1.5]}}`, wantErr: patch.ErrMalformed},
	{name: "empty patch", doc: `{}`, want: smpOriginal},
	{name: "null patch", doc: `null`, want: smpOriginal},

	// Lists that merge by key, and their order.
	{name: "new item goes first", doc: `{"spec":{"ports":[{"name":"grpc","port":9000}]}}`, wantPath: "spec.ports",
		want: `[{"name":"grpc","port":9000},{"name":"http","port":80},{"name":"https","port":443},{"name":"metrics","port":9090}]`},
	{name: "changed item keeps its place", doc: `{"spec":{"ports":[{"name":"https","port":8443,"protocol":"TCP"}]}}`, wantPath: "spec.ports",
		want: `[{"name":"http","port":80},{"name":"https","port":8443,"protocol":"TCP"},{"name":"metrics","port":9090}]`},
	{name: "patch order wins over the server's", doc: `{"spec":{"ports":[{"name":"metrics"},{"name":"http"}]}}`, wantPath: "spec.ports",
		want: `[{"name":"https","port":443},{"name":"metrics","port":9090},{"name":"http","port":80}]`},
	{name: "an existing item in the patch keeps its place, new ones follow it", doc: `{"spec":{"ports":[{"name":"metrics"},{"name":"grpc"}]}}`, wantPath: "spec.ports",
		want: `[{"name":"http","port":80},{"name":"https","port":443},{"name":"metrics","port":9090},{"name":"grpc"}]`},
	{name: "null inside an item deletes its field", doc: `{"spec":{"ports":[{"name":"http","port":null}]}}`, wantPath: "spec.ports",
		want: `[{"name":"http"},{"name":"https","port":443},{"name":"metrics","port":9090}]`},
	{name: "nested lists merge", doc: `{"spec":{"containers":[{"name":"app","env":[{"name":"B","value":"3"},{"name":"C"}]}]}}`, wantPath: "spec.containers",
		want: `[{"name":"app","image":"app:1","env":[{"name":"A","value":"1"},{"name":"B","value":"3"},{"name":"C"}]}]`},
	{name: "list absent from the object", original: `{"spec":{}}`, doc: `{"spec":{"ports":[{"name":"x","port":null},{"name":"y","$patch":"delete"}]}}`, wantPath: "spec.ports", want: `[{"name":"x"}]`},

	// Directives.
	{name: "$patch delete of an item", doc: `{"spec":{"ports":[{"name":"https","$patch":"delete"}]}}`, wantPath: "spec.ports",
		want: `[{"name":"http","port":80},{"name":"metrics","port":9090}]`},
	{name: "$patch delete of an absent item", doc: `{"spec":{"ports":[{"name":"nope","$patch":"delete"}]}}`, wantPath: "spec.ports",
		want: `[{"name":"http","port":80},{"name":"https","port":443},{"name":"metrics","port":9090}]`},
	{name: "$patch replace of a list", doc: `{"spec":{"ports":[{"name":"only","port":1},{"$patch":"replace"}]}}`, wantPath: "spec.ports", want: `[{"name":"only","port":1}]`},
	{name: "$patch replace of an object", doc: `{"spec":{"volume":{"$patch":"replace","name":"w"}}}`, wantPath: "spec.volume", want: `{"name":"w"}`},
	{name: "$patch delete of an object", doc: `{"spec":{"volume":{"$patch":"delete"}}}`, wantPath: "spec.volume", want: `{}`},
	{name: "$patch merge of an object", doc: `{"metadata":{"labels":{"$patch":"merge","b":"c"}}}`, wantPath: "metadata.labels", want: `{"app":"x","b":"c"}`},
	{name: "$patch delete of the whole", doc: `{"$patch":"delete"}`, want: `{}`},
	{name: "$setElementOrder reorders", doc: `{"spec":{"$setElementOrder/ports":[{"name":"metrics"},{"name":"http"},{"name":"https"}]}}`, wantPath: "spec.ports",
		want: `[{"name":"metrics","port":9090},{"name":"http","port":80},{"name":"https","port":443}]`},
	{name: "$setElementOrder with new items", doc: `{"spec":{"$setElementOrder/ports":[{"name":"https"},{"name":"new"},{"name":"http"}],"ports":[{"name":"new","port":1}]}}`, wantPath: "spec.ports",
		want: `[{"name":"https","port":443},{"name":"new","port":1},{"name":"http","port":80},{"name":"metrics","port":9090}]`},
	{name: "$setElementOrder keeps a server item near its neighbour", doc: `{"spec":{"$setElementOrder/ports":[{"name":"metrics"},{"name":"https"}]}}`, wantPath: "spec.ports",
		want: `[{"name":"http","port":80},{"name":"metrics","port":9090},{"name":"https","port":443}]`},
	{name: "$setElementOrder of a set", doc: `{"spec":{"$setElementOrder/tags":["c","z","a"],"tags":["z"]}}`, wantPath: "spec.tags", want: `["b","c","z","a"]`},
	{name: "$setElementOrder of an empty list", original: `{"spec":{"tags":[]}}`, doc: `{"spec":{"$setElementOrder/tags":[]}}`, wantPath: "spec.tags", want: `[]`},
	{name: "$deleteFromPrimitiveList", doc: `{"spec":{"$deleteFromPrimitiveList/tags":["b","nope"]}}`, wantPath: "spec.tags", want: `["a","c"]`},
	{name: "$deleteFromPrimitiveList of finalizers", doc: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["f1"]}}`, wantPath: "metadata.finalizers", want: `["f2"]`},
	{name: "$deleteFromPrimitiveList with additions", doc: `{"spec":{"$deleteFromPrimitiveList/tags":["b"],"tags":["d"]}}`, wantPath: "spec.tags", want: `["d","a","c"]`},
	{name: "$retainKeys clears the others", doc: `{"spec":{"volume":{"$retainKeys":["name","emptyDir"],"emptyDir":{}}}}`, wantPath: "spec.volume", want: `{"name":"v","emptyDir":{}}`},
	{name: "$retainKeys with a null", doc: `{"spec":{"volume":{"$retainKeys":["name"],"hostPath":null}}}`, wantPath: "spec.volume", want: `{"name":"v"}`},

	// Sets, atomic lists, replace strategy.
	{name: "set union, new values first", doc: `{"spec":{"tags":["z","a"]}}`, wantPath: "spec.tags", want: `["z","a","b","c"]`},
	{name: "set duplicates collapse", original: `{"spec":{"tags":["a","a"]}}`, doc: `{"spec":{"tags":["b","b"]}}`, wantPath: "spec.tags", want: `["b","a"]`},
	{name: "atomic list replaced", doc: `{"spec":{"args":["-q"]}}`, wantPath: "spec.args", want: `["-q"]`},
	{name: "replace strategy map", doc: `{"spec":{"selector":{"app":"y"}}}`, wantPath: "spec.selector", want: `{"app":"y"}`},
	{name: "finalizers merge as a set", doc: `{"metadata":{"finalizers":["f3"]}}`, wantPath: "metadata.finalizers", want: `["f3","f1","f2"]`},

	// Untyped values and maps of objects.
	{name: "untyped merges as merge patch", doc: `{"spec":{"extra":{"k":{"a":null,"c":3},"l":[3]}}}`, wantPath: "spec.extra", want: `{"k":{"b":2,"c":3},"l":[3]}`},
	{name: "untyped keeps directives as data", doc: `{"spec":{"extra":{"k":{"$patch":"delete"}}}}`, wantPath: "spec.extra.k", want: `{"a":1,"b":2,"$patch":"delete"}`},
	{name: "raw message replaced", original: `{"spec":{"raw":[1]}}`, doc: `{"spec":{"raw":[2]}}`, wantPath: "spec.raw", want: `[2]`},
	{name: "map of objects merges", doc: `{"spec":{"backends":{"one":{"port":2},"two":{"name":"two"}}}}`, wantPath: "spec.backends", want: `{"one":{"name":"one","port":2},"two":{"name":"two"}}`},

	// Errors.
	{name: "not JSON", doc: `{`, wantErr: patch.ErrMalformed},
	{name: "not an object", doc: `[]`, wantErr: patch.ErrMalformed},
	{name: "trailing data", doc: `{} {}`, wantErr: patch.ErrMalformed},
	{name: "unknown $patch", doc: `{"spec":{"volume":{"$patch":"nope"}}}`, wantErr: patch.ErrMalformed},
	{name: "$patch not a string", doc: `{"spec":{"volume":{"$patch":1}}}`, wantErr: patch.ErrMalformed},
	{name: "$patch merge as a list item", doc: `{"spec":{"ports":[{"$patch":"merge"}]}}`, wantErr: patch.ErrMalformed},
	{name: "item without merge key", doc: `{"spec":{"ports":[{"port":1}]}}`, wantErr: patch.ErrMalformed},
	{name: "delete item without merge key", doc: `{"spec":{"ports":[{"$patch":"delete"}]}}`, wantErr: patch.ErrMalformed},
	{name: "merge key not a scalar", doc: `{"spec":{"ports":[{"name":{}}]}}`, wantErr: patch.ErrMalformed},
	{name: "null item in a merging list", doc: `{"spec":{"ports":[null]}}`, wantErr: patch.ErrMalformed},
	{name: "mixed items in a set", doc: `{"spec":{"tags":[1]}}`, wantErr: patch.ErrMalformed},
	{name: "list of lists", original: `{"spec":{"tags":[["a"]]}}`, doc: `{"spec":{"tags":[["b"]]}}`, wantErr: patch.ErrNotApplicable},
	{name: "original item without merge key", original: `{"spec":{"ports":[{"port":1}]}}`, doc: `{"spec":{"ports":[{"name":"a"}]}}`, wantErr: patch.ErrNotApplicable},
	{name: "list where an object belongs", doc: `{"spec":{"volume":[]}}`, wantErr: patch.ErrNotApplicable},
	{name: "object where a list belongs", doc: `{"spec":{"ports":{"name":"x"}}}`, wantErr: patch.ErrNotApplicable},
	{name: "object where a scalar belongs", doc: `{"spec":{"color":{}}}`, wantErr: patch.ErrNotApplicable},
	{name: "$retainKeys not a list", doc: `{"spec":{"volume":{"$retainKeys":"name"}}}`, wantErr: patch.ErrMalformed},
	{name: "$retainKeys leaves out a set field", doc: `{"spec":{"volume":{"$retainKeys":["name"],"emptyDir":{}}}}`, wantErr: patch.ErrMalformed},
	{name: "$deleteFromPrimitiveList without a field", doc: `{"spec":{"$deleteFromPrimitiveListtags":["a"]}}`, wantErr: patch.ErrMalformed},
	{name: "$deleteFromPrimitiveList of a scalar is ignored", doc: `{"spec":{"$deleteFromPrimitiveList/color":["red"]}}`, wantPath: "spec.color", want: `"red"`},
	{name: "$setElementOrder without a field", doc: `{"spec":{"$setElementOrder":["a"]}}`, wantErr: patch.ErrMalformed},
	{name: "$setElementOrder not a list", doc: `{"spec":{"$setElementOrder/tags":"a"}}`, wantErr: patch.ErrMalformed},
	{name: "$setElementOrder of an unknown field", doc: `{"spec":{"$setElementOrder/nope":["a"]}}`, wantErr: patch.ErrMalformed},
	{name: "$setElementOrder out of the patch's order", doc: `{"spec":{"$setElementOrder/ports":[{"name":"metrics"},{"name":"http"}],"ports":[{"name":"http"},{"name":"metrics"}]}}`, wantErr: patch.ErrMalformed},
	{name: "unknown field merged", original: `{"spec":{"bogus":{"a":1}}}`, doc: `{"spec":{"bogus":{"b":2}}}`, wantErr: patch.ErrMalformed},
}

func TestStrategicMergePatch(t *testing.T) {
	s := smpSchema(t)
	for _, tc := range smpCases {
		t.Run(tc.name, func(t *testing.T) {
			original := tc.original
			if original == "" {
				original = smpOriginal
			}
			got, err := s.Patch(patch.StrategicMergePatch, []byte(original), []byte(tc.doc))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v; result %s", err, tc.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				return
			}
			var result any
			if err := json.Unmarshal(got, &result); err != nil {
				t.Fatalf("not JSON: %s", got)
			}
			if tc.wantPath != "" {
				for _, k := range strings.Split(tc.wantPath, ".") {
					m, _ := result.(map[string]any)
					result = m[k]
				}
			}
			var want any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatalf("bad want %s", tc.want)
			}
			if !reflect.DeepEqual(result, want) {
				gotAt, _ := json.Marshal(result)
				t.Fatalf("at %q got %s\nwant %s", tc.wantPath, gotAt, tc.want)
			}
		})
	}
}

// TestStrategicMergePatchPorts is the case a Service's ports make: merged by
// name, deleted by directive, ordered by $setElementOrder.
func TestStrategicMergePatchPorts(t *testing.T) {
	s := smpSchema(t)
	original := `{"spec":{"ports":[{"name":"http","port":80},{"name":"https","port":443},{"name":"metrics","port":9090}]}}`
	doc := `{"spec":{"$setElementOrder/ports":[{"name":"grpc"},{"name":"https"},{"name":"http"}],` +
		`"ports":[{"name":"grpc","port":9000},{"name":"https","port":8443},{"name":"metrics","$patch":"delete"}]}}`
	got, err := s.Patch(patch.StrategicMergePatch, []byte(original), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"ports":[{"name":"grpc","port":9000},{"name":"https","port":8443},{"name":"http","port":80}]}}`
	if !jsonEqual(t, got, []byte(want)) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestSchemaPatchOtherTypes(t *testing.T) {
	s := smpSchema(t)
	for _, tc := range []struct {
		name    string
		typ     patch.Type
		doc     string
		want    string
		wantErr error
	}{
		{"merge patch replaces lists", patch.MergePatch, `{"spec":{"ports":[]}}`, `{"spec":{"ports":[]}}`, nil},
		{"json patch", patch.JSONPatch, `[{"op":"add","path":"/spec/color","value":"red"}]`, `{"spec":{"ports":[{"name":"a"}],"color":"red"}}`, nil},
		{"apply is not a patch", patch.ApplyYAML, `{}`, "", patch.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Patch(tc.typ, []byte(`{"spec":{"ports":[{"name":"a"}]}}`), []byte(tc.doc))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || !jsonEqual(t, got, []byte(tc.want)) {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// TestStrategicMergePatchDeep: nesting beyond what the codecs read is an
// error, not a stack overflow; nesting within it merges.
func TestStrategicMergePatchDeep(t *testing.T) {
	s := smpSchema(t)
	deep := func(n int) string {
		return `{"spec":{"extra":` + strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n) + `}}`
	}
	if _, err := s.Patch(patch.StrategicMergePatch, []byte(`{}`), []byte(deep(20000))); !errors.Is(err, patch.ErrMalformed) {
		t.Fatalf("20000 levels: err = %v, want ErrMalformed", err)
	}
	original := deep(9000)
	got, err := s.Patch(patch.StrategicMergePatch, []byte(original), []byte(deep(9000)))
	if err != nil {
		t.Fatalf("9000 levels: %v", err)
	}
	if !jsonEqual(t, got, []byte(original)) {
		t.Fatal("9000 levels: the result is not the original")
	}
}

func TestStrategicMergePatchNilSchema(t *testing.T) {
	var s *patch.Schema
	if _, err := s.Patch(patch.StrategicMergePatch, []byte(`{}`), []byte(`{}`)); !errors.Is(err, patch.ErrNotApplicable) {
		t.Fatalf("err = %v, want ErrNotApplicable", err)
	}
}

func FuzzStrategicMerge(f *testing.F) {
	for _, tc := range smpCases {
		original := tc.original
		if original == "" {
			original = smpOriginal
		}
		f.Add(original, tc.doc)
	}
	s := smpSchema(f)
	f.Fuzz(func(t *testing.T, original, doc string) {
		out, err := s.Patch(patch.StrategicMergePatch, []byte(original), []byte(doc))
		if err != nil {
			if !errors.Is(err, patch.ErrMalformed) && !errors.Is(err, patch.ErrNotApplicable) {
				t.Fatalf("error %v is neither ErrMalformed nor ErrNotApplicable", err)
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("the result is not a JSON object: %q: %v", out, err)
		}
	})
}
