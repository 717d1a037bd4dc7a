package patch

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// decodeJSON reads one JSON value with numbers kept exact; as Kubernetes
// reads numbers, an integral one is an int64 and any other a float64, which
// is how they are written back and named in FieldsV1.
//
// Every write decodes its object (and, on update, the old one) to record
// managed fields, so this is on the hot path: a reader of its own does the
// common documents in one pass, several times faster than encoding/json
// into an any. Whatever it does not take on (invalid UTF-8, surrogate
// escapes, nesting beyond maxDepth, any syntax error) goes to encoding/json,
// so the values and the errors are encoding/json's exactly
// (FuzzDecodeJSON checks the two agree).
func decodeJSON(b []byte) (any, error) {
	return readJSON(&jsonReader{data: b})
}

// decodeUnmanaged reads a JSON object without metadata.managedFields; nil
// for a value that is not an object. The reader passes over managedFields,
// the larger part of most objects, without making anything of them.
func decodeUnmanaged(b []byte) (map[string]any, error) {
	return readUnmanaged(&jsonReader{data: b, unmanaged: true})
}

// readUnmanaged is decodeUnmanaged with d's reader, whose marks (d.plain)
// the caller may read.
func readUnmanaged(d *jsonReader) (map[string]any, error) {
	v, err := readJSON(d)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	if meta, ok := m["metadata"].(map[string]any); ok {
		//lint:ignore S1033 delete writes the map even without the key, and a tree kept (configTrees) is read by other requests at once
		if _, has := meta["managedFields"]; has {
			delete(meta, "managedFields") // read by encoding/json
		}
	}
	return m, nil
}

func readJSON(d *jsonReader) (any, error) {
	if d.members == nil {
		stack := memberStacks.Get().(*[]member)
		d.members = (*stack)[:0]
		defer func() {
			if cap(d.members) <= maxPooledMembers {
				clear(d.members[:cap(d.members)]) // what a failed read left
				*stack = d.members[:0]
				memberStacks.Put(stack)
			}
			d.members = nil
		}()
	}
	v, ok := d.value(0)
	if ok {
		d.space()
		if d.i == len(d.data) {
			return v, nil
		}
	}
	d.respelled = true
	d.shape = nil // of what was read before giving up
	return decodeJSONStd(d.data)
}

// decodeJSONStd is decodeJSON by encoding/json.
func decodeJSONStd(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return canonicalNumbers(v), nil
}

// jsonReader is decodeJSON's one-pass reader; ok false means "ask
// encoding/json".
type jsonReader struct {
	data []byte
	i    int
	// members is a stack of an object's members being read, shared by
	// the levels of nesting, so that each map is made once at its size.
	members []member
	// unmanaged leaves metadata.managedFields out; discard is set while
	// the reader checks a value it makes nothing of.
	unmanaged, discard bool
	// trusted says the data was read (and checked) before: skip only
	// finds where a value ends.
	trusted bool
	// trees says the reader keeps and reuses the trees of the values it
	// reads (configTrees): a configuration's, never changed.
	trees bool
	// respelled marks a document whose values do not all say what they
	// said as written: a name held twice (the last kept), a string with
	// an escape, a number written otherwise than canonicalNumbers writes
	// it, managedFields left out, or a document left to encoding/json.
	// Configuration.Decode decodes only one without.
	respelled bool
	// shape, if not nil, is where the reader writes the document's shape
	// as it reads it (see Configuration.shape); where says where the value
	// being read is, for what of it the shape holds.
	shape []byte
	where shapePlace
}

type member struct {
	key string
	val any
}

// memberStacks keeps the readers' member stacks (jsonReader.members):
// grown from nil at every read, a stack cost a document four or five
// allocations of its own. One that grew past maxPooledMembers is let go.
var memberStacks = sync.Pool{New: func() any { return new([]member) }}

const maxPooledMembers = 1024

func (d *jsonReader) space() { d.i = jsonskip.Space(d.data, d.i) }

func (d *jsonReader) value(depth int) (any, bool) {
	d.space()
	if d.i >= len(d.data) {
		return nil, false
	}
	c := d.data[d.i]
	switch c {
	case '{', '[':
		return d.composite(depth+1, false)
	}
	start := d.i
	v, ok := d.scalar(c)
	if d.shape != nil && ok && !d.discard {
		d.shapeScalar(c, d.data[start:d.i])
	}
	return v, ok
}

// scalar reads a value that is neither an object nor an array; c is its
// first byte.
func (d *jsonReader) scalar(c byte) (any, bool) {
	switch c {
	case '"':
		if !d.discard {
			if v, ok := d.shortString(); ok {
				return v, true
			}
		}
		s, ok := d.string()
		return s, ok
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return d.number()
		}
	}
	return nil, false
}

