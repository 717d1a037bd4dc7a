package patch

import (
	"slices"
	"sort"
	"strings"
)

// mergeList merges a patch's list into a list that merges: scalars as a set;
// objects by their merge key, with the directive items {"$patch":"replace"}
// and {<key>: <value>, "$patch": "delete"}.
func mergeList(f *Schema, o, p []any, deleteList bool, depth int, at *path) ([]any, error) {
	if depth++; depth > maxDepth {
		return nil, tooDeep(at)
	}
	if len(o) == 0 && len(p) == 0 {
		return o, nil
	}
	kind, _, err := itemKind(at, o, p)
	if err != nil {
		return nil, err
	}
	o = slices.Clone(o) // the caller may still need the object's list as it was
	if kind != kindObject {
		if deleteList {
			return slices.DeleteFunc(o, func(v any) bool { return indexOf(p, v, "", false) >= 0 }), nil
		}
		var merged []any
		for _, v := range append(o, p...) {
			if indexOf(merged, v, "", false) < 0 {
				merged = append(merged, v)
			}
		}
		patchItems, serverOnly := partition(merged, p, "", false)
		return orderItems(patchItems, serverOnly, p, o, "", false), nil
	}

	key := f.PatchMergeKey
	if key == "" {
		return nil, malformed(at, "a list of objects without a merge key does not merge")
	}
	replace := false
	items := []any{} // the patch's items that are not directives
	for i, v := range p {
		item := v.(map[string]any)
		d, ok := item[directive]
		if !ok {
			items = append(items, v)
			continue
		}
		switch d {
		case "delete":
			kv, ok := item[key] // an object or list matches nothing
			if !ok {
				return nil, malformed(at.item(i), "the item lacks the merge key %q", key)
			}
			o = slices.DeleteFunc(o, func(v any) bool {
				ov, ok := v.(map[string]any)[key]
				return ok && scalarEqual(ov, kv)
			})
		case "replace":
			replace = true
		case "merge":
			return nil, malformed(at.item(i), "%s: merge is not a directive for a list item", directive)
		default:
			return nil, malformed(at.item(i), "unknown %s directive %v", directive, jsonText(d))
		}
	}
	if replace {
		for i, v := range items {
			if _, err := patchKey(v.(map[string]any), key, at.item(i)); err != nil {
				return nil, err
			}
		}
		return items, nil
	}
	for i, v := range o {
		if kv, ok := v.(map[string]any)[key]; ok && !isScalar(kv) {
			return nil, notApplicable(at.item(i), "merge key %q is not a scalar", key)
		}
	}
	merged := slices.Clone(o)
	elem := f.Elem
	for i, v := range items {
		item := v.(map[string]any)
		kv, err := patchKey(item, key, at.item(i))
		if err != nil {
			return nil, err
		}
		j := slices.IndexFunc(merged, func(v any) bool {
			ov, ok := v.(map[string]any)[key]
			return ok && scalarEqual(ov, kv)
		})
		if j < 0 {
			merged = append(merged, item) // as apimachinery adds it: nulls and all
			continue
		}
		m, err := mergeValueObject(elem, merged[j].(map[string]any), item, depth, at.item(j))
		if err != nil {
			return nil, err
		}
		if _, ok := m.(map[string]any); !ok {
			return nil, malformed(at.item(j), "an item of a list of objects must stay an object")
		}
		merged[j] = m
	}
	for i, v := range merged {
		if _, ok := v.(map[string]any)[key]; !ok {
			return nil, notApplicable(at.item(i), "an item lacks the merge key %q", key)
		}
	}
	patchItems, serverOnly := partition(merged, items, key, true)
	return orderItems(patchItems, serverOnly, items, o, key, true), nil
}

// patchKey is the merge key of a patch's list item, which must be a scalar.
func patchKey(item map[string]any, key string, at *path) (any, error) {
	kv, ok := item[key]
	if !ok {
		return nil, malformed(at, "the item lacks the merge key %q", key)
	}
	if !isScalar(kv) {
		return nil, malformed(at.key(key), "a merge key must be a scalar")
	}
	return kv, nil
}

// partition splits merged into the items that are in the list by (found by
// merge key, or by value) and the others, keeping their order.
func partition(merged, by []any, key string, objects bool) (in, out []any) {
	in, out = []any{}, []any{}
	for _, v := range merged {
		if indexOf(by, v, key, objects) >= 0 {
			in = append(in, v)
		} else {
			out = append(out, v)
		}
	}
	return in, out
}

