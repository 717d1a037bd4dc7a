package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// The walks below are the operations of Kubernetes' structured merge over a
// value and its Schema: list a value's fields, compare two values, merge a
// configuration into a value, remove a set of fields. They follow
// structured-merge-diff's rules, edge cases included, because clients see
// the objects and managedFields they produce.

func canonicalNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, ok := asInt(x); ok {
			return json.Number(strconv.FormatInt(i, 10))
		}
		if f, err := x.Float64(); err == nil {
			b, _ := json.Marshal(f) // as Kubernetes writes a float64 back
			return json.Number(b)
		}
	case []any:
		for i := range x {
			x[i] = canonicalNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = canonicalNumbers(x[k])
		}
	}
	return v
}

// isLeaf says whether a value of this schema is owned whole.
func isLeaf(s *Schema) bool {
	if s == nil {
		return true
	}
	switch s.Kind {
	case List:
		return s.ListType != ListSet && s.ListType != ListMap
	case Map, Struct:
		return s.MapType == "atomic"
	}
	return true
}

// childSchema is the schema under one path element.
func childSchema(s *Schema, e pathElement) *Schema {
	if s == nil {
		return nil
	}
	if e.kind == 'f' {
		return s.Field(e.field)
	}
	if s.Kind == List {
		return s.Elem
	}
	return nil
}

// itemElement names a granular list's item: by its keys or by its value.
func itemElement(s *Schema, item any) (pathElement, error) {
	if s.ListType == ListMap {
		m, ok := item.(map[string]any)
		if !ok {
			if item == nil {
				return pathElement{}, errors.New("associative list with keys may not have a null element")
			}
			return pathElement{}, errors.New("associative list with keys may not have non-map elements")
		}
		var keys []keyField
		for _, k := range s.ListMapKeys {
			if v, ok := m[k]; ok {
				keys = append(keys, keyField{k, v})
			}
		}
		if len(keys) == 0 {
			return pathElement{}, fmt.Errorf("associative list with keys has an element that omits all key fields %q", s.ListMapKeys)
		}
		return keyElement(keys), nil
	}
	switch item.(type) {
	case map[string]any:
		return pathElement{}, errors.New("associative list without keys has an element that's a map type")
	case []any:
		return pathElement{}, errors.New("not supported: associative list with lists as elements")
	case nil:
		return pathElement{}, errors.New("associative list without keys has an element that's an explicit null")
	}
	return valueElement(item), nil
}

// itemNamed says whether itemElement names the item, without naming it.
func itemNamed(s *Schema, item any) bool {
	if s.ListType == ListMap {
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, k := range s.ListMapKeys {
			if _, ok := m[k]; ok {
				return true
			}
		}
		return false
	}
	switch item.(type) {
	case map[string]any, []any, nil:
		return false
	}
	return true
}

// pathDepth is room for the paths of most objects: a path with spare
// capacity is extended in place, one without is copied at every node.
const pathDepth = 16

// validate checks that v has the shape of s. duplicates says whether a
// granular list may name one item twice: live objects may (Kubernetes keeps
// what it was given), apply configurations may not. It extends path in
// place (append, not with): a path outlives no call here but as an error's
// text, and a copy per node was a tenth of a write's allocations.
func validate(v any, s *Schema, path fieldPath, duplicates bool) error {
	if valid(v, s, duplicates) {
		return nil
	}
	return explain(v, s, path, duplicates)
}

// valid says whether explain finds nothing wrong, as it would (the same
// checks, the same lists walked in order), without the path and the sorted
// keys that only an error's text needs: every write validates its object.
func valid(v any, s *Schema, duplicates bool) bool {
	if s.anyValue() || v == nil {
		return true
	}
	switch s.Kind {
	case Scalar:
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	case Struct, Map:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for k, child := range m {
			cs := s.Field(k)
			if cs == nil || !valid(child, cs, duplicates) {
				return false
			}
		}
	case List:
		l, ok := v.([]any)
		if !ok {
			return false
		}
		if isLeaf(s) {
			for _, item := range l {
				if !valid(item, s.Elem, duplicates) {
					return false
				}
			}
			return true
		}
		if !duplicates && !namedOnce(s, l) {
			return false
		}
		for _, item := range l {
			if duplicates && !itemNamed(s, item) {
				return false
			}
			if !valid(item, s.Elem, duplicates) {
				return false
			}
		}
	}
	return true
}

