package codec

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// FieldReport lists what a document holds that its Go type does not: fields
// that appear twice in one object, and fields the type does not have, each
// named by its path (spec.ports[1].name), in document order.
//
// Paths are written as kube-apiserver (sigs.k8s.io/json) writes them: struct
// fields and map keys joined by dots (spec.selector.app), list items by
// index in brackets. Like kube-apiserver, a report holds each path once per
// list and at most 100 entries in all.
type FieldReport struct {
	Duplicates []string
	Unknown    []string
}

// Empty reports whether nothing was found.
func (r FieldReport) Empty() bool { return len(r.Duplicates) == 0 && len(r.Unknown) == 0 }

const (
	// maxDepth is encoding/json's limit on nesting.
	maxDepth = 10000
	// maxReported is kube-apiserver's limit on strict decoding errors.
	maxReported = 100
)

// CheckJSONFields compares a JSON document with the Go type t (a struct type,
// or pointer to one) and reports its unknown and duplicate fields. When it
// finds any, cleaned is the document without them — unknown fields removed,
// only the last of each duplicate kept — so that decoding cleaned with
// encoding/json gives exactly what kube-apiserver would decode; otherwise
// cleaned is nil. A document that is not valid JSON is an error (the caller
// reports its own decode error then).
//
// Names match exactly, as in kube-apiserver: one that differs from a field's
// only in case is unknown. Keys repeat in any object that is decoded, a
// map's or an interface value's too; values of types that decode themselves
// (json.Unmarshaler, encoding.TextUnmarshaler) are not looked into.
//
// "The last kept" is exact for scalars, map entries and interface values.
// kube-apiserver, like encoding/json, decodes a repeated struct or list into
// what the earlier ones left, and null into a struct or scalar is a no-op:
// cleaned holds the value that sequence leaves. Where a dropped value would
// fail to decode, cleaned fails to decode too.
//
// A document without findings costs one pass and no allocation; the tables
// for each type are cached.
func CheckJSONFields(data []byte, t reflect.Type) (report FieldReport, cleaned []byte, err error) {
	if t == nil {
		return FieldReport{}, nil, errors.New("codec: CheckJSONFields of a nil type")
	}
	s := shapeOf(t)
	c := checkers.Get().(*checker)
	defer c.release()
	if report, err = c.check(data, s); err != nil || report.Empty() {
		return FieldReport{}, nil, err
	}

	// The slow path: read the document again as a tree, and write it anew.
	c.pos, c.depth = 0, 0
	c.skipSpace()
	root, err := c.node(s)
	if err != nil {
		return FieldReport{}, nil, err // not reached: the document was checked
	}
	w := cleaner{data: data, drops: c.drops}
	slices.Sort(w.drops)
	w.value(s, false, []*jsonNode{root})
	return report, w.out, nil
}

// # Shapes

// A shape is what CheckJSONFields needs to know of a Go type: which objects
// it decodes and what fields they have.
type shape struct {
	kind   shapeKind
	typ    reflect.Type
	elem   *shape // pointer target, map value, slice or array element
	length int    // of an array
	fields []fieldShape
	byName map[string]int // index in fields
	// inert says the value holds nothing to check, so it can be skipped.
	inert bool
}

type shapeKind uint8

const (
	leafShape    shapeKind = iota // decoded whole: scalars, []byte, Unmarshalers
	anyShape                      // interface{}: any keys, but no duplicates
	structShape                   // an object with known fields
	mapShape                      // an object with any keys
	sliceShape                    //
	arrayShape                    //
	pointerShape                  // to a struct, map, slice, array or interface{}
)

type fieldShape struct {
	name   string
	shape  *shape
	quoted bool // `json:",string"`
}

// shapes caches shapes by reflect.Type.
var shapes sync.Map

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := (&shapeBuilder{building: map[reflect.Type]*shape{}}).build(t)
	actual, _ := shapes.LoadOrStore(t, s)
	return actual.(*shape)
}

type shapeBuilder struct {
	building map[reflect.Type]*shape // for recursive types
}

