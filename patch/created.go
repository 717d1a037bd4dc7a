package patch

import (
	"bytes"
	"slices"
	"sync"
)

// A create makes every field of the object its manager's: compareObjects
// of {} and the object adds every node that has a path. With no other
// manager to take fields from, the manager's set is written straight from
// the object, without the comparison's paths and sets: each node is a
// member, but what the server owns and the ignored top-level fields, and
// the children of a list item named twice are not listed (that item is
// owned whole). The object is read as written where it can be (objects
// member by member, as compareStored reads them), and decoded where not:
// list items, which are named by their decoded keys or values, and
// anything compareStored gives up on. TestCreatedFieldsRandom and
// FuzzCreatedFields hold it to the general way.

// createdFields is the FieldsV1 of the Update entry a create of obj
// records, with ignore the ignored top-level fields; nil when it owns
// nothing.
func (s *Schema) createdFields(obj map[string]any, ignore []string) []byte {
	w := newCreatedWriter(ignore)
	return w.finish(w.children(obj, s, levelRoot, false))
}

// createdStored is createdFields of the document doc, read as written;
// ok false when liveObject must read it (and say what is wrong with it).
// Creates of one shape (appendCreatedShape) have one entry: it is written
// once and kept in createdShapes.
func (s *Schema) createdStored(doc []byte, ignore []string) (raw []byte, ok bool) {
	doc = trimSpace(doc)
	if s == nil || s.Kind != Struct || isLeaf(s) || len(doc) == 0 || doc[0] != '{' {
		return nil, false
	}
	var arr [2048]byte // the shape of a document of a few KiB, on the stack
	shape, cacheable := appendCreatedShape(arr[:0], doc, ignore)
	if cacheable {
		if raw, ok, hit := createdShapes.get(s, shape); hit {
			return raw, ok
		}
	}
	raw, ok = s.createdWritten(doc, ignore)
	if cacheable {
		createdShapes.put(s, shape, raw, ok)
	}
	return raw, ok
}

// createdWritten is createdStored without the cache: the entry written
// from the document.
func (s *Schema) createdWritten(doc []byte, ignore []string) (raw []byte, ok bool) {
	d := jsonReader{data: doc, discard: true}
	if !d.validStored(s, 0, levelRoot, nil) || d.i != len(doc) {
		return nil, false
	}
	w := newCreatedWriter(ignore)
	n, ok := w.storedChildren(doc, s, 0, levelRoot, false)
	if !ok {
		w.release()
		return nil, false
	}
	return w.finish(n), true
}

type createdWriter struct {
	b      []byte
	ignore []string
	keys   []string       // a stack of object keys being sorted, shared by the levels
	member []storedMember // the same, of objects read as written
}

// createdWriters keep the writers' buffers from one create to the next:
// made for each, they were most of what a create's entry allocated.
var createdWriters = sync.Pool{New: func() any {
	return &createdWriter{b: make([]byte, 0, 1024), member: make([]storedMember, 0, 32)}
}}

// maxPooledWriter bounds the buffers a pooled writer keeps: one that
// wrote an outsized object is let go.
const maxPooledWriter = 64 << 10

func newCreatedWriter(ignore []string) *createdWriter {
	w := createdWriters.Get().(*createdWriter)
	w.ignore = ignore
	w.b = append(w.b[:0], '{')
	return w
}

// finish is the entry written, nil if it is empty, in a slice of its own
// (the writer's buffer goes back to the pool).
func (w *createdWriter) finish(n int) []byte {
	var raw []byte
	if n > 0 {
		raw = make([]byte, len(w.b)+1)
		raw[copy(raw, w.b)] = '}'
	}
	w.release()
	return raw
}

// release gives w back to the pool, holding nothing of the document it
// read (its members are slices of it, its keys the decoded object's).
func (w *createdWriter) release() {
	if cap(w.b) > maxPooledWriter || cap(w.member) > maxPooledWriter/64 || cap(w.keys) > maxPooledWriter/64 {
		return
	}
	clear(w.member[:cap(w.member)])
	clear(w.keys[:cap(w.keys)])
	w.ignore, w.member, w.keys = nil, w.member[:0], w.keys[:0]
	createdWriters.Put(w)
}

