package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/patch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// The types of the differential test: Kubernetes-style patch tags on every
// kind of field strategic merge patch treats differently.
type smpObject struct {
	Metadata smpMeta `json:"metadata,omitempty"`
	Spec     smpSpec `json:"spec,omitempty"`
}

type smpMeta struct {
	Name       string            `json:"name,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Finalizers []string          `json:"finalizers,omitempty" patchStrategy:"merge"`
}

type smpSpec struct {
	Color      string            `json:"color,omitempty"`
	Replicas   *int32            `json:"replicas,omitempty"`
	Ports      []smpPort         `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Tags       []string          `json:"tags,omitempty" patchStrategy:"merge"`
	Numbers    []int             `json:"numbers,omitempty" patchStrategy:"merge"`
	Args       []string          `json:"args,omitempty"`
	Containers []smpContainer    `json:"containers,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Volume     *smpVolume        `json:"volume,omitempty" patchStrategy:"retainKeys"`
	Selector   map[string]string `json:"selector,omitempty" patchStrategy:"replace"`
	Template   *smpTemplate      `json:"template,omitempty"`
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
	Args  []string `json:"args,omitempty"`
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

type smpTemplate struct {
	Labels map[string]string `json:"labels,omitempty"`
	Ports  []smpPort         `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

// smpOutcome is what one implementation made of a patch.
type smpOutcome struct {
	out      any // the result, decoded
	err      error
	panicked bool
	typed    bool // the result decodes into smpObject
}

func kapiPatch(t *testing.T, s *patch.Schema, original, doc string) smpOutcome {
	t.Helper()
	out, err := s.Patch(patch.StrategicMergePatch, []byte(original), []byte(doc))
	if err != nil {
		if !errors.Is(err, patch.ErrMalformed) && !errors.Is(err, patch.ErrNotApplicable) {
			t.Fatalf("kapi: error %v is neither ErrMalformed nor ErrNotApplicable\noriginal %s\npatch    %s", err, original, doc)
		}
		return smpOutcome{err: err}
	}
	return decodeOutcome(t, "kapi", out)
}

func apimachineryPatch(t *testing.T, original, doc string) (o smpOutcome) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			o = smpOutcome{err: fmt.Errorf("panic: %v", r), panicked: true}
		}
	}()
	out, err := strategicpatch.StrategicMergePatch([]byte(original), []byte(doc), smpObject{})
	if err != nil {
		return smpOutcome{err: err}
	}
	return decodeOutcome(t, "apimachinery", out)
}

func decodeOutcome(t *testing.T, who string, out []byte) smpOutcome {
	t.Helper()
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s wrote invalid JSON %q: %v", who, out, err)
	}
	return smpOutcome{out: v, typed: json.Unmarshal(out, new(smpObject)) == nil}
}

// The deliberate differences: where apimachinery fails (or panics) and kapi
// does what the patch asks.
var deliberate = []struct {
	name string
	// applies says whether the difference explains apimachinery's error.
	applies func(doc string, apimachineryErr error) bool
}{
	{"$patch: merge on an object is the default strategy said out loud; apimachinery refuses it", func(doc string, err error) bool {
		return strings.Contains(doc, `"$patch":"merge"`) && strings.Contains(err.Error(), "unknown patch type: merge")
	}},
	{"$setElementOrder of a list that is empty or absent on both sides orders nothing; apimachinery fails", func(doc string, err error) bool {
		return strings.Contains(err.Error(), "no elements in any of the given slices")
	}},
	{"apimachinery panics (comparing or hashing objects, a null first item); kapi answers an error or a result", func(doc string, err error) bool {
		return strings.HasPrefix(err.Error(), "panic: ")
	}},
}

// What compare says of a case that is no difference.
const (
	bothSucceeded = "same result"
	bothFailed    = "both fail"
)

// compare requires kapi's smpOutcome to be apimachinery's: the same result, or
// both failing. Where apimachinery's result would not decode into the type
// (kube-apiserver then answers 422), kapi may fail instead. It returns what
// the case came to: bothSucceeded, bothFailed or a deliberate difference.
//
// apimachinery applies the fields of a patch in Go's random map order, which
// shows when a list is both merged and deleted from
// ($deleteFromPrimitiveList); for such a patch any of the outcomes of a few
// runs will do. kapi deletes first, as apimachinery mostly does.
func compare(t *testing.T, s *patch.Schema, original, doc string) string {
	t.Helper()
	got := kapiPatch(t, s, original, doc)
	runs := 1
	if strings.Contains(doc, deleteFromPrimitiveList) {
		runs = 64
	}
	var problem string
	for range runs {
		want := apimachineryPatch(t, original, doc)
		var result string
		result, problem = judge(want, got, doc)
		if problem == "" {
			return result
		}
		problem = fmt.Sprintf("%s\noriginal     %s\npatch        %s", problem, original, doc)
	}
	t.Error(problem)
	return ""
}