func (b *shapeBuilder) build(t reflect.Type) *shape {
	if s, ok := b.building[t]; ok {
		return s
	}
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	if t.Kind() == reflect.Pointer {
		return b.pointer(t)
	}
	s := &shape{typ: t}
	b.building[t] = s
	switch {
	case decodesItself(t):
		s.kind = leafShape
	case t.Kind() == reflect.Interface && t.NumMethod() == 0:
		s.kind = anyShape
	case t.Kind() == reflect.Struct:
		s.kind = structShape
		fields := jsonfields.Of(t)
		s.fields = make([]fieldShape, len(fields))
		s.byName = make(map[string]int, len(fields))
		for i, f := range fields {
			s.fields[i] = fieldShape{name: f.Name, shape: b.build(f.Type), quoted: f.Quoted}
			s.byName[f.Name] = i
		}
	case t.Kind() == reflect.Map && mapKeyDecodes(t.Key()):
		s.kind = mapShape
		s.elem = b.build(t.Elem())
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8: // []byte may be base64
		s.kind = sliceShape
		s.elem = b.build(t.Elem())
		s.inert = s.elem.inert
	case t.Kind() == reflect.Array:
		s.kind = arrayShape
		s.length = t.Len()
		s.elem = b.build(t.Elem())
		s.inert = s.elem.inert
	default:
		s.kind = leafShape
	}
	if s.kind == leafShape {
		s.inert = true
	}
	return s
}

// pointer builds the shape of a pointer type. All its levels of pointers
// behave alike (null makes it nil, anything else is decoded into the
// target), so its shape points at the first non-pointer.
func (b *shapeBuilder) pointer(t reflect.Type) *shape {
	target := t
	for range 64 {
		if decodesItself(target) || target.Kind() != reflect.Pointer {
			break
		}
		target = target.Elem()
	}
	s := &shape{typ: t, kind: leafShape, inert: true}
	if target.Kind() != reflect.Pointer && !decodesItself(target) {
		if elem := b.build(target); elem.kind != leafShape {
			s.kind, s.elem, s.inert = pointerShape, elem, elem.inert
		}
	}
	return s
}

