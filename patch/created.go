package patch

import "slices"

// A create makes every field of the object its manager's: compareObjects
// of {} and the object adds every node that has a path. With no other
// manager to take fields from, the manager's set is written straight from
// the decoded object, without the comparison's paths and sets: each node
// is a member, but what the server owns and the ignored top-level fields,
// and the children of a list item named twice are not listed (that item
// is owned whole). TestCreatedFieldsRandom and FuzzCreatedFields hold it
// to the general way.

// createdFields is the FieldsV1 of the Update entry a create of obj
// records, with ignore the ignored top-level fields; nil when it owns
// nothing.
func (s *Schema) createdFields(obj map[string]any, ignore []string) []byte {
	w := createdWriter{ignore: ignore}
	w.b = make([]byte, 0, 1024)
	w.b = append(w.b, '{')
	if w.children(obj, s, levelRoot, false) == 0 {
		return nil
	}
	return append(w.b, '}')
}

type createdWriter struct {
	b      []byte
	ignore []string
	keys   []string // a stack of object keys being sorted, shared by the levels
}

// children writes the members of v's FieldsV1 node, the first after a
// comma if comma (a "." entry is written); it returns how many it wrote.
func (w *createdWriter) children(v any, s *Schema, level int, comma bool) int {
	if isLeaf(s) {
		return 0
	}
	n := 0
	switch s.Kind {
	case List:
		l, _ := v.([]any)
		if len(l) == 0 {
			return 0
		}
		type item struct {
			elem  pathElement
			value any
			count int
		}
		items := make([]item, 0, len(l))
		for _, it := range l {
			e, err := itemElement(s, it)
			if err != nil {
				continue
			}
			if i := slices.IndexFunc(items, func(x item) bool { return x.elem.str == e.str }); i >= 0 {
				items[i].count++
				continue
			}
			items = append(items, item{elem: e, value: it, count: 1})
		}
		slices.SortFunc(items, func(a, b item) int { return compareElements(a.elem, b.elem) })
		for _, it := range items {
			if w.node(it.elem, it.value, s.Elem, true, it.count > 1, levelOther, comma || n > 0) {
				n++
			}
		}
	case Map, Struct:
		m, _ := v.(map[string]any)
		if len(m) == 0 {
			return 0
		}
		base := len(w.keys)
		for k := range m {
			w.keys = append(w.keys, k)
		}
		keys := w.keys[base:]
		slices.Sort(keys)
		for i := range keys {
			k := w.keys[base+i] // w.keys may have grown below
			member, childLevel := true, levelOther
			switch level {
			case levelRoot:
				if slices.Contains(w.ignore, k) {
					continue
				}
				switch k {
				case "apiVersion", "kind":
					member = false
				case "metadata":
					member, childLevel = false, levelMetadata
				}
			case levelMetadata:
				switch k {
				case "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields", "resourceVersion":
					member = false
				}
			}
			if w.node(fieldElement(k), m[k], s.Field(k), member, false, childLevel, comma || n > 0) {
				n++
			}
		}
		w.keys = w.keys[:base]
	}
	return n
}

// node writes one element and its node, after a comma if comma; a
// non-member with nothing below it is not written. whole says nothing
// below the node is listed (a list item named twice is owned whole).
func (w *createdWriter) node(e pathElement, v any, s *Schema, member, whole bool, level int, comma bool) bool {
	start := len(w.b)
	if comma {
		w.b = append(w.b, ',')
	}
	w.b = appendElementJSON(w.b, e)
	w.b = append(w.b, ':', '{')
	open := len(w.b)
	if member {
		w.b = append(w.b, `".":{}`...)
	}
	n := 0
	if !whole {
		n = w.children(v, s, level, member)
	}
	switch {
	case n > 0:
	case member:
		w.b = w.b[:open] // no children: no "."
	default:
		w.b = w.b[:start]
		return false
	}
	w.b = append(w.b, '}')
	return true
}
