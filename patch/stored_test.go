package patch

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/test/race"
)

type storedWidget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            storedSpec `json:"spec,omitempty"`
	Status          struct {
		Phase      string           `json:"phase,omitempty"`
		Conditions []kapi.Condition `json:"conditions,omitempty" listType:"map" listMapKey:"type"`
	} `json:"status,omitempty"`
}

type storedSpec struct {
	Replicas *int32            `json:"replicas,omitempty"`
	Color    string            `json:"color,omitempty"`
	Ports    []storedPort      `json:"ports,omitempty" listType:"map" listMapKey:"name,protocol"`
	Tags     []string          `json:"tags,omitempty" patchStrategy:"merge"`
	Args     []string          `json:"args,omitempty"`
	Selector map[string]string `json:"selector,omitempty"`
	Extra    any               `json:"extra,omitempty"`
	Template *struct {
		Image string `json:"image,omitempty"`
	} `json:"template,omitempty" structType:"atomic"`
	Nested map[string]storedSpec `json:"nested,omitempty"`
}

type storedPort struct {
	Name     string `json:"name,omitempty"`
	Protocol string `json:"protocol,omitempty"`
	Port     int32  `json:"port,omitempty"`
}

const storedSeed = `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w","namespace":"default","uid":"u","resourceVersion":"5","generation":4,"creationTimestamp":"2025-06-01T12:00:00Z","labels":{"a":"1","b":"2"},"annotations":{"x":"y"},"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"o"}],"finalizers":["f"],"managedFields":[{"manager":"m","operation":"Update","apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},"spec":{"replicas":3,"color":"blue","ports":[{"name":"http","protocol":"TCP","port":80},{"name":"dns","protocol":"UDP","port":53}],"tags":["a","b"],"args":["x"],"selector":{"app":"shop"},"extra":{"k":[1,2.5,null]},"template":{"image":"i"},"nested":{"n":{"color":"red","tags":["c"]}}},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":null,"reason":"","message":""}]}}`

// FuzzCompareStored: comparing two documents as written finds what
// decoding them and comparing the values finds, or gives up; it never
// succeeds where liveObject fails.
func FuzzCompareStored(f *testing.F) {
	edits := [][2]string{
		{`"color":"blue"`, `"color":"red"`}, {`"replicas":3,`, ``}, {`"a":"1",`, `"a":"1","c":"3",`},
		{`{"name":"dns","protocol":"UDP","port":53}`, `{"name":"dns","protocol":"TCP","port":53}`},
		{`"tags":["a","b"]`, `"tags":["b","a","a"]`}, {`"extra":{"k":[1,2.5,null]}`, `"extra":"s"`},
		{`"generation":4`, `"generation":5`}, {`"template":{"image":"i"}`, `"template":{}`},
		{`"managedFields":[`, `"managedFields":[{},`}, {`"spec":{`, `"spec":{"unknown":1,`},
		{`"resourceVersion":"5"`, `"resourceVersion":"6"`}, {`"selector":{"app":"shop"}`, `"selector":{}`},
		{`"color":"red","tags":["c"]`, `"color":"red"`}, {`"finalizers":["f"]`, `"finalizers":null`},
		{`{"kind"`, ` { "kind"`}, {`"status":{"phase":"Running",`, `"status":{`}, {`"labels":{"a":"1","b":"2"}`, `"labels":{"b":"2","a":"1"}`},
		{`"ports":[`, `"ports":[{"port":1},`}, {`"color":"blue"`, `"color":"blue","color":"green"`},
		{`"status":{`, `"status":{"phase":"\u00e9",`}, {`"name":"w"`, `"na\u006de":"w"`}, {`"args":["x"]`, `"args":[]`},
		// One scalar written another way (the same value), or changed.
		{`"generation":4`, `"generation":4.0`}, {`"generation":4`, `"generation":4e0`}, {`"generation":4`, `"generation":-0`},
		{`"color":"blue"`, `"color":"bl\u0075e"`}, {`"color":"blue"`, `"color":4`}, {`"color":"blue"`, `"color":null`},
		{`"color":"blue"`, `"color":true`}, {`"generation":4`, `"generation":"4"`}, {`"generation":4`, `"generation":-4`},
	}
	for _, e := range edits {
		f.Add(storedSeed, strings.Replace(storedSeed, e[0], e[1], 1))
		f.Add(strings.Replace(storedSeed, e[0], e[1], 1), storedSeed)
	}
	f.Add(storedSeed, `{}`)
	f.Add(`{"metadata":{"managedFields":[]}}`, `{"metadata":{}}`)
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, old, new string) {
		got, ok := compareStored([]byte(old), []byte(new), s)
		oldObj, oerr := s.liveObject([]byte(old))
		newObj, nerr := s.liveObject([]byte(new))
		if oerr != nil || nerr != nil {
			if ok {
				t.Fatalf("compared as written, but liveObject fails: %v, %v", oerr, nerr)
			}
			return
		}
		if !ok {
			return
		}
		want := compareObjects(oldObj, newObj, s)
		if diff := comparisonDiff(got, want); diff != "" {
			t.Fatal(diff)
		}
	})
}