// namedOnce says whether itemElement names every item of a granular list,
// each one once. A short list's names are written side by side on the
// stack (appendItemName: equal where itemElement's are) rather than made.
func namedOnce(s *Schema, l []any) bool {
	if len(l) > indexAt {
		seen := make(map[string]bool, len(l))
		for _, item := range l {
			e, err := itemElement(s, item)
			if err != nil || seen[e.str] {
				return false
			}
			seen[e.str] = true
		}
		return true
	}
	var arr [512]byte
	var ends [indexAt + 1]int // names[ends[i]:ends[i+1]] is item i's
	names := arr[:0]
	for i, item := range l {
		var named bool
		if names, named = appendItemName(names, s, item); !named {
			return false
		}
		ends[i+1] = len(names)
		for j := 0; j < i; j++ {
			if bytes.Equal(names[ends[j]:ends[j+1]], names[ends[i]:]) {
				return false
			}
		}
	}
	return true
}

// explain is validate's error: the first wrong field in key order.
func explain(v any, s *Schema, path fieldPath, duplicates bool) error {
	if s.anyValue() || v == nil {
		return nil
	}
	fail := func(format string, args ...any) error {
		where := path.String()
		if where == "" {
			where = "."
		}
		return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
	switch s.Kind {
	case Scalar:
		switch v.(type) {
		case map[string]any:
			return fail("expected a scalar, got an object")
		case []any:
			return fail("expected a scalar, got a list")
		}
	case Struct, Map:
		m, ok := v.(map[string]any)
		if !ok {
			return fail("expected an object, got %s", jsonKind(v))
		}
		for _, k := range sortedKeys(m) {
			cs := s.Field(k)
			if cs == nil {
				return fail("field %q not declared in schema", k)
			}
			if err := explain(m[k], cs, append(path, fieldElement(k)), duplicates); err != nil {
				return err
			}
		}
	case List:
		l, ok := v.([]any)
		if !ok {
			return fail("expected a list, got %s", jsonKind(v))
		}
		seen := map[string]bool{}
		for i, item := range l {
			if isLeaf(s) {
				if err := explain(item, s.Elem, append(path, pathElement{kind: 'i', itemKey: &itemKey{index: i}, str: "i:" + strconv.Itoa(i)}), duplicates); err != nil {
					return err
				}
				continue
			}
			e, err := itemElement(s, item)
			if err != nil {
				return fail("element %d: %v", i, err)
			}
			if seen[e.str] && !duplicates {
				return fail("duplicate entries for key %s", e.String())
			}
			seen[e.str] = true
			if err := explain(item, s.Elem, append(path, e), duplicates); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// toSet lists the fields of v into out, as Kubernetes' ToFieldSet: every
// scalar and atomic value, every list item, every map key; a struct's own
// field only when it is null or an empty object.
func toSet(v any, s *Schema, path fieldPath, out fieldSet) {
	b := setBuilder{out: out}
	b.add(v, s, append(make(fieldPath, 0, pathDepth), path...))
}

// setBuilder is toSet's walk: it extends the path in place and copies it
// only into the set, all copies into one arena.
type setBuilder struct {
	out   fieldSet
	arena []pathElement
}

func (b *setBuilder) insert(p fieldPath) {
	if len(b.arena)+len(p) > cap(b.arena) {
		b.arena = make([]pathElement, 0, max(64, 2*cap(b.arena), len(p)))
	}
	n := len(b.arena)
	b.arena = append(b.arena, p...)
	b.out.insert(b.arena[n:len(b.arena):len(b.arena)])
}

func (b *setBuilder) add(v any, s *Schema, path fieldPath) {
	s = s.of(v)
	if isLeaf(s) {
		b.insert(path)
		return
	}
	switch s.Kind {
	case List:
		l, _ := v.([]any)
		if len(l) == 0 {
			return
		}
		// Each item named once; an item named twice is listed, not
		// what is in it.
		names := make([]pathElement, len(l))
		named := make([]bool, len(l))
		for i, item := range l {
			e, err := itemElement(s, item)
			names[i], named[i] = e, err == nil
		}
		var counts map[string]int
		if len(l) > indexAt {
			counts = make(map[string]int, len(l))
			for i := range l {
				if named[i] {
					counts[names[i].str]++
				}
			}
		}
		count := func(i int) int {
			if counts != nil {
				return counts[names[i].str]
			}
			n := 0
			for j := range l {
				if named[j] && names[j].str == names[i].str {
					n++
				}
			}
			return n
		}
		for i, item := range l {
			if !named[i] {
				continue
			}
			p := append(path, names[i])
			if count(i) > 1 {
				b.insert(p) // once is enough: a set
				continue
			}
			b.add(item, s.Elem, p)
			b.insert(p)
		}
	case Map, Struct:
		m, _ := v.(map[string]any)
		for k, child := range m {
			p := append(path, fieldElement(k))
			cs := s.Field(k)
			b.add(child, cs, p)
			cm, isMap := child.(map[string]any)
			if child == nil || (isMap && len(cm) == 0) || s.Kind == Map || s.Fields[k] == nil {
				b.insert(p) // a map's key, or a member the struct does not declare
			}
		}
	}
}

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

func compareObjects(lhs, rhs any, s *Schema) comparison {
	c := comparison{added: fieldSet{}, modified: fieldSet{}, removed: fieldSet{}}
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
	switch b.(type) {
	case []any, map[string]any:
		return false
	}
	return compareValues(a, b) == 0
}

// mergeEqualAsIs and mergeAbsentAsIs are merge's shortcuts for equal
// values and for a live value with nothing to merge; off only in the test
// that holds them to merging.
var mergeEqualAsIs, mergeAbsentAsIs = true, true

// merge merges the configuration r into the live value l: r wins at each
// leaf; granular maps merge key by key and granular lists item by item.
// ok is false when the result has no value.
func merge(l any, lok bool, r any, rok bool, s *Schema) (any, bool) {
	keepRight := func() (any, bool) {
		if rok {
			return r, true
		}
		return l, lok
	}
	if s != nil && s.Kind == Deduced {
		// Objects merge member by member; anything else is the
		// configuration's, as structured-merge-diff merges them.
		if s = untyped; (objectLike(l) || !lok) && (objectLike(r) || !rok) {
			s = deducedObject
		}
	}
	if isLeaf(s) {
		return keepRight()
	}
	if lok && !rok && mergeAbsentAsIs {
		// Nothing merged into a live value checked by liveObject (every
		// item of its granular lists named, so none is dropped): what
		// merging makes of it is a copy of it, which it need not be.
		return l, true
	}
	if lok && rok && mergeEqualAsIs && equalValues(l, r) {
		// What merging makes of equal values (checked, so every item
		// is named once): the configuration's, without building it
		// again. Applying what was applied before is most applies. The
		// live one is written alike (numbers are canonical), and the
		// comparison with the live object then passes over it.
		return l, true
	}
	switch s.Kind {
	case List:
		ll, _ := l.([]any)
		rl, _ := r.([]any)
		if len(ll) == 0 && len(rl) == 0 {
			return keepRight()
		}
		out := mergeGranularList(ll, rl, s)
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	case Map, Struct:
		lm, _ := l.(map[string]any)
		rm, _ := r.(map[string]any)
		if len(lm) == 0 && len(rm) == 0 {
			return keepRight()
		}
		out := map[string]any{}
		for k, lv := range lm {
			rv, ok := rm[k]
			if v, ok := merge(lv, true, rv, ok, s.Field(k)); ok {
				out[k] = v
			}
		}
		for k, rv := range rm {
			if _, ok := lm[k]; !ok {
				if v, ok := merge(nil, false, rv, true, s.Field(k)); ok {
					out[k] = v
				}
			}
		}
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	}
	return keepRight()
}

// mergeGranularList merges two granular lists: live items keep their order, and
// the configuration's items, in its order, are placed among them as
// Kubernetes places them.
func mergeGranularList(lhs, rhs []any, s *Schema) []any {
	type observed struct {
		value any
		ok    bool
	}
	elems := func(l []any, dupsAreNull bool) ([]pathElement, []any, map[string]observed) {
		var pes []pathElement
		var items []any
		obs := map[string]observed{}
		for _, item := range l {
			e, err := itemElement(s, item)
			if err != nil {
				continue // validated before; the live object keeps what it has
			}
			if _, found := obs[e.str]; found {
				if !dupsAreNull {
					continue
				}
				obs[e.str] = observed{nil, true}
			} else {
				obs[e.str] = observed{item, true}
			}
			pes = append(pes, e)
			items = append(items, item)
		}
		return pes, items, obs
	}
	rPEs, _, rObs := elems(rhs, false)
	lPEs, lItems, lObs := elems(lhs, true)

	var shared []pathElement
	for _, e := range rPEs {
		if _, ok := lObs[e.str]; ok {
			shared = append(shared, e)
		}
	}
	nextShared := func() *pathElement {
		if len(shared) == 0 {
			return nil
		}
		e := shared[0]
		shared = shared[1:]
		return &e
	}
	next := nextShared()
	merged := map[string]bool{}
	var out []any
	item := func(e pathElement, l, r observed) {
		if v, ok := merge(l.value, l.ok, r.value, r.ok, s.Elem); ok {
			out = append(out, v)
		}
	}
	for li, ri := 0, 0; li < len(lPEs) || ri < len(rPEs); {
		if li < len(lPEs) && ri < len(rPEs) {
			e := lPEs[li]
			if e.str == rPEs[ri].str {
				merged[e.str] = true
				item(e, lObs[e.str], rObs[e.str])
				li++
				ri++
				next = nextShared()
				continue
			}
			if _, ok := rObs[e.str]; ok && next != nil && next.str != e.str {
				li++
				continue
			}
		}
		if li < len(lPEs) {
			e := lPEs[li]
			if _, ok := rObs[e.str]; !ok {
				item(e, observed{lItems[li], true}, observed{})
				li++
				continue
			} else if merged[e.str] {
				li++
			}
		}
		if ri < len(rPEs) {
			e := rPEs[ri]
			merged[e.str] = true
			item(e, lObs[e.str], rObs[e.str])
			ri++
			if next != nil && next.str == e.str {
				next = nextShared()
			}
		}
	}
	return out
}

// removeItems returns v without the fields in rm, as Kubernetes'
// RemoveItems: a container left empty, or one it had to look into but
// cannot (atomic), becomes null.
func removeItems(v any, s *Schema, path fieldPath, rm fieldSet, deeper map[string]bool) any {
	s = s.of(v)
	if s == nil || s.Kind == Scalar || s.Kind == Untyped {
		switch v.(type) {
		case map[string]any, []any:
			if s == nil || s.Kind == Untyped {
				return nil
			}
		}
		return v
	}
	if isLeaf(s) {
		return nil
	}
	switch s.Kind {
	case List:
		l, _ := v.([]any)
		var out []any
		for _, item := range l {
			e, err := itemElement(s, item)
			if err == nil {
				p := path.with(e)
				if rm.has(p) {
					continue
				}
				if deeper[p.key()] {
					item = removeItems(item, s.Elem, p, rm, deeper)
				}
			}
			out = append(out, item)
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case Map, Struct:
		m, _ := v.(map[string]any)
		out := map[string]any{}
		for k, child := range m {
			p := path.with(fieldElement(k))
			if rm.has(p) {
				continue
			}
			if deeper[p.key()] {
				child = removeItems(child, s.Field(k), p, rm, deeper)
			}
			out[k] = child
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

// withNamedFields adds to a set every struct field that has a path below
// it: Kubernetes owns those fields too when it decides what to remove.
func withNamedFields(set fieldSet, root *Schema) fieldSet {
	out := make(fieldSet, len(set))
	for k, p := range set {
		out[k] = p
	}
	for _, p := range set {
		s := root
		for i := 0; i < len(p)-1 && s != nil; i++ {
			if p[i].kind == 'f' && s.Kind == Struct && s.Fields[p[i].field] != nil {
				out.insert(p[:i+1])
			}
			s = childSchema(s, p[i])
		}
	}
	return out
}
