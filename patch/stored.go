package patch

import (
	"bytes"
	"math"
	"sync"
	"unicode/utf8"
)

// An update compares the object before and after a write; both are a
// server's own encoding of its type (json.Marshal of the stored object),
// and most of the two is the same, byte for byte. compareStored compares
// them as written: the members of an object are matched by their keys and
// a member whose bytes are equal on both sides is only checked against the
// schema (once, as the old document is read), not decoded, since equal
// values have no changes to report. What differs is decoded and compared
// as compareObjects compares it. Anything
// it does not take on (a key with escapes, a duplicate key, a value the
// schema does not allow, a syntax error) makes it give up, and the caller
// decodes both documents whole, as before: the result and the errors are
// those of liveObject and compareObjects, always (FuzzCompareStored).

// maxStoredMembers is the most members of an object matched as written;
// a larger one is decoded.
const maxStoredMembers = 64

// storedMember is an object's member as written.
type storedMember struct {
	key, value []byte // the key without quotes (it has no escapes)
	// members are value's in the storedSplit, when it was split already
	// (split); checked says value was checked against its schema, as
	// validStored checks it, when it was split.
	members        span
	split, checked bool
}

// compareStored is compareObjects of liveObject(old) and liveObject(new);
// ok false when it cannot tell, and the caller must decode them.
//
// old is read once: split into its members and those into theirs, each
// checked against its schema as it is read (storedSplit.old), since every
// part of it must be valid for liveObject to read it. new is split where it
// differs from old: a member written as old's is passed over, its bytes
// compared rather than read, and needs no check of its own. Anything the
// split does not take on is left to stored, as before the split.
func compareStored(old, new []byte, s *Schema) (c comparison, ok bool) {
	old, new = trimSpace(old), trimSpace(new)
	if s == nil || s.Kind != Struct || isLeaf(s) || len(old) == 0 || len(new) == 0 || old[0] != '{' || new[0] != '{' {
		return c, false // not a document liveObject reads
	}
	c = comparison{added: fieldSet{}, modified: fieldSet{}, removed: fieldSet{}}
	path := make(fieldPath, 0, pathDepth)
	if bytes.Equal(old, new) || len(old) > math.MaxInt32 || len(new) > math.MaxInt32 {
		return c, c.stored(old, new, s, path, 0, levelRoot)
	}
	sp := storedSplits.Get().(*storedSplit)
	defer sp.free()
	sp.old.data, sp.new.data = old, new
	lm, split, _, ok := sp.readOld(s, 0, levelRoot)
	if !ok || !split || sp.old.i != len(old) {
		return c, false
	}
	rm, split, ok := sp.readNew(lm, 0)
	if !ok || !split || sp.new.i != len(new) {
		return c, false
	}
	var lbuf, rbuf [16]storedMember
	if !c.storedObject(sp, old, new, sp.members(lbuf[:0], old, lm), sp.members(rbuf[:0], new, rm), s, path, 0, levelRoot) {
		return c, false
	}
	return c, true
}

// The levels of stored that decodeUnmanaged reads apart: the root (a
// whole document), its metadata (without managedFields), and any other.
const (
	levelRoot = iota
	levelMetadata
	levelOther
)

// memberLevel is the level of the member named key of an object at level.
func memberLevel(level int, key []byte) int {
	if level == levelRoot && string(key) == "metadata" {
		return levelMetadata
	}
	return levelOther
}

// storedSplit is what compareStored reads of its two documents: old's
// objects split into their members, and new's where they differ from
// old's. The members are spans of the documents, so that keeping them
// writes no pointers.
type storedSplit struct {
	old, new jsonReader
	// arena holds the members of the objects read, stack those of the
	// objects being read: an object's members are kept together when it
	// ends, after those of the objects in it.
	arena, stack []splitMember
}

// span is where something is in a document or the arena.
type span struct{ start, end int32 }

// splitMember is a storedMember as a storedSplit keeps it.
type splitMember struct {
	key, value, members span
	split, checked      bool
}

var storedSplits = sync.Pool{New: func() any { return new(storedSplit) }}

// free returns sp to storedSplits, without the documents.
func (sp *storedSplit) free() {
	sp.old, sp.new = jsonReader{discard: true}, jsonReader{discard: true}
	sp.arena, sp.stack = sp.arena[:0], sp.stack[:0]
	storedSplits.Put(sp)
}

// keep moves the members of the object being read, from base on the
// stack, to the arena.
func (sp *storedSplit) keep(base int) span {
	n := len(sp.arena)
	sp.arena = append(sp.arena, sp.stack[base:]...)
	sp.stack = sp.stack[:base]
	return span{int32(n), int32(len(sp.arena))}
}