// TestCompareStoredTakesCommonWrites: the writes a server makes are
// compared as written, not handed back to decoding.
func TestCompareStoredTakesCommonWrites(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	var w storedWidget
	if err := json.Unmarshal([]byte(storedSeed), &w); err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(w)
	w.Spec.Color = "green"
	w.Labels["c"] = "3"
	w.Spec.Ports = w.Spec.Ports[:1]
	w.ResourceVersion = "6"
	w.ManagedFields = nil
	new, _ := json.Marshal(w)
	c, ok := compareStored(old, new, s)
	if !ok {
		t.Fatal("gave up on two encodings of one type")
	}
	if len(c.added) != 1 || len(c.modified) != 2 || len(c.removed) != 4 {
		t.Errorf("added %d, modified %d, removed %d; want 1, 2 (color and resourceVersion), 4 (the port and its fields)", len(c.added), len(c.modified), len(c.removed))
	}
}

// withDeduced is s, storedWidget's schema, with what a custom resource's
// schema leaves open: spec.extra Deduced, and spec.kept a struct that
// keeps members it does not declare.
func withDeduced(s *Schema) *Schema {
	spec := *s.Fields["spec"]
	spec.Fields = maps.Clone(spec.Fields)
	spec.Fields["extra"] = &Schema{Kind: Deduced}
	spec.Fields["kept"] = &Schema{Kind: Struct, Fields: map[string]*Schema{"name": {Kind: Scalar}}, Elem: &Schema{Kind: Deduced}}
	out := *s
	out.Fields = maps.Clone(s.Fields)
	out.Fields["spec"] = &spec
	return &out
}

// randomValue is a value of schema s, now and then one that does not fit
// it: the documents compareStored must agree on or give up on. It and
// mutate walk maps in sorted order, so that one seed makes one sequence of
// documents: a test's counts of what it saw do not move from run to run.
func randomValue(r *rand.Rand, s *Schema, depth int) any {
	scalars := []any{"a", "b", "", json.Number("1"), json.Number("2.5"), json.Number("-1"), json.Number("1e3"), true, false, "<&>"}
	switch {
	case r.Intn(25) == 0:
		return nil
	case r.Intn(40) == 0 || s == nil || s.Kind == Untyped || depth > 6:
		switch r.Intn(4) {
		case 0:
			return map[string]any{"a": scalars[r.Intn(len(scalars))]}
		case 1:
			return []any{scalars[r.Intn(len(scalars))]}
		}
		return scalars[r.Intn(len(scalars))]
	}
	switch s.Kind {
	case Deduced:
		switch r.Intn(3) {
		case 0:
			m := map[string]any{}
			for _, k := range []string{"a", "b", "c"} {
				if r.Intn(2) == 0 {
					m[k] = randomValue(r, s, depth+1)
				}
			}
			return m
		case 1:
			return []any{randomValue(r, s, depth+1)}
		}
	case Struct:
		m := map[string]any{}
		for _, name := range slices.Sorted(maps.Keys(s.Fields)) {
			if r.Intn(3) > 0 {
				m[name] = randomValue(r, s.Fields[name], depth+1)
			}
		}
		if r.Intn(40) == 0 {
			m["unknown"] = "x"
		}
		return m
	case Map:
		m := map[string]any{}
		for _, k := range []string{"a", "b", "c", "d", "e:f", "<g>", "é"} {
			if r.Intn(2) == 0 {
				m[k] = randomValue(r, s.Elem, depth+1)
			}
		}
		return m
	case List:
		l := []any{}
		for n := r.Intn(4); n > 0; n-- {
			l = append(l, randomValue(r, s.Elem, depth+1))
		}
		return l
	}
	return scalars[r.Intn(len(scalars))]
}

