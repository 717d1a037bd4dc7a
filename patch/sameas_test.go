package patch

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonwrite"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// TestSameAsRandom holds typedWalk.sameAs, which takes a live member for
// the configuration's when its tree built with the configuration's as
// its hint is that tree, to equalValues of the member's own tree and the
// configuration's: random widgets, and configurations made from their
// trees (repeated, respelled, revalued, mutated), member by member at the
// root, in metadata and in spec. A member sameAs takes and equalValues
// does not would be moved from the configuration where the live value
// differs; one equalValues takes and sameAs does not costs the walk a
// second build only, and is counted.
func TestSameAsRandom(t *testing.T) {
	s, seedTree := typedWidgetSeed(t)
	root := typedRootOf(reflect.TypeFor[typedWidget](), s)
	if root == nil {
		t.Fatal("no typed plan for typedWidget")
	}
	r := rand.New(rand.NewSource(1))
	var same, equal, members int
	for range race.Cases(2000) {
		live := randomWidget(r, s, seedTree)
		if live == nil {
			continue
		}
		tree, _, ok := typedTree(live, nil)
		if !ok {
			continue
		}
		var cfg any
		switch r.Intn(4) {
		case 0:
			cfg = tree
		case 1:
			cfg = respell(r, tree, s)
		case 2:
			cfg = revalue(r, tree, s, 0)
		default:
			cfg = mutate(r, tree, s, 0)
		}
		cm, _ := cfg.(map[string]any)
		var check func(n *typedNode, v reflect.Value, cfg, tree map[string]any, depth int)
		check = func(n *typedNode, v reflect.Value, cfg, tree map[string]any, depth int) {
			for i := range n.members {
				m := &n.members[i]
				cv, cok := cfg[m.name]
				fv, has := jsonwrite.FieldOf(v, m.index)
				if !cok || !has || m.omit != nil && m.omit(fv) {
					continue
				}
				members++
				w := typedWalk{build: new(treeBuild)}
				got := w.sameAs(m, fv, depth, cv)
				lv, lok := tree[m.name]
				want := lok && equalValues(lv, cv)
				if got && !want {
					t.Fatalf("sameAs takes member %q: live %#v, configuration %#v", m.name, lv, cv)
				}
				if got {
					same++
				}
				if want {
					equal++
				}
				if sub, isMap := cv.(map[string]any); isMap && m.sub != nil {
					lt, _ := lv.(map[string]any)
					check(m.sub, fv, sub, lt, depth+1)
				}
			}
		}
		check(root, reflect.ValueOf(live).Elem(), cm, tree, 1)
	}
	t.Logf("%d members: %d equal, %d of them taken by sameAs", members, equal, same)
	if same < equal*9/10 {
		t.Errorf("sameAs took %d of %d equal members", same, equal)
	}
}