// members appends the members at ms in the arena, of doc, to out.
func (sp *storedSplit) members(out []storedMember, doc []byte, ms span) []storedMember {
	for _, m := range sp.arena[ms.start:ms.end] {
		out = append(out, storedMember{key: doc[m.key.start:m.key.end], value: doc[m.value.start:m.value.end], members: m.members, split: m.split, checked: m.checked})
	}
	return out
}

// find is the index in the arena of the member of old named key among
// ms, looked for from start first; -1 if there is none.
func (sp *storedSplit) find(ms span, key []byte, start int32) int32 {
	for i := max(start, ms.start); i < ms.end; i++ {
		if k := sp.arena[i].key; string(sp.old.data[k.start:k.end]) == string(key) {
			return i
		}
	}
	for i := ms.start; i < start && i < ms.end; i++ {
		if k := sp.arena[i].key; string(sp.old.data[k.start:k.end]) == string(key) {
			return i
		}
	}
	return -1
}

// duplicate says whether the object being read, from base on the stack,
// of doc, has a member named key, or maxStoredMembers members already.
func (sp *storedSplit) duplicate(base int, doc, key []byte) bool {
	ms := sp.stack[base:]
	if len(ms) == maxStoredMembers {
		return true
	}
	for _, m := range ms {
		if string(doc[m.key.start:m.key.end]) == string(key) {
			return true
		}
	}
	return false
}

// splits says whether stored splits a value of schema s that is an object.
func splits(s *Schema) bool {
	return s != nil && (s.Kind == Struct || s.Kind == Map) && !isLeaf(s)
}

// readOld reads the object at sp.old.i, of schema s (splits) at depth and
// level, into its members, each checked as validStored checks it, and
// split in turn if it is an object stored splits. checked says they all
// passed (validStored of the object would); split says the members are
// all there (no key written twice, at most maxStoredMembers). ok false
// where storedMembers would give up: sp.old.i is then anywhere.
func (sp *storedSplit) readOld(s *Schema, depth, level int) (out span, split, checked, ok bool) {
	d := &sp.old
	base := len(sp.stack)
	defer func() {
		if !split || !ok {
			sp.stack = sp.stack[:base]
		}
	}()
	split, checked = true, true
	if depth+1 > maxDepth || d.i >= len(d.data) || d.data[d.i] != '{' {
		return out, false, false, false
	}
	d.i++
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return out, true, true, true
	}
	for {
		key, ok := d.plainMember()
		if !ok {
			return out, false, false, false
		}
		d.space()
		m := splitMember{key: d.span(key)}
		start := d.i
		if level == levelMetadata && string(key) == "managedFields" {
			// Left out, as decodeUnmanaged leaves it: read, no schema.
			m.checked = true
			if !d.skip(depth + 1) {
				return out, false, false, false
			}
		} else if m.members, m.split, m.checked, ok = sp.readOldValue(s.Field(string(key)), depth+1, memberLevel(level, key)); !ok {
			return out, false, false, false
		}
		m.value = span{int32(start), int32(d.i)}
		checked = checked && m.checked
		if split && sp.duplicate(base, d.data, key) {
			split = false // read on, to check the others
		}
		if split {
			sp.stack = append(sp.stack, m)
		}
		more, ok := d.next('}')
		switch {
		case !ok:
			return out, false, false, false
		case !more:
			if split {
				out = sp.keep(base)
			}
			return out, split, checked, true
		}
	}
}

// readOldValue reads the value at sp.old.i, of schema s at depth and
// level, checking it and splitting it as readOld does; ok false if it is
// not JSON.
func (sp *storedSplit) readOldValue(s *Schema, depth, level int) (members span, split, checked, ok bool) {
	d := &sp.old
	start, kept := d.i, len(sp.arena)
	if splits(s) && d.i < len(d.data) && d.data[d.i] == '{' && depth <= maxDepth-2 {
		if members, split, checked, ok = sp.readOld(s, depth, level); ok {
			if !split {
				sp.arena = sp.arena[:kept]
			}
			return members, split, checked, true
		}
	} else if s != nil && d.validStored(s, depth, level, nil) {
		return members, false, true, true
	}
	d.i, sp.arena = start, sp.arena[:kept]
	return span{}, false, false, d.skip(depth) // stored reads it as before
}

