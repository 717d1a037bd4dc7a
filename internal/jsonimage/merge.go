package jsonimage

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// A Merger tells when a merge patch can be applied to a decoded object by
// decoding the patch into a copy of it: when that gives what decoding the
// merge of the object's JSON with the patch gives.
//
// Decoding merges as a merge patch does only so far: it sets the fields a
// JSON object names and leaves the others, adds and replaces the entries
// of a map, sets a pointer, map or slice to nil from null, and replaces a
// list and a scalar whole. Elsewhere it does not (null leaves a struct or a
// string as it was, where a merge patch deletes it; a map entry's null is
// kept as a zero value; an object replaces a map's struct value; a type
// that decodes itself may keep what it held), so a patch that reaches there
// is left to merging. A strategic merge patch is the same as a merge patch
// while it holds no list and no directive ($-key); and, as it reads numbers
// as int64 or float64 before writing them back, only integers that int64
// holds are written back as they were read.
//
// A Merger is safe for concurrent use.
type Merger struct {
	root *mergeNode
	// strategic says a strategic merge patch may be decoded: the type holds
	// no number that reading the object as int64s and float64s changes.
	strategic bool
}

// mergeNode is what a patch may hold at a place of a Go type.
type mergeNode struct {
	kind     mergeKind
	nullable bool // a pointer, map or slice: null sets it nil, as merging leaves it out
	replaced bool // a strategic merge patch replaces it whole (patchStrategy:"replace")
	fields   map[string]*mergeNode
	elem     *mergeNode // a map's values, a list's items: scalars
}

type mergeKind uint8

const (
	mergeScalar mergeKind = iota + 1 // a bool, number or string, replaced whole
	mergeStruct                      // merged field by field
	mergeMap                         // string keys, scalar values: merged entry by entry
	mergeList                        // scalar items: replaced whole
)

// maxMergeDepth bounds the objects a patch nests that a Merger reads (a
// recursive type); deeper ones are left to merging, which has its limits.
const maxMergeDepth = 64

// NewMerger returns the Merger of t, a struct type, or nil if t is not one
// or decodes itself.
func NewMerger(t reflect.Type) *Merger {
	c := mergeCompiler{seen: map[mergeKey]*mergeNode{}}
	root := c.compile(t, false)
	if root == nil || root.kind != mergeStruct {
		return nil
	}
	return &Merger{root: root, strategic: keepsNumbers(t, map[reflect.Type]bool{})}
}

// keepsNumbers says whether every number a value of t writes reads back
// the same through an int64 or a float64, as a strategic merge reads the
// whole object: not an unsigned integer, which may exceed int64, nor a
// json.Number, nor a type writing itself (but kapi's times and field
// sets, which write no number).
func keepsNumbers(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	switch t {
	case timeType, microTimeType, fieldsV1Type:
		return true
	case reflect.TypeFor[json.Number]():
		return false
	}
	if t.Kind() == reflect.Pointer && t.Name() == "" {
		return keepsNumbers(t.Elem(), seen)
	}
	if ownJSON(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint64, reflect.Uintptr, reflect.Interface, reflect.Pointer: // a named pointer: left alone
		return false
	case reflect.Slice, reflect.Array:
		return keepsNumbers(t.Elem(), seen)
	case reflect.Map:
		return keepsNumbers(t.Key(), seen) && keepsNumbers(t.Elem(), seen)
	case reflect.Struct:
		for _, f := range jsonfields.Of(t) {
			if !keepsNumbers(f.Type, seen) {
				return false
			}
		}
	}
	return true
}

// Mergeable says whether decoding patch into a copy of an object that is
// its own image (Image.Is) gives what decoding the merge of the object's
// JSON with patch gives, strategic saying whether patch is a strategic
// merge patch. If decoding fails, merging is left to say why. A patch
// that is not a JSON object, names a field by another spelling than its
// own, names one twice, or holds anything else the type does not decode
// as a merge is not mergeable.
//
// The patch is read in one pass over its bytes (package jsonskip's
// parts), without a tokenizer: the strings it takes are valid UTF-8
// without surrogate escapes, names are spelled without escapes, numbers
// are plain integers; anything else is left to merging.
func (m *Merger) Mergeable(patch []byte, strategic bool) bool {
	if strategic && !m.strategic {
		return false
	}
	i := jsonskip.Space(patch, 0)
	if i >= len(patch) || patch[i] != '{' {
		return false
	}
	end, ok := m.root.mergeable(patch, i, strategic, 0)
	return ok && jsonskip.Space(patch, end) == len(patch)
}

// mergeable checks the value at data[i] (not white space) against n and
// returns where it ends.
func (n *mergeNode) mergeable(data []byte, i int, strategic bool, depth int) (int, bool) {
	switch c := data[i]; {
	case c == 'n':
		return i + len("null"), n.nullable && jsonskip.HasLiteral(data, i, "null")
	case c == 't':
		return i + len("true"), n.kind == mergeScalar && jsonskip.HasLiteral(data, i, "true")
	case c == 'f':
		return i + len("false"), n.kind == mergeScalar && jsonskip.HasLiteral(data, i, "false")
	case c == '"':
		if n.kind != mergeScalar {
			return i, false
		}
		return jsonskip.String(data, i, jsonskip.Exact)
	case c == '-' || c >= '0' && c <= '9':
		if n.kind != mergeScalar {
			return i, false
		}
		end, ok := jsonskip.Number(data, i)
		return end, ok && plainInteger(data[i:end])
	case c == '{':
		if n.kind != mergeStruct && n.kind != mergeMap || depth >= maxMergeDepth {
			return i, false
		}
		return n.mergeableObject(data, i, strategic, depth)
	case c == '[':
		if n.kind != mergeList || strategic {
			return i, false
		}
		return n.elem.mergeableItems(data, i, strategic, depth)
	}
	return i, false
}