const deleteFromPrimitiveList = `"$deleteFromPrimitiveList/`

// judge compares one smpOutcome of each: what the case came to, or the problem.
func judge(want, got smpOutcome, doc string) (result, problem string) {
	switch {
	case want.err != nil && got.err != nil:
		return bothFailed, ""
	case want.err == nil && got.err == nil:
		if reflect.DeepEqual(want.out, got.out) {
			return bothSucceeded, ""
		}
		if reorderedAfterDelete(doc) && reflect.DeepEqual(byName(want.out), byName(got.out)) {
			return serverOrderDifference, ""
		}
		return "", fmt.Sprintf("results differ\napimachinery %s\nkapi         %s", text(want.out), text(got.out))
	case want.err == nil:
		if !want.typed {
			return bothFailed, "" // kube-apiserver fails too, converting the result to the type
		}
		return "", fmt.Sprintf("kapi failed where apimachinery did not\napimachinery %s\nkapi error   %v", text(want.out), got.err)
	}
	for _, d := range deliberate {
		if d.applies(doc, want.err) {
			return d.name, ""
		}
	}
	return "", fmt.Sprintf("apimachinery failed where kapi did not\napimachinery %v\nkapi         %s", want.err, text(got.out))
}

func text(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func diffSchema(t *testing.T) *patch.Schema {
	t.Helper()
	s, err := patch.SchemaOf(reflect.TypeFor[smpObject]())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const diffOriginal = `{"metadata":{"name":"a","labels":{"app":"x","tier":"web"},"finalizers":["f1","f2"]},` +
	`"spec":{"color":"red","replicas":2,"ports":[{"name":"http","port":80},{"name":"https","port":443},{"name":"metrics","port":9090}],` +
	`"tags":["a","b","c"],"numbers":[1,2,3],"args":["-v"],` +
	`"containers":[{"name":"app","image":"app:1","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},{"name":"side","image":"side:1"}],` +
	`"volume":{"name":"v","hostPath":{"path":"/data"}},"selector":{"app":"x","tier":"web"},"template":{"labels":{"a":"b"},"ports":[{"name":"p","port":1}]}}}`

// TestStrategicMergePatchMatchesApimachinery runs named cases through kapi
// and apimachinery.
func TestStrategicMergePatchMatchesApimachinery(t *testing.T) {
	s := diffSchema(t)
	for _, tc := range []struct{ name, original, doc string }{
		{"set a scalar", diffOriginal, `{"spec":{"color":"blue"}}`},
		{"null deletes", diffOriginal, `{"spec":{"color":null,"template":null},"metadata":{"labels":{"tier":null}}}`},
		{"add a port goes first", diffOriginal, `{"spec":{"ports":[{"name":"grpc","port":9000}]}}`},
		{"change a port keeps its place", diffOriginal, `{"spec":{"ports":[{"name":"https","port":8443}]}}`},
		{"a new port after a known one follows it", diffOriginal, `{"spec":{"ports":[{"name":"metrics"},{"name":"grpc"}]}}`},
		{"new and changed ports", diffOriginal, `{"spec":{"ports":[{"name":"grpc","port":9000},{"name":"https","port":8443},{"name":"z"}]}}`},
		{"delete a port", diffOriginal, `{"spec":{"ports":[{"name":"http","$patch":"delete"}]}}`},
		{"delete a port not there", diffOriginal, `{"spec":{"ports":[{"name":"nope","$patch":"delete"}]}}`},
		{"replace the ports", diffOriginal, `{"spec":{"ports":[{"name":"only","port":1},{"$patch":"replace"}]}}`},
		{"set element order", diffOriginal, `{"spec":{"$setElementOrder/ports":[{"name":"metrics"},{"name":"http"},{"name":"https"}]}}`},
		{"set element order with a change", diffOriginal, `{"spec":{"$setElementOrder/ports":[{"name":"metrics"},{"name":"new"},{"name":"http"}],"ports":[{"name":"new","port":1},{"name":"http","port":8080}]}}`},
		{"set element order with a delete", diffOriginal, `{"spec":{"$setElementOrder/ports":[{"name":"metrics"},{"name":"http"}],"ports":[{"name":"https","$patch":"delete"}]}}`},
		{"set element order out of order", diffOriginal, `{"spec":{"$setElementOrder/ports":[{"name":"metrics"},{"name":"http"}],"ports":[{"name":"http","port":1},{"name":"metrics","port":2}]}}`},
		{"set element order of a set", diffOriginal, `{"spec":{"$setElementOrder/tags":["c","z","a"],"tags":["z"]}}`},
		{"add to a set", diffOriginal, `{"spec":{"tags":["z","a"],"numbers":[4,1]}}`},
		{"delete from a set", diffOriginal, `{"spec":{"$deleteFromPrimitiveList/tags":["b","nope"]},"metadata":{"$deleteFromPrimitiveList/finalizers":["f1"]}}`},
		{"delete from and add to a set", diffOriginal, `{"spec":{"$deleteFromPrimitiveList/tags":["b"],"tags":["d"]}}`},
		{"atomic list replaced", diffOriginal, `{"spec":{"args":["-q","-v"]}}`},
		{"nested merge", diffOriginal, `{"spec":{"containers":[{"name":"app","env":[{"name":"C","value":"3"},{"name":"A","$patch":"delete"}]}]}}`},
		{"retain keys", diffOriginal, `{"spec":{"volume":{"$retainKeys":["name","emptyDir"],"emptyDir":{}}}}`},
		{"retain keys not listing a set field", diffOriginal, `{"spec":{"volume":{"$retainKeys":["name"],"emptyDir":{}}}}`},
		{"replace strategy on a map", diffOriginal, `{"spec":{"selector":{"app":"y"}}}`},
		{"$patch replace on an object", diffOriginal, `{"spec":{"template":{"$patch":"replace","labels":{"c":"d"}}}}`},
		{"$patch delete on an object", diffOriginal, `{"spec":{"template":{"$patch":"delete"}}}`},
		{"$patch delete at the top", diffOriginal, `{"$patch":"delete"}`},
		{"directives on an absent field", `{"metadata":{"name":"a"}}`, `{"spec":{"ports":[{"name":"x","port":null},{"name":"y","$patch":"delete"}],"template":{"$patch":"replace","labels":{}}}}`},
		{"unknown directive", diffOriginal, `{"spec":{"template":{"$patch":"nope"}}}`},
		{"merge directive on a list item", diffOriginal, `{"spec":{"ports":[{"$patch":"merge"}]}}`},
		{"item without its merge key", diffOriginal, `{"spec":{"ports":[{"port":1}]}}`},
		{"delete item without its merge key", diffOriginal, `{"spec":{"ports":[{"$patch":"delete"}]}}`},
		{"list where an object belongs", diffOriginal, `{"spec":{"template":[]}}`},
		{"object where a list belongs", diffOriginal, `{"spec":{"ports":{"name":"x"}}}`},
		{"bad retain keys", diffOriginal, `{"spec":{"volume":{"$retainKeys":"name"}}}`},
		{"bad delete list name", diffOriginal, `{"spec":{"$deleteFromPrimitiveListtags":["a"]}}`},
		{"bad set element order name", diffOriginal, `{"spec":{"$setElementOrder":["a"]}}`},
		{"set element order not a list", diffOriginal, `{"spec":{"$setElementOrder/tags":"a"}}`},
		{"mixed set items", diffOriginal, `{"spec":{"tags":[1]}}`},
		{"list of lists", `{"spec":{"tags":[["a"]]}}`, `{"spec":{"tags":[["b"]]}}`},
		{"not an object", diffOriginal, `[]`},
		{"not JSON", diffOriginal, `{`},
		{"null patch", diffOriginal, `null`},
		{"unknown field merged", `{"spec":{"bogus":{"a":1}}}`, `{"spec":{"bogus":{"b":2}}}`},
		{"integers and floats", diffOriginal, `{"spec":{"replicas":3.0,"numbers":[4,5]}}`},
		{"an integer and a float in one set", diffOriginal, `{"spec":{"numbers":[1.5]}}`},
		{"a float equal to an integer is another value", `{"spec":{"ports":[{"name":"a","port":1}]}}`, `{"spec":{"$setElementOrder/numbers":[1.0],"numbers":[1.0,2e0]}}`},
		{"a number beyond float64", diffOriginal, `{"spec":{"replicas":1e400}}`},
		{"duplicate port names", `{"spec":{"ports":[{"name":"a","port":1},{"name":"a","port":2},{"name":"b"}]}}`, `{"spec":{"ports":[{"name":"a","port":3},{"name":"c"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Log(compare(t, s, tc.original, tc.doc))
		})
	}
}

// TestStrategicMergePatchDeliberateDifferences shows where kapi does what
// the patch asks and apimachinery does not.
func TestStrategicMergePatchDeliberateDifferences(t *testing.T) {
	s := diffSchema(t)
	for _, tc := range []struct{ name, original, doc, want string }{
		{"$patch merge", diffOriginal, `{"spec":{"template":{"$patch":"merge","labels":{"c":"d"}}}}`, `{"a":"b","c":"d"}`},
		{"set element order of an empty list", `{"spec":{"tags":[]}}`, `{"spec":{"$setElementOrder/tags":[]}}`, `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if a := apimachineryPatch(t, tc.original, tc.doc); a.err == nil {
				t.Errorf("apimachinery no longer fails: %s; drop the difference", text(a.out))
			}
			if d := compare(t, s, tc.original, tc.doc); d == bothSucceeded || d == bothFailed {
				t.Errorf("no deliberate difference explains the case")
			}
			got := kapiPatch(t, s, tc.original, tc.doc)
			if got.err != nil {
				t.Fatal(got.err)
			}
			if !strings.Contains(text(got.out), tc.want) {
				t.Errorf("kapi = %s, want it to hold %s", text(got.out), tc.want)
			}
		})
	}
}

// TestStrategicMergePatchRandomMatchesApimachinery runs a few thousand
// generated originals and patches through both.
func TestStrategicMergePatchRandomMatchesApimachinery(t *testing.T) {
	s := diffSchema(t)
	const cases = 5000
	outcomes := map[string]int{}
	failed := 0
	for i := range cases {
		g := generator{r: rand.New(rand.NewPCG(uint64(i), 42))}
		original, p := g.object(), g.patchObject()
		if g.chance(0.05) {
			original = g.mutate(original).(map[string]any)
		}
		if g.chance(0.3) {
			p = g.mutate(p).(map[string]any)
		}
		if d := compare(t, s, text(original), text(p)); d != "" {
			outcomes[d]++
		}
		if t.Failed() {
			if failed++; failed > 10 {
				t.Fatal("too many differences")
			}
		}
	}
	t.Logf("%d cases: %v", cases, outcomes)
	if outcomes[bothSucceeded] < cases/2 || outcomes[bothFailed] < cases/100 {
		t.Errorf("the generator no longer makes enough of each case: %v", outcomes)
	}
}

// generator makes objects of smpObject's shape and patches for them, mostly
// well-formed, sometimes not.
type generator struct {
	r     *rand.Rand
	ports []string // the port names in the original
}

func (g *generator) chance(p float64) bool { return g.r.Float64() < p }

func (g *generator) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

var portNames = []string{"a", "b", "c", "d", "e", "f"}

func (g *generator) names(max int) []string {
	n := g.r.IntN(max + 1)
	perm := g.r.Perm(len(portNames))
	var out []string
	for _, i := range perm[:min(n, len(portNames))] {
		out = append(out, portNames[i])
	}
	return out
}

func (g *generator) object() map[string]any {
	spec := map[string]any{}
	if g.chance(0.5) {
		spec["color"] = g.pick("red", "green")
	}
	if g.chance(0.8) {
		g.ports = g.names(5)
		spec["ports"] = g.portList(g.ports)
	}
	if g.chance(0.7) {
		spec["tags"] = toAny(g.names(4))
	}
	if g.chance(0.3) {
		spec["numbers"] = []any{1, 2, 3}[:g.r.IntN(4)]
	}
	if g.chance(0.3) {
		spec["args"] = toAny(g.names(2))
	}
	if g.chance(0.5) {
		var cs []any
		for _, n := range g.names(2) {
			cs = append(cs, map[string]any{"name": n, "image": n + ":1", "env": g.envList(g.names(3))})
		}
		spec["containers"] = cs
	}
	if g.chance(0.5) {
		v := map[string]any{"name": "v"}
		v[g.pick("hostPath", "emptyDir")] = map[string]any{"path": "/p"}
		spec["volume"] = v
	}
	if g.chance(0.3) {
		spec["selector"] = map[string]any{"app": "x"}
	}
	if g.chance(0.3) {
		spec["template"] = map[string]any{"labels": map[string]any{"a": "b"}, "ports": g.portList(g.names(2))}
	}
	meta := map[string]any{"name": "o"}
	if g.chance(0.5) {
		meta["finalizers"] = toAny(g.names(3))
	}
	if g.chance(0.5) {
		meta["labels"] = map[string]any{"x": "1", "y": "2"}
	}
	return map[string]any{"metadata": meta, "spec": spec}
}

func toAny(xs []string) []any {
	out := []any{}
	for _, x := range xs {
		out = append(out, x)
	}
	return out
}

func (g *generator) portList(names []string) []any {
	out := []any{}
	for _, n := range names {
		out = append(out, map[string]any{"name": n, "port": g.r.IntN(3)})
	}
	return out
}

func (g *generator) envList(names []string) []any {
	out := []any{}
	for _, n := range names {
		out = append(out, map[string]any{"name": n, "value": g.pick("1", "2")})
	}
	return out
}

func (g *generator) patchObject() map[string]any {
	p := map[string]any{}
	spec := map[string]any{}
	if g.chance(0.3) {
		spec["color"] = g.nullOr("blue")
	}
	if g.chance(0.7) {
		g.mergeList(spec, "ports", g.ports, func(n string) any { return map[string]any{"name": n, "port": g.nullOr(g.r.IntN(3))} })
	}
	if g.chance(0.5) {
		g.setList(spec, "tags")
	}
	if g.chance(0.2) {
		g.setList(spec, "numbers")
	}
	if g.chance(0.2) {
		spec["args"] = g.nullOr(toAny(g.names(2)))
	}
	if g.chance(0.4) {
		g.mergeList(spec, "containers", portNames[:3], func(n string) any {
			c := map[string]any{"name": n}
			if g.chance(0.5) {
				c["image"] = g.nullOr(n + ":2")
			}
			if g.chance(0.5) {
				g.mergeList(c, "env", portNames[:3], func(n string) any { return map[string]any{"name": n, "value": g.nullOr("3")} })
			}
			return c
		})
	}
	if g.chance(0.3) {
		v := map[string]any{}
		which := g.pick("hostPath", "emptyDir", "name")
		if which == "name" {
			v[which] = "w"
		} else {
			v[which] = map[string]any{"path": g.nullOr("/q")}
		}
		if g.chance(0.8) {
			keys := []any{which}
			if g.chance(0.5) {
				keys = append(keys, "name")
			}
			if g.chance(0.1) {
				keys = keys[:0]
			}
			v["$retainKeys"] = keys
		}
		spec["volume"] = g.directive(v)
	}
	if g.chance(0.2) {
		spec["selector"] = g.nullOr(map[string]any{"tier": "web"})
	}
	if g.chance(0.3) {
		t := map[string]any{"labels": g.nullOr(map[string]any{"c": g.nullOr("d")})}
		if g.chance(0.5) {
			g.mergeList(t, "ports", portNames[:2], func(n string) any { return map[string]any{"name": n} })
		}
		spec["template"] = g.directive(t)
	}
	if g.chance(0.05) {
		spec["template"] = []any{} // a list where an object belongs
	}
	if g.chance(0.05) {
		spec["ports"] = map[string]any{"name": "x"} // an object where a list belongs
	}
	if len(spec) > 0 || g.chance(0.5) {
		p["spec"] = g.directive(spec)
	}
	if g.chance(0.3) {
		meta := map[string]any{}
		if g.chance(0.5) {
			meta["labels"] = map[string]any{"x": g.nullOr("3"), "z": "4"}
		}
		if g.chance(0.5) {
			g.setList(meta, "finalizers")
		}
		p["metadata"] = meta
	}
	return p
}

func (g *generator) nullOr(v any) any {
	if g.chance(0.1) {
		return nil
	}
	return v
}

// directive sometimes gives an object a $patch directive, mostly a valid one.
func (g *generator) directive(m map[string]any) any {
	if g.chance(0.1) {
		m["$patch"] = g.pick("replace", "delete", "replace", "delete", "merge", "bogus")
	}
	return m
}

// mergeList puts into m a patch of the merging list field: changed, new and
// deleted items, sometimes a replace directive and an element order, and
// now and then an item without its merge key.
func (g *generator) mergeList(m map[string]any, field string, existing []string, item func(string) any) {
	if g.chance(0.05) {
		m[field] = nil
		return
	}
	items := []any{}
	var named []string
	for _, n := range g.names(3) {
		switch {
		case g.chance(0.2):
			items = append(items, map[string]any{"name": n, "$patch": "delete"})
		default:
			items = append(items, item(n))
			named = append(named, n)
		}
	}
	if g.chance(0.05) {
		items = append(items, map[string]any{"$patch": "replace"})
	}
	if g.chance(0.02) {
		items = append(items, map[string]any{"port": 1})
	}
	if g.chance(0.02) {
		items = append(items, map[string]any{"$patch": g.pick("merge", "bogus")})
	}
	if len(items) > 0 || g.chance(0.5) {
		m[field] = items
	}
	if g.chance(0.4) {
		// An order holding the patch's items in their order, and others.
		order := []any{}
		rest := slices.DeleteFunc(g.names(4), func(n string) bool { return slices.Contains(named, n) })
		i := 0
		for _, n := range named {
			for i < len(rest) && g.chance(0.5) {
				order = append(order, map[string]any{"name": rest[i]})
				i++
			}
			order = append(order, map[string]any{"name": n})
		}
		for ; i < len(rest); i++ {
			order = append(order, map[string]any{"name": rest[i]})
		}
		if g.chance(0.1) {
			slices.Reverse(order) // out of order, if there are two items
		}
		m["$setElementOrder/"+field] = order
	}
}

// setList puts into m a patch of a set: additions, deletions (none of them
// also an addition, as kubectl writes them) and sometimes an element order.
func (g *generator) setList(m map[string]any, field string) {
	value := func(n string) any {
		if field == "numbers" {
			if g.chance(0.05) {
				return float64(strings.Index("abcdef", n)) + 0.5 // a float among integers
			}
			return float64(strings.Index("abcdef", n))
		}
		return n
	}
	add, del := []any{}, []any{}
	for _, n := range g.names(3) {
		if g.chance(0.3) {
			del = append(del, value(n))
		} else {
			add = append(add, value(n))
		}
	}
	if len(add) > 0 || g.chance(0.3) {
		m[field] = add
	}
	if len(del) > 0 {
		m["$deleteFromPrimitiveList/"+field] = del
	}
	if g.chance(0.3) {
		order := slices.Clone(add)
		for _, n := range g.names(2) {
			if !slices.Contains(order, value(n)) {
				order = slices.Insert(order, g.r.IntN(len(order)+1), value(n))
			}
		}
		m["$setElementOrder/"+field] = order
	}
	if g.chance(0.02) {
		m[field] = []any{map[string]any{"$patch": "replace"}}
	}
}

// serverOrderDifference is the one difference in a result rather than in
// failing. With $setElementOrder, both place the object's items that the
// order leaves out (server-only items) among the patch's by where they stood
// in the object's list. apimachinery reads that list after it has edited it
// in place: a deletion shifts the items after it, and an added item is
// written into the slot freed. A server-only item then compares as before
// an added item it followed, and can move ahead of items it followed.
// kapi compares with the object's list as it was.
const serverOrderDifference = "$setElementOrder with a deletion: apimachinery orders server-only items by a list it has edited in place"

// reorderedAfterDelete says whether a patch orders a list it also deletes from.
func reorderedAfterDelete(doc string) bool {
	return strings.Contains(doc, `"$setElementOrder/`) && strings.Contains(doc, `"$patch":"delete"`)
}

// byName is v with every list of named objects sorted by name.
func byName(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = byName(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = byName(x)
		}
		slices.SortStableFunc(out, func(a, b any) int {
			am, _ := a.(map[string]any)
			bm, _ := b.(map[string]any)
			an, _ := am["name"].(string)
			bn, _ := bm["name"].(string)
			return strings.Compare(an, bn)
		})
		return out
	}
	return v
}

