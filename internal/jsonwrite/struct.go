package jsonwrite

import (
	"reflect"

	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonimage"
)

// field is the plan for writing one field of a struct.
type field struct {
	index []int
	name  []byte                   // `"name":`, escaped as encoding/json escapes names
	omit  func(reflect.Value) bool // nil: always written
	fn    appendFunc
}

func (c *compiler) compileStruct(t reflect.Type) (appendFunc, bool) {
	var plan structPlan
	for _, f := range jsonfields.Of(t) {
		var fn appendFunc
		var ok bool
		if f.Quoted {
			fn, ok = c.compileQuoted(f.Type)
		} else {
			fn, ok = c.compile(f.Type)
		}
		omit := omitter(f)
		if !ok && omit == nil && !f.Optional {
			return fallBack, false // every value has it written
		}
		plan = append(plan, field{index: f.Index, name: fieldName(f.Name), omit: omit, fn: fn})
	}
	if t == c.root {
		c.top = plan
	}
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		return plan.append(b, v, depth, -1, nil)
	}, true
}

// structPlan writes a struct: a field of it for each of jsonfields.Of's.
type structPlan []field

// append appends the JSON of struct v; if mark is the index of one of
// its fields, *end is set to the offset in b just past that field's value,
// and left as it is if the field is left out.
func (plan structPlan) append(b []byte, v reflect.Value, depth, mark int, end *int) ([]byte, bool) {
	if depth >= maxDepth {
		return b, false
	}
	next := byte('{')
	for i := range plan {
		f := &plan[i]
		fv, found := fieldOf(v, f.index)
		if !found || f.omit != nil && f.omit(fv) {
			continue
		}
		b = append(b, next)
		next = ','
		b = append(b, f.name...)
		var ok bool
		if b, ok = f.fn(b, fv, depth+1); !ok {
			return b, false
		}
		if i == mark {
			*end = len(b)
		}
	}
	if next == '{' {
		b = append(b, '{')
	}
	return append(b, '}'), true
}

// fieldOf finds the field at index in struct v, following embedded
// pointers as encoding/json does: not found behind a nil one.
func fieldOf(v reflect.Value, index []int) (reflect.Value, bool) {
	if len(index) == 1 {
		return v.Field(index[0]), true
	}
	for _, i := range index {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v, true
}

// fieldName is what encoding/json writes before a field's value in
// HTML-safe output: its name quoted, <, >, & and U+2028, U+2029 escaped
// (a name encoding/json accepts holds nothing else to escape), and a colon.
func fieldName(name string) []byte {
	const hex = "0123456789abcdef"
	b := []byte{'"'}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '<' || c == '>' || c == '&':
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		case c == 0xE2 && i+2 < len(name) && name[i+1] == 0x80 && name[i+2]&^1 == 0xA8:
			b = append(b, '\\', 'u', '2', '0', '2', hex[name[i+2]&0xF])
			i += 2
		default:
			b = append(b, c)
		}
	}
	return append(b, '"', ':')
}

// omitter returns what decides that field f is left out, as encoding/json
// decides it: omitempty by its isEmptyValue, omitzero by the type's IsZero
// method or else reflect's; nil if f is always written.
func omitter(f jsonfields.Field) func(reflect.Value) bool {
	var empty, zero func(reflect.Value) bool
	if f.OmitEmpty {
		empty = emptiness(f.Type.Kind())
	}
	if f.OmitZero {
		zero = zeroness(f.Type)
	}
	switch {
	case empty == nil:
		return zero
	case zero == nil:
		return empty
	}
	return func(v reflect.Value) bool { return empty(v) || zero(v) }
}

// emptiness is encoding/json's isEmptyValue for a kind; nil for a kind
// never empty (a struct).
func emptiness(k reflect.Kind) func(reflect.Value) bool {
	switch k {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return func(v reflect.Value) bool { return v.Len() == 0 }
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return reflect.Value.IsZero
	}
	return nil
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

// zeroness is encoding/json's test for omitzero on a field of type t: the
// IsZero method where t (or *t) has one, else reflect's IsZero.
func zeroness(t reflect.Type) func(reflect.Value) bool {
	switch {
	case t == timeType || t == microTimeType:
		// Their IsZero is time.Time's: read without boxing the value.
		return func(v reflect.Value) bool { return jsonimage.TimeOf(v).IsZero() }
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			// Avoid panics calling IsZero on a nil interface or
			// non-nil interface with nil pointer.
			return v.IsNil() ||
				(v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) ||
				v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			// Avoid panics calling IsZero on nil pointer.
			return v.IsNil() || v.Interface().(isZeroer).IsZero()
		}
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				// Box v, as encoding/json does, to take its address.
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return reflect.Value.IsZero
}

// Omitter is what decides that field f is left out, as encoding/json
// decides it (omitempty, omitzero); nil if f is always written. It serves
// walks of values other than this package's that must leave out what
// json.Marshal leaves out.
func Omitter(f jsonfields.Field) func(reflect.Value) bool { return omitter(f) }

// FieldOf finds the field at index in struct v as encoding/json does:
// not found behind a nil embedded pointer.
func FieldOf(v reflect.Value, index []int) (reflect.Value, bool) { return fieldOf(v, index) }