// createdField says how a field of an object at level is listed: not at
// all (skip: an ignored top-level field), or as a member or not (what the
// server owns), and the level of its value.
func createdField[T string | []byte](w *createdWriter, level int, name T) (skip, member bool, childLevel int) {
	switch level {
	case levelRoot:
		for _, f := range w.ignore {
			if string(name) == f {
				return true, false, 0
			}
		}
		switch string(name) {
		case "apiVersion", "kind":
			return false, false, levelOther
		case "metadata":
			return false, false, levelMetadata
		}
	case levelMetadata:
		switch string(name) {
		case "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields", "resourceVersion":
			return false, false, levelOther
		}
	}
	return false, true, levelOther
}

// open writes the start of a node: a comma if comma, the element, and a
// "." entry for a member; start and dot are for close.
func (w *createdWriter) open(e pathElement, member, comma bool) (start, dot int) {
	start = len(w.b)
	if comma {
		w.b = append(w.b, ',')
	}
	w.b = appendElementJSON(w.b, e)
	w.b = append(w.b, ':', '{')
	dot = len(w.b)
	if member {
		w.b = append(w.b, `".":{}`...)
	}
	return start, dot
}

// close ends the node opened at start with n children: a member with none
// has no ".", and a non-member with none is not written. It says whether
// the node was written.
func (w *createdWriter) close(start, dot int, member bool, n int) bool {
	switch {
	case n > 0:
	case member:
		w.b = w.b[:dot]
	default:
		w.b = w.b[:start]
		return false
	}
	w.b = append(w.b, '}')
	return true
}

// children writes the members of v's FieldsV1 node, the first after a
// comma if comma (a "." entry is written); it returns how many it wrote.
func (w *createdWriter) children(v any, s *Schema, level int, comma bool) int {
	s = s.of(v)
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
		return w.items(l, s, comma)
	case Map, Struct:
		m, _ := v.(map[string]any)
		if len(m) == 0 {
			return 0
		}
		base := len(w.keys)
		for k := range m {
			w.keys = append(w.keys, k)
		}
		slices.Sort(w.keys[base:])
		for i := base; i < len(w.keys); i++ {
			k := w.keys[i]
			skip, member, childLevel := createdField(w, level, k)
			if skip {
				continue
			}
			start, dot := w.open(fieldElement(k), member, comma || n > 0)
			if w.close(start, dot, member, w.children(m[k], s.Field(k), childLevel, member)) {
				n++
			}
		}
		w.keys = w.keys[:base]
	}
	return n
}

// items writes a granular list's items, in FieldsV1's order.
func (w *createdWriter) items(l []any, s *Schema, comma bool) int {
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
	n := 0
	for _, it := range items {
		start, dot := w.open(it.elem, true, comma || n > 0)
		c := 0
		if it.count == 1 { // one named twice is owned whole
			c = w.children(it.value, s.Elem, levelOther, true)
		}
		if w.close(start, dot, true, c) {
			n++
		}
	}
	return n
}

// storedChildren is children of a value as written, checked by
// validStored already (so its values are only passed over); ok false for
// what only decoding the document can tell.
func (w *createdWriter) storedChildren(b []byte, s *Schema, depth, level int, comma bool) (int, bool) {
	s = s.ofJSON(b)
	if isLeaf(s) {
		return 0, true
	}
	switch {
	case s.Kind == List && len(b) > 0 && b[0] == '[' && level == levelOther:
		if n, ok := w.storedItems(b, s, depth, comma); ok {
			return n, true
		}
		fallthrough
	case s.Kind == List || (s.Kind != Map && s.Kind != Struct) || len(b) == 0 || b[0] != '{':
		if len(b) == 0 || (b[0] != '[' && b[0] != '{') {
			return 0, true // null: no children
		}
		v, ok := decodeStored(b, s, depth, level)
		if !ok {
			return 0, false
		}
		return w.children(v, s, level, comma), true
	}
	base := len(w.member)
	members, ok := storedMembers(b, depth, w.member, true)
	if !ok {
		v, ok := decodeStored(b, s, depth, level)
		if !ok {
			return 0, false
		}
		return w.children(v, s, level, comma), true
	}
	w.member = members
	defer func() { w.member = w.member[:base] }()
	mine := w.member[base:]
	if level == levelMetadata {
		mine = withoutManagedFields(mine)
	}
	slices.SortFunc(mine, func(a, b storedMember) int { return bytes.Compare(a.key, b.key) })
	n := 0
	for _, m := range mine {
		skip, member, childLevel := createdField(w, level, m.key)
		if skip {
			continue
		}
		start, dot := w.openStored(m.key, member, comma || n > 0)
		c, ok := w.storedChildren(m.value, s.Field(string(m.key)), depth+1, childLevel, member)
		if !ok {
			return 0, false
		}
		if w.close(start, dot, member, c) {
			n++
		}
	}
	return n, true
}

