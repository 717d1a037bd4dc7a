package jsonread

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// MaxDepth is how deeply containers may nest in a document a Decoder reads;
// a deeper one is left to the fallback.
const MaxDepth = 1000

// Fallback decodes one JSON value into v, a non-nil pointer, as the
// Decoder's documents are to be decoded; it is given what the Decoder does
// not read itself.
type Fallback func(data []byte, v any) error

// A Decoder reads JSON into values of one Go type. It is safe for
// concurrent use.
type Decoder struct {
	ptr      reflect.Type // a pointer to the type
	fn       decodeFunc
	fallback Fallback
}

// decodeFunc reads the JSON value at d.i (white space before it allowed)
// into the value at p, a zero value of its type, and moves d.i past it; it
// reports false if it cannot tell what the fallback would decode, leaving
// at p what it decoded so far.
type decodeFunc func(d *decoder, p unsafe.Pointer) bool

type decoder struct {
	data     []byte
	i        int
	depth    int // containers open around d.i
	fallback Fallback
	scratch  []byte // for strings with escapes
	strings  stringCache
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	// anyFieldsType is codec.AnyFields, which codec's import of this
	// package keeps from being named here.
	anyFieldsType = reflect.TypeFor[interface {
		json.Unmarshaler
		AnyJSONFields()
	}]()
	numberType    = reflect.TypeFor[json.Number]()
	v1NumberType  = reflect.TypeFor[jsonv1.Number]()
	stringMapType = reflect.TypeFor[map[string]string]()
	timeType      = reflect.TypeFor[kapi.Time]()
	microTimeType = reflect.TypeFor[kapi.MicroTime]()
)

// New returns the Decoder of t, or nil if it would leave every value of t
// to fallback whole. A type holding one that decodes itself with json/v2's
// UnmarshalJSONFrom method is the caller's to keep from it: the Decoder
// does not look for that method.
func New(t reflect.Type, fallback Fallback) *Decoder {
	c := compiler{seen: map[reflect.Type]*entry{}}
	fn, own := c.compile(t)
	if !own {
		return nil
	}
	return &Decoder{ptr: reflect.PointerTo(t), fn: fn, fallback: fallback}
}

// Decode reads the JSON document data into v, a pointer to a zero value of
// the Decoder's type, and reports true; or it reports false, v then
// holding part of the document, and the caller is to decode it again into
// a new value.
func (dec *Decoder) Decode(data []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Type() != dec.ptr || rv.IsNil() {
		return false
	}
	d := decoders.Get().(*decoder)
	d.data, d.i, d.depth, d.fallback = data, 0, 0, dec.fallback
	ok := dec.fn(d, rv.UnsafePointer()) && jsonskip.Space(data, d.i) == len(data)
	d.data, d.fallback = nil, nil
	if cap(d.scratch) <= 64<<10 {
		decoders.Put(d)
	}
	return ok
}

type entry struct{ fn decodeFunc }

type compiler struct{ seen map[reflect.Type]*entry }

// compile returns t's decodeFunc, and own false if it hands every value to
// the fallback.
func (c *compiler) compile(t reflect.Type) (decodeFunc, bool) {
	if e, ok := c.seen[t]; ok {
		if e.fn != nil {
			return e.fn, true
		}
		// A recursive type: its function is known once compiled.
		return func(d *decoder, p unsafe.Pointer) bool { return e.fn(d, p) }, true
	}
	e := &entry{}
	c.seen[t] = e
	fn, own := c.compileNew(t)
	e.fn = fn
	return fn, own
}

func (c *compiler) compileNew(t reflect.Type) (decodeFunc, bool) {
	switch {
	case t == numberType || t == v1NumberType:
		return fallBack(t), false
	case t.Kind() == reflect.Pointer:
		return c.compilePointer(t), true
	case t == timeType || t == microTimeType:
		return timeDecoder(t), true
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return methodDecoder(t, reflect.PointerTo(t).Implements(anyFieldsType)), true
	case jsonfields.Implements(t, textUnmarshalerType):
		return fallBack(t), false
	}
	switch t.Kind() {
	case reflect.Bool:
		return decodeBool, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intDecoder(t.Bits()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintDecoder(t.Bits()), true
	case reflect.Float32:
		return decodeFloat32, true
	case reflect.Float64:
		return decodeFloat64, true
	case reflect.String:
		return decodeString, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // base64, or bytes that decode themselves
			return fallBack(t), false
		}
		return c.compileSlice(t), true
	case reflect.Map:
		return c.compileMap(t)
	case reflect.Struct:
		return c.compileStruct(t)
	}
	return fallBack(t), false // interfaces, arrays, kinds JSON cannot hold
}

// fallBack hands the value to the Decoder's fallback.
func fallBack(t reflect.Type) decodeFunc {
	return func(d *decoder, p unsafe.Pointer) bool {
		start := jsonskip.Space(d.data, d.i)
		end, ok := jsonskip.Value(d.data, start, d.depth, jsonskip.AnyText)
		if !ok {
			return false
		}
		d.i = end
		return d.fallback(d.data[start:end], reflect.NewAt(t, p).Interface()) == nil
	}
}

// methodDecoder hands the value to t's UnmarshalJSON, as encoding/json
// does (null included). A value of a type of any fields (codec.AnyFields:
// a custom resource) with a member name repeated anywhere in it is left
// to the fallback, which refuses it: kapi's check of a body's fields looks
// into such a type, not into others that decode themselves.
func methodDecoder(t reflect.Type, anyFields bool) decodeFunc {
	return func(d *decoder, p unsafe.Pointer) bool {
		start := jsonskip.Space(d.data, d.i)
		end, ok := jsonskip.Value(d.data, start, d.depth, jsonskip.Exact)
		if !ok || anyFields && !jsontext.Value(d.data[start:end]).IsValid() {
			return false
		}
		d.i = end
		return reflect.NewAt(t, p).Interface().(json.Unmarshaler).UnmarshalJSON(d.data[start:end]) == nil
	}
}