// readNew reads the object at sp.new.i at depth, untrusted, into its
// members as storedMembers does; guide are old's members of the same
// object: a member written as old's is passed over, and one that is an
// object where old's was split is split in turn.
func (sp *storedSplit) readNew(guide span, depth int) (out span, split, ok bool) {
	d := &sp.new
	base := len(sp.stack)
	defer func() {
		if !ok {
			sp.stack = sp.stack[:base]
		}
	}()
	if depth+1 > maxDepth || d.i >= len(d.data) || d.data[d.i] != '{' {
		return out, false, false
	}
	d.i++
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return out, true, true
	}
	next := guide.start // where the next key is looked for first in guide
	for {
		key, ok := d.plainMember()
		if !ok {
			return out, false, false
		}
		d.space()
		m := splitMember{key: d.span(key)}
		start := d.i
		if g := sp.find(guide, key, next); g < 0 {
			ok = d.skip(depth + 1)
		} else if next = g + 1; d.written(sp.old.data[sp.arena[g].value.start:sp.arena[g].value.end]) {
			ok = true
		} else if sp.arena[g].split && d.i < len(d.data) && d.data[d.i] == '{' {
			kept := len(sp.arena)
			if m.members, m.split, ok = sp.readNew(sp.arena[g].members, depth+1); !ok {
				d.i, sp.arena, m.members, m.split = start, sp.arena[:kept], span{}, false
				ok = d.skip(depth + 1)
			}
		} else {
			ok = d.skip(depth + 1)
		}
		if !ok || sp.duplicate(base, d.data, key) {
			return out, false, false
		}
		m.value = span{int32(start), int32(d.i)}
		sp.stack = append(sp.stack, m)
		more, ok := d.next('}')
		switch {
		case !ok:
			return out, false, false
		case !more:
			return sp.keep(base), true, true
		}
	}
}

// span is where b, a part of d.data, is in it.
func (d *jsonReader) span(b []byte) span {
	start := cap(d.data) - cap(b)
	return span{int32(start), int32(start + len(b))}
}

// written says whether the value at d.i is v, a JSON value that was read
// as valid at the same depth, as written, and moves past it if so.
func (d *jsonReader) written(v []byte) bool {
	end := d.i + len(v)
	if !bytes.HasPrefix(d.data[d.i:], v) || end < len(d.data) && !numberEnd[d.data[end]] {
		return false // "1" is where "12" is written
	}
	d.i = end
	return true
}

// stored compares two values as written, both present: l and r are the
// value's bytes, without surrounding space.
func (c *comparison) stored(l, r []byte, s *Schema, path fieldPath, depth, level int) bool {
	trusted := level != levelRoot // a member of an object split already
	if bytes.Equal(l, r) {
		d := jsonReader{data: r, discard: true, trusted: trusted}
		if !d.validStored(s, depth, level, nil) {
			return false
		}
		d.space()
		return d.i == len(d.data) // nothing changed in it
	}
	if level != levelRoot && (s.anyValue() || s.Kind == Scalar) && plainScalar(l) && plainScalar(r) {
		// Written apart, two plain scalars are two values: decoding them
		// to say so was a fifth of comparing an update's documents.
		c.modified.insert(c.clone(path))
		return true
	}
	if s != nil && s.Kind == Deduced && len(l) > 0 && len(r) > 0 && l[0] == '{' && r[0] == '{' {
		s = deducedObject
	}
	if !splits(s) || len(l) == 0 || len(r) == 0 || l[0] != '{' || r[0] != '{' {
		return c.decoded(l, r, s, path, depth, level)
	}
	var lbuf, rbuf [16]storedMember
	lm, lok := storedMembers(l, depth, lbuf[:0], trusted)
	rm, rok := storedMembers(r, depth, rbuf[:0], trusted)
	if !lok || !rok {
		return c.decoded(l, r, s, path, depth, level)
	}
	return c.storedObject(nil, l, r, lm, rm, s, path, depth, level)
}

// storedSplit is stored of two objects split already.
func (c *comparison) storedSplit(sp *storedSplit, l, r *storedMember, s *Schema, path fieldPath, depth, level int) bool {
	var lbuf, rbuf [16]storedMember
	lm, rm := sp.members(lbuf[:0], sp.old.data, l.members), sp.members(rbuf[:0], sp.new.data, r.members)
	return c.storedObject(sp, l.value, r.value, lm, rm, s, path, depth, level)
}

