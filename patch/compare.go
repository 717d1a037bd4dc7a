package patch

import (
	"encoding/json"
	"reflect"
)

// comparison is what changed between two values, as Kubernetes' Compare
// reports it. Its walk extends the path in place and copies it only into
// the sets: an update compares every node of the object and changes few.
type comparison struct {
	added, modified, removed fieldSet
	arena                    []pathElement // where the sets' paths are copied to
}

// clone copies a path into the comparison's arena: one allocation for
// many paths. The first holds a few short paths (an update changes one
// or two fields, and 16 elements were a fifth of its comparison's bytes).
func (c *comparison) clone(p fieldPath) fieldPath {
	if len(c.arena)+len(p) > cap(c.arena) {
		c.arena = make([]pathElement, 0, max(8, 2*cap(c.arena), len(p)))
	}
	n := len(c.arena)
	c.arena = append(c.arena, p...)
	return c.arena[n:len(c.arena):len(c.arena)]
}

// add puts a copy of p in set, which is made when the first path goes in:
// a comparison of stored documents starts with none (compareStored), and
// an update changes a field or two, adding and removing none.
func (c *comparison) add(set *fieldSet, p fieldPath) {
	if *set == nil {
		*set = fieldSet{}
	}
	set.insert(c.clone(p))
}

// compareObjects compares two trees; its sets are made as their first
// paths go in (add), nil while empty: an apply changes a field or two and
// adds and removes none.
func compareObjects(lhs, rhs any, s *Schema) comparison {
	var c comparison
	c.walk(lhs, true, rhs, true, s, make(fieldPath, 0, pathDepth))
	return c
}

func (c *comparison) leaf(l any, lok bool, r any, rok bool, path fieldPath) {
	switch {
	case !lok:
		c.add(&c.added, path)
	case !rok:
		c.add(&c.removed, path)
	case !equalValues(l, r):
		c.add(&c.modified, path)
	}
}

func (c *comparison) walk(l any, lok bool, r any, rok bool, s *Schema, path fieldPath) {
	if s != nil && s.Kind == Deduced {
		s = c.deduced(l, lok, r, rok, path)
	}
	if isLeaf(s) {
		c.leaf(l, lok, r, rok, path)
		return
	}
	switch s.Kind {
	case List:
		ll, _ := l.([]any)
		rl, _ := r.([]any)
		if len(ll) == 0 && len(rl) == 0 {
			c.leaf(l, lok, r, rok, path)
			return
		}
		if lok && rok && (sameList(ll, rl) || equalValues(l, r)) {
			return // nothing in it changed; naming its items allocates
		}
		c.listItems(ll, rl, s, path)
	case Map, Struct:
		lm, _ := l.(map[string]any)
		rm, _ := r.(map[string]any)
		if len(lm) == 0 && len(rm) == 0 {
			c.leaf(l, lok, r, rok, path)
			return
		}
		if lok && rok && sameMap(lm, rm) {
			return // one value on both sides (merge keeps what it leaves alone)
		}
		for k, lv := range lm {
			rv, ok := rm[k]
			c.walk(lv, true, rv, ok, s.Field(k), append(path, fieldElement(k)))
		}
		for k, rv := range rm {
			if _, ok := lm[k]; !ok {
				c.walk(nil, false, rv, true, s.Field(k), append(path, fieldElement(k)))
			}
		}
	}
	if !lok {
		c.add(&c.added, path)
	} else if !rok {
		c.add(&c.removed, path)
	}
}

// deduced is the schema walk compares two values of a Deduced schema
// with: a map when both present are objects (null read as one, as
// structured-merge-diff reads it), else a leaf. As structured-merge-diff
// compares an object with a value of another kind (each side by its own
// type), the object's members are compared with nothing first: they are
// added or removed, and the value modified.
func (c *comparison) deduced(l any, lok bool, r any, rok bool, path fieldPath) *Schema {
	lm, _ := l.(map[string]any)
	rm, _ := r.(map[string]any)
	lobj, robj := objectLike(l), objectLike(r)
	switch {
	case (lobj || !lok) && (robj || !rok):
		return deducedObject
	case lobj && rok:
		for k, v := range lm {
			c.walk(v, true, nil, false, deducedObject.Elem, append(path, fieldElement(k)))
		}
	case robj && lok:
		for k, v := range rm {
			c.walk(nil, false, v, true, deducedObject.Elem, append(path, fieldElement(k)))
		}
	}
	return untyped
}