// mutate changes some of v's subtrees.
func mutate(r *rand.Rand, v any, s *Schema, depth int) any {
	if r.Intn(8) == 0 {
		return randomValue(r, s, depth)
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if r.Intn(12) == 0 {
				continue
			}
			out[k] = mutate(r, x[k], s.Field(k), depth+1)
		}
		return out
	case []any:
		out := []any{}
		var elem *Schema
		if s != nil {
			elem = s.Elem
		}
		for _, c := range x {
			out = append(out, mutate(r, c, elem, depth+1))
		}
		return out
	}
	return v
}

// randomStoredPairs calls check on 8,000 random pairs of widget documents
// (4,000 with storedWidget's schema, 4,000 with it deduced; a quarter of
// each under the race detector, race.Cases), each pair's values first
// given to managed (to add managedFields to one side); check says whether
// compareStored compared the pair as written, which at least one in 16
// must be (500 of 8,000).
func randomStoredPairs(t *testing.T, seed int64, managed func(r *rand.Rand, oldV, newV any), check func(s *Schema, old, new []byte) (taken bool)) {
	t.Helper()
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(seed))
	taken, n := 0, race.Cases(4000)
	for _, s := range []*Schema{s, withDeduced(s)} {
		for range n {
			oldV := randomValue(r, s, 0)
			newV := mutate(r, oldV, s, 0)
			managed(r, oldV, newV)
			old, _ := json.Marshal(oldV)
			new, _ := json.Marshal(newV)
			if check(s, old, new) {
				taken++
			}
		}
	}
	if taken < 2*n/16 {
		t.Errorf("only %d of %d pairs compared as written", taken, 2*n)
	}
	t.Logf("%d of %d pairs (%d a schema) compared as written", taken, 2*n, n)
}

// comparisonDiff says how got differs from want: the first of its sets
// that does, with both; "" if none does.
func comparisonDiff(got, want comparison) string {
	for _, x := range []struct {
		name      string
		got, want fieldSet
	}{{"added", got.added, want.added}, {"modified", got.modified, want.modified}, {"removed", got.removed, want.removed}} {
		if !x.got.equal(x.want) {
			g, _ := x.got.MarshalJSON()
			w, _ := x.want.MarshalJSON()
			return fmt.Sprintf("%s: %s, want %s", x.name, g, w)
		}
	}
	return ""
}

// setManagedFields sets v's metadata.managedFields to entries, if v is an
// object with metadata.
func setManagedFields(v any, entries []any) {
	if m, ok := v.(map[string]any); ok {
		if meta, ok := m["metadata"].(map[string]any); ok {
			meta["managedFields"] = entries
		}
	}
}

