package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// FieldReport lists what a document holds that its Go type does not: fields
// that appear twice in one object, and fields the type does not have, each
// named by its path (spec.ports[1].name), in document order.
//
// Paths are written as kube-apiserver (sigs.k8s.io/json) writes them: struct
// fields and map keys joined by dots (spec.selector.app), list items by
// index in brackets. Like kube-apiserver, a report holds each path once per
// list and at most 100 entries in all. Unlike it, kapi cuts a path longer
// than 1 KiB to its start and end around "...", so that a report stays
// small whatever the document.
type FieldReport struct {
	Duplicates []string
	Unknown    []string
}

// Empty reports whether nothing was found.
func (r FieldReport) Empty() bool { return len(r.Duplicates) == 0 && len(r.Unknown) == 0 }

const (
	// maxDepth is encoding/json's limit on nesting, which jsonskip keeps too.
	maxDepth = jsonskip.MaxDepth
	// maxReported is kube-apiserver's limit on strict decoding errors.
	maxReported = 100
	// maxPathLen is kapi's limit on a reported path, in bytes.
	maxPathLen = 1 << 10
)

// CheckJSONFields compares a JSON document with the Go type t (a struct type,
// or pointer to one) and reports its unknown and duplicate fields. When the
// document has unknown fields, cleaned is the document without them (all of
// them, reported or not), so that decoding cleaned with encoding/json gives
// what kube-apiserver decodes; otherwise cleaned is nil, and decoding the
// document itself does. Repeated fields stay: encoding/json decodes them as
// kube-apiserver does, each into what the one before it left. A document
// that is not valid JSON is an error (the caller reports its own decode
// error then).
//
// Names match exactly, as in kube-apiserver: one that differs from a field's
// only in case is unknown (and so not in cleaned, where encoding/json would
// match it). Keys repeat in any object that is decoded, a map's or an
// interface value's too; values of types that decode themselves
// (json.Unmarshaler, encoding.TextUnmarshaler) are not looked into.
//
// It reads the document once. A document without findings costs no
// allocation; the tables for each type are cached.
func CheckJSONFields(data []byte, t reflect.Type) (report FieldReport, cleaned []byte, err error) {
	if t == nil {
		return FieldReport{}, nil, errors.New("codec: CheckJSONFields of a nil type")
	}
	s := shapeOf(t)
	c := checkers.Get().(*checker)
	defer c.release()
	c.data = data
	c.skipSpace()
	if err := c.value(s); err != nil {
		return FieldReport{}, nil, err
	}
	c.skipSpace()
	if c.pos < len(data) {
		return FieldReport{}, nil, c.syntaxError("after top-level value")
	}
	if c.cleaned != nil {
		c.cleaned = append(c.cleaned, data[c.copied:]...)
	}
	return c.report, c.cleaned, nil
}

// AnyFields is implemented by a type that decodes itself from a JSON
// object of any members, as a custom resource is decoded (kinds.Object):
// CheckJSONFields looks into its value as into an interface value's,
// reporting the fields it repeats (spec.name), where it does not look into
// other types that decode themselves. What members it knows is its own
// business: none is reported unknown.
type AnyFields interface {
	json.Unmarshaler
	AnyJSONFields()
}

var anyFieldsType = reflect.TypeFor[AnyFields]()

// # Shapes

