package patch

import (
	"bytes"
	"sync"
)

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
