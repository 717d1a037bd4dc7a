package patch

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/fuzzfill"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// treeInner has what typedTree builds below the root.
type treeInner struct {
	Name   string            `json:"name"`
	Count  int64             `json:"count,omitempty"`
	Small  uint8             `json:"small"`
	Flag   *bool             `json:"flag,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	At     kapi.Time         `json:"at,omitzero"`
	Micro  *kapi.MicroTime   `json:"micro,omitempty"`
	Tags   []string          `json:"tags"`
	Any    any               `json:"any,omitempty"`
	Next   *treeInner        `json:"next,omitempty"`
}

type treeEmbedded struct {
	Promoted string `json:"promoted,omitempty"`
	Hidden   int    `json:"name,omitempty"` // hidden by the outer name
}

// treeSample is an object with a field of each shape typedTree builds,
// and of some it gives up on (a float, bytes, a `json:",string"`, a value
// of an interface, a map with other keys).
type treeSample struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	*treeEmbedded
	Name    string                `json:"name,omitempty"`
	Spec    treeInner             `json:"spec"`
	Items   []treeInner           `json:"items,omitempty"`
	ByName  map[string]*treeInner `json:"byName"`
	Counts  map[string]int32      `json:"counts,omitempty"`
	Empty   struct{}              `json:"empty"`
	Ptrs    []*int                `json:"ptrs"`
	Rare    *treeRare             `json:"rare,omitempty"`
	Ignored string                `json:"-"`
}

// treeRare holds what typedTree leaves to the JSON.
type treeRare struct {
	Float  float64        `json:"float,omitempty"`
	Bytes  []byte         `json:"bytes,omitempty"`
	Quoted int            `json:"quoted,omitempty,string"`
	ByInt  map[int]string `json:"byInt,omitempty"`
	Array  [2]string      `json:"array"`
}

var treeChoices = fuzzfill.Choices{
	Strings:    []string{"", "a", "é", "a<b&c>", "line\nbreak", "\u2028", `say "hi"`, `back\slash`, "\x00\x1f", "日本語", "managedFields", "😀"},
	BadStrings: []string{"\xff", "x\xe2\x82", "\xed\xa0\x80"},
	Raw:        [][]byte{nil, []byte(`{}`), []byte(`{"f:a":{}}`)},
	Floats:     []float64{0, 1.5, 1e21, 1e-7, 123456789.125},
}

// checkTypedTree fails if typedTree builds of a random treeSample anything
// but what reading json.Marshal's JSON of it gives. It returns whether it
// built the tree.
func checkTypedTree(t *testing.T, data []byte) bool {
	t.Helper()
	v := new(treeSample)
	fuzzfill.New(data, &treeChoices).Fill(reflect.ValueOf(v).Elem())
	got, _, ok := typedTree(v, nil)
	b, err := json.Marshal(v)
	if err != nil {
		if ok {
			t.Fatalf("built a tree of a value json.Marshal refuses (%v): %v", err, got)
		}
		return false
	}
	want, err := decodeUnmanaged(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !ok {
		return false
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("JSON %s\nread  %#v\nbuilt %#v", b, want, got)
	}
	// Built again from hints: its own tree (all of it the hint's), and
	// the trees of values that differ from it here and there.
	if again, _, ok := typedTree(v, got); !ok || !sameTree(again, got) {
		t.Fatalf("JSON %s: built again from its own tree, not that tree: %v", b, again)
	}
	for i := range 3 {
		other := new(treeSample)
		changed := slices.Clone(data)
		for j := i; j < len(changed); j += 7 + i {
			changed[j] ^= byte(1 << i)
		}
		fuzzfill.New(changed, &treeChoices).Fill(reflect.ValueOf(other).Elem())
		hint, _, ok := typedTree(other, nil)
		if !ok {
			continue
		}
		if hinted, _, ok := typedTree(v, hint); !ok || !reflect.DeepEqual(hinted, want) {
			t.Fatalf("JSON %s\nread  %#v\nbuilt from a hint %#v", b, want, hinted)
		}
	}
	return true
}

// TestTypedTreeRandom holds typedTree to the reader on random values, and
// fails if it builds too few of them to mean anything.
func TestTypedTreeRandom(t *testing.T) {
	data := make([]byte, 512)
	built := 0
	const values = 3000
	for i := range values {
		fuzzfill.Input(data, uint64(i), 29)
		if checkTypedTree(t, data) {
			built++
		}
	}
	t.Logf("built %d of %d trees", built, values)
	if built < values/10 {
		t.Errorf("built %d of %d trees", built, values)
	}
}

func FuzzTypedTree(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("some bytes to fill a widget with"))
	f.Fuzz(func(t *testing.T, data []byte) { checkTypedTree(t, data) })
}

// TestTypedTreeGivesUp: what typedTree cannot tell json.Marshal's answer
// of is left to the JSON, and the root's metadata loses its managedFields
// only there.
func TestTypedTreeGivesUp(t *testing.T) {
	base := func() *treeSample {
		return &treeSample{ObjectMeta: kapi.ObjectMeta{Name: "x", ManagedFields: []kapi.ManagedFieldsEntry{{Manager: "m"}}},
			Spec: treeInner{Name: "y", Next: &treeInner{Name: "managed", Labels: map[string]string{"managedFields": "kept"}}}}
	}
	got, _, ok := typedTree(base(), nil)
	if !ok {
		t.Fatal("gave up on a plain object")
	}
	if _, has := got["metadata"].(map[string]any)["managedFields"]; has {
		t.Error("the root's managedFields kept")
	}
	if got["spec"].(map[string]any)["next"].(map[string]any)["labels"].(map[string]any)["managedFields"] != "kept" {
		t.Error("a label named managedFields lost")
	}
	for name, change := range map[string]func(*treeSample){
		"float":      func(s *treeSample) { s.Rare = &treeRare{Float: 1} },
		"bytes":      func(s *treeSample) { s.Rare = &treeRare{Bytes: []byte("x")} },
		"quoted":     func(s *treeSample) { s.Rare = &treeRare{} },
		"interface":  func(s *treeSample) { s.Spec.Any = "x" },
		"bad string": func(s *treeSample) { s.Spec.Name = "\xff" },
		"bad key":    func(s *treeSample) { s.Counts = map[string]int32{"\xff": 1} },
		"bad label":  func(s *treeSample) { s.Spec.Labels = map[string]string{"a": "\xff"} },
	} {
		s := base()
		change(s)
		if tree, _, ok := typedTree(s, nil); ok {
			t.Errorf("%s: built %v", name, tree)
		}
	}
	if _, _, ok := typedTree(treeSample{}, nil); ok {
		t.Error("built a tree of a struct that is not a pointer")
	}
}

// TestTypedTreeHintShares: a tree built from a hint (the object's tree
// before a write) takes the hint's maps and lists where they are equal,
// below a part that changed as well as beside it, and makes the rest.
func TestTypedTreeHintShares(t *testing.T) {
	before := &treeSample{ObjectMeta: kapi.ObjectMeta{Name: "x", ResourceVersion: "1", Labels: map[string]string{"a": "b"}},
		Spec: treeInner{Name: "y", Count: 1, Tags: []string{"t"}, Next: &treeInner{Name: "z", Labels: map[string]string{"c": "d"}}}}
	hint, _, ok := typedTree(before, nil)
	if !ok {
		t.Fatal("gave up on a plain object")
	}
	after := *before
	after.ResourceVersion = "2"
	after.Spec.Count = 2
	got, _, ok := typedTree(&after, hint)
	if !ok {
		t.Fatal("gave up on a plain object")
	}
	part := func(tree map[string]any, path ...string) any {
		var v any = tree
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		return v
	}
	for _, path := range [][]string{{"metadata", "labels"}, {"spec", "tags"}, {"spec", "next"}} {
		if !sameTree(part(got, path...), part(hint, path...)) {
			t.Errorf("%v: made again, not the hint's", path)
		}
	}
	for _, path := range [][]string{{}, {"metadata"}, {"spec"}} {
		if sameTree(part(got, path...), part(hint, path...)) {
			t.Errorf("%v: the hint's, though it changed", path)
		}
	}
	if want, _, _ := typedTree(&after, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("built from a hint %v, without %v", got, want)
	}
}

// TestTypedTreeHintAllocations: an object whose tree is all its hint's (an
// apply's live object as the apply before read it, but for what changed)
// takes the hint's lists as they are: its tree costs one allocation, the
// build's count, which the plans' closures take by pointer.
func TestTypedTreeHintAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
	obj := &treeSample{ObjectMeta: kapi.ObjectMeta{Name: "x", Finalizers: []string{"f"}},
		Spec: treeInner{Name: "y", Tags: []string{"a", "b"}, Next: &treeInner{Tags: []string{"c"}}}}
	hint, _, ok := typedTree(obj, nil)
	if !ok {
		t.Fatal("gave up on a plain object")
	}
	var got map[string]any
	allocs := testing.AllocsPerRun(100, func() { got, _, _ = typedTree(obj, hint) })
	if !sameTree(got, hint) {
		t.Fatal("the tree of an object equal to its hint is not the hint")
	}
	if allocs > 1 {
		t.Errorf("the tree of an object equal to its hint allocates %v times, want 1", allocs)
	}
}
