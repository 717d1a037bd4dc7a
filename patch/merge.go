package patch

import "bytes"

// mergeStored applies a JSON merge patch (RFC 7386) to an object as
// jsonpatch.MergePatch does, on the documents as written: members are
// matched by key and copied as they are, and only the members a patch
// names are looked into. A merge PATCH sets a field or two of an object;
// jsonpatch decodes and writes the whole object again. The result is the
// value jsonpatch makes (member order aside; FuzzMergeStored holds the
// two equal), including its ways: a null removes a member; a value set
// where there was none or null, or where there was no object, has its
// objects' nulls removed, and a value that is not an object replaces
// whatever was there as it is. ok false for what it does not take on (a
// document or patch that is not an object, keys with escapes, duplicate
// keys, a syntax error): the caller asks jsonpatch.
func mergeStored(original, doc []byte) ([]byte, bool) {
	original, doc = trimSpace(original), trimSpace(doc)
	if len(original) == 0 || original[0] != '{' || len(doc) == 0 || doc[0] != '{' {
		return nil, false
	}
	m := storedMerger{out: make([]byte, 0, len(original)+len(doc))}
	if !m.merge(original, doc, 0) {
		return nil, false
	}
	return m.out, true
}

type storedMerger struct {
	out     []byte
	members []storedMember // a stack of objects' members, shared by the levels
}

// split appends the members of the object b to the stack.
func (m *storedMerger) split(b []byte, depth int) (members []storedMember, base int, ok bool) {
	base = len(m.members)
	all, ok := storedMembers(b, depth, m.members, depth > 0) // the documents are checked as they are split
	if !ok {
		return nil, base, false
	}
	m.members = all
	return all[base:], base, true
}

// merge writes the object cur with the object patch merged into it.
func (m *storedMerger) merge(cur, patch []byte, depth int) bool {
	cm, base, ok := m.split(cur, depth)
	if !ok {
		return false
	}
	pm, _, ok := m.split(patch, depth)
	if !ok {
		return false
	}
	defer func() { m.members = m.members[:base] }()
	m.out = append(m.out, '{')
	n := 0
	member := func(key []byte) {
		m.member(n, key)
		n++
	}
	for _, c := range cm {
		i := findMember(pm, c.key, 0)
		if i < 0 {
			member(c.key)
			m.out = append(m.out, c.value...)
			continue
		}
		v := pm[i].value
		switch {
		case isNull(v): // removed
		case isNull(c.value) || c.value[0] != '{':
			member(c.key)
			if !m.pruned(v, depth+1) {
				return false
			}
		case v[0] != '{':
			member(c.key)
			m.out = append(m.out, v...)
		default:
			member(c.key)
			if !m.merge(c.value, v, depth+1) {
				return false
			}
		}
	}
	for _, p := range pm {
		if isNull(p.value) || findMember(cm, p.key, 0) >= 0 {
			continue
		}
		member(p.key)
		if !m.pruned(p.value, depth+1) {
			return false
		}
	}
	m.out = append(m.out, '}')
	return true
}

// pruned writes v without the null members of its objects, at any depth
// (a list's null items stay), as jsonpatch's pruneNulls.
func (m *storedMerger) pruned(v []byte, depth int) bool {
	switch v[0] {
	case '{':
		members, base, ok := m.split(v, depth)
		if !ok {
			return false
		}
		defer func() { m.members = m.members[:base] }()
		m.out = append(m.out, '{')
		n := 0
		for _, c := range members {
			if isNull(c.value) {
				continue
			}
			m.member(n, c.key)
			n++
			if !m.pruned(c.value, depth+1) {
				return false
			}
		}
		m.out = append(m.out, '}')
		return true
	case '[':
		if bytes.IndexByte(v, '{') < 0 {
			m.out = append(m.out, v...) // no object in it: nothing to prune
			return true
		}
		d := jsonReader{data: v, discard: true, trusted: true}
		d.i++ // [
		m.out = append(m.out, '[')
		d.space()
		if d.i < len(d.data) && d.data[d.i] == ']' {
			m.out = append(m.out, ']')
			return true
		}
		for n := 0; ; n++ {
			d.space()
			start := d.i
			if !d.skip(depth + 1) {
				return false
			}
			if n > 0 {
				m.out = append(m.out, ',')
			}
			if !m.pruned(d.data[start:d.i], depth+1) {
				return false
			}
			more, ok := d.next(']')
			if !ok {
				return false
			}
			if !more {
				m.out = append(m.out, ']')
				return true
			}
		}
	}
	m.out = append(m.out, v...)
	return true
}

// member writes the key of an object's nth member (from 0).
func (m *storedMerger) member(n int, key []byte) {
	if n > 0 {
		m.out = append(m.out, ',')
	}
	m.out = append(m.out, '"')
	m.out = append(m.out, key...)
	m.out = append(m.out, '"', ':')
}

func isNull(v []byte) bool { return string(v) == "null" }