func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(unmarshalerType) || p.Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// mapKeyDecodes reports whether encoding/json decodes objects into maps with
// keys of type k.
func mapKeyDecodes(k reflect.Type) bool {
	switch k.Kind() {
	case reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return reflect.PointerTo(k).Implements(textUnmarshalerType)
}

// # The check

// A checker reads a document once, checking its syntax as json.Valid does
// and its fields against a shape.
type checker struct {
	data   []byte
	pos    int
	depth  int
	path   []byte   // of the value being read
	seen   []uint64 // fields seen in the struct objects being read, a bit each
	keys   []keyRef // keys of the map objects being read
	drops  []int    // offsets of members of map objects that a later one replaces
	key    []byte   // scratch for an unquoted key
	other  []byte   // scratch for another
	report FieldReport
	count  int // entries in report
}

// keyRef locates a key's content (between its quotes) in the document; plain
// keys are their own value, unquoted.
type keyRef struct {
	start, end int
	plain      bool
}

var checkers = sync.Pool{New: func() any { return new(checker) }}

func (c *checker) release() {
	if cap(c.path)+8*cap(c.seen)+24*cap(c.keys)+8*cap(c.drops)+cap(c.key)+cap(c.other) > 64<<10 {
		return // let a hostile document's buffers go
	}
	*c = checker{path: c.path[:0], seen: c.seen[:0], keys: c.keys[:0], drops: c.drops[:0], key: c.key[:0], other: c.other[:0]}
	checkers.Put(c)
}

// check reads data as a value of shape s.
func (c *checker) check(data []byte, s *shape) (FieldReport, error) {
	c.data = data
	if err := c.document(s); err != nil {
		return FieldReport{}, err
	}
	return c.report, nil
}

func (c *checker) document(s *shape) error {
	c.skipSpace()
	if err := c.value(s); err != nil {
		return err
	}
	c.skipSpace()
	if c.pos < len(c.data) {
		return c.syntaxError("after top-level value")
	}
	return nil
}

func (c *checker) value(s *shape) error {
	if s.kind == pointerShape {
		s = s.elem
	}
	if s.inert || c.pos >= len(c.data) {
		return c.skip()
	}
	switch c.data[c.pos] {
	case '{':
		switch s.kind {
		case structShape:
			return c.structObject(s)
		case mapShape:
			return c.mapObject(s.elem)
		case anyShape:
			return c.mapObject(s)
		}
	case '[':
		switch s.kind {
		case sliceShape:
			return c.array(s.elem, -1)
		case arrayShape:
			return c.array(s.elem, s.length)
		case anyShape:
			return c.array(s, -1)
		}
	}
	return c.skip() // null, or the wrong kind of value: a decode error
}

func (c *checker) structObject(s *shape) error {
	if empty, err := c.open('}'); empty || err != nil {
		return err
	}
	base := len(c.seen)
	for range (len(s.fields) + 63) / 64 {
		c.seen = append(c.seen, 0)
	}
	at := len(c.path)
	for {
		name, _, err := c.memberName()
		if err != nil {
			return err
		}
		if i, ok := s.byName[string(name)]; !ok {
			c.problem(&c.report.Unknown, name)
			err = c.skip()
		} else {
			w, bit := base+i/64, uint64(1)<<(i%64)
			if c.seen[w]&bit != 0 {
				c.problem(&c.report.Duplicates, name)
			}
			c.seen[w] |= bit
			if f := &s.fields[i]; f.shape.inert {
				err = c.skip()
			} else {
				c.pushKey(name)
				err = c.value(f.shape)
				c.path = c.path[:at]
			}
		}
		if err != nil {
			return err
		}
		if more, err := c.next('}'); !more || err != nil {
			c.seen = c.seen[:base]
			return err
		}
	}
}

// mapObject reads an object any keys are allowed in, once each.
func (c *checker) mapObject(elem *shape) error {
	if empty, err := c.open('}'); empty || err != nil {
		return err
	}
	base := len(c.keys)
	var many map[string]int // the keys' offsets, once there are too many to compare
	at := len(c.path)
	for {
		name, ref, err := c.memberName()
		if err != nil {
			return err
		}
		if earlier, ok := c.repeated(base, &many, name, ref); ok {
			c.problem(&c.report.Duplicates, name)
			c.drops = append(c.drops, earlier)
		}
		if elem.inert {
			err = c.skip()
		} else {
			c.pushKey(name)
			err = c.value(elem)
			c.path = c.path[:at]
		}
		if err != nil {
			return err
		}
		if more, err := c.next('}'); !more || err != nil {
			c.keys = c.keys[:base]
			return err
		}
	}
}

// repeated reports whether the current object (whose keys start at base)
// had the key name already, and where that member starts; it remembers this
// one in its place.
func (c *checker) repeated(base int, many *map[string]int, name []byte, ref keyRef) (earlier int, ok bool) {
	if *many != nil {
		earlier, ok = (*many)[string(name)]
		(*many)[string(name)] = ref.start - 1
		return earlier, ok
	}
	for i, k := range c.keys[base:] {
		other := c.data[k.start:k.end]
		if !k.plain {
			c.other = appendUnquoted(c.other[:0], other)
			other = c.other
		}
		if bytes.Equal(other, name) {
			c.keys[base+i] = ref
			return k.start - 1, true
		}
	}
	c.keys = append(c.keys, ref)
	if len(c.keys)-base > 16 {
		*many = make(map[string]int, 2*(len(c.keys)-base))
		for _, k := range c.keys[base:] {
			(*many)[string(appendUnquoted(nil, c.data[k.start:k.end]))] = k.start - 1
		}
		c.keys = c.keys[:base]
	}
	return 0, false
}

// array reads an array, checking its first n elements (all if n < 0).
func (c *checker) array(elem *shape, n int) error {
	if empty, err := c.open(']'); empty || err != nil {
		return err
	}
	at := len(c.path)
	for i := 0; ; i++ {
		var err error
		if elem.inert || n >= 0 && i >= n {
			err = c.skip()
		} else {
			c.path = append(c.path, '[')
			c.path = strconv.AppendInt(c.path, int64(i), 10)
			c.path = append(c.path, ']')
			err = c.value(elem)
			c.path = c.path[:at]
		}
		if err != nil {
			return err
		}
		if more, err := c.next(']'); !more || err != nil {
			return err
		}
	}
}

func (c *checker) pushKey(name []byte) {
	if len(c.path) > 0 {
		c.path = append(c.path, '.')
	}
	c.path = append(c.path, name...)
}

// problem adds the path of the member name of the current object to list.
func (c *checker) problem(list *[]string, name []byte) {
	if c.count >= maxReported {
		return
	}
	at := len(c.path)
	c.pushKey(name)
	defer func() { c.path = c.path[:at] }()
	if slices.Contains(*list, string(c.path)) {
		return
	}
	*list = append(*list, string(c.path))
	c.count++
}

// # Syntax

func (c *checker) syntaxError(what string) error {
	if c.pos >= len(c.data) {
		return fmt.Errorf("codec: invalid JSON: unexpected end of input")
	}
	return fmt.Errorf("codec: invalid JSON at byte offset %d: %s", c.pos, what)
}

func (c *checker) skipSpace() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// open reads the '{' or '[' at c.pos and reports whether the object or
// array is empty.
func (c *checker) open(end byte) (empty bool, err error) {
	c.pos++
	if c.depth++; c.depth > maxDepth {
		return false, fmt.Errorf("codec: invalid JSON at byte offset %d: nested deeper than %d", c.pos-1, maxDepth)
	}
	c.skipSpace()
	if c.pos < len(c.data) && c.data[c.pos] == end {
		c.pos++
		c.depth--
		return true, nil
	}
	return false, nil
}

// next reads what follows a member or element: a comma, after which there
// is more, or the end of the object or array.
func (c *checker) next(end byte) (more bool, err error) {
	c.skipSpace()
	if c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ',':
			c.pos++
			c.skipSpace()
			return true, nil
		case end:
			c.pos++
			c.depth--
			return false, nil
		}
	}
	if end == '}' {
		return false, c.syntaxError("after object member")
	}
	return false, c.syntaxError("after array element")
}

