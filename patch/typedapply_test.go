package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// typedWidget is a type the typed apply takes (typedValid): its list
// items are always named.
type typedWidget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            typedSpec `json:"spec,omitempty"`
	Status          struct {
		Phase      string           `json:"phase,omitempty"`
		Conditions []kapi.Condition `json:"conditions,omitempty" listType:"map" listMapKey:"type"`
	} `json:"status,omitempty"`
}

type typedSpec struct {
	Replicas *int32            `json:"replicas,omitempty"`
	Color    string            `json:"color,omitempty"`
	Size     int32             `json:"size,omitempty"`
	Ports    []typedPort       `json:"ports,omitempty" listType:"map" listMapKey:"name"`
	Tags     []string          `json:"tags,omitempty" patchStrategy:"merge"`
	Args     []string          `json:"args,omitempty"`
	Selector map[string]string `json:"selector,omitempty"`
	Limits   map[string]int64  `json:"limits,omitempty"`
	Extra    any               `json:"extra,omitempty"`
	Template *struct {
		Image string `json:"image,omitempty"`
	} `json:"template,omitempty" structType:"atomic"`
	Inner typedInner `json:"inner"`
}

type typedInner struct {
	A    string `json:"a,omitempty"`
	B    *bool  `json:"b,omitempty"`
	Deep struct {
		C string `json:"c,omitempty"`
	} `json:"deep"`
}

type typedPort struct {
	Name     string `json:"name"`
	Protocol string `json:"protocol,omitempty"`
	Port     int32  `json:"port,omitempty"`
}

const typedSeed = `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w","namespace":"default","uid":"u","resourceVersion":"5","generation":4,"creationTimestamp":"2025-06-01T12:00:00Z","labels":{"a":"1","b":"2"},"annotations":{"x":"y"},"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"o"}],"finalizers":["f"]},"spec":{"replicas":3,"color":"blue","size":2,"ports":[{"name":"http","protocol":"TCP","port":80},{"name":"dns","protocol":"UDP","port":53}],"tags":["a","b"],"args":["x"],"selector":{"app":"shop"},"limits":{"cpu":2},"extra":{"k":[1,"s",null]},"template":{"image":"i"},"inner":{"a":"x","b":true,"deep":{"c":"d"}}},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2025-06-01T12:00:00Z","reason":"r","message":"m"}]}}`

// numbersOf is v with its numbers as the reader reads them.
func numbersOf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = numbersOf(c)
		}
	case []any:
		for i, c := range x {
			x[i] = numbersOf(c)
		}
	case float64:
		return json.Number(fmt.Sprint(x))
	}
	return v
}

