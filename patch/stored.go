package patch

import (
	"bytes"
	"math"
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
		c.add(&c.modified, path)
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
