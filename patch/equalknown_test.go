package patch

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/race"
)

// TestEqualKeptRandom holds equalKept to equalValues: random trees
// compared with copies of themselves (equal, at other addresses), with
// themselves changed here and there, and again, so that a pair is found
// both by a walk and in equalKnown.
func TestEqualKeptRandom(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(11))
	kept, equal := 0, 0
	for range race.Cases(3000) {
		a := randomValue(r, s, 0)
		data, err := encodeJSON(a)
		if err != nil {
			t.Fatal(err)
		}
		copied, err := decodeJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		pairs := [][2]any{{a, copied}, {a, mutate(r, a, s, 0)}, {copied, a}}
		for i := range 4 {
			p := pairs[r.Intn(len(pairs))]
			if i == 3 {
				p = pairs[0] // again: found in equalKnown
			}
			want := equalValues(p[0], p[1])
			if want && treeAddress(p[0]) != 0 && treeAddress(p[1]) != 0 {
				equal++
				if knownPair(p[0], p[1]) {
					kept++
				}
			}
			if got := equalKept(p[0], p[1]); got != want {
				t.Fatalf("equalKept %v, equalValues %v of\n%#v\n%#v", got, want, p[0], p[1])
			}
		}
	}
	if kept < 500 || equal-kept < 500 {
		t.Errorf("%d equal pairs found in equalKnown, %d walked", kept, equal-kept)
	}
	t.Logf("%d equal pairs found in equalKnown, %d walked", kept, equal-kept)
}

// knownPair says whether equalKnown holds a and b.
func knownPair(a, b any) bool {
	for i := range equalKnown {
		if p := equalKnown[i].Load(); p != nil && sameTree(p.a, a) && sameTree(p.b, b) {
			return true
		}
	}
	return false
}

// TestEqualKeptNotEqual: two trees at addresses found equal before are
// not taken as equal when either is another tree (a list of other
// length from the same first item, a map of another size), and unequal
// ones are never kept.
func TestEqualKeptNotEqual(t *testing.T) {
	list := []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}
	other := []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}
	if !equalKept(list, other) {
		t.Fatal("equal lists not equal")
	}
	if equalKept(list[:1], other) || equalKept(list, other[:1]) {
		t.Error("a shorter list from the same first item taken as equal")
	}
	m := map[string]any{"a": "1"}
	n := map[string]any{"a": "2"}
	if equalKept(m, n) || knownPair(m, n) {
		t.Error("unequal maps equal, or kept")
	}
}