func TestTypedValid(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[typedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	if typedRootOf(reflect.TypeFor[typedWidget](), s) == nil {
		t.Error("typedWidget is not taken")
	}
	// A list item whose key omitempty leaves out is unnamed, which
	// liveTree refuses; a recursive type may be deeper than it reads.
	type omittedKey struct {
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Ports           []storedPort `json:"ports,omitempty" listType:"map" listMapKey:"name"`
	}
	type recursive struct {
		kapi.ObjectMeta `json:"metadata,omitempty"`
		Nested          map[string]recursive `json:"nested,omitempty"`
	}
	type pointerItems struct {
		Ports []*typedPort `json:"ports,omitempty" listType:"map" listMapKey:"name"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[omittedKey](), reflect.TypeFor[recursive](), reflect.TypeFor[pointerItems](), reflect.TypeFor[storedWidget]()} {
		s, err := SchemaOf(typ)
		if err != nil {
			t.Fatal(err)
		}
		if typedRootOf(typ, s) != nil {
			t.Errorf("%v is taken", typ)
		}
	}
	s, _ = SchemaOf(reflect.TypeFor[omittedKey]())
	if _, err := s.liveTree(nil, &omittedKey{Ports: []storedPort{{Port: 1}}}); err == nil {
		t.Error("liveTree took an unnamed item")
	}
}

// TestTypedApplyRandom holds the typed apply to the whole-tree path, its
// oracle: over random objects, configurations and managers, applied in
// turn (a re-apply, a changed one, another manager's, forced or not, with
// status ignored or not), both give the same error, the same managedFields,
// the same JSON, and Merged.Decode gives the object the JSON decodes to.
func TestTypedApplyRandom(t *testing.T) {
	checkTypedApplyRandom(t, 1, race.Cases(800))
}

func TestTypedApplyRandomSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("more seeds")
	}
	for seed := int64(2); seed <= 4; seed++ {
		checkTypedApplyRandom(t, seed, race.Cases(400))
	}
}

func checkTypedApplyRandom(t *testing.T, seed int64, n int) {
	t.Helper()
	s, seedTree := typedWidgetSeed(t)
	defer func() { typedApplyOn = true }()
	r := rand.New(rand.NewSource(seed))
	var typed, decoded, steps, conflicts int
	for i := range n {
		// The live object is what decoding its stored JSON gives, as a
		// server's is (Merged.Decode copies from it as such).
		live := randomWidget(r, s, seedTree)
		if live == nil {
			continue
		}
		live.UID = fmt.Sprint("uid-", seed, "-", i)
		data, _ := json.Marshal(live)
		created, err := s.Update(nil, data, nil, UpdateOptions{Manager: "creator", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(1, 0))})
		if err != nil {
			continue
		}
		live.ManagedFields = created
		configs := map[string]any{}
		for step := range 6 {
			manager := []string{"a", "b", "a"}[r.Intn(3)]
			var cfg any
			for try := 0; try < 8; try++ { // most random configurations are not valid ones
				switch prev, ok := configs[manager]; {
				case ok && r.Intn(3) == 0:
					cfg = prev // applied again
				case ok && r.Intn(2) == 0:
					cfg = revalue(r, prev, s, 0)
				case ok && r.Intn(3) == 0:
					cfg = respell(r, prev, s) // equal, or its lists reordered
				case r.Intn(8) == 0:
					tree, _, _ := typedTree(live, nil)
					cfg = respell(r, tree, s) // the live object's values, respelled or reordered
				case r.Intn(3) == 0:
					cfg = randomValue(r, s, 0)
				case r.Intn(2) == 0:
					tree, _, _ := typedTree(live, nil)
					cfg = revalue(r, tree, s, 0) // another value, where another manager may own it
				default:
					tree, _, _ := typedTree(live, nil)
					cfg = mutate(r, tree, s, 0)
				}
				if validate(cfg, s, nil, false) == nil {
					break
				}
			}
			configs[manager] = cfg
			doc, err := encodeJSON(cfg)
			if err != nil {
				continue
			}
			opts := ApplyOptions{Manager: manager, APIVersion: "example.com/v1", Force: r.Intn(2) == 0, Now: kapi.NewTime(time.Unix(int64(2+step), 0)), Live: live}
			switch r.Intn(3) {
			case 0:
				opts.Ignore = []string{"status"} // the main resource
			case 1:
				opts.Ignore, opts.Subresource = []string{"spec", "metadata"}, "status"
			}
			steps++
			next, isTyped, isDecoded, conflict := checkTypedApply(t, s, live, doc, opts, r.Intn(2) == 0)
			if isTyped {
				typed++
			}
			if isDecoded {
				decoded++
			}
			if conflict {
				conflicts++
			}
			if next != nil {
				live = next
			}
		}
	}
	t.Logf("%d applies: %d typed, %d decoded by steps, %d conflicts", steps, typed, decoded, conflicts)
	if typed < steps/4 || decoded < typed/4 {
		t.Errorf("the typed apply took %d of %d applies and decoded %d: too few to test it", typed, steps, decoded)
	}
}

// typedWidgetSeed is typedWidget's schema and typedSeed's tree, its
// numbers as the reader reads them.
func typedWidgetSeed(t testing.TB) (*Schema, any) {
	t.Helper()
	s, err := SchemaOf(reflect.TypeFor[typedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	var seedTree any
	if err := json.Unmarshal([]byte(typedSeed), &seedTree); err != nil {
		t.Fatal(err)
	}
	return s, numbersOf(seedTree)
}

// randomWidget is a random widget that is what decoding its JSON gives,
// nil if the values tried were none.
func randomWidget(r *rand.Rand, s *Schema, seedTree any) *typedWidget {
	for range 20 { // most random values are not widgets
		v := randomValue(r, s, 0)
		if r.Intn(2) == 0 {
			v = mutate(r, seedTree, s, 0)
		}
		first, w := new(typedWidget), new(typedWidget)
		if decodeInto(v, first) && decodeInto(first, w) {
			return w
		}
	}
	return nil
}

// checkTypedApply applies doc to live both ways (typedFirst: the typed
// apply first, before the whole-tree path refreshes the object's hint),
// compares what they give, and returns the next live object.
func checkTypedApply(t *testing.T, s *Schema, live *typedWidget, doc []byte, opts ApplyOptions, typedFirst bool) (next *typedWidget, isTyped, isDecoded, conflict bool) {
	t.Helper()
	before, _ := json.Marshal(live)
	type outcome struct {
		m       *Merged
		entries []kapi.ManagedFieldsEntry
		err     error
	}
	run := func(on bool) outcome {
		typedApplyOn = on
		defer func() { typedApplyOn = true }()
		c, err := ParseConfiguration(doc)
		if err != nil {
			return outcome{err: err}
		}
		m, entries, err := s.ApplyMerged(nil, c, live.ManagedFields, opts)
		return outcome{m, entries, err}
	}
	var whole, typed outcome
	if typedFirst {
		typed, whole = run(true), run(false)
	} else {
		whole, typed = run(false), run(true)
	}
	if (whole.err == nil) != (typed.err == nil) || whole.err != nil && whole.err.Error() != typed.err.Error() {
		t.Fatalf("%s to %s: errors\n%v\n%v", doc, before, whole.err, typed.err)
	}
	if whole.err != nil {
		var ce *ConflictError
		return nil, false, false, errors.As(whole.err, &ce)
	}
	isTyped = typed.m.typed != nil
	if isTyped {
		checkTypedComparison(t, s, live, doc, opts.Ignore)
	}
	we, _ := json.Marshal(whole.entries)
	te, _ := json.Marshal(typed.entries)
	if string(we) != string(te) {
		t.Fatalf("%s to %s: managedFields\n%s\n%s", doc, before, we, te)
	}
	// Decoded first: the typed result's tree is made only when asked for.
	config := new(typedWidget)
	c, _ := ParseConfiguration(doc)
	if !c.Decode(config) {
		config = nil
	}
	var cfg any
	if config != nil {
		cfg = config
	}
	got := new(typedWidget)
	isDecoded = typed.m.Decode(got, live, cfg)
	wholeGot := new(typedWidget)
	config2 := new(typedWidget)
	var cfg2 any
	if c.Decode(config2) {
		cfg2 = config2
	}
	wholeDecoded := whole.m.Decode(wholeGot, live, cfg2)
	wj, err := whole.m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	tj, err := typed.m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(wj) != string(tj) {
		t.Fatalf("%s to %s: JSON\n%s\n%s", doc, before, wj, tj)
	}
	if after, _ := json.Marshal(live); string(after) != string(before) {
		t.Fatalf("%s to %s: the live object changed: %s", doc, before, after)
	}
	want := new(typedWidget)
	if err := json.Unmarshal(wj, want); err != nil {
		return nil, isTyped, false, false // the server answers that
	}
	if isDecoded {
		if wholeDecoded && !reflect.DeepEqual(got, wholeGot) {
			t.Fatalf("%s to %s: decoded\n%#v\n%#v", doc, before, wholeGot, got)
		}
		// A live object decoded from JSON need not write it again (an
		// empty list, written, then left out), and Decode copies its
		// parts: the whole-tree path's Decode is the oracle, and the JSON
		// what the object writes.
		got.ManagedFields = nil // Decode copies them with the metadata; the caller sets them
		gj, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if string(gj) != string(wantJSON) {
			t.Fatalf("%s to %s: decoded\n%s\nthe JSON decoded\n%s", doc, before, gj, wantJSON)
		}
	}
	want.ManagedFields = typed.entries
	want.UID = live.UID
	return want, isTyped, isDecoded && isTyped, false
}

// respell is v with some of its integers spelled otherwise (3 as 3.0,
// 30e-1 or 3e0: equal values, other literals) and some of its lists'
// items in another order (list-maps' items reordered, added to or
// dropped from are named by key, not by place).
func respell(r *rand.Rand, v any, s *Schema) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out[k] = respell(r, x[k], s.Field(k))
		}
		return out
	case []any:
		var elem *Schema
		if s != nil {
			elem = s.Elem
		}
		out := make([]any, 0, len(x))
		for _, c := range x {
			out = append(out, respell(r, c, elem))
		}
		if r.Intn(3) == 0 {
			r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		}
		return out
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil && r.Intn(2) == 0 {
			return json.Number([]string{string(x) + ".0", string(x) + "0e-1", string(x) + "e0"}[r.Intn(3)])
		}
	}
	return v
}

// decodeInto decodes v's JSON into dst: false if it does not decode.
func decodeInto(v any, dst any) bool {
	data, err := encodeJSON(v)
	return err == nil && json.Unmarshal(data, dst) == nil
}

// checkTypedComparison holds the typed walk's comparison to the whole
// tree's, set by set: a path added or changed where no other manager owns
// it changes no answer, and is checked here.
func checkTypedComparison(t *testing.T, s *Schema, live *typedWidget, doc []byte, ignore []string) {
	t.Helper()
	c, err := ParseConfiguration(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := maps.Clone(c.tree)
	for _, f := range ignore {
		delete(cfg, f)
	}
	tl := s.typedLiveOf(live)
	if tl == nil {
		t.Fatal("the typed apply took a live object it does not take")
	}
	r, got := tl.apply(s, c.tree, ignore) // passes over what cfg leaves out
	if r == nil {
		t.Fatal("the typed walk gave up where it did not")
	}
	liveObj, err := s.liveTree(nil, live)
	if err != nil {
		t.Fatal(err)
	}
	merged, _ := merge(liveObj, true, cfg, true, s)
	want := compareObjects(liveObj, merged, s)
	for i, pair := range [3][2]fieldSet{{got.added, want.added}, {got.modified, want.modified}, {got.removed, want.removed}} {
		if !pair[0].equal(pair[1]) && len(pair[0])+len(pair[1]) > 0 {
			t.Fatalf("%s: set %d (added, modified, removed) %v, want %v", doc, i, pair[0], pair[1])
		}
	}
	if r.unchanged != equalValues(liveObj, merged) {
		t.Fatalf("%s: unchanged %v", doc, r.unchanged)
	}
}

// FuzzTypedApply: an object applied to by a manager, then again, then by
// another: the typed apply gives what the whole-tree path gives.
func FuzzTypedApply(f *testing.F) {
	f.Add(typedSeed, `{"spec":{"color":"red","ports":[{"name":"http","port":81}]}}`, true, false)
	f.Add(typedSeed, `{"metadata":{"labels":{"a":"2"}},"spec":{"inner":{"deep":{"c":"e"}}},"status":{"phase":"x"}}`, false, true)
	f.Add(`{"metadata":{"uid":"u"},"spec":{"inner":{"deep":{}}}}`, `{"spec":{"inner":{"a":null},"extra":{"k":1}}}`, false, false)
	// The live values again, numbers respelled and ports reordered.
	f.Add(typedSeed, `{"spec":{"size":20e-1,"replicas":3.0,"ports":[{"name":"dns","protocol":"UDP","port":53},{"name":"http","protocol":"TCP","port":80}],"selector":{"app":"shop"}}}`, false, true)
	s, err := SchemaOf(reflect.TypeFor[typedWidget]())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, liveDoc, config string, force, ignoreStatus bool) {
		first, live := new(typedWidget), new(typedWidget)
		if json.Unmarshal([]byte(liveDoc), first) != nil || !decodeInto(first, live) {
			return
		}
		live.UID = "fuzz"
		data, _ := json.Marshal(live)
		created, err := s.Update(nil, data, nil, UpdateOptions{Manager: "creator", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(1, 0))})
		if err != nil {
			return
		}
		live.ManagedFields = created
		opts := ApplyOptions{APIVersion: "example.com/v1", Force: force, Now: kapi.NewTime(time.Unix(2, 0))}
		if ignoreStatus {
			opts.Ignore = []string{"status"}
		}
		for _, manager := range []string{"a", "a", "b"} {
			opts.Manager, opts.Live = manager, live
			next, _, _, _ := checkTypedApply(t, s, live, []byte(config), opts, manager == "b")
			if next != nil {
				live = next
			}
		}
	})
}