// memberName reads a member's name and the colon after it. It returns the
// name unquoted, in the document or in c.key.
func (c *checker) memberName() (name []byte, ref keyRef, err error) {
	if c.pos >= len(c.data) || c.data[c.pos] != '"' {
		return nil, ref, c.syntaxError("looking for an object key")
	}
	ref.start = c.pos + 1
	if ref.plain, err = c.str(); err != nil {
		return nil, ref, err
	}
	ref.end = c.pos - 1
	name = c.data[ref.start:ref.end]
	if !ref.plain {
		c.key = appendUnquoted(c.key[:0], name)
		name = c.key
	}
	c.skipSpace()
	if c.pos >= len(c.data) || c.data[c.pos] != ':' {
		return nil, ref, c.syntaxError("after object key")
	}
	c.pos++
	c.skipSpace()
	return name, ref, nil
}

// skip reads any value.
func (c *checker) skip() error {
	if c.pos >= len(c.data) {
		return c.syntaxError("")
	}
	switch c.data[c.pos] {
	case '{':
		if empty, err := c.open('}'); empty || err != nil {
			return err
		}
		for {
			if _, _, err := c.memberName(); err != nil {
				return err
			}
			if err := c.skip(); err != nil {
				return err
			}
			if more, err := c.next('}'); !more || err != nil {
				return err
			}
		}
	case '[':
		if empty, err := c.open(']'); empty || err != nil {
			return err
		}
		for {
			if err := c.skip(); err != nil {
				return err
			}
			if more, err := c.next(']'); !more || err != nil {
				return err
			}
		}
	case '"':
		_, err := c.str()
		return err
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	case 'n':
		return c.literal("null")
	}
	return c.number()
}

// str reads a string and reports whether it is plain: without escapes or
// invalid UTF-8, so that its content is its value.
func (c *checker) str() (plain bool, err error) {
	plain, ascii := true, true
	start := c.pos + 1
	for i := start; i < len(c.data); i++ {
		switch b := c.data[i]; {
		case b == '"':
			c.pos = i + 1
			if !ascii && plain {
				plain = utf8.Valid(c.data[start:i])
			}
			return plain, nil
		case b == '\\':
			plain = false
			if i++; i >= len(c.data) {
				c.pos = i
				return false, c.syntaxError("")
			}
			switch c.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					if i++; i >= len(c.data) || !isHex(c.data[i]) {
						c.pos = i
						return false, c.syntaxError("in \\u escape")
					}
				}
			default:
				c.pos = i
				return false, c.syntaxError("in string escape")
			}
		case b < ' ':
			c.pos = i
			return false, c.syntaxError("control character in string")
		case b >= utf8.RuneSelf:
			ascii = false
		}
	}
	c.pos = len(c.data)
	return false, c.syntaxError("")
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

func (c *checker) literal(word string) error {
	if !bytes.HasPrefix(c.data[c.pos:], []byte(word)) {
		return c.syntaxError("in literal " + word)
	}
	c.pos += len(word)
	return nil
}

