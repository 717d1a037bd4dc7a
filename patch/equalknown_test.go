package patch

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
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
			if got := equalKept(p[0], p[1], true); got != want {
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
	if !equalKept(list, other, true) {
		t.Fatal("equal lists not equal")
	}
	if equalKept(list[:1], other, true) || equalKept(list, other[:1], true) {
		t.Error("a shorter list from the same first item taken as equal")
	}
	m := map[string]any{"a": "1"}
	n := map[string]any{"a": "2"}
	if equalKept(m, n, true) || knownPair(m, n) {
		t.Error("unequal maps equal, or kept")
	}
	// Equal, but not to be kept: a tree made for one apply alone.
	once := map[string]any{"a": "1", "b": []any{"c"}}
	same := map[string]any{"a": "1", "b": []any{"c"}}
	if !equalKept(once, same, false) || knownPair(once, same) {
		t.Error("equal maps not equal, or kept when not to be")
	}
}

// TestEqualKnownSpread: pairs of trees allocated alike fill most of
// equalKnown's slots, not the few their addresses' low bits would pick.
func TestEqualKnownSpread(t *testing.T) {
	for i := range equalKnown {
		equalKnown[i].Store(nil)
	}
	for range 4 * len(equalKnown) {
		a, b := make([]any, 512), make([]any, 512) // 8 KiB each: their addresses alike in their low bits
		a[0], b[0] = "x", "x"
		equalKept(a, b, true)
	}
	used := 0
	for i := range equalKnown {
		if equalKnown[i].Load() != nil {
			used++
		}
	}
	if used < len(equalKnown)/2 {
		t.Errorf("%d pairs of lists filled %d of %d slots", 4*len(equalKnown), used, len(equalKnown))
	}
}

// TestEqualKnownHoldsHintsOnly: a live member changed since its object's
// hint is a tree made for this apply, which equalKnown must not keep even
// where the configuration repeats it: it would hold a tree of any size
// that no hint holds. Members read from the hint are kept.
func TestEqualKnownHoldsHintsOnly(t *testing.T) {
	clearLiveHints()
	s, err := SchemaOf(reflect.TypeFor[hintKeyed]())
	if err != nil {
		t.Fatal(err)
	}
	apply := func(port int32) {
		doc := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"ports":[{"name":"a","port":%d}]}`, port)
		managed, err := s.Update(nil, []byte(doc), nil, UpdateOptions{Manager: "creator", APIVersion: "example.com/v1"})
		if err != nil {
			t.Fatal(err)
		}
		config, err := ParseConfiguration([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		obj := &hintKeyed{ObjectMeta: kapi.ObjectMeta{Name: "w", UID: "equal-known-hints-only", ManagedFields: managed}, Ports: []hintPort{{Name: "a", Port: port}}}
		if _, _, err := s.ApplyMerged(nil, config, managed, ApplyOptions{Manager: "alice", APIVersion: "example.com/v1", Force: true, Live: obj}); err != nil {
			t.Fatal(err)
		}
	}
	apply(1) // keeps the object's hint
	for i := range equalKnown {
		equalKnown[i].Store(nil)
	}
	changed, err := decodeJSON([]byte(`[{"name":"a","port":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	keeps := func() bool {
		for i := range equalKnown {
			if p := equalKnown[i].Load(); p != nil && equalValues(p.a, changed) {
				return true
			}
		}
		return false
	}
	apply(2) // its ports changed since the hint: built for this apply
	if keeps() {
		t.Error("equalKnown keeps the changed ports, a tree no hint held")
	}
	apply(2) // now read from the hint the last apply kept
	if !keeps() {
		t.Error("equalKnown does not keep the ports read from the hint")
	}
}