// TestCompareStoredRandom holds compareStored, and Update through it,
// to decoding and compareObjects on random pairs of documents.
func TestCompareStoredRandom(t *testing.T) {
	managed := func(r *rand.Rand, _, newV any) {
		if _, ok := newV.(map[string]any); ok && r.Intn(2) == 0 {
			setManagedFields(newV, []any{map[string]any{"manager": "x"}})
		}
	}
	randomStoredPairs(t, 1, managed, func(s *Schema, old, new []byte) bool {
		got, ok := compareStored(old, new, s)
		oldObj, oerr := s.liveObject(old)
		newObj, nerr := s.liveObject(new)
		if oerr != nil || nerr != nil {
			if ok {
				t.Fatalf("%s\n%s\ncompared as written, but liveObject fails: %v, %v", old, new, oerr, nerr)
			}
			return false
		}
		if !ok {
			return false
		}
		want := compareObjects(oldObj, newObj, s)
		if diff := comparisonDiff(got, want); diff != "" {
			t.Fatalf("%s\n%s\ncompared as written differently: %s", old, new, diff)
		}
		// Update through it, and as it decodes.
		opts := UpdateOptions{Manager: "b", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(1e9, 0)), Ignore: []string{"status"}}
		prev := []kapi.ManagedFieldsEntry{{Manager: "a", Operation: OperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:color":{},"f:ports":{}},"f:metadata":{"f:labels":{"f:a":{}}}}`)}},
			{Manager: "b", Operation: OperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:tags":{}}}`)}}}
		fast, err := s.Update(old, new, prev, opts)
		if err != nil {
			t.Fatal(err)
		}
		ms, _ := decodeManagers(prev)
		s.update(oldObj, newObj, ms, opts)
		if slow := ms.encode(); !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s\n%s\nUpdate: %v, want %v", old, new, fast, slow)
		}
		return true
	})
}

// createdGeneral is Update's entries for a create as compareObjects makes
// them.
func createdGeneral(s *Schema, obj map[string]any, opts UpdateOptions) []kapi.ManagedFieldsEntry {
	ms := managerSet{}
	s.update(map[string]any{}, obj, ms, opts)
	return ms.encode()
}

// TestCreatedFieldsRandom holds a create's entry written straight from the
// object to the general way, on random objects.
func TestCreatedFieldsRandom(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(2))
	valid, asWritten := 0, 0
	for _, s := range []*Schema{s, withDeduced(s)} {
		for i := 0; i < 4000; i++ {
			doc, _ := json.Marshal(randomValue(r, s, 0))
			obj, err := s.liveObject(doc)
			if err != nil {
				continue
			}
			valid++
			var ignore []string
			switch r.Intn(3) {
			case 0:
				ignore = []string{"status"}
			case 1:
				ignore = []string{"spec", "metadata"}
			}
			opts := UpdateOptions{Manager: "m", APIVersion: "example.com/v1", Subresource: "s", Now: kapi.NewTime(time.Unix(1e9, 0)), Ignore: ignore}
			got, err := s.Update(nil, doc, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := createdGeneral(s, obj, opts)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: Update\n%s\nwant\n%s", doc, entriesJSON(got), entriesJSON(want))
			}
			// Both ways of writing it: from the document as written, and
			// decoded.
			var wantRaw []byte
			if len(want) > 0 {
				wantRaw = want[0].FieldsV1.Raw
			}
			if raw, ok := s.createdStored(doc, ignore); ok {
				asWritten++
				if string(raw) != string(wantRaw) {
					t.Fatalf("%s: as written %s, want %s", doc, raw, wantRaw)
				}
			}
			if raw := s.createdFields(obj, ignore); string(raw) != string(wantRaw) {
				t.Fatalf("%s: decoded %s, want %s", doc, raw, wantRaw)
			}
		}
	}
	if valid < 500 || asWritten < valid/2 {
		t.Errorf("of 8000 objects %d valid, %d read as written", valid, asWritten)
	}
	t.Logf("of 8000 objects (4000 a schema) %d valid, %d read as written", valid, asWritten)
}

func entriesJSON(es []kapi.ManagedFieldsEntry) string {
	b, _ := json.Marshal(es)
	return string(b)
}

// FuzzCreatedFields: a create's entry written straight from the object is
// the one the general way records.
func FuzzCreatedFields(f *testing.F) {
	f.Add(storedSeed, "status")
	f.Add(`{"metadata":{"name":"a"},"spec":{"ports":[{"name":"a"},{"name":"a","port":1}],"tags":["x","x","y"]}}`, "")
	f.Add(`{"apiVersion":"v","kind":"k","metadata":{},"spec":{"selector":{},"nested":{"a":{}},"template":{"image":"i"}}}`, "spec")
	f.Add(`{"spec":{"extra":{"a":[1]},"args":[],"ports":[{"name":"b","protocol":"<&>"},{"protocol":"TCP"}]}}`, "metadata")
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc, ignore string) {
		if _, err := s.liveObject([]byte(doc)); err != nil {
			return
		}
		opts := UpdateOptions{Manager: "m", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(1e9, 0))}
		if ignore != "" {
			opts.Ignore = []string{ignore}
		}
		got, err := s.Update(nil, []byte(doc), nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		obj, _ := s.liveObject([]byte(doc)) // Update may not change it, but the check must not rely on that
		if want := createdGeneral(s, obj, opts); !reflect.DeepEqual(got, want) {
			t.Fatalf("Update\n%s\nwant\n%s", entriesJSON(got), entriesJSON(want))
		}
	})
}