// splitDeleted takes out the items marked for deletion, which apimachinery
// puts last; only an object that already held a "$patch" field can be one.
func splitDeleted(items []any) (keep, deleted []any) {
	keep = make([]any, 0, len(items))
	for _, v := range items {
		if m, ok := v.(map[string]any); ok && m[directive] == "delete" {
			deleted = append(deleted, v)
		} else {
			keep = append(keep, v)
		}
	}
	return keep, deleted
}

// orderItems is the order of a merged list: the patch's items in the
// patch's order, the server's others in the server's order, and the two
// interleaved so that a server item goes before a patch item it preceded
// on the server; a patch item new to the server goes before the server items
// not yet placed. That is apimachinery's order, which clients expect: a
// patch that adds an item puts it first.
func orderItems(patchItems, serverOnly, patchOrder, serverOrder []any, key string, objects bool) []any {
	patchItems = sortBy(patchItems, patchOrder, key, objects)
	serverOnly = sortBy(serverOnly, serverOrder, key, objects)
	out := make([]any, 0, len(patchItems)+len(serverOnly))
	i, j := 0, 0
	for i < len(serverOnly) && j < len(patchItems) {
		si := indexOf(serverOrder, serverOnly[i], key, objects)
		pj := indexOf(serverOrder, patchItems[j], key, objects)
		if si >= 0 && pj >= 0 && si < pj {
			out = append(out, serverOnly[i])
			i++
		} else {
			out = append(out, patchItems[j])
			j++
		}
	}
	out = append(out, serverOnly[i:]...)
	return append(out, patchItems[j:]...)
}

// sortBy orders items by where they are in order; objects marked for
// deletion go last, unsorted. An item not in order compares as less than any
// other, both ways: apimachinery's comparison, kept so that the stable sort
// moves such items exactly as it does there.
func sortBy(items, order []any, key string, objects bool) []any {
	var deleted []any
	if objects {
		items, deleted = splitDeleted(items)
	}
	sort.SliceStable(items, func(a, b int) bool {
		if ia := indexOf(order, items[a], key, objects); ia >= 0 {
			if ib := indexOf(order, items[b], key, objects); ib >= 0 {
				return ia < ib
			}
		}
		return true
	})
	return append(items, deleted...)
}

// indexOf is the index of v in list: of the first object with the same
// merge key value (a missing key matches a missing key), or of the first
// equal scalar.
func indexOf(list []any, v any, key string, objects bool) int {
	if !objects {
		return slices.IndexFunc(list, func(x any) bool { return scalarEqual(x, v) })
	}
	want := mergeKeyOf(v, key)
	return slices.IndexFunc(list, func(x any) bool { return scalarEqual(mergeKeyOf(x, key), want) })
}

func mergeKeyOf(v any, key string) any {
	m, _ := v.(map[string]any)
	return m[key]
}

func isScalar(v any) bool {
	k := kindOf(v)
	return k != kindObject && k != kindArray
}

// scalarEqual compares scalars as apimachinery does, whose integers and
// floats are different types: 1 and 1.0 are different values. Objects and
// lists are never equal.
func scalarEqual(a, b any) bool {
	switch a.(type) {
	case nil, string, bool, int64, float64:
		return a == b
	}
	return false
}