// listItems compares a granular list item by item; an item named more than
// once is compared whole. Each item is named once (naming allocates), and
// a short list's items are matched without a map.
func (c *comparison) listItems(ll, rl []any, s *Schema, path fieldPath) {
	type items struct {
		elem pathElement
		l, r sideValues
	}
	order := make([]items, 0, len(ll)+len(rl)) // in order of first appearance, left then right
	var index map[string]int
	if len(ll)+len(rl) > indexAt {
		index = make(map[string]int, len(ll)+len(rl))
	}
	find := func(e pathElement) *items {
		if index != nil {
			if i, ok := index[e.str]; ok {
				return &order[i]
			}
		} else {
			for i := range order {
				if order[i].elem.str == e.str {
					return &order[i]
				}
			}
		}
		order = append(order, items{elem: e})
		if index != nil {
			index[e.str] = len(order) - 1
		}
		return &order[len(order)-1]
	}
	for i, side := range [2][]any{ll, rl} {
		for _, item := range side {
			e, err := itemElement(s, item)
			if err != nil {
				continue
			}
			x := find(e)
			if i == 0 {
				x.l.add(item)
				continue
			}
			if x.r.n == 0 {
				x.elem = e // named as the right names it
			}
			x.r.add(item)
		}
	}
	for i := range order {
		x := &order[i]
		p := append(path, x.elem)
		switch {
		case x.l.n <= 1 && x.r.n <= 1:
			c.walk(x.l.first, x.l.n == 1, x.r.first, x.r.n == 1, s.Elem, p)
		case x.l.n >= 2 && x.r.n >= 2:
			if !equalValues(x.l.all, x.r.all) {
				c.add(&c.modified, p)
			}
		case x.l.n >= 2:
			if x.r.n == 1 {
				c.walk(nil, false, x.r.first, true, s.Elem, p)
			}
			c.add(&c.removed, p)
		default:
			if x.l.n == 1 {
				c.walk(x.l.first, true, nil, false, s.Elem, p)
			}
			c.add(&c.added, p)
		}
	}
}

// sideValues are the values of one side of a comparison that a list item
// names: the first, how many, and all of them once there are two.
type sideValues struct {
	first any
	n     int
	all   []any
}

func (v *sideValues) add(item any) {
	switch v.n++; v.n {
	case 1:
		v.first = item
	case 2:
		v.all = []any{v.first, item}
	default:
		v.all = append(v.all, item)
	}
}

// sameMap and sameList say whether a and b are one value, not only equal
// ones (both not empty).
func sameMap(a, b map[string]any) bool {
	return len(a) > 0 && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func sameList(a, b []any) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

func equalValues(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if sameList(x, y) {
			return true
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if sameMap(x, y) {
			return true
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalValues(v, w) {
				return false
			}
		}
		return true
	}
	switch y := b.(type) {
	case []any, map[string]any:
		return false
	case string:
		x, ok := a.(string)
		return ok && x == y // what compareValues says of two strings, without ranking them
	case json.Number:
		if x, ok := a.(json.Number); ok {
			if x == y {
				return true // one literal: compareValues would parse both
			}
			if plainInteger(x) && plainInteger(y) {
				return false // two integers each written one way only
			}
		}
	}
	return compareValues(a, b) == 0
}

// plainInteger says whether n is an integer in the one way of writing
// it that has no leading zero, sign of zero, fraction or exponent, and
// short enough for an int64: two such literals that differ are
// different numbers (a re-apply's changed field), told without parsing.
func plainInteger(n json.Number) bool {
	s := string(n)
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
		if s == "0" {
			return false // -0 is 0
		}
	}
	if len(s) == 0 || len(s) > 18 || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