func (c *checker) number() error {
	i := c.pos
	if i < len(c.data) && c.data[i] == '-' {
		i++
	}
	switch {
	case i < len(c.data) && c.data[i] == '0':
		i++
	case i < len(c.data) && '1' <= c.data[i] && c.data[i] <= '9':
		i = c.digits(i)
	default:
		c.pos = i
		return c.syntaxError("looking for beginning of value")
	}
	if i < len(c.data) && c.data[i] == '.' {
		if i++; i >= len(c.data) || !isDigit(c.data[i]) {
			c.pos = i
			return c.syntaxError("after decimal point in number")
		}
		i = c.digits(i)
	}
	if i < len(c.data) && (c.data[i] == 'e' || c.data[i] == 'E') {
		if i++; i < len(c.data) && (c.data[i] == '+' || c.data[i] == '-') {
			i++
		}
		if i >= len(c.data) || !isDigit(c.data[i]) {
			c.pos = i
			return c.syntaxError("in exponent of number")
		}
		i = c.digits(i)
	}
	c.pos = i
	return nil
}

func (c *checker) digits(i int) int {
	for i < len(c.data) && isDigit(c.data[i]) {
		i++
	}
	return i
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// appendUnquoted appends the value of a string's content, as encoding/json
// unquotes it: invalid UTF-8 and lone surrogates become U+FFFD.
func appendUnquoted(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\' && r+1 < len(s):
			r++
			switch s[r] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := hex4(s[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if len(s) >= r+6 && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != unicode.ReplacementChar {
							dst = utf8.AppendRune(dst, dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default:
				dst = append(dst, s[r])
			}
			r++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
		}
	}
	return dst
}

// hex4 reads four hex digits; the document was checked to have them.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return unicode.ReplacementChar
	}
	var r rune
	for _, b := range s[:4] {
		switch {
		case '0' <= b && b <= '9':
			b -= '0'
		case 'a' <= b && b <= 'f':
			b -= 'a' - 10
		case 'A' <= b && b <= 'F':
			b -= 'A' - 10
		default:
			return unicode.ReplacementChar
		}
		r = r*16 + rune(b)
	}
	return r
}

// # Cleaning

// A jsonNode is a value of a checked document. Objects and arrays of shapes
// that are not inert and not interface{} have their members or elements.
type jsonNode struct {
	off   int // of raw in the document
	raw   []byte
	keys  [][]byte // as written, quoted
	names []string // unquoted
	kids  []*jsonNode
}

func (n *jsonNode) is(b byte) bool { return len(n.raw) > 0 && n.raw[0] == b }

// node reads the value at c.pos, which was checked, as a tree.
func (c *checker) node(s *shape) (*jsonNode, error) {
	if s != nil && s.kind == pointerShape {
		s = s.elem
	}
	n := &jsonNode{}
	start := c.pos
	var err error
	switch {
	case s == nil || s.inert || s.kind == anyShape || c.pos >= len(c.data):
		err = c.skip()
	case c.data[c.pos] == '{' && (s.kind == structShape || s.kind == mapShape):
		err = c.objectNode(n, s)
	case c.data[c.pos] == '[' && (s.kind == sliceShape || s.kind == arrayShape):
		err = c.arrayNode(n, s)
	default:
		err = c.skip()
	}
	n.off, n.raw = start, c.data[start:c.pos]
	return n, err
}

func (c *checker) objectNode(n *jsonNode, s *shape) error {
	if empty, err := c.open('}'); empty || err != nil {
		return err
	}
	for {
		name, ref, err := c.memberName()
		if err != nil {
			return err
		}
		elem := s.elem
		if s.kind == structShape {
			i, ok := s.byName[string(name)]
			if !ok {
				if err := c.skip(); err != nil {
					return err
				}
				if more, err := c.next('}'); !more || err != nil {
					return err
				}
				continue // unknown: dropped
			}
			elem = s.fields[i].shape
		}
		n.keys = append(n.keys, c.data[ref.start-1:ref.end+1])
		n.names = append(n.names, string(name))
		kid, err := c.node(elem)
		if err != nil {
			return err
		}
		n.kids = append(n.kids, kid)
		if more, err := c.next('}'); !more || err != nil {
			return err
		}
	}
}

func (c *checker) arrayNode(n *jsonNode, s *shape) error {
	if empty, err := c.open(']'); empty || err != nil {
		return err
	}
	for {
		e := s.elem
		if s.kind == arrayShape && len(n.kids) >= s.length {
			e = nil // not decoded
		}
		kid, err := c.node(e)
		if err != nil {
			return err
		}
		n.kids = append(n.kids, kid)
		if more, err := c.next(']'); !more || err != nil {
			return err
		}
	}
}

// A cleaner writes a document without unknown or repeated fields.
type cleaner struct {
	out   []byte
	data  []byte // the document
	drops []int  // sorted offsets of the members of map objects to drop
}