// setElementOrder applies the directive $setElementOrder/<field>: the
// field's list, merged with the patch's list of that field (which this then
// removes from p), is put in the directive's order; the server's other items
// go between as orderItems places them.
func setElementOrder(s *Schema, o, p map[string]any, directiveKey string, depth int, at *path) error {
	order := p[directiveKey]
	delete(p, directiveKey)
	at = at.key(directiveKey)
	name, ok := strings.CutPrefix(directiveKey, setOrderPrefix+"/")
	if !ok {
		return malformed(at, "a %s directive must name its list: %s/<field>", setOrderPrefix, setOrderPrefix)
	}
	orderList, ok := order.([]any)
	if !ok {
		return malformed(at, "must be a list")
	}
	ov, inOriginal := o[name]
	pv, inPatch := p[name]
	oList, ok := ov.([]any)
	if inOriginal && !ok {
		return notApplicable(at, "the field it orders is not a list")
	}
	pList, ok := pv.([]any)
	if inPatch && !ok {
		return malformed(at, "the field it orders is not a list in the patch")
	}
	f := s.Field(name)
	if f == nil || f.Kind != List {
		return malformed(at, "the field it orders is not a list")
	}
	key := f.PatchMergeKey
	if err := checkOrderList(pList, orderList, key, at); err != nil {
		return err
	}
	var merged []any
	switch {
	case !inOriginal && !inPatch:
		return nil
	case !inPatch:
		merged = oList
	case !inOriginal:
		v, _, err := clean(pList, false, depth)
		if err != nil {
			return err
		}
		merged = v.([]any)
	default:
		var err error
		merged, err = mergeValueList(f, oList, pList, false, depth, at)
		if err != nil {
			return err
		}
	}
	delete(p, name)
	kind, found, err := itemKind(at, oList, pList)
	if err != nil {
		return err
	}
	if !found {
		// Nothing to order. apimachinery fails here ("no elements in any of
		// the given slices"); an empty list needs no order.
		o[name] = merged
		return nil
	}
	objects := key != ""
	if !objects {
		for _, v := range slices.Concat(merged, orderList) {
			if !isScalar(v) {
				return malformed(at, "a list without a merge key is ordered by its scalar items")
			}
		}
	} else {
		for _, v := range merged {
			m, ok := v.(map[string]any)
			if !ok {
				return malformed(at, "the items of a list with a merge key must be objects")
			}
			if _, ok := m[key]; !ok {
				return notApplicable(at, "an item lacks the merge key %q", key)
			}
		}
	}
	patchItems, serverOnly := partitionByOrder(merged, orderList, key, objects)
	if kind == kindObject {
		for _, l := range [][]any{patchItems, orderList, serverOnly, oList} {
			for _, v := range l {
				m, ok := v.(map[string]any)
				if !ok {
					return malformed(at, "the items of a list of objects must be objects")
				}
				if _, ok := m[key]; !ok {
					return malformed(at, "an item lacks the merge key %q", key)
				}
			}
		}
	}
	o[name] = orderItems(patchItems, serverOnly, orderList, oList, key, kind == kindObject)
	return nil
}

// checkOrderList checks that the patch's items of a list (less deletions)
// come in the order $setElementOrder gives. Other directive items are
// skipped while the order lasts; after it, like any item, they are out of
// order (so apimachinery has it).
func checkOrderList(patchList, orderList []any, key string, at *path) error {
	if len(patchList) == 0 || len(orderList) == 0 {
		return nil
	}
	var items []any
	for _, v := range patchList {
		m, ok := v.(map[string]any)
		if key != "" && !ok {
			return malformed(at, "the items of a list with a merge key must be objects")
		}
		if key != "" && m[directive] == "delete" {
			continue
		}
		items = append(items, v)
	}
	i, j := 0, 0
	for i < len(items) && j < len(orderList) {
		if m, ok := items[i].(map[string]any); ok {
			if _, ok := m[directive]; ok {
				i++
				continue
			}
		}
		want := orderList[j]
		var same bool
		if key == "" {
			if !isScalar(items[i]) || !isScalar(want) {
				return malformed(at, "a list without a merge key is ordered by its scalar items")
			}
			same = scalarEqual(items[i], want)
		} else {
			w, ok := want.(map[string]any)
			if !ok {
				return malformed(at, "must list objects with the merge key %q", key)
			}
			a, oka := items[i].(map[string]any)[key]
			b, okb := w[key]
			if !oka || !okb {
				return malformed(at, "an item lacks the merge key %q", key)
			}
			same = scalarEqual(a, b)
		}
		if same {
			i++
		}
		j++
	}
	if i < len(items) {
		return malformed(at, "the patch's list is not in the order the directive gives")
	}
	return nil
}

// partitionByOrder splits merged into the items $setElementOrder names and
// the others.
func partitionByOrder(merged, order []any, key string, objects bool) (in, out []any) {
	if !objects {
		return partition(merged, order, "", false)
	}
	in, out = []any{}, []any{}
	for _, v := range merged {
		kv := v.(map[string]any)[key]
		found := slices.ContainsFunc(order, func(x any) bool {
			m, ok := x.(map[string]any)
			ov, has := m[key]
			return ok && has && scalarEqual(ov, kv)
		})
		if found {
			in = append(in, v)
		} else {
			out = append(out, v)
		}
	}
	return in, out
}
