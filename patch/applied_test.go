package patch

import (
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/race"
)

// revalue changes v's values where toSet does not look at them: a
// member's value, and the fields of a map list's items but their keys. Like
// randomValue, it walks maps in sorted order.
func revalue(r *rand.Rand, v any, s *Schema, depth int) any {
	if isLeaf(s) {
		if v == nil || r.Intn(3) == 0 {
			return v
		}
		return randomValue(r, nil, depth)
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if s.Kind == List { // a map list's item
				out[k] = x[k]
				continue
			}
			out[k] = revalue(r, x[k], s.Field(k), depth+1)
		}
		return out
	case []any:
		out := []any{}
		for _, item := range x {
			if s.ListType == ListMap {
				m, ok := item.(map[string]any)
				if ok {
					keys := map[string]bool{}
					for _, k := range s.ListMapKeys {
						keys[k] = true
					}
					n := map[string]any{}
					for _, k := range slices.Sorted(maps.Keys(m)) {
						c := m[k]
						if keys[k] {
							n[k] = c
						} else {
							n[k] = revalue(r, c, s.Elem.Field(k), depth+2)
						}
					}
					item = n
				}
			}
			out = append(out, item)
		}
		return out
	}
	return v
}

// TestAppliedSetShapeRandom holds appendShape to what it promises: values
// of one shape have one set; and appliedSetOf to toSet.
func TestAppliedSetShapeRandom(t *testing.T) {
	keep := ignoreFilter([]string{"status"})
	sets := map[string]string{} // a shape's set, as written
	read := map[string]string{} // a reader's shape's set, by schema
	same, sameRead := 0, 0
	eachRandomObject(t, 3, race.Cases(1000), func(s *Schema, m map[string]any) {
		set := fieldSet{}
		toSet(m, s, nil, set)
		want, _ := set.filter(keep).MarshalJSON()
		shape := string(appendShape(nil, m, s))
		if prev, ok := sets[shape]; ok {
			same++
			if prev != string(want) {
				t.Fatalf("shape %q: set %s, and %s", shape, prev, want)
			}
		}
		sets[shape] = string(want)
		c := readConfiguration(t, m)
		// What was read has its numbers as canonicalNumbers writes them.
		readSet := fieldSet{}
		toSet(c.tree, s, nil, readSet)
		wantRead, _ := readSet.filter(keep).MarshalJSON()
		byReader := fmt.Sprintf("%p", s) + string(c.shape)
		if prev, ok := read[byReader]; ok {
			sameRead++
			if prev != string(wantRead) {
				t.Fatalf("read shape %q: set %s, and %s", c.shape, prev, wantRead)
			}
		}
		read[byReader] = string(wantRead)
		for _, a := range []struct {
			a    *appliedSet
			v    map[string]any
			want fieldSet
		}{
			{appliedSetOf(m, s, keep, []string{"status"}, nil), m, set},
			{appliedSetOf(c.tree, s, keep, []string{"status"}, c.shape), c.tree, readSet},
		} {
			want, _ := a.want.filter(keep).MarshalJSON()
			if got, _ := a.a.set.MarshalJSON(); string(got) != string(want) {
				t.Fatalf("%v: appliedSetOf %s, want %s", a.v, got, want)
			}
			final := a.want.filter(keep).minus(serverOwned)
			encoded, _ := final.MarshalJSON()
			if string(a.a.final.encoded) != string(encoded) || !a.a.final.set.equal(final) {
				t.Fatalf("%v: appliedSetOf final %s, want %s", a.v, a.a.final.encoded, encoded)
			}
		}
	})
	if same < race.Cases(300) || sameRead < race.Cases(100) {
		t.Errorf("only %d values had a shape seen before, %d a reader's shape", same, sameRead)
	}
	t.Logf("%d values had a shape seen before, %d a reader's shape", same, sameRead)
}