// value writes the value that the occurrences occ of one field, in order,
// leave in a Go value of shape s when encoding/json decodes them one after
// another.
func (w *cleaner) value(s *shape, quoted bool, occ []*jsonNode) {
	if s.inert {
		w.out = append(w.out, foldLeaf(s.typ, quoted, occ)...)
		return
	}
	switch s.kind {
	case anyShape:
		w.anyValue(occ[len(occ)-1]) // an interface{} is replaced
	case pointerShape:
		w.pointer(s, occ)
	case structShape:
		w.structValue(s, occ)
	case mapShape:
		w.mapValue(s, occ)
	case sliceShape:
		w.slice(s, occ)
	case arrayShape:
		w.array(s, occ)
	}
}

// mismatched writes the first occurrence that is neither null nor starts
// with open, if any: it fails to decode, and so must cleaned.
func (w *cleaner) mismatched(occ []*jsonNode, open byte) bool {
	for _, n := range occ {
		if !n.is('n') && !n.is(open) {
			w.out = append(w.out, n.raw...)
			return true
		}
	}
	return false
}

// failed writes the first of the discarded values that would fail to
// decode (into a Go value of shape s), if any, so that cleaned fails too:
// without its unknown fields, which kube-apiserver does not decode either,
// or, if it has repeated fields, as a value of the wrong kind.
func (w *cleaner) failed(s *shape, discarded []*jsonNode) bool {
	if s.kind == anyShape {
		return false
	}
	for _, n := range discarded {
		stripped := strip(nil, s, n)
		if _, err := decodeAs(s.typ, false, stripped); err == nil {
			continue
		}
		target := s
		if s.kind == pointerShape {
			target = s.elem
		}
		c := checkers.Get().(*checker)
		report, err := c.check(stripped, s)
		c.release()
		switch {
		case err == nil && report.Empty():
			w.out = append(w.out, stripped...)
		case target.kind == sliceShape || target.kind == arrayShape:
			w.out = append(w.out, "{}"...)
		default: // a struct or map
			w.out = append(w.out, "[]"...)
		}
		return true
	}
	return false
}

// lastReset returns the index of the last occurrence that sets a value to
// nil or empty, or -1.
func lastReset(occ []*jsonNode, empty bool) int {
	last := -1
	for i, n := range occ {
		if n.is('n') || empty && n.is('[') && len(n.kids) == 0 {
			last = i
		}
	}
	return last
}

func (w *cleaner) pointer(s *shape, occ []*jsonNode) {
	reset := lastReset(occ, false)
	switch {
	case w.failed(s.elem, occ[:reset+1]):
	case reset == len(occ)-1:
		w.out = append(w.out, "null"...)
	default:
		w.value(s.elem, false, occ[reset+1:])
	}
}

// structValue merges objects: a field is decoded into what the earlier
// objects left in it, and null leaves it as it is.
func (w *cleaner) structValue(s *shape, occ []*jsonNode) {
	if w.mismatched(occ, '{') {
		return
	}
	if !slices.ContainsFunc(occ, func(n *jsonNode) bool { return n.is('{') }) {
		w.out = append(w.out, "null"...)
		return
	}
	w.out = append(w.out, '{')
	w.members(occ, func(name string, vals []*jsonNode) { // unknown fields have no node
		f := &s.fields[s.byName[name]]
		w.value(f.shape, f.quoted, vals)
	})
	w.out = append(w.out, '}')
}

// mapValue merges objects too, but an entry replaces the one before it.
func (w *cleaner) mapValue(s *shape, occ []*jsonNode) {
	if w.mismatched(occ, '{') {
		return
	}
	reset := lastReset(occ, false)
	switch {
	case w.failed(s, occ[:reset+1]):
		return
	case reset == len(occ)-1:
		w.out = append(w.out, "null"...)
		return
	}
	w.out = append(w.out, '{')
	w.members(occ[reset+1:], func(_ string, vals []*jsonNode) {
		if !w.failed(s.elem, vals[:len(vals)-1]) {
			w.value(s.elem, false, vals[len(vals)-1:])
		}
	})
	w.out = append(w.out, '}')
}