// TestMergeEqualAsIsRandom: merge's shortcuts for equal values and for
// live values with nothing to merge make what merging makes, on random checked configurations and live objects
// they were merged into or derived from.
func TestMergeEqualAsIsRandom(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { mergeEqualAsIs, mergeAbsentAsIs = true, true }()
	r := rand.New(rand.NewSource(3))
	checked := 0
	for i := 0; i < 4000; i++ {
		cfg := randomValue(r, s, 0)
		live := mutate(r, cfg, s, 0)
		if !valid(cfg, s, false) || !valid(live, s, true) {
			continue
		}
		checked++
		mergeEqualAsIs, mergeAbsentAsIs = true, true
		fast, fok := merge(live, true, cfg, true, s)
		mergeEqualAsIs, mergeAbsentAsIs = false, false
		slow, sok := merge(live, true, cfg, true, s)
		if fok != sok || !equalValues(fast, slow) {
			l, _ := json.Marshal(live)
			c, _ := json.Marshal(cfg)
			t.Fatalf("live %s, config %s: merged %v %v, want %v %v", l, c, fast, fok, slow, sok)
		}
	}
	if checked < 500 {
		t.Errorf("only %d of 4000 pairs checked", checked)
	}
}

// recordGeneral is record as it was before it kept a writer's own set:
// every manager's set less what changed, the writer's own changes added
// back. TestRecordKeepsOwnSetRandom holds record to it.
func recordGeneral(s *Schema, c *comparison, ms managerSet, opts UpdateOptions) {
	c.filter(ignoreFilter(opts.Ignore))
	changed := c.added.union(c.modified)
	for _, m := range ms {
		m.set = m.set.minus(changed).minus(c.removed)
	}
	ms.dropEmpty()
	if own := changed.minus(serverOwned); len(own) > 0 {
		m := &fieldManager{name: opts.Manager, operation: OperationUpdate, subresource: opts.Subresource, apiVersion: opts.APIVersion}
		if prev := ms[m.id()]; prev != nil {
			own = own.union(prev.set)
		}
		t := opts.Now
		m.set, m.time = own, &t
		ms[m.id()] = m
	}
	ms.capUpdaters()
}

// TestRecordKeepsOwnSetRandom writes random changes to objects as the
// manager that created them, the write that keeps its set as read.
func TestRecordKeepsOwnSetRandom(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(2))
	opts := UpdateOptions{Manager: "b", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(1e9, 0)), Ignore: []string{"status"}}
	kept := 0
	for i := 0; i < 4000; i++ {
		oldV := randomValue(r, s, 0)
		newV := mutate(r, oldV, s, 0)
		if r.Intn(3) == 0 {
			newV = mutate(r, newV, s, 0)
		}
		old, _ := json.Marshal(oldV)
		new, _ := json.Marshal(newV)
		oldObj, oerr := s.liveObject(old)
		newObj, nerr := s.liveObject(new)
		if oerr != nil || nerr != nil {
			continue
		}
		created := createdGeneral(s, oldObj, opts)
		if created == nil {
			continue
		}
		created = append(created, kapi.ManagedFieldsEntry{Manager: "a", Operation: OperationUpdate, APIVersion: "example.com/v1", FieldsType: "FieldsV1",
			FieldsV1: &kapi.FieldsV1{Raw: []byte(`{"f:spec":{"f:color":{},"f:tags":{}}}`)}})
		ms, _ := decodeManagers(created)
		c := compareObjects(oldObj, newObj, s)
		if prev := ms[(&fieldManager{name: "b", operation: OperationUpdate, apiVersion: opts.APIVersion}).id()]; prev != nil {
			cc := c
			cc.filter(ignoreFilter(opts.Ignore))
			if ownsAlready(prev.set, cc.added.union(cc.modified), cc.removed) {
				kept++
			}
		}
		s.record(&c, oldObj, newObj, ms, opts)
		want, _ := decodeManagers(created)
		c = compareObjects(oldObj, newObj, s)
		recordGeneral(s, &c, want, opts)
		if got, want := entriesJSON(ms.encode()), entriesJSON(want.encode()); got != want {
			t.Fatalf("%s\n%s\nrecord: %s\nwant %s", old, new, got, want)
		}
	}
	if kept < 20 {
		t.Errorf("only %d of 4000 writes kept their set", kept)
	}
	t.Logf("%d of 4000 writes kept their set", kept)
}