// storedObject is stored of two objects of schema s (splits), l and r,
// split into their members lm and rm; sp holds the members of those split
// already.
func (c *comparison) storedObject(sp *storedSplit, l, r []byte, lm, rm []storedMember, s *Schema, path fieldPath, depth, level int) bool {
	if level == levelMetadata {
		lm, rm = withoutManagedFields(lm), withoutManagedFields(rm)
	}
	if len(lm) == 0 && len(rm) == 0 {
		return c.decoded(l, r, s, path, depth, level)
	}
	var matched uint64 // of lm
	next := 0          // where the next key is looked for first: both are usually in one order
	for _, m := range rm {
		cs := s.Field(string(m.key))
		if cs == nil {
			return false // not of the schema: liveObject's error
		}
		i := findMember(lm, m.key, next)
		childLevel := memberLevel(level, m.key)
		if i < 0 {
			if !c.decodedSide(nil, m.value, cs, append(path, fieldElement(string(m.key))), depth+1, childLevel) {
				return false
			}
			continue
		}
		matched |= 1 << i
		next = i + 1
		l := &lm[i]
		switch {
		case bytes.Equal(l.value, m.value):
			if l.checked {
				continue // checked as old was read
			}
			d := jsonReader{data: m.value, discard: true, trusted: true}
			if !d.validStored(cs, depth+1, childLevel, nil) {
				return false
			}
		case l.split && m.split:
			if !c.storedSplit(sp, l, &m, cs, append(path, fieldElement(string(m.key))), depth+1, childLevel) {
				return false
			}
		default:
			if !c.stored(l.value, m.value, cs, append(path, fieldElement(string(m.key))), depth+1, childLevel) {
				return false
			}
		}
	}
	for i, m := range lm {
		if matched&(1<<i) != 0 {
			continue
		}
		cs := s.Field(string(m.key))
		if cs == nil {
			return false
		}
		if !c.decodedSide(m.value, nil, cs, append(path, fieldElement(string(m.key))), depth+1, memberLevel(level, m.key)) {
			return false
		}
	}
	return true
}

