package patch

import (
	"slices"
	"strconv"
	"sync"
	"unsafe"
)

// An apply lists the fields of its configuration (toSet) and writes them
// into the applier's managedFields entry; a client applies the same
// configuration again and again with other values (kubectl apply, a
// controller's apply of the object it manages), and what toSet makes of it
// depends on its shape only: the names of its fields, the names of its
// list items, which of its objects are empty. appliedSetOf writes that
// shape into a key, which costs a walk without a map or an allocation,
// and keeps the set and its FieldsV1 for the key: an apply of a shape seen
// before neither lists nor writes its fields.

// appliedSet is what toSet makes of a configuration, filtered as Apply
// filters it: set with the server's fields (what the applier applied),
// final without them (what its entry owns) and as written.
type appliedSet struct {
	set   fieldSet
	final *parsedSet
	// schema is the schema of a set kept by a key that names it
	// (readShapeKey): held, so that no other schema is made at its address
	// while the key is kept.
	schema *Schema
}

// appliedSets are the sets of the configurations applied lately, by the
// key of their shape (appendShape). Its sets are never changed.
var appliedSets struct {
	sync.Mutex
	m map[string]*appliedSet
}

// maxAppliedSets and maxShapeKey bound the memory appliedSets holds: the
// configurations of a few kinds, each applied by a few clients.
const (
	maxAppliedSets = 64
	maxShapeKey    = 8 << 10
)

// appliedSetOf is toSet of cfg, a configuration of schema s, without the
// paths keep says no to: as set, and as final without serverOwned. shape,
// if not nil, is the shape the reader of cfg's document wrote of it
// (Configuration.shape), which spares the walk of appendShape.
func appliedSetOf(cfg map[string]any, s *Schema, keep func(fieldPath) bool, ignore []string, shape []byte) *appliedSet {
	var arr [1024]byte
	key := appliedKey(arr[:0], cfg, s, ignore, shape)
	cacheable := len(key) <= maxShapeKey
	if cacheable {
		if a := lookupApplied(key); a != nil {
			return a
		}
	}
	set := fieldSet{}
	toSet(cfg, s, nil, set)
	set = set.filter(keep)
	final := set.minus(serverOwned)
	encoded, _ := final.MarshalJSON()
	a := &appliedSet{set: set, final: &parsedSet{set: final, encoded: encoded}, schema: s}
	rememberParsed(a.final) // the entry's FieldsV1 read back is this set: ApplyMerged's sameSet
	if cacheable {
		appliedSets.Lock()
		if len(appliedSets.m) >= maxAppliedSets || appliedSets.m == nil {
			appliedSets.m = make(map[string]*appliedSet, maxAppliedSets)
		}
		appliedSets.m[string(key)] = a
		appliedSets.Unlock()
	}
	return a
}

// appliedKey appends the key appliedSets keeps cfg's set by: with the
// reader's shape, it names s too, since that shape says nothing of the
// schema.
func appliedKey(key []byte, cfg map[string]any, s *Schema, ignore []string, shape []byte) []byte {
	if shape != nil {
		p := uintptr(unsafe.Pointer(s))
		key = append(key, '#')
		for range unsafe.Sizeof(p) {
			key = append(key, byte(p))
			p >>= 8
		}
	}
	for _, f := range ignore {
		key = appendShapeName(key, f)
	}
	key = append(key, '|')
	if shape != nil {
		return append(key, shape...)
	}
	return appendShape(key, cfg, s)
}

func lookupApplied(key []byte) *appliedSet {
	appliedSets.Lock()
	defer appliedSets.Unlock()
	return appliedSets.m[string(key)]
}

// shapeApplied is the set appliedSetOf keeps for a configuration of this
// shape (the reader's, Configuration.shape) with schema s, nil if none:
// appliedSetOf's answer for it, as the key of a shape names no more than
// the shape. A shape kept was applied with s lately, and so found valid
// (ApplyMerged validates a configuration before it keeps its set), and so
// is any configuration of it, since what validate reads of a
// configuration (its names, its values' kinds, the names of its list
// items) the shape holds as written.
func shapeApplied(s *Schema, ignore []string, shape []byte) *appliedSet {
	if shape == nil {
		return nil
	}
	var arr [1024]byte
	key := appliedKey(arr[:0], nil, s, ignore, shape)
	if len(key) > maxShapeKey {
		return nil
	}
	return lookupApplied(key)
}