// openStored is open of a field named as written.
func (w *createdWriter) openStored(name []byte, member, comma bool) (start, dot int) {
	if !plainJSON(string(name)) {
		return w.open(fieldElement(string(name)), member, comma)
	}
	start = len(w.b)
	if comma {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, `"f:`...)
	w.b = append(w.b, name...)
	w.b = append(w.b, `":{`...)
	dot = len(w.b)
	if member {
		w.b = append(w.b, `".":{}`...)
	}
	return start, dot
}

// storedItem is a granular list's item as written, and its name.
type storedItem struct {
	elem  pathElement
	value []byte
	count int
}

// storedItems is items of a list as written: only what names an item (a
// map list item's keys, a set item's value) is decoded. It leaves w as it
// was when it returns ok false, for the list to be decoded.
func (w *createdWriter) storedItems(b []byte, s *Schema, depth int, comma bool) (int, bool) {
	d := jsonReader{data: b, discard: true, trusted: true}
	d.i++ // [
	var buf [8]storedItem
	items := buf[:0]
	for {
		d.space()
		if len(items) == 0 && d.i < len(d.data) && d.data[d.i] == ']' {
			return 0, true
		}
		start := d.i
		if !d.skip(depth + 1) {
			return 0, false
		}
		value := d.data[start:d.i]
		e, ok := w.storedElement(value, s, depth+1)
		if !ok {
			return 0, false
		}
		if i := slices.IndexFunc(items, func(x storedItem) bool { return x.elem.str == e.str }); i >= 0 {
			items[i].count++
		} else {
			items = append(items, storedItem{elem: e, value: value, count: 1})
		}
		more, ok := d.next(']')
		if !ok {
			return 0, false
		}
		if !more {
			break
		}
	}
	if d.space(); d.i != len(d.data) {
		return 0, false
	}
	slices.SortFunc(items, func(a, b storedItem) int { return compareElements(a.elem, b.elem) })
	n, written := 0, len(w.b)
	for _, it := range items {
		start, dot := w.open(it.elem, true, comma || n > 0)
		c := 0
		if it.count == 1 { // one named twice is owned whole
			var ok bool
			if c, ok = w.storedChildren(it.value, s.Elem, depth+1, levelOther, true); !ok {
				w.b = w.b[:written]
				return 0, false
			}
		}
		if w.close(start, dot, true, c) {
			n++
		}
	}
	return n, true
}

// storedElement is itemElement of an item as written (checked by
// validStored already): a map list item by the values of its keys, a set
// item by its value.
func (w *createdWriter) storedElement(b []byte, s *Schema, depth int) (pathElement, bool) {
	if s.ListType != ListMap {
		d := jsonReader{data: b}
		v, ok := d.value(depth)
		if !ok {
			return pathElement{}, false
		}
		e, err := itemElement(s, v)
		return e, err == nil
	}
	base := len(w.member)
	members, ok := storedMembers(b, depth, w.member, true)
	if !ok {
		return pathElement{}, false
	}
	defer func() { w.member = w.member[:base] }()
	w.member = members
	keys := make([]keyField, 0, len(s.ListMapKeys))
	for _, k := range s.ListMapKeys {
		for _, m := range w.member[base:] {
			if string(m.key) == k {
				d := jsonReader{data: m.value}
				v, ok := d.value(depth + 1)
				if !ok {
					return pathElement{}, false
				}
				keys = append(keys, keyField{k, v})
			}
		}
	}
	if len(keys) == 0 {
		return pathElement{}, false
	}
	return keyElement(keys), true
}
