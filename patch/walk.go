package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// The walks of this file and of compare.go and structmerge.go are the
// operations of Kubernetes' structured merge over a value and its Schema:
// check a value's shape and list its fields (here), compare two values
// (compare.go), merge a configuration into a value and remove a set of
// fields (structmerge.go). They follow structured-merge-diff's rules, edge
// cases included, because clients see the objects and managedFields they
// produce.

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
