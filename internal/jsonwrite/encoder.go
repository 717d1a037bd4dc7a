package jsonwrite

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// An Encoder writes the JSON of values of one Go type as json.Marshal does.
// It is safe for concurrent use.
type Encoder struct {
	typ reflect.Type
	fn  appendFunc
	// top writes typ, or what it points to, when that is a struct (for
	// LendEnd); nil otherwise.
	top structPlan
}

// appendFunc appends the JSON of v, depth values down from the value
// written, or reports false if it cannot tell what json.Marshal writes;
// what it appended is then to be dropped.
type appendFunc func(b []byte, v reflect.Value, depth int) ([]byte, bool)

// maxDepth is how deep a value is written: json.Marshal looks for cycles of
// pointers from 1000 levels down, so a deeper value is left to it.
const maxDepth = 1000

var (
	timeType      = reflect.TypeFor[kapi.Time]()
	microTimeType = reflect.TypeFor[kapi.MicroTime]()
	fieldsV1Type  = reflect.TypeFor[kapi.FieldsV1]()
	numberType    = reflect.TypeFor[json.Number]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

// New returns the Encoder of t, or nil if it can write no value of t (see
// the package documentation).
func New(t reflect.Type) *Encoder {
	c := compiler{seen: map[reflect.Type]*entry{}, root: t}
	if t.Kind() == reflect.Pointer {
		c.root = t.Elem()
	}
	fn, ok := c.compile(t)
	if !ok || c.dynamic {
		return nil
	}
	return &Encoder{typ: t, fn: fn, top: c.top}
}

// Append appends the JSON of v, a value of the Encoder's type, to b: what
// json.Marshal(v.Interface()) returns. If it cannot tell what that is, it
// returns b as it was (its spare capacity perhaps written) and false, and
// the caller is to use json.Marshal.
func (e *Encoder) Append(b []byte, v reflect.Value) ([]byte, bool) {
	if !v.IsValid() || v.Type() != e.typ {
		return b, false
	}
	out, ok := e.fn(b, v, 0)
	if !ok {
		return b, false
	}
	return out, true
}

// buffers keeps what Marshal writes into, as encoding/json keeps its own.
var buffers = sync.Pool{New: func() any { return new(Buffer) }}

// A Buffer is one of the pooled buffers Marshal writes into, lent (Lend)
// to a caller that reads what was written, or copies it, and then gives
// it back (Return): the next Lend may write over it, so nothing may keep
// its bytes, nor hand them to what keeps them.
type Buffer struct{ b []byte }

// Lend returns the JSON of v, a value of the Encoder's type, as Marshal
// does, but written in a pooled buffer, not copied out of it: the bytes
// are valid until buf.Return. false as Append (buf nil).
func (e *Encoder) Lend(v reflect.Value) (b []byte, buf *Buffer, ok bool) {
	buf = buffers.Get().(*Buffer)
	if buf.b, ok = e.Append(buf.b[:0], v); !ok {
		buffers.Put(buf)
		return nil, nil, false
	}
	return buf.b, buf, true
}

// LendEnd is Lend of a struct or a pointer to one, which also says where
// in b the value of its field-th field (in jsonfields.Of's order) ends:
// end is the offset just past it, or -1 if the field was left out (or the
// pointer is nil, or the Encoder's type is no struct). A caller that
// splices into what it wrote finds the place without reading it again.
func (e *Encoder) LendEnd(v reflect.Value, field int) (b []byte, buf *Buffer, end int, ok bool) {
	end = -1
	if e.top == nil || !v.IsValid() || v.Type() != e.typ || e.typ.Kind() == reflect.Pointer && v.IsNil() {
		b, buf, ok = e.Lend(v)
		return b, buf, end, ok
	}
	depth := 0
	if e.typ.Kind() == reflect.Pointer { // as compilePointer
		v, depth = v.Elem(), 1
	}
	buf = buffers.Get().(*Buffer)
	if buf.b, ok = e.top.append(buf.b[:0], v, depth, field, &end); !ok {
		buffers.Put(buf)
		return nil, nil, -1, false
	}
	return buf.b, buf, end, true
}

// Return gives buf back to the pool Lend took it from; a nil buf is
// nothing to give.
func (buf *Buffer) Return() {
	if buf != nil {
		buffers.Put(buf)
	}
}

// Marshal returns the JSON of v, a value of the Encoder's type, in a new
// slice no larger than it needs, as json.Marshal does (Lend's, copied),
// or false as Append.
func (e *Encoder) Marshal(v reflect.Value) ([]byte, bool) {
	b, buf, ok := e.Lend(v)
	if !ok {
		return nil, false
	}
	defer buf.Return()
	return append([]byte(nil), b...), true
}

type entry struct {
	fn   appendFunc
	ok   bool
	done bool
}

type compiler struct {
	seen map[reflect.Type]*entry
	// root is the type compiled, or what it points to; top its plan if
	// it is a struct (Encoder.top).
	root reflect.Type
	top  structPlan
	// dynamic is set on meeting an interface type. Its values are left to
	// json.Marshal, which looks at what they hold, and a type that has one
	// rarely holds nil in it: its values would be written in part, to be
	// written again by json.Marshal.
	dynamic bool
}

// fallBack is the appendFunc of what is left to json.Marshal.
func fallBack(b []byte, _ reflect.Value, _ int) ([]byte, bool) { return b, false }

// writesItself says whether encoding/json hands a value of t to its own
// MarshalJSON or MarshalText method, on t or, as it takes the address of
// what it can address, on *t.
func writesItself(t reflect.Type) bool {
	return jsonfields.Implements(t, marshalerType) || jsonfields.Implements(t, textType)
}

// compile returns t's appendFunc and whether it can write any value of t.
func (c *compiler) compile(t reflect.Type) (appendFunc, bool) {
	if e, ok := c.seen[t]; ok {
		if e.done {
			return e.fn, e.ok
		}
		// A recursive type: its function is known once compiled.
		return func(b []byte, v reflect.Value, depth int) ([]byte, bool) { return e.fn(b, v, depth) }, true
	}
	e := &entry{}
	c.seen[t] = e
	e.fn, e.ok = c.compileNew(t)
	e.done = true
	return e.fn, e.ok
}

func (c *compiler) compileNew(t reflect.Type) (appendFunc, bool) {
	switch t {
	case timeType:
		return timeAppender(time.RFC3339), true
	case microTimeType:
		return timeAppender(kapi.RFC3339Micro), true
	case fieldsV1Type:
		return appendFieldsV1, true
	case numberType:
		return fallBack, false
	}
	// A pointer writes what it points to, or null: a pointer type that is a
	// Marshaler by its target's methods has them write the same.
	if t.Kind() == reflect.Pointer {
		return c.compilePointer(t, false)
	}
	if writesItself(t) {
		return fallBack, false
	}
	if fn := scalarAppender(t.Kind(), false); fn != nil {
		return fn, true
	}
	switch t.Kind() {
	case reflect.Interface:
		c.dynamic = true
		return fallBack, false
	case reflect.Slice:
		return c.compileSlice(t)
	case reflect.Array:
		return c.compileArray(t)
	case reflect.Map:
		return c.compileMap(t)
	case reflect.Struct:
		return c.compileStruct(t)
	}
	return fallBack, false // channels, functions, complex numbers
}

// compileQuoted compiles a field's type under `json:",string"`, which
// encoding/json applies to a scalar or a pointer to one (jsonfields.Field's
// Quoted): the scalar is written as a JSON string.
func (c *compiler) compileQuoted(t reflect.Type) (appendFunc, bool) {
	if t.Kind() == reflect.Pointer {
		return c.compilePointer(t, true)
	}
	if t == numberType || writesItself(t) {
		return fallBack, false
	}
	if fn := scalarAppender(t.Kind(), true); fn != nil {
		return fn, true
	}
	return fallBack, false
}

// scalarAppender returns the appendFunc of a bool, number or string kind,
// written as a JSON string if quoted, or nil for another kind.
func scalarAppender(k reflect.Kind, quoted bool) appendFunc {
	switch k {
	case reflect.Bool:
		return quote(appendBool, quoted)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return quote(appendInt, quoted)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return quote(appendUint, quoted)
	case reflect.Float32:
		return quote(floatAppender(32), quoted)
	case reflect.Float64:
		return quote(floatAppender(64), quoted)
	case reflect.String:
		if quoted {
			return appendQuotedString
		}
		return appendStringValue
	}
	return nil
}

// quote wraps what fn writes in quotes, if quoted.
func quote(fn appendFunc, quoted bool) appendFunc {
	if !quoted {
		return fn
	}
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		b, ok := fn(append(b, '"'), v, depth)
		return append(b, '"'), ok
	}
}

