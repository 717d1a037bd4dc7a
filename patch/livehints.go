package patch

import (
	"encoding/json"
	"fmt"

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
// The hints are kept in sets of ways by a hash of the uid (see ways).
var liveHints [16]ways[liveHint, *liveHint]

// maxHintNodes bounds the memory liveHints holds: the maps and lists of an
// object's tree, past which its tree is not kept.
const maxHintNodes = 1024

// liveHint is the tree of one object, validated with schema.
type liveHint struct {
	uid    string
	schema *Schema
	tree   map[string]any
	wayStamp
}

// liveHintSet is the set of an object's hint: by its uid, nil if obj has
// none.
func liveHintSet(obj any) (*ways[liveHint, *liveHint], string) {
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
	return &liveHints[h%uint32(len(liveHints))], uid
}

// storeHint keeps h in set, in place of its uid's hint if there is one.
func storeHint(set *ways[liveHint, *liveHint], h *liveHint) {
	set.store(h, func(old *liveHint) bool { return old.uid == h.uid })
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

func setHint(set *ways[liveHint, *liveHint], uid string) *liveHint {
	if set == nil {
		return nil
	}
	return set.find(func(h *liveHint) bool { return h.uid == uid })
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
