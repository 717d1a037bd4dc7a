package patch

import (
	"math/rand"
	"reflect"
	"testing"
)

// revalue changes v's values where toSet does not look at them: a
// member's value, and the fields of a map list's items but their keys.
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
		for k, c := range x {
			if s.Kind == List { // a map list's item
				out[k] = c
				continue
			}
			out[k] = revalue(r, c, s.Field(k), depth+1)
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
					for k, c := range m {
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
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(3))
	keep := ignoreFilter([]string{"status"})
	sets := map[string]string{} // a shape's set, as written
	same := 0
	for _, s := range []*Schema{s, withDeduced(s)} {
		for i := 0; i < 1000; i++ {
			v := randomValue(r, s, 0)
			for _, w := range []any{v, revalue(r, v, s, 0), revalue(r, v, s, 0), mutate(r, v, s, 0)} {
				m, ok := w.(map[string]any)
				if !ok {
					continue
				}
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
				a := appliedSetOf(m, s, keep, []string{"status"})
				if got, _ := a.set.MarshalJSON(); string(got) != string(want) {
					t.Fatalf("%v: appliedSetOf %s, want %s", m, got, want)
				}
				final, _ := set.filter(keep).minus(serverOwned).MarshalJSON()
				if string(a.final.encoded) != string(final) || !a.final.set.equal(set.filter(keep).minus(serverOwned)) {
					t.Fatalf("%v: appliedSetOf final %s, want %s", m, a.final.encoded, final)
				}
			}
		}
	}
	if same < 300 {
		t.Errorf("only %d values had a shape seen before", same)
	}
	t.Logf("%d values had a shape seen before", same)
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
		if got := appliedSetOf(cfg, s, ignoreFilter(nil), nil).final.encoded; string(got) != c.want {
			t.Errorf("%v: %s, want %s", c.typ, got, c.want)
		}
	}
}