// members writes the members of objects, each name once where it last
// appears, its value written by value from all the values it has.
func (w *cleaner) members(objects []*jsonNode, value func(name string, vals []*jsonNode)) {
	type member struct {
		name string
		key  []byte
		vals []*jsonNode
		last int
	}
	byName := map[string]*member{}
	var order []*member
	pos := 0
	for _, n := range objects {
		for j, name := range n.names {
			m := byName[name]
			if m == nil {
				m = &member{name: name}
				byName[name] = m
				order = append(order, m)
			}
			m.key, m.vals, m.last = n.keys[j], append(m.vals, n.kids[j]), pos
			pos++
		}
	}
	slices.SortFunc(order, func(a, b *member) int { return cmp.Compare(a.last, b.last) })
	for k, m := range order {
		if k > 0 {
			w.out = append(w.out, ',')
		}
		w.out = append(w.out, m.key...)
		w.out = append(w.out, ':')
		value(m.name, m.vals)
	}
}

// slice follows encoding/json, which decodes an array into the elements a
// slice already has, up to its capacity, then sets its length: element i is
// decoded from the i-th element of every array since the slice was last
// made nil or empty.
func (w *cleaner) slice(s *shape, occ []*jsonNode) {
	if w.mismatched(occ, '[') {
		return
	}
	reset := lastReset(occ, true)
	switch {
	case w.failed(s, occ[:reset+1]):
		return
	case reset == len(occ)-1:
		if occ[reset].is('n') {
			w.out = append(w.out, "null"...)
		} else {
			w.out = append(w.out, "[]"...)
		}
		return
	}
	var slots [][]*jsonNode
	for _, n := range occ[reset+1:] {
		for i, kid := range n.kids {
			if i == len(slots) {
				slots = append(slots, nil)
			}
			slots[i] = append(slots[i], kid)
		}
	}
	length := len(occ[len(occ)-1].kids)
	var hidden []*jsonNode
	for _, vals := range slots[length:] {
		hidden = append(hidden, vals...)
	}
	if !w.failedElement(s.elem, hidden) {
		w.elements(s.elem, slots[:length])
	}
}

// array follows encoding/json, which decodes an array into a Go array's
// elements and zeroes those the array does not reach.
func (w *cleaner) array(s *shape, occ []*jsonNode) {
	if w.mismatched(occ, '[') {
		return
	}
	var slots [][]*jsonNode
	var discarded []*jsonNode
	var last *jsonNode
	for _, n := range occ {
		if n.is('n') {
			continue // a no-op
		}
		last = n
		for i := range min(s.length, max(len(n.kids), len(slots))) {
			if i == len(slots) {
				slots = append(slots, nil)
			}
			if i < len(n.kids) {
				slots[i] = append(slots[i], n.kids[i])
			} else {
				discarded = append(discarded, slots[i]...)
				slots[i] = nil
			}
		}
	}
	switch {
	case last == nil:
		w.out = append(w.out, "null"...)
	case !w.failedElement(s.elem, discarded):
		w.elements(s.elem, slots[:min(s.length, len(last.kids))])
	}
}

// failedElement is failed for discarded elements of an array.
func (w *cleaner) failedElement(elem *shape, discarded []*jsonNode) bool {
	at := len(w.out)
	w.out = append(w.out, '[')
	if w.failed(elem, discarded) {
		w.out = append(w.out, ']')
		return true
	}
	w.out = w.out[:at]
	return false
}

func (w *cleaner) elements(elem *shape, slots [][]*jsonNode) {
	w.out = append(w.out, '[')
	for i, vals := range slots {
		if i > 0 {
			w.out = append(w.out, ',')
		}
		w.value(elem, false, vals)
	}
	w.out = append(w.out, ']')
}

// anyValue writes a value decoded into an interface{}: as it is, but for
// the members of its objects that a later one replaces.
func (w *cleaner) anyValue(n *jsonNode) {
	at, end := n.off, n.off+len(n.raw)
	i, _ := slices.BinarySearch(w.drops, at)
	for ; i < len(w.drops) && w.drops[i] < end; i++ {
		if w.drops[i] < at {
			continue // in a member dropped already
		}
		w.out = append(w.out, w.data[at:w.drops[i]]...)
		// Drop the member and the comma after it: a later member follows.
		c := checker{data: w.data, pos: w.drops[i]}
		if _, _, err := c.memberName(); err != nil {
			return // not reached: the document was checked
		}
		if err := c.skip(); err != nil {
			return
		}
		c.skipSpace()
		c.pos++
		c.skipSpace()
		at = c.pos
	}
	w.out = append(w.out, w.data[at:end]...)
}

