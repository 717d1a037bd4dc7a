package patch

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/kapi-dev/kapi"
)

// An apply reads the live object as a tree (typedTree), and the next apply
// to the object reads its next version, most of which is as it was: the
// labels, the lists, the parts the configuration did not change, and all of
// it when the apply changed nothing (a controller's or kubectl's re-apply).
// liveHints keeps the tree of each object applied to lately, by its uid, as
// the hint of its next build: a map or list of the new tree equal to the
// one at its place in the hint is the hint's, not made again. A hint is
// only ever compared with, so a wrong one (another object's, an older
// version's) costs the comparison and changes nothing. Trees are never
// changed once built, so they may be shared.
//
// The hints are kept in sets of liveHintWays by a hash of the uid, the
// oldest one stored replaced: with one hint a slot, two objects applied to
// in turn whose uids fell in one slot each replaced the other's hint at
// every apply, and both took the whole-tree path each time (the load
// harness's 8 widgets, with random uids, had such a pair in about a third
// of its runs).
var liveHints [liveHintSets][liveHintWays]atomic.Pointer[liveHint]

const (
	liveHintSets = 16
	liveHintWays = 4
)

// liveHintStores orders the hints stored, for the oldest of a set to go.
var liveHintStores atomic.Uint64

// maxHintNodes bounds the memory liveHints holds: the maps and lists of an
// object's tree, past which its tree is not kept.
const maxHintNodes = 1024

// liveHint is the tree of one object, validated with schema.
type liveHint struct {
	uid    string
	schema *Schema
	tree   map[string]any
	stored uint64 // liveHintStores when stored
}

// liveHintSet is the set of an object's hint: by its uid, nil if obj has
// none.
func liveHintSet(obj any) (*[liveHintWays]atomic.Pointer[liveHint], string) {
	o, ok := obj.(interface{ GetObjectMeta() *kapi.ObjectMeta })
	if !ok {
		return nil, ""
	}
	uid := string(o.GetObjectMeta().UID)
	if uid == "" {
		return nil, ""
	}
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(uid); i++ {
		h = (h ^ uint32(uid[i])) * 16777619
	}
	return &liveHints[h%liveHintSets], uid
}

// storeHint keeps h in set: in place of the uid's hint, else of none,
// else of the oldest. Two stores at once may pick one way: a hint lost
// costs the next apply a build, nothing else.
func storeHint(set *[liveHintWays]atomic.Pointer[liveHint], h *liveHint) {
	h.stored = liveHintStores.Add(1)
	victim, oldest := -1, uint64(0)
	for i := range set {
		switch old := set[i].Load(); {
		case old != nil && old.uid == h.uid:
			set[i].Store(h)
			return
		case old == nil:
			oldest, victim = 0, i
		case victim < 0 || old.stored < oldest:
			oldest, victim = old.stored, i
		}
	}
	set[victim].Store(h)
}

// liveTree is liveObject of live, or, given obj, live as a Go value
// (ApplyOptions.Live), the tree of obj: built where it can be (from the
// object's hint), else read from obj's JSON.
func (s *Schema) liveTree(live []byte, obj any) (map[string]any, error) {
	if obj == nil {
		return s.liveObject(live)
	}
	set, uid := liveHintSet(obj)
	hint := setHint(set, uid)
	var hintTree map[string]any
	if hint != nil {
		hintTree = hint.tree
	}
	m, built, ok := typedTree(obj, hintTree)
	if !ok {
		// Read obj's JSON, not live: a field the stored JSON still holds
		// but obj's type no longer declares is unseen on both paths, as
		// kube-apiserver's field manager, reading the decoded object,
		// never sees it.
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("%w: object: %v", ErrNotApplicable, err)
		}
		return s.liveObject(b)
	}
	var validated any // a tree validated with s, whose parts m may share
	if hint != nil && hint.schema == s {
		validated = hint.tree
	}
	if !validFrom(m, validated, s) {
		if err := validate(m, s, make(fieldPath, 0, pathDepth), true); err != nil {
			return nil, fmt.Errorf("%w: object: %v", ErrNotApplicable, err)
		}
	}
	if sameTree(m, validated) {
		return m, nil // kept already
	}
	if set != nil && built.nodes <= maxHintNodes {
		storeHint(set, &liveHint{uid: uid, schema: s, tree: m})
	}
	return m, nil
}

// liveHintOf is obj's hint, nil if none.
func liveHintOf(obj any) *liveHint {
	return setHint(liveHintSet(obj))
}

func setHint(set *[liveHintWays]atomic.Pointer[liveHint], uid string) *liveHint {
	if set == nil {
		return nil
	}
	for i := range set {
		if h := set[i].Load(); h != nil && h.uid == uid {
			return h
		}
	}
	return nil
}

// validFrom is valid(v, s, true) of a live tree v built from the tree
// validated, validated with s (nil if none): the parts of v that are
// validated's are not walked again. An object's members are looked at one
// by one; any other value is valid's.
func validFrom(v, validated any, s *Schema) bool {
	if validated != nil && sameTree(v, validated) {
		return true
	}
	vm, isMap := v.(map[string]any)
	hm, _ := validated.(map[string]any)
	if !isMap || hm == nil || s.anyValue() || s.Kind != Struct && s.Kind != Map {
		return valid(v, s, true)
	}
	for k, child := range vm {
		cs := s.Field(k)
		if cs == nil {
			return false
		}
		h, has := hm[k]
		if !has {
			h = nil
		}
		if !validFrom(child, h, cs) {
			return false
		}
	}
	return true
}