func appendBool(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return strconv.AppendBool(b, v.Bool()), true
}

func appendInt(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return strconv.AppendInt(b, v.Int(), 10), true
}

func appendUint(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return strconv.AppendUint(b, v.Uint(), 10), true
}

func appendStringValue(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return appendString(b, v.String(), true), true
}

// appendQuotedString writes a string under `json:",string"`: its JSON
// string, written as a JSON string again (encoding/json escapes only the
// inner one for HTML, as the outer has nothing left to escape).
func appendQuotedString(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	var small [64]byte
	return appendString(b, string(appendString(small[:0], v.String(), true)), false), true
}

// compilePointer compiles pointer type t: null when nil, else what it
// points to (quoted for a field's `json:",string"`).
func (c *compiler) compilePointer(t reflect.Type, quoted bool) (appendFunc, bool) {
	var elem appendFunc
	if quoted {
		elem, _ = c.compileQuoted(t.Elem())
	} else {
		elem, _ = c.compile(t.Elem())
	}
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		if v.IsNil() {
			return append(b, "null"...), true
		}
		if depth >= maxDepth {
			return b, false
		}
		return elem(b, v.Elem(), depth+1)
	}, true
}

func (c *compiler) compileSlice(t reflect.Type) (appendFunc, bool) {
	// encoding/json writes a slice of bytes as base64, unless *byte writes
	// itself; then so does the byte, and New refuses it below.
	if t.Elem().Kind() == reflect.Uint8 && !writesItself(t.Elem()) {
		return appendBytes, true
	}
	elems, _ := c.compileElems(t)
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		if v.IsNil() {
			return append(b, "null"...), true
		}
		return elems(b, v, depth)
	}, true
}

func appendBytes(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	if v.IsNil() {
		return append(b, "null"...), true
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v.Bytes())
	return append(b, '"'), true
}

// compileArray: an array of bytes is an array of numbers, as any other.
func (c *compiler) compileArray(t reflect.Type) (appendFunc, bool) {
	elems, ok := c.compileElems(t)
	return elems, ok || t.Len() == 0
}

// compileElems writes the elements of a slice or array type t as a JSON
// array; ok is false if it can write none of them.
func (c *compiler) compileElems(t reflect.Type) (appendFunc, bool) {
	elem, writable := c.compile(t.Elem())
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		n := v.Len()
		if n > 0 && depth >= maxDepth {
			return b, false
		}
		b = append(b, '[')
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = elem(b, v.Index(i), depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}, writable
}