// mutate replaces one value somewhere in v (not v itself) with a value of
// another shape or a misplaced directive.
func (g *generator) mutate(v any) any {
	var spots []func(any)
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				spots = append(spots, func(n any) { v[k] = n })
				walk(x)
			}
			spots = append(spots, func(n any) { v["$patch"] = n })
		case []any:
			for i, x := range v {
				spots = append(spots, func(n any) { v[i] = n })
				walk(x)
			}
		}
	}
	walk(v)
	if len(spots) == 0 {
		return v
	}
	// Visiting a map is random; sort the spots' effect out by picking with
	// the seeded source from a list built in a random order but applied once.
	values := []any{nil, "x", 1.0, true, []any{}, map[string]any{}, []any{"a"}, []any{nil},
		[]any{map[string]any{"name": "a"}}, []any{map[string]any{"$patch": "delete"}},
		[]any{map[string]any{"$patch": "replace"}}, map[string]any{"$patch": "replace"},
		map[string]any{"$patch": "delete"}, []any{[]any{"a"}}, map[string]any{"name": map[string]any{}},
		"replace", "delete", []any{map[string]any{"name": 1.0}, map[string]any{"name": "a"}}}
	spots[g.r.IntN(len(spots))](values[g.r.IntN(len(values))])
	return v
}