// plainScalar says whether b is a scalar that only one way of writing
// gives: true, false, null, an integer as strconv writes one that int64
// holds, or a string of printable ASCII without escapes. Two plain scalars
// written apart decode to values equalValues finds apart.
func plainScalar(b []byte) bool {
	switch {
	case len(b) == 0:
		return false
	case b[0] == '"':
		if len(b) < 2 || b[len(b)-1] != '"' {
			return false
		}
		for _, c := range b[1 : len(b)-1] {
			if c < ' ' || c > '~' || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	case string(b) == "true" || string(b) == "false" || string(b) == "null":
		return true
	}
	digits := b
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && len(b) > 1 {
		return false // -0, 01; 19 digits may not fit
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decoded compares two values by decoding them.
func (c *comparison) decoded(l, r []byte, s *Schema, path fieldPath, depth, level int) bool {
	lv, ok := decodeStored(l, s, depth, level)
	if !ok {
		return false
	}
	rv, ok := decodeStored(r, s, depth, level)
	if !ok {
		return false
	}
	c.walk(lv, true, rv, true, s, path)
	return true
}

// decodedSide is decoded for a member on one side only (the other nil).
func (c *comparison) decodedSide(l, r []byte, s *Schema, path fieldPath, depth, level int) bool {
	side := l
	if side == nil {
		side = r
	}
	v, ok := decodeStored(side, s, depth, level)
	if !ok {
		return false
	}
	if l != nil {
		c.walk(v, true, nil, false, s, path)
	} else {
		c.walk(nil, false, v, true, s, path)
	}
	return true
}

// decodeStored decodes and checks one value as liveObject would have: b
// is read as at depth in its document.
func decodeStored(b []byte, s *Schema, depth, level int) (any, bool) {
	if level == levelRoot {
		return nil, false // the caller decodes the documents
	}
	d := jsonReader{data: b}
	v, ok := d.value(depth)
	if !ok {
		return nil, false
	}
	if d.space(); d.i != len(d.data) {
		return nil, false
	}
	if level == levelMetadata {
		if m, isMap := v.(map[string]any); isMap {
			delete(m, "managedFields")
		}
	}
	return v, valid(v, s, true)
}

func withoutManagedFields(ms []storedMember) []storedMember {
	for i, m := range ms {
		if string(m.key) == "managedFields" {
			return append(ms[:i], ms[i+1:]...)
		}
	}
	return ms
}

// findMember is the index of the member named key, looked for from
// start first; -1 if there is none.
func findMember(ms []storedMember, key []byte, start int) int {
	for i := start; i < len(ms); i++ {
		if bytes.Equal(ms[i].key, key) {
			return i
		}
	}
	for i := 0; i < start && i < len(ms); i++ {
		if bytes.Equal(ms[i].key, key) {
			return i
		}
	}
	return -1
}

// storedMembers splits an object, its bytes without surrounding space,
// into its members, appended to out; ok false for a syntax error, a key
// with escapes, a duplicate key or more than maxStoredMembers members.
// trusted says b was split before (as a member of the object around it):
// its values are valid JSON, only passed over.
func storedMembers(b []byte, depth int, out []storedMember, trusted bool) ([]storedMember, bool) {
	base := len(out)
	d := jsonReader{data: b, discard: true, trusted: trusted}
	if depth+1 > maxDepth || len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	d.i++
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return out, d.i == len(d.data)
	}
	for {
		key, ok := d.plainMember()
		if !ok {
			return nil, false
		}
		d.space()
		start := d.i
		if !d.skip(depth + 1) {
			return nil, false
		}
		if len(out)-base == maxStoredMembers || findMember(out[base:], key, 0) >= 0 {
			return nil, false
		}
		out = append(out, storedMember{key: key, value: d.data[start:d.i]})
		more, ok := d.next('}')
		switch {
		case !ok:
			return nil, false
		case !more:
			return out, d.i == len(d.data)
		}
	}
}

// plainMember reads a member's key (plainKey) and the colon after it.
func (d *jsonReader) plainMember() ([]byte, bool) {
	d.space()
	key, ok := d.plainKey()
	if !ok {
		return nil, false
	}
	d.space()
	if d.i >= len(d.data) || d.data[d.i] != ':' {
		return nil, false
	}
	d.i++
	return key, true
}

// plainKey reads a string without escapes, as written, checking it as
// string does; ok false for anything else.
func (d *jsonReader) plainKey() ([]byte, bool) {
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return nil, false
	}
	start := d.i + 1
	for i := start; i < len(d.data); {
		c := d.data[i]
		switch {
		case c == '"':
			d.i = i + 1
			return d.data[start:i], true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			i += size
		default:
			i++
		}
	}
	return nil, false
}

// validStored checks the value at d as valid checks it decoded (with
// duplicates), without decoding it; at levelRoot and levelMetadata it
// passes over metadata.managedFields as decodeUnmanaged does. keys, if not
// nil, are a map list's keys: the value must be an object that has one.
// It is stricter than valid where a key is written twice (each value is
// checked, not only the last), which only sends the caller to decoding.
func (d *jsonReader) validStored(s *Schema, depth, level int, keys []string) bool {
	d.space()
	if d.i >= len(d.data) || depth > maxDepth-2 {
		return false
	}
	c := d.data[d.i]
	if keys != nil && c != '{' {
		return false // itemElement: not an object
	}
	if s.anyValue() || c == 'n' {
		return keys == nil && d.skip(depth)
	}
	switch s.Kind {
	case Scalar:
		if c == '{' || c == '[' {
			return false
		}
		return d.skip(depth)
	case Struct, Map:
		if c != '{' {
			return false
		}
		d.i++
		d.space()
		if d.i < len(d.data) && d.data[d.i] == '}' {
			d.i++
			return keys == nil
		}
		named := keys == nil
		for {
			key, ok := d.plainMember()
			if !ok {
				return false
			}
			if level == levelMetadata && string(key) == "managedFields" {
				ok = d.skip(depth + 1) // left out, as decodeUnmanaged leaves it
			} else {
				childLevel := levelOther
				if level == levelRoot && string(key) == "metadata" {
					childLevel = levelMetadata
				}
				cs := s.Field(string(key))
				ok = cs != nil && d.validStored(cs, depth+1, childLevel, nil)
			}
			if !ok {
				return false
			}
			if !named {
				for _, k := range keys {
					if string(key) == k {
						named = true
					}
				}
			}
			more, ok := d.next('}')
			switch {
			case !ok:
				return false
			case !more:
				return named
			}
		}
	case List:
		if c != '[' {
			return false
		}
		d.i++
		d.space()
		if d.i < len(d.data) && d.data[d.i] == ']' {
			d.i++
			return true
		}
		granular := !isLeaf(s)
		var itemKeys []string
		if granular && s.ListType == ListMap {
			itemKeys = s.ListMapKeys
		}
		for {
			d.space()
			if granular && itemKeys == nil && d.i < len(d.data) {
				if c := d.data[d.i]; c == '{' || c == '[' || c == 'n' {
					return false // itemElement: not a scalar
				}
			}
			if !d.validStored(s.Elem, depth+1, levelOther, itemKeys) {
				return false
			}
			more, ok := d.next(']')
			switch {
			case !ok:
				return false
			case !more:
				return true
			}
		}
	}
	return d.skip(depth)
}

func trimSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}