func (d *jsonReader) literal(lit string) bool {
	if len(d.data)-d.i >= len(lit) && string(d.data[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

// object reads an object; metadata says it is the root's metadata.
func (d *jsonReader) object(depth int, metadata bool) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++ // {
	base, where := len(d.members), d.where
	defer func() { d.members, d.where = d.members[:base], where }()
	shaping := d.shape != nil && !d.discard
	if shaping {
		d.shape = append(d.shape, '{')
	}
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		if d.discard {
			return nil, true
		}
		if shaping {
			d.shape = append(d.shape, '}')
		}
		return map[string]any{}, true
	}
	for {
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		keyStart := d.i
		key, ok := d.key()
		if !ok {
			return nil, false
		}
		if shaping {
			d.shape = append(d.shape, d.data[keyStart:d.i]...) // as written: quoted, so it ends itself
			d.where = shapeElsewhere
			if where == shapeItem {
				d.where = shapeItemMember
			}
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, false
		}
		d.i++
		var v any
		switch {
		case d.discard:
			_, ok = d.value(depth)
		case metadata && key == "managedFields":
			ok = d.skip(depth) // and left out, as if deleted
			v, d.respelled = discarded, true
		case depth == 1 && d.unmanaged && key == "metadata":
			d.space()
			if d.i < len(d.data) && d.data[d.i] == '{' {
				v, ok = d.composite(depth+1, true)
			} else {
				v, ok = d.value(depth)
			}
		default:
			v, ok = d.value(depth)
		}
		if !ok {
			return nil, false
		}
		if !d.discard && v != discarded {
			d.members = append(d.members, member{key, v})
		}
		more, ok := d.next('}')
		switch {
		case !ok:
			return nil, false
		case more:
			continue
		case d.discard:
			return nil, true
		}
		if shaping {
			d.shape = append(d.shape, '}')
		}
		ms := d.members[base:]
		m := make(map[string]any, len(ms))
		for _, kv := range ms { // in order: the last of duplicates wins, as in encoding/json
			m[kv.key] = kv.val
		}
		if len(m) < len(ms) {
			d.respelled = true
		}
		return m, true // ms is written over by the next object's members, or cleared once read (readJSON)
	}
}

// next reads what follows a member or an item: ',' (more) or the closing
// byte.
func (d *jsonReader) next(closing byte) (more, ok bool) {
	d.space()
	if d.i >= len(d.data) {
		return false, false
	}
	switch d.data[d.i] {
	case ',':
		d.i++
		return true, true
	case closing:
		d.i++
		return false, true
	}
	return false, false
}

func (d *jsonReader) array(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++ // [
	d.space()
	var out []any
	if !d.discard {
		out = []any{} // encoding/json's [] is an empty, not a nil, slice
	}
	shaping := d.shape != nil && !d.discard
	if shaping {
		d.shape = append(d.shape, '[')
		where := d.where
		defer func() { d.where = where }()
	}
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		if shaping {
			d.shape = append(d.shape, ']')
		}
		return out, true
	}
	for {
		if shaping {
			d.where = shapeItem
		}
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		if !d.discard {
			out = append(out, v)
		}
		more, ok := d.next(']')
		switch {
		case !ok:
			return nil, false
		case !more:
			if shaping {
				d.shape = append(d.shape, ']')
			}
			return out, true
		}
	}
}

// discarded marks a member left out of its object.
var discarded any = new(struct{ discarded bool })

// skip checks a value as value reads it, making nothing of it; in trusted
// data it only passes over it.
func (d *jsonReader) skip(depth int) bool {
	if d.trusted {
		return d.pass()
	}
	return d.checkValue(depth)
}

// number reads a number by JSON's grammar, canonical as canonicalNumbers
// makes it.
func (d *jsonReader) number() (any, bool) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.data[d.i] == '-' {
		d.i++
	}
	if d.i < len(d.data) && d.data[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, false
	}
	integral := true
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		integral = false
		if digits() == 0 {
			return nil, false
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		integral = false
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	lit := d.data[start:d.i]
	if d.discard {
		return nil, true
	}
	if integral && len(lit) < 19 && !(len(lit) == 2 && lit[0] == '-' && lit[1] == '0') {
		return internValue(lit, true), true // an int64 already written as FormatInt writes it
	}
	n := canonicalNumbers(json.Number(lit))
	d.respelled = d.respelled || n != json.Number(lit)
	return n, true
}

// numberTree is what number reads of lit, an integer as strconv writes it.
func numberTree(lit []byte) any {
	if len(lit) < 19 {
		return internValue(lit, true)
	}
	return canonicalNumbers(json.Number(lit))
}

// pass moves past the value at d.i, data that is valid JSON: it finds where
// the value ends, brackets matched and strings passed over, and checks no
// more.
func (d *jsonReader) pass() bool {
	d.space()
	data, i := d.data, d.i
	nesting := 0
	for i < len(data) {
		switch c := data[i]; c {
		case '"':
			i++
			for {
				i = quoteOrBackslash(data, i)
				if i >= len(data) {
					d.i = i
					return false
				}
				if data[i] == '\\' {
					i += 2 // the escaped byte is never the closing quote
					continue
				}
				i++
				break
			}
		case '{', '[':
			nesting++
			i++
			continue
		case '}', ']':
			nesting--
			i++
		case ',', ':', ' ', '\t', '\n', '\r':
			i++
			continue
		default: // a number or a literal
			for i < len(data) && !numberEnd[data[i]] {
				i++
			}
		}
		if nesting <= 0 {
			d.i = i
			return nesting == 0
		}
	}
	d.i = i
	return false
}

// numberEnd says which bytes end a number or a literal in valid JSON.
var numberEnd = func() (t [256]bool) {
	for _, c := range ",}] \t\n\r" {
		t[c] = true
	}
	return t
}()

// The word-at-a-time tests of string scanning: whether any of the eight
// bytes of x is zero, exact as to whether there is one (not which).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

func hasZeroByte(x uint64) bool { return (x-ones)&^x&highs != 0 }

// quoteOrBackslash is the index of the first '"' or '\\' in data from i
// on, or len(data): where a string's plain run ends in valid JSON.
func quoteOrBackslash(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		if hasZeroByte(x^(ones*'"')) || hasZeroByte(x^(ones*'\\')) {
			break
		}
	}
	for i < len(data) && data[i] != '"' && data[i] != '\\' {
		i++
	}
	return i
}
