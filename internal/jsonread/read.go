package jsonread

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// stringCache shares short strings between the values a decoder reads,
// over all the documents it reads (json/v2 keeps such a cache too): most
// are names, kinds, label keys and values read again and again.
type stringCache [256]string

// cachedMax is the longest string value the cache holds, and keyCachedMax
// the longest map key: the keys of labels and annotations are mostly
// prefixed names ("app.kubernetes.io/name", 22 bytes) that every object
// repeats, where a value that long is mostly the object's own.
const (
	cachedMax    = 16
	keyCachedMax = 64
)

// make returns b as a string, from the cache if it is short.
func (c *stringCache) make(b []byte) string { return c.upTo(b, cachedMax) }

// key returns the map key b as a string, from the cache if it is short.
func (c *stringCache) key(b []byte) string { return c.upTo(b, keyCachedMax) }

func (c *stringCache) upTo(b []byte, longest int) string {
	if len(b) == 0 || len(b) > longest {
		return string(b)
	}
	h := uint32(len(b))
	for _, x := range b {
		h = h*31 + uint32(x)
	}
	s := &c[h%uint32(len(c))]
	if *s != string(b) {
		*s = string(b)
	}
	return *s
}

// next returns the first byte of the value at d.i, moving d.i to it; 0 at
// the end of the data.
func (d *decoder) next() byte {
	d.i = jsonskip.Space(d.data, d.i)
	if d.i >= len(d.data) {
		return 0
	}
	return d.data[d.i]
}

// literal moves past lit at d.i, if there.
func (d *decoder) literal(lit string) bool {
	if !jsonskip.HasLiteral(d.data, d.i, lit) {
		return false
	}
	d.i += len(lit)
	return true
}

// after moves past the comma between elements or members, reporting
// true, or past the container's end (closing), reporting false; ok false
// if neither is there.
func (d *decoder) after(closing byte) (more, ok bool) {
	d.i = jsonskip.Space(d.data, d.i)
	if d.i < len(d.data) {
		switch d.data[d.i] {
		case ',':
			d.i++
			return true, true
		case closing:
			d.i++
			d.depth--
			return false, true
		}
	}
	return false, false
}

// object reads the object at d.i: begin (if not nil) once it is open,
// then member for each member, with d.i at its value, which member reads.
// null reads as nothing: what it would set is zero, as a Decoder's values
// are to begin with.
func (d *decoder) object(begin func(), member func(name []byte) bool) bool {
	if open, ok := d.container('{', begin); !open {
		return ok
	}
	if d.empty('}') {
		return true
	}
	for {
		name, ok := d.key()
		if !ok || !member(name) {
			return false
		}
		if more, ok := d.after('}'); !more {
			return ok
		}
	}
}

// array is object of an array: element reads each element, at d.i.
func (d *decoder) array(begin func(), element func() bool) bool {
	if open, ok := d.container('[', begin); !open {
		return ok
	}
	if d.empty(']') {
		return true
	}
	for {
		if !element() {
			return false
		}
		if more, ok := d.after(']'); !more {
			return ok
		}
	}
}

// container moves into the container at d.i, which opening opens, and
// calls begin (if not nil); open is false for null, moved past (ok), and
// for another value or a container too deep (not ok).
func (d *decoder) container(opening byte, begin func()) (open, ok bool) {
	switch d.next() {
	case 'n':
		return false, d.literal("null")
	case opening:
	default:
		return false, false
	}
	d.i++
	d.depth++
	if d.depth > MaxDepth {
		return false, false
	}
	if begin != nil {
		begin()
	}
	return true, true
}

// empty moves past the end of the container just opened, if it is there.
func (d *decoder) empty(closing byte) bool {
	if d.next() == closing {
		d.i++
		d.depth--
		return true
	}
	return false
}

// key reads a member's name and the colon after it; a name with an escape
// or invalid UTF-8 in it is left to the fallback.
func (d *decoder) key() ([]byte, bool) {
	data := d.data
	i := jsonskip.Space(data, d.i)
	if i >= len(data) || data[i] != '"' {
		return nil, false
	}
	start := i + 1
	for i = start; i < len(data); {
		c := data[i]
		switch {
		case c == '"':
			name := data[start:i]
			i = jsonskip.Space(data, i+1)
			if i >= len(data) || data[i] != ':' {
				return nil, false
			}
			d.i = i + 1
			return name, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			i += size
		}
	}
	return nil, false
}

// str reads the string at d.i, which is '"'.
func (d *decoder) str() (string, bool) {
	data := d.data
	start := d.i + 1
	for i := start; i < len(data); {
		c := data[i]
		switch {
		case c == '"':
			d.i = i + 1
			return d.strings.make(data[start:i]), true
		case c == '\\':
			return d.escaped(start, i)
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			i += size
		}
	}
	return "", false
}

// escaped reads the rest of a string from its first escape, at i.
func (d *decoder) escaped(start, i int) (string, bool) {
	data := d.data
	b := append(d.scratch[:0], data[start:i]...)
	defer func() { d.scratch = b }()
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			d.i = i + 1
			return string(b), true
		case c == '\\':
			if i+1 >= len(data) {
				return "", false
			}
			switch e := data[i+1]; e {
			default:
				c, ok := jsonskip.Unescape(e)
				if !ok {
					return "", false
				}
				b = append(b, c)
			case 'u':
				r, ok := hex4(data, i+2)
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) {
					// Only a pair is read here; a lone one is the fallback's.
					r2, ok := rune(0), false
					if i+12 <= len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
						r2, ok = hex4(data, i+8)
					}
					if r = utf16.DecodeRune(r, r2); !ok || r == utf8.RuneError {
						return "", false
					}
					i += 6
				}
				b = utf8.AppendRune(b, r)
				i += 4
			}
			i += 2
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			b = append(b, data[i:i+size]...)
			i += size
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, h := range data[i : i+4] {
		switch {
		case h >= '0' && h <= '9':
			r = r<<4 | rune(h-'0')
		case h >= 'a' && h <= 'f':
			r = r<<4 | rune(h-'a'+10)
		case h >= 'A' && h <= 'F':
			r = r<<4 | rune(h-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