// appendShape appends what toSet reads of v, a value of schema s, walked
// as setBuilder.add walks it, so that two values with one shape make one
// set: their fields, list items and the set's members in one order (an
// object's keys sorted). Nothing in it depends on s but through what it
// writes: the set of a shape is that of any schema that writes it.
func appendShape(b []byte, v any, s *Schema) []byte {
	s = s.of(v)
	if isLeaf(s) {
		return append(b, '.') // a member
	}
	switch s.Kind {
	case List:
		l, _ := v.([]any)
		b = append(b, '[')
		for _, item := range l {
			var named bool
			if b, named = appendItemName(b, s, item); named {
				b = appendShape(b, item, s.Elem)
			}
		}
		return append(b, ']')
	case Map, Struct:
		m, _ := v.(map[string]any)
		var arr [32]string
		keys := arr[:0]
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for _, k := range keys {
			child := m[k]
			cs := s.Field(k)
			b = appendShapeName(b, k)
			cm, isMap := child.(map[string]any)
			if child == nil || (isMap && len(cm) == 0) || s.Kind == Map || s.Fields[k] == nil {
				b = append(b, '+') // a member, whatever is below it
			} else {
				b = append(b, '-')
			}
			b = appendShape(b, child, cs)
		}
		return append(b, '}')
	}
	return append(b, '?')
}

// appendShapeName appends a name, its length first so that no name runs
// into what follows it.
func appendShapeName(b []byte, name string) []byte {
	b = strconv.AppendInt(b, int64(len(name)), 10)
	b = append(b, ':')
	return append(b, name...)
}

// appendItemName appends what itemElement names a granular list's item
// by (its keys' values, or its value, as FieldsV1 writes them), or 'x'
// for an item it does not name; named says which.
func appendItemName(b []byte, s *Schema, item any) (_ []byte, named bool) {
	if !itemNamed(s, item) {
		return append(b, 'x'), false
	}
	if s.ListType == ListMap {
		m := item.(map[string]any)
		b = append(b, 'k')
		for _, k := range s.ListMapKeys { // the key's names too: other schemas key by other fields
			if v, ok := m[k]; ok {
				b = appendScalarJSON(appendShapeName(b, k), v)
				b = append(b, 0) // JSON has no 0 byte
			}
		}
		return append(b, 1), true
	}
	return append(appendScalarJSON(append(b, 'v'), item), 0), true
}

// shapePlace is where a value the reader reads is, for what its shape
// (jsonReader.shape) holds of it. What toSet makes of a document depends,
// in any schema, on its objects' names, its values' kinds (a Deduced value
// is an object or not, a null one is a member), and on scalar values only
// where they name a list's items: an item of a set, a key of a map list's
// item. The reader's shape holds every name as written and every value's
// kind, and a scalar's JSON as written where it may name an item: in a
// list, or a member of an object in a list. Two documents with one shape
// thus make one set in any one schema, whatever their other values.
type shapePlace uint8

const (
	shapeElsewhere  shapePlace = iota
	shapeItem                  // a list's item
	shapeItemMember            // a member of an object that is a list's item
)

// shapeScalar writes a scalar read (raw as written, c its first byte) into
// d's shape.
func (d *jsonReader) shapeScalar(c byte, raw []byte) {
	if d.where != shapeElsewhere {
		d.shape = append(d.shape, 'v')
		d.shape = append(d.shape, raw...)
		d.shape = append(d.shape, 0) // JSON as written holds no 0 byte
		return
	}
	switch {
	case c == '"':
		c = 's'
	case c == 't' || c == 'f':
		c = 'b'
	case c == 'n':
		c = 'z'
	default:
		c = '0'
	}
	d.shape = append(d.shape, c)
}

// shapeBuffers keeps what ParseConfiguration writes shapes into.
var shapeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}