// TestAppliedSetOtherSchemas: appliedSets serves every schema, and two
// schemas whose lists are keyed by other fields name one item otherwise.
func TestAppliedSetOtherSchemas(t *testing.T) {
	type item struct {
		Name string `json:"name"`
		ID   string `json:"id"`
	}
	type byName struct {
		Items []item `json:"items" listType:"map" listMapKey:"name"`
	}
	type byID struct {
		Items []item `json:"items" listType:"map" listMapKey:"id"`
	}
	cfg := map[string]any{"items": []any{map[string]any{"name": "x", "id": "x"}}}
	for _, c := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[byName](), `{"f:items":{"k:{\"name\":\"x\"}":{".":{},"f:id":{},"f:name":{}}}}`},
		{reflect.TypeFor[byID](), `{"f:items":{"k:{\"id\":\"x\"}":{".":{},"f:id":{},"f:name":{}}}}`},
	} {
		s, err := SchemaOf(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		if got := appliedSetOf(cfg, s, ignoreFilter(nil), nil, nil).final.encoded; string(got) != c.want {
			t.Errorf("%v: %s, want %s", c.typ, got, c.want)
		}
		parsed, err := ParseConfiguration([]byte(`{"items":[{"name":"x","id":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := appliedSetOf(parsed.tree, s, ignoreFilter(nil), nil, parsed.shape).final.encoded; string(got) != c.want {
			t.Errorf("%v, read: %s, want %s", c.typ, got, c.want)
		}
	}
}

// TestAppliedSetReadShapeNamesItems: configurations alike but for what
// names a list's items (a map list item's key, a set's item) have shapes
// of their own as read, so that neither is given the other's set.
func TestAppliedSetReadShapeNamesItems(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	keep := ignoreFilter(nil)
	for _, docs := range [][]string{
		{`{"spec":{"ports":[{"name":"a","port":1}]}}`, `{"spec":{"ports":[{"name":"b","port":1}]}}`, `{"spec":{"ports":[{"name":"a","port":2}]}}`},
		{`{"spec":{"tags":["a"]}}`, `{"spec":{"tags":["b"]}}`, `{"spec":{"tags":["a","a"]}}`},
		{`{"spec":{"nested":{"x":{"tags":["a"]}}}}`, `{"spec":{"nested":{"x":{"tags":["b"]}}}}`},
		{`{"spec":{"extra":{"a":1}}}`, `{"spec":{"extra":1}}`, `{"spec":{"extra":null}}`, `{"spec":{"extra":{}}}`},
		{`{"status":{"conditions":[{"type":"A","status":"x"}]}}`, `{"status":{"conditions":[{"type":"B","status":"x"}]}}`},
	} {
		for _, s := range []*Schema{s, withDeduced(s), s, withDeduced(s)} { // the second time from appliedSets
			for _, doc := range docs {
				c, err := ParseConfiguration([]byte(doc))
				if err != nil || c.shape == nil {
					t.Fatalf("%s: %v, shape %q", doc, err, c.shape)
				}
				set := fieldSet{}
				toSet(c.tree, s, nil, set)
				want, _ := set.MarshalJSON()
				if got, _ := appliedSetOf(c.tree, s, keep, nil, c.shape).set.MarshalJSON(); string(got) != string(want) {
					t.Errorf("%s: appliedSetOf %s, want %s", doc, got, want)
				}
			}
		}
	}
}

// TestValidShapeRandom holds shapeApplied to what ApplyMerged takes it for:
// configurations of one reader's shape are all valid or all not, and
// shapeApplied has a set of none that is not, before or after its shape's set
// is kept.
func TestValidShapeRandom(t *testing.T) {
	keep := ignoreFilter(nil)
	valid := map[string]bool{} // a reader's shape's validity, by schema
	same, invalid := 0, 0
	eachRandomObject(t, 5, 1000, func(s *Schema, w map[string]any) {
		c := readConfiguration(t, w)
		ok := validate(c.tree, s, nil, false) == nil
		if !ok {
			invalid++
		}
		key := fmt.Sprintf("%p", s) + string(c.shape)
		if prev, seen := valid[key]; seen {
			same++
			if prev != ok {
				t.Fatalf("shape %q: valid %v, and %v (%v)", c.shape, prev, ok, w)
			}
		}
		valid[key] = ok
		if shapeApplied(s, nil, c.shape) != nil && !ok {
			t.Fatalf("%v: invalid, and shapeApplied has its set", w)
		}
		if ok {
			appliedSetOf(c.tree, s, keep, nil, c.shape) // as ApplyMerged keeps it
			if shapeApplied(s, nil, c.shape) == nil {
				t.Fatalf("%v: its set kept, and shapeApplied does not find it", w)
			}
		}
	})
	if same < 300 || invalid < 100 {
		t.Errorf("only %d configurations had a shape seen before, %d invalid", same, invalid)
	}
	t.Logf("%d configurations had a shape seen before, %d invalid", same, invalid)
}

// eachRandomObject calls f with random objects of storedWidget's schema and
// of its deduced variant, seeded by seed: for each of n values a schema,
// the value, two revalued and one mutated copies, those that are objects.
func eachRandomObject(t *testing.T, seed int64, n int, f func(s *Schema, m map[string]any)) {
	t.Helper()
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(seed))
	for _, s := range []*Schema{s, withDeduced(s)} {
		for range n {
			v := randomValue(r, s, 0)
			for _, w := range []any{v, revalue(r, v, s, 0), revalue(r, v, s, 0), mutate(r, v, s, 0)} {
				if m, ok := w.(map[string]any); ok {
					f(s, m)
				}
			}
		}
	}
}

// readConfiguration is the configuration of v's JSON, as ParseConfiguration
// reads it, with its shape.
func readConfiguration(t *testing.T, v any) *Configuration {
	t.Helper()
	doc, err := encodeJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfiguration(doc)
	if err != nil || c.shape == nil {
		t.Fatalf("%s: %v, shape %v", doc, err, c)
	}
	return c
}
