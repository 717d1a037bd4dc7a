package jsonfields

import (
	"encoding"
	"encoding/json"
	"reflect"
)

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
)

// Implements reports whether encoding/json finds the methods of the
// interface type iface on a value of type t: on t itself or, since it takes
// the address of a value it can address (a struct field, a slice element),
// on *t.
func Implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface)
}

// DecodesItself reports whether encoding/json hands a JSON value to t's own
// method rather than decoding it: t or *t is a json.Unmarshaler or an
// encoding.TextUnmarshaler.
func DecodesItself(t reflect.Type) bool {
	return Implements(t, unmarshalerType) || Implements(t, textUnmarshalerType)
}

// MapKeyDecodes reports whether encoding/json decodes a JSON object into a
// map with keys of type k: k is of a string or integer kind, or *k is an
// encoding.TextUnmarshaler.
func MapKeyDecodes(k reflect.Type) bool {
	return stringOrInteger(k) || reflect.PointerTo(k).Implements(textUnmarshalerType)
}

// MapKeyEncodes reports whether encoding/json encodes a map with keys of
// type k as a JSON object: k is of a string or integer kind, or k itself
// (map keys cannot be addressed) is an encoding.TextMarshaler.
func MapKeyEncodes(k reflect.Type) bool {
	return stringOrInteger(k) || k.Implements(textMarshalerType)
}

func stringOrInteger(k reflect.Type) bool {
	switch k.Kind() {
	case reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// MaxPointers is how many levels of pointer types [Deref] follows. Go allows
// a pointer type without end (type P *P, or type A *B; type B *A): such a
// type holds no JSON value but null.
const MaxPointers = 64

// Deref follows pointer types from t to the type they point to, stopping
// early at a type for which stop (if not nil) reports true. It returns t
// itself if t is not a pointer type, and ok false if it gave up after
// MaxPointers levels.
func Deref(t reflect.Type, stop func(reflect.Type) bool) (target reflect.Type, ok bool) {
	for range MaxPointers {
		if t.Kind() != reflect.Pointer || stop != nil && stop(t) {
			return t, true
		}
		t = t.Elem()
	}
	return t, t.Kind() != reflect.Pointer || stop != nil && stop(t)
}