// A shape is what CheckJSONFields needs to know of a Go type: which objects
// it decodes and what fields they have.
type shape struct {
	kind   shapeKind
	elem   *shape         // pointer target, map value, slice or array element
	length int            // of an array
	fields []*shape       // of a struct, by index
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

// shapes caches shapes by reflect.Type.
var shapes sync.Map

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
	s := &shape{}
	b.building[t] = s
	switch {
	case jsonfields.Implements(t, anyFieldsType):
		s.kind = anyShape
	case jsonfields.DecodesItself(t):
		s.kind = leafShape
	case t.Kind() == reflect.Interface && t.NumMethod() == 0:
		s.kind = anyShape
	case t.Kind() == reflect.Struct:
		s.kind = structShape
		fields := jsonfields.Of(t)
		s.fields = make([]*shape, len(fields))
		s.byName = make(map[string]int, len(fields))
		for i, f := range fields {
			s.fields[i] = b.build(f.Type)
			s.byName[f.Name] = i
		}
	case t.Kind() == reflect.Map && jsonfields.MapKeyDecodes(t.Key()):
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
	s := &shape{kind: leafShape, inert: true}
	target, ok := jsonfields.Deref(t, jsonfields.DecodesItself)
	if ok && !jsonfields.DecodesItself(target) {
		if elem := b.build(target); elem.kind != leafShape {
			s.kind, s.elem, s.inert = pointerShape, elem, elem.inert
		}
	}
	return s
}

// # The check

// A checker reads a document once, checking its syntax as json.Valid does
// and its fields against a shape.
type checker struct {
	data  []byte
	pos   int
	depth int
	path  []byte   // of the value being read
	seen  []uint64 // fields seen in the struct objects being read, a bit each
	names []byte   // keys of the map objects being read, unquoted, end to end
	keys  []int    // where each of those keys starts in names
	key   []byte   // scratch for an unquoted key
	// cleaned is the document without the unknown members cut so far, up
	// to data[copied:].
	cleaned []byte
	copied  int

	report   FieldReport
	count    int                 // entries in report
	reported map[string]struct{} // each entry, as entry holds it
	entry    []byte              // scratch: 'd' or 'u' for the list, then the path
}

var checkers = sync.Pool{New: func() any { return new(checker) }}

func (c *checker) release() {
	if cap(c.path)+8*cap(c.seen)+cap(c.names)+8*cap(c.keys)+cap(c.key)+cap(c.entry) > 64<<10 {
		return // let a hostile document's buffers go
	}
	*c = checker{path: c.path[:0], seen: c.seen[:0], names: c.names[:0], keys: c.keys[:0], key: c.key[:0], entry: c.entry[:0]}
	checkers.Put(c)
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

// structObject reads an object decoded into a struct: its members are the
// struct's fields, once each.
func (c *checker) structObject(s *shape) error {
	base := len(c.seen)
	for range (len(s.fields) + 63) / 64 {
		c.seen = append(c.seen, 0)
	}
	err := c.object(func(name []byte) (unknown bool, err error) {
		i, ok := s.byName[string(name)]
		if !ok {
			c.problem(&c.report.Unknown, name)
			return true, c.skip()
		}
		w, bit := base+i/64, uint64(1)<<(i%64)
		if c.seen[w]&bit != 0 {
			c.problem(&c.report.Duplicates, name)
		}
		c.seen[w] |= bit
		return false, c.member(s.fields[i], name)
	})
	c.seen = c.seen[:base]
	return err
}

// mapObject reads an object decoded into a map or an interface value: any
// names are allowed in it, once each.
func (c *checker) mapObject(elem *shape) error {
	base, names := len(c.keys), len(c.names)
	var many map[string]struct{} // the keys, once there are too many to compare
	err := c.object(func(name []byte) (bool, error) {
		if c.repeated(base, &many, name) {
			c.problem(&c.report.Duplicates, name)
		}
		return false, c.member(elem, name)
	})
	c.keys, c.names = c.keys[:base], c.names[:names]
	return err
}

// repeated reports whether the map object whose keys start at c.keys[base]
// had the key name already, and remembers it.
func (c *checker) repeated(base int, many *map[string]struct{}, name []byte) bool {
	if *many != nil {
		if _, ok := (*many)[string(name)]; ok {
			return true
		}
		(*many)[string(name)] = struct{}{}
		return false
	}
	for i := base; i < len(c.keys); i++ {
		end := len(c.names)
		if i+1 < len(c.keys) {
			end = c.keys[i+1]
		}
		if bytes.Equal(c.names[c.keys[i]:end], name) {
			return true
		}
	}
	c.keys = append(c.keys, len(c.names))
	c.names = append(c.names, name...)
	if n := len(c.keys) - base; n > 16 {
		*many = make(map[string]struct{}, 2*n)
		for i := base; i < len(c.keys); i++ {
			end := len(c.names)
			if i+1 < len(c.keys) {
				end = c.keys[i+1]
			}
			(*many)[string(c.names[c.keys[i]:end])] = struct{}{}
		}
		c.keys, c.names = c.keys[:base], c.names[:c.keys[base]]
	}
	return false
}

// member reads the value, of shape s, of the member name of the object
// being read.
func (c *checker) member(s *shape, name []byte) error {
	if s.inert {
		return c.skip()
	}
	at := len(c.path)
	c.pushKey(name)
	err := c.value(s)
	c.path = c.path[:at]
	return err
}

// array reads an array, checking its first n elements (all if n < 0).
func (c *checker) array(elem *shape, n int) error {
	at := len(c.path)
	return c.elements(func(i int) error {
		if elem.inert || n >= 0 && i >= n {
			return c.skip()
		}
		c.path = append(c.path, '[')
		c.path = strconv.AppendInt(c.path, int64(i), 10)
		c.path = append(c.path, ']')
		err := c.value(elem)
		c.path = c.path[:at]
		return err
	})
}

// object reads an object. For each member it reads the name, then calls
// member, which reads the value and says whether the member is unknown: an
// unknown member is cut out of cleaned, with one comma beside it.
func (c *checker) object(member func(name []byte) (unknown bool, err error)) error {
	if empty, err := c.open('}'); empty || err != nil {
		return err
	}
	after := -1 // where the last member kept ends, or the cut after it
	for {
		start := c.pos
		name, err := c.memberName()
		if err != nil {
			return err
		}
		unknown, err := member(name)
		if err != nil {
			return err
		}
		end := c.pos
		more, err := c.next('}')
		if err != nil {
			return err
		}
		switch {
		case !unknown:
			after = end
		case after >= 0: // with the comma before it
			c.cut(after, end)
			after = end
		case more: // none kept yet: with the comma after it
			c.cut(start, c.pos)
		default:
			c.cut(start, end)
		}
		if !more {
			return nil
		}
	}
}

// elements reads an array, calling element to read each element.
func (c *checker) elements(element func(i int) error) error {
	if empty, err := c.open(']'); empty || err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err := element(i); err != nil {
			return err
		}
		if more, err := c.next(']'); !more || err != nil {
			return err
		}
	}
}

// cut leaves data[start:end] out of cleaned. Cuts come in document order.
func (c *checker) cut(start, end int) {
	if c.cleaned == nil {
		c.cleaned = make([]byte, 0, len(c.data))
	}
	c.cleaned = append(c.cleaned, c.data[c.copied:start]...)
	c.copied = end
}

func (c *checker) pushKey(name []byte) {
	if len(c.path) > 0 {
		c.path = append(c.path, '.')
	}
	c.path = append(c.path, name...)
}

// problem adds the path of the member name of the object being read to
// list, the report's Duplicates or Unknown, unless it is there already. It
// costs no allocation but for a new entry, of which there are at most
// maxReported.
func (c *checker) problem(list *[]string, name []byte) {
	if c.count >= maxReported {
		return
	}
	kind := byte('d')
	if list == &c.report.Unknown {
		kind = 'u'
	}
	at := len(c.path)
	c.pushKey(name)
	c.entry = appendPath(append(c.entry[:0], kind), c.path)
	c.path = c.path[:at]
	if _, ok := c.reported[string(c.entry)]; ok {
		return
	}
	if c.reported == nil {
		c.reported = map[string]struct{}{}
	}
	c.reported[string(c.entry)] = struct{}{}
	*list = append(*list, string(c.entry[1:]))
	c.count++
}

// appendPath appends path, cut to maxPathLen bytes if longer: its start and
// end, at rune boundaries, around "...".
func appendPath(dst, path []byte) []byte {
	if len(path) <= maxPathLen {
		return append(dst, path...)
	}
	keep := (maxPathLen - len("...")) / 2
	head, tail := keep, len(path)-keep
	for head > 0 && !utf8.RuneStart(path[head]) {
		head--
	}
	for tail < len(path) && !utf8.RuneStart(path[tail]) {
		tail++
	}
	dst = append(dst, path[:head]...)
	dst = append(dst, "..."...)
	return append(dst, path[tail:]...)
}

// # Syntax