// mergeableObject is mergeable of the object at data[i] ('{').
func (n *mergeNode) mergeableObject(data []byte, i int, strategic bool, depth int) (int, bool) {
	var names namesSeen
	i = jsonskip.Space(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false
		}
		end, ok := jsonskip.String(data, i, jsonskip.Exact)
		if !ok {
			return i, false
		}
		name := data[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 || strategic && len(name) > 0 && name[0] == '$' || !names.add(name) {
			return i, false // another spelling; a directive; a name met before
		}
		child := n.elem
		if n.kind == mergeStruct {
			child = n.fields[string(name)]
		}
		if child == nil || strategic && child.replaced {
			return i, false
		}
		if i = jsonskip.Space(data, end); i >= len(data) || data[i] != ':' {
			return i, false
		}
		if i = jsonskip.Space(data, i+1); i >= len(data) {
			return i, false
		}
		if i, ok = child.mergeable(data, i, strategic, depth+1); !ok {
			return i, false
		}
		switch i = jsonskip.Space(data, i); {
		case i >= len(data):
			return i, false
		case data[i] == '}':
			return i + 1, true
		case data[i] != ',':
			return i, false
		}
		i = jsonskip.Space(data, i+1)
	}
}

// mergeableItems is mergeable of the array at data[i] ('['), whose items
// are n's.
func (n *mergeNode) mergeableItems(data []byte, i int, strategic bool, depth int) (int, bool) {
	i = jsonskip.Space(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i >= len(data) {
			return i, false
		}
		if i, ok = n.mergeable(data, i, strategic, depth+1); !ok {
			return i, false
		}
		switch i = jsonskip.Space(data, i); {
		case i >= len(data):
			return i, false
		case data[i] == ']':
			return i + 1, true
		case data[i] != ',':
			return i, false
		}
		i = jsonskip.Space(data, i+1)
	}
}

// namesSeen are the names of one object of a patch, met so far: a few
// kept on the stack and compared one by one, more in a map.
type namesSeen struct {
	few  [8][]byte
	n    int
	many map[string]struct{}
}

// add says whether name is new, and notes it.
func (s *namesSeen) add(name []byte) bool {
	if s.many == nil {
		for _, seen := range s.few[:s.n] {
			if bytes.Equal(seen, name) {
				return false
			}
		}
		if s.n < len(s.few) {
			s.few[s.n] = name
			s.n++
			return true
		}
		s.many = make(map[string]struct{}, 2*len(s.few))
		for _, seen := range s.few {
			s.many[string(seen)] = struct{}{}
		}
	}
	if _, ok := s.many[string(name)]; ok {
		return false
	}
	s.many[string(name)] = struct{}{}
	return true
}

// plainInteger says whether a JSON number is an integer int64 holds,
// written as strconv writes it: what a strategic merge writes back as it
// was read.
func plainInteger(v []byte) bool {
	digits := v
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || digits[0] == '0' && len(v) > 1 {
		return false // "-0", "01"
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	if len(digits) < 19 {
		return true
	}
	_, err := strconv.ParseInt(string(v), 10, 64)
	return err == nil
}

type mergeKey struct {
	t        reflect.Type
	nullable bool
}

type mergeCompiler struct {
	seen map[mergeKey]*mergeNode
}

// compile returns what a patch may hold at a value of t, nullable saying
// whether it is reached through a pointer; nil if nothing.
func (c *mergeCompiler) compile(t reflect.Type, nullable bool) *mergeNode {
	if t.Kind() == reflect.Pointer && t.Name() == "" && !nullable && !ownJSON(t) {
		return c.compile(t.Elem(), true)
	}
	if ownJSON(t) {
		return nil
	}
	key := mergeKey{t, nullable}
	if n, ok := c.seen[key]; ok {
		return n // a recursive type's node, filled in as it is compiled; nil through a map or list
	}
	c.seen[key] = nil
	n := c.compileNew(t, nullable, key)
	c.seen[key] = n
	return n
}

func (c *mergeCompiler) compileNew(t reflect.Type, nullable bool, key mergeKey) *mergeNode {
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return &mergeNode{kind: mergeScalar, nullable: nullable}
	case reflect.Map:
		if nullable || t.Key().Kind() != reflect.String || ownJSON(t.Key()) {
			return nil
		}
		if elem := c.compile(t.Elem(), false); elem != nil && elem.kind == mergeScalar && !elem.nullable {
			return &mergeNode{kind: mergeMap, nullable: true, elem: elem}
		}
	case reflect.Slice:
		if nullable || t.Elem().Kind() == reflect.Uint8 {
			return nil // a pointer to a slice; bytes are a string
		}
		if elem := c.compile(t.Elem(), false); elem != nil && elem.kind == mergeScalar && !elem.nullable {
			return &mergeNode{kind: mergeList, nullable: true, elem: elem}
		}
	case reflect.Struct:
		n := &mergeNode{kind: mergeStruct, nullable: nullable, fields: map[string]*mergeNode{}}
		c.seen[key] = n
		for _, f := range jsonfields.Of(t) {
			if f.Optional || f.Quoted {
				continue // through an embedded pointer; a number in a string
			}
			child := c.compile(f.Type, false)
			if child != nil && slices.Contains(strings.Split(f.StructField.Tag.Get("patchStrategy"), ","), "replace") {
				replaced := *child
				replaced.replaced = true
				child = &replaced
			}
			if child != nil {
				n.fields[f.Name] = child
			}
		}
		return n
	}
	return nil
}
