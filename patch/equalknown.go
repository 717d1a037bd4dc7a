package patch

import (
	"reflect"
	"sync/atomic"
)

// A re-apply compares the members its configuration names with the live
// object's (the typed walk's equalValues of the two trees), and the next
// re-apply compares the same two trees again: the configuration's objects
// and lists are the trees kept for their bytes (configTrees), the live
// object's those of its hint (liveHints), which a build keeps where the
// object did not change. Trees are never changed once built, so two found
// equal stay equal: equalKnown keeps such pairs lately found, by the
// addresses of their maps or lists, and a pair found there is equal
// without a walk of either. Each pair holds its trees, so no other tree
// is made at their addresses while it is kept.
var equalKnown [1 << equalKnownBits]atomic.Pointer[equalPair]

const equalKnownBits = 8

type equalPair struct{ a, b any }

// equalKept is equalValues(a, b), found in equalKnown where a and b are
// maps or lists found equal before, and kept there if found equal now and
// keep: a is its hint's tree (liveHints), so that the pair may be met
// again and holds no more than a hint does (b, equal to a, is as large).
// A pair of a tree made for this apply alone would never be found again,
// and would hold a tree of any size until its slot is taken.
func equalKept(a, b any, keep bool) bool {
	pa, pb := treeAddress(a), treeAddress(b)
	if pa == 0 || pb == 0 || pa == pb {
		return equalValues(a, b)
	}
	// The high bits of a multiplicative hash: its low ones are the
	// addresses' low bits, the same for trees allocated alike.
	h := (uint64(pa)*0x9e3779b97f4a7c15 ^ uint64(pb)) * 0xbf58476d1ce4e5b9
	slot := &equalKnown[h>>(64-equalKnownBits)]
	if p := slot.Load(); p != nil && sameTree(p.a, a) && sameTree(p.b, b) {
		return true
	}
	if !equalValues(a, b) {
		return false
	}
	if keep {
		slot.Store(&equalPair{a, b})
	}
	return true
}

// treeAddress is the address of v's map or of its list's first item; 0
// for an empty one or any other value.
func treeAddress(v any) uintptr {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			return reflect.ValueOf(x).Pointer()
		}
	case []any:
		if len(x) > 0 {
			return reflect.ValueOf(&x[0]).Pointer() // a pointer: no copy of the slice made to box it
		}
	}
	return 0
}
