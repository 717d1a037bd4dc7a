package patch

import (
	"encoding/json"
	"strconv"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// string reads a JSON string; escapes other than surrogates are read here,
// anything not plain valid UTF-8 is left to encoding/json.
func (d *jsonReader) string() (string, bool) {
	d.i++ // "
	start := d.i
	for d.i < len(d.data) {
		if plainByte[d.data[d.i]] { // most of every string
			d.i++
			continue
		}
		c := d.data[d.i]
		switch {
		case c == '"':
			var s string
			if !d.discard {
				s = string(d.data[start:d.i])
			}
			d.i++
			return s, true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(d.data[d.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			d.i += size
		default:
			d.i++
		}
	}
	return "", false
}

// key reads an object's key: as string does, but a plain key the reader
// has read before (a field name, mostly) is the string made then.
func (d *jsonReader) key() (string, bool) {
	if d.discard {
		return d.string()
	}
	start := d.i + 1
	for i := start; i < len(d.data) && i-start <= maxInternedKey; i++ {
		switch c := d.data[i]; {
		case c == '"':
			if s, ok := internKey(d.data[start:i]); ok {
				d.i = i + 1
				return s, true
			}
			return d.string()
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return d.string()
		}
	}
	return d.string()
}

// internedKeys holds the keys read lately, by a hash of the key: what
// decoding the objects of one type reads again and again. A slot holds a
// pointer to its string, so that it is read and written whole.
var internedKeys [2048]atomic.Pointer[string]

// maxInternedKey is the longest key interned: field names are short, and
// longer keys (labels, annotations) vary more.
const maxInternedKey = 32

// internKey is the string of a plain ASCII key, made once while it stays
// in its slot; ok false if it is too long.
func internKey(b []byte) (string, bool) {
	if len(b) > maxInternedKey {
		return "", false
	}
	h := uint32(2166136261) // FNV-1a
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	// Two slots a key may be in: the newest in the first, the one it
	// replaces moved to the second, so that two keys of one hash both stay.
	i := h % uint32(len(internedKeys))
	first, second := &internedKeys[i], &internedKeys[i^1]
	p := first.Load()
	if p != nil && *p == string(b) {
		return *p, true
	}
	if q := second.Load(); q != nil && *q == string(b) {
		return *q, true
	}
	s := string(b)
	if p != nil {
		second.Store(p)
	}
	first.Store(&s)
	return s, true
}

// shortString reads a plain string of up to maxInternedKey bytes as
// internValue makes it; ok false (and nothing read) for any other string.
func (d *jsonReader) shortString() (any, bool) {
	start := d.i + 1
	for i := start; i < len(d.data) && i-start <= maxInternedKey; i++ {
		if c := d.data[i]; c == '"' {
			d.i = i + 1
			return internValue(d.data[start:i], false), true
		} else if !plainByte[c] {
			return nil, false
		}
	}
	return nil, false
}

// internedValue is a short string or number as decoded, boxed once. It
// is one allocation: lit's bytes are text's, and v holds lit itself
// (boxAt), where a string boxed and its bytes would be two more; a value
// read once (a size that changes at every write) costs one.
type internedValue struct {
	number bool // a json.Number, else a string
	lit    string
	v      any
	text   [maxInternedKey]byte
}

// internedValues holds the short values read lately, as internedKeys holds
// keys: an object's kind, apiVersion, namespace, labels and most of its
// values are those of the objects of its kind written before, and a value
// made again costs an allocation (internedValue).
var internedValues [2048]atomic.Pointer[internedValue]

// internValue is the string (or json.Number) b, boxed, made once while it
// stays in its slot; b is at most maxInternedKey bytes, or a number of
// fewer than 19.
func internValue(b []byte, number bool) any {
	h := uint32(2166136261) // FNV-1a
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	if number {
		h = (h ^ 1) * 16777619
	}
	slot := &internedValues[h%uint32(len(internedValues))]
	if p := slot.Load(); p != nil && p.number == number && p.lit == string(b) {
		return p.v
	}
	e := &internedValue{number: number}
	if len(b) > len(e.text) {
		if number {
			return json.Number(b)
		}
		return string(b)
	}
	copy(e.text[:], b)
	e.lit = unsafe.String(&e.text[0], len(b))
	if number {
		e.v = boxAt(json.Number(""), &e.lit)
	} else {
		e.v = boxAt("", &e.lit)
	}
	slot.Store(e)
	return e.v
}

// boxAt is like, a value of a type of kind string, made to hold *s: an
// interface holds a string by a pointer to its header, this one s, which
// its caller never changes, where boxing a string would allocate a
// header of its own.
func boxAt(like any, s *string) any {
	e := (*struct{ typ, data unsafe.Pointer })(unsafe.Pointer(&like))
	e.data = unsafe.Pointer(s)
	return like
}

// plainByte says which bytes a string holds as they are: not '"', '\\',
// a control character or part of a multi-byte character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// escaped goes on reading a string from its first escape; while
// discarding it only checks it (managedFields, which the reader passes
// over, has an escape in every key of a map list item).
func (d *jsonReader) escaped(start int) (string, bool) {
	d.respelled = true
	var buf []byte
	if !d.discard {
		buf = append(buf, d.data[start:d.i]...)
	}
	add := func(b ...byte) {
		if !d.discard {
			buf = append(buf, b...)
		}
	}
	for d.i < len(d.data) {
		c := d.data[d.i]
		if d.discard && plainByte[c] {
			d.i++
			continue
		}
		switch {
		case c == '"':
			d.i++
			if d.discard {
				return "", true
			}
			return string(buf), true
		case c == '\\':
			if d.i+1 >= len(d.data) {
				return "", false
			}
			e := d.data[d.i+1]
			d.i += 2
			switch e {
			default:
				c, ok := jsonskip.Unescape(e)
				if !ok {
					return "", false
				}
				add(c)
			case 'u':
				if d.i+4 > len(d.data) {
					return "", false
				}
				r, err := strconv.ParseUint(string(d.data[d.i:d.i+4]), 16, 32)
				if err != nil || r >= 0xD800 && r < 0xE000 {
					return "", false
				}
				d.i += 4
				if !d.discard {
					buf = utf8.AppendRune(buf, rune(r))
				}
			}
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(d.data[d.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			add(d.data[d.i : d.i+size]...)
			d.i += size
		default:
			add(c)
			d.i++
		}
	}
	return "", false
}