// diffExtras has the fields whose merge kapi defines where apimachinery
// cannot: maps of objects and untyped values.
type diffExtras struct {
	Backends map[string]smpPort `json:"backends,omitempty"`
	Extra    any                `json:"extra,omitempty"`
}

// TestStrategicMergePatchTypeDifferences shows the deliberate differences
// that come from the type rather than the patch.
func TestStrategicMergePatchTypeDifferences(t *testing.T) {
	s, err := patch.SchemaOf(reflect.TypeFor[diffExtras]())
	if err != nil {
		t.Fatal(err)
	}
	const original = `{"backends":{"a":{"name":"a","port":1}},"extra":{"k":{"x":1},"l":[1]}}`
	for _, tc := range []struct {
		name, doc, want   string
		apimachineryFails bool
	}{
		{"a map's object values merge; apimachinery cannot look up their fields",
			`{"backends":{"a":{"port":2}}}`, `{"backends":{"a":{"name":"a","port":2}}}`, true},
		{"untyped objects merge as merge patch; apimachinery cannot look up their fields",
			`{"extra":{"k":{"y":2}}}`, `{"extra":{"k":{"x":1,"y":2},"l":[1]}}`, true},
		{"untyped lists are replaced; apimachinery wants a slice type",
			`{"extra":{"l":[2]}}`, `{"extra":{"k":{"x":1},"l":[2]}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.Patch(patch.StrategicMergePatch, []byte(original), []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			got, want := decodeExact(t, out), decodeExact(t, []byte(tc.want))
			for k, v := range want {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("kapi %s = %v, want %v", k, got[k], v)
				}
			}
			am, err := strategicpatch.StrategicMergePatch([]byte(original), []byte(tc.doc), diffExtras{})
			switch {
			case tc.apimachineryFails && err == nil:
				t.Errorf("apimachinery no longer fails (%s); drop the difference", am)
			case !tc.apimachineryFails && err != nil:
				t.Errorf("apimachinery: %v", err)
			case !tc.apimachineryFails && reflect.DeepEqual(decodeExact(t, am), got):
				t.Errorf("apimachinery now gives kapi's result %s; drop the difference", am)
			}
		})
	}
}

func decodeExact(t *testing.T, data []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("not JSON: %s", data)
	}
	return m
}

// FuzzStrategicMergeMatchesApimachinery holds arbitrary patches of the
// table's originals to the differential test's rule.
func FuzzStrategicMergeMatchesApimachinery(f *testing.F) {
	f.Add(diffOriginal, `{"spec":{"ports":[{"name":"grpc","port":9000},{"name":"http","$patch":"delete"}]}}`)
	f.Add(diffOriginal, `{"spec":{"$setElementOrder/ports":[{"name":"metrics"},{"name":"new"}],"ports":[{"name":"new"}]}}`)
	f.Add(diffOriginal, `{"spec":{"$deleteFromPrimitiveList/tags":["b"],"tags":["d"],"$setElementOrder/tags":["d","c"]}}`)
	f.Add(diffOriginal, `{"spec":{"volume":{"$retainKeys":["name","emptyDir"],"emptyDir":{}},"template":{"$patch":"replace"}}}`)
	f.Add(diffOriginal, `{"spec":{"containers":[{"name":"app","env":[{"name":"C"},{"$patch":"replace"}]}]}}`)
	s, err := patch.SchemaOf(reflect.TypeFor[smpObject]())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, original, doc string) {
		compare(t, s, original, doc)
	})
}
