package patch

import (
	"reflect"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/internal/deepequal"
	"github.com/kapi-dev/kapi/internal/jsonwrite"
)

// An update's comparison of the stored documents (compareStored) reads
// the whole of old, to check it against the schema, and new where it
// differs: most of an update's recording. A server holds both objects as
// Go values (UpdateOptions.Old, New), and most of their members are equal
// ones, which have no changes to report: the typed comparison walks the
// two side by side with the typed apply's plan (typedRootOf), passes over
// the members whose Go values are equal, and compares the trees of those
// that are not, as compareObjects compares them.
//
// It gives compareObjects' answer on liveObject(old) and liveObject(new),
// which compareStored gives when it can tell (and the decoding fallback
// otherwise), because:
//   - old and new are the Go values' JSON (the caller's word; see
//     UpdateOptions.Old), but for metadata.resourceVersion, which the walk
//     passes over as the stored documents leave it out;
//   - a value of a type typedValid takes has a tree that valid takes, and
//     the tree is liveObject of its JSON (or the tree plan says no, and
//     the walk gives up): the documents' reading never fails, and the
//     members' trees are what it reads;
//   - two equal Go values write one JSON, with nothing to report; two
//     unequal ones may too (a time's nanoseconds), and their trees say so,
//     but for booleans, integers and UTF-8 strings (typedMember.scalar),
//     which write apart and are modified;
//   - a struct member present on both sides is compared member by member,
//     as walk compares two maps of the struct's schema key by key.
//
// Anything else (no values, a type or schema it does not take, a tree it
// cannot build) leaves the documents to compareStored, as before.

// compareTyped is compareObjects of the trees of old and new, values of
// one struct type, for Update; ok false where it does not tell.
func compareTyped(old, new any, s *Schema) (c comparison, ok bool) {
	if !typedUpdateOn || old == nil || new == nil || s == nil || s.Kind != Struct || isLeaf(s) {
		return c, false
	}
	l, r := reflect.ValueOf(old), reflect.ValueOf(new)
	if l.Type() != r.Type() || l.Kind() != reflect.Pointer || l.IsNil() || r.IsNil() || l.Elem().Kind() != reflect.Struct {
		return c, false
	}
	root := typedRootOf(l.Type().Elem(), s)
	if root == nil {
		return c, false
	}
	path := make(fieldPath, 0, pathDepth)
	ok = c.typedMembers(root, l.Elem(), r.Elem(), path) // before c is read: a return's operands have no order but their calls'
	return c, ok
}

// typedMembers compares the members of l and r, structs of plan n at path.
func (c *comparison) typedMembers(n *typedNode, l, r reflect.Value, path fieldPath) bool {
	metadata := len(path) == 1 && path[0].kind == 'f' && path[0].field == "metadata"
	for i := range n.members {
		m := &n.members[i]
		switch {
		case metadata && m.name == "resourceVersion":
			continue // the stored documents have none
		case len(path) == 0 && m.name == "metadata" && m.sub == nil:
			return false // its tree would hold the resourceVersion
		}
		lv, lhas := jsonwrite.FieldOf(l, m.index)
		rv, rhas := jsonwrite.FieldOf(r, m.index)
		lok := lhas && (m.omit == nil || !m.omit(lv))
		rok := rhas && (m.omit == nil || !m.omit(rv))
		if !lok && !rok {
			continue
		}
		p := append(path, fieldElement(m.name))
		if lok && rok {
			if deepequal.Values(lv, rv) {
				continue
			}
			if m.scalar && (lv.Kind() != reflect.String || utf8.ValidString(lv.String()) && utf8.ValidString(rv.String())) {
				c.add(&c.modified, p) // as stored says of two plain scalars
				continue
			}
			if m.sub != nil {
				if !c.typedMembers(m.sub, lv, rv, p) {
					return false
				}
				continue
			}
		}
		var lt, rt any
		var b treeBuild
		if lok {
			if lt, lok = m.tree.call(lv, len(p), nil, &b); !lok {
				return false
			}
		}
		if rok {
			if rt, rok = m.tree.call(rv, len(p), nil, &b); !rok {
				return false
			}
		}
		c.walk(lt, lok, rt, rok, m.schema, p)
	}
	return true
}

// typedUpdateOn is off only in the tests that hold the typed comparison
// to the documents' (compareStored and the decoding fallback).
var typedUpdateOn = true