// foldLeaf returns one value that decodes, into a Go value of type t, to
// what occ decode to one after another: the last that does, or failing
// that, that value encoded. A sequence that fails to decode gives the first
// value that fails alone.
func foldLeaf(t reflect.Type, quoted bool, occ []*jsonNode) []byte {
	last := occ[len(occ)-1].raw
	if len(occ) == 1 {
		return last
	}
	if !quoted {
		if raw, ok := foldScalar(t, occ); ok {
			return raw
		}
	}
	raws := make([][]byte, len(occ))
	for i, n := range occ {
		raws[i] = n.raw
	}
	want, err := decodeAs(t, quoted, raws...)
	if err != nil {
		for _, raw := range raws {
			if _, err := decodeAs(t, quoted, raw); err != nil {
				return raw
			}
		}
		return last
	}
	same := func(raw []byte) bool {
		got, err := decodeAs(t, quoted, raw)
		return err == nil && reflect.DeepEqual(got.Interface(), want.Interface())
	}
	for i := len(raws) - 1; i >= 0; i-- {
		if same(raws[i]) {
			return raws[i]
		}
	}
	if wrapped, err := json.Marshal(want.Interface()); err == nil && len(wrapped) > len(`{"v":}`) {
		if raw := wrapped[len(`{"v":`) : len(wrapped)-1]; same(raw) {
			return raw
		}
	}
	return last
}

// foldScalar is foldLeaf for strings, numbers and booleans, and pointers to
// them, without decoding: null sets a pointer to nil and leaves a scalar as
// it is. It reports false for other types.
func foldScalar(t reflect.Type, occ []*jsonNode) ([]byte, bool) {
	pointer := t.Kind() == reflect.Pointer
	if pointer {
		t = t.Elem()
	}
	if decodesItself(t) {
		return nil, false
	}
	for _, n := range occ {
		if ok, known := scalarDecodes(t, n.raw); !known {
			return nil, false
		} else if !ok {
			return n.raw, true
		}
	}
	for i := len(occ) - 1; i >= 0 && !pointer; i-- {
		if !occ[i].is('n') {
			return occ[i].raw, true
		}
	}
	return occ[len(occ)-1].raw, true
}

// scalarDecodes reports whether encoding/json decodes raw into a value of
// type t without error, if t is a string, number or boolean type (known).
func scalarDecodes(t reflect.Type, raw []byte) (ok, known bool) {
	null := bytes.Equal(raw, []byte("null"))
	var err error
	switch t.Kind() {
	case reflect.String:
		return null || raw[0] == '"', true
	case reflect.Bool:
		return null || raw[0] == 't' || raw[0] == 'f', true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(string(raw), 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err = strconv.ParseUint(string(raw), 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(string(raw), t.Bits())
	default:
		return false, false
	}
	return null || err == nil, true
}

// decodeAs decodes values one after another into the field v of a
// *struct{V t}, the way encoding/json decodes a repeated field, and returns
// the struct.
func decodeAs(t reflect.Type, quoted bool, values ...[]byte) (reflect.Value, error) {
	tag := `json:"v"`
	if quoted {
		tag = `json:"v,string"`
	}
	wrapper := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: reflect.StructTag(tag)}}))
	doc := []byte{'{'}
	for i, v := range values {
		if i > 0 {
			doc = append(doc, ',')
		}
		doc = append(doc, `"v":`...)
		doc = append(doc, v...)
	}
	doc = append(doc, '}')
	err := json.Unmarshal(doc, wrapper.Interface())
	return wrapper, err
}

// strip appends n without unknown fields, repeated fields kept: what
// encoding/json decodes as kube-apiserver would.
func strip(dst []byte, s *shape, n *jsonNode) []byte {
	if s.kind == pointerShape {
		s = s.elem
	}
	object := n.is('{') && (s.kind == structShape || s.kind == mapShape)
	array := n.is('[') && (s.kind == sliceShape || s.kind == arrayShape)
	if s.inert || !object && !array {
		return append(dst, n.raw...)
	}
	if array {
		dst = append(dst, '[')
		for i, kid := range n.kids {
			if i > 0 {
				dst = append(dst, ',')
			}
			if s.kind == arrayShape && i >= s.length {
				dst = append(dst, kid.raw...) // not decoded
			} else {
				dst = strip(dst, s.elem, kid)
			}
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for j, kid := range n.kids { // unknown fields have no node
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, n.keys[j]...)
		dst = append(dst, ':')
		if s.kind == structShape {
			dst = strip(dst, s.fields[s.byName[n.names[j]]].shape, kid)
		} else {
			dst = strip(dst, s.elem, kid)
		}
	}
	return append(dst, '}')
}
