package jsonimage

import (
	"math"
	"reflect"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// sliceHeader is how a slice is laid out.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// assign sets the value of type t at dst to the changed image img (the
// zero value for nil), as reflect sets it, so that the garbage collector
// sees the pointers it writes.
func assign(t reflect.Type, dst, img unsafe.Pointer) {
	d := reflect.NewAt(t, dst).Elem()
	if img == nil {
		d.SetZero()
		return
	}
	d.Set(reflect.NewAt(t, img).Elem())
}

// copyOf returns a pointer to a new value of type t, a copy of the one at p.
func copyOf(t reflect.Type, p unsafe.Pointer) unsafe.Pointer {
	out := reflect.New(t)
	out.Elem().Set(reflect.NewAt(t, p).Elem())
	return out.UnsafePointer()
}

// nullish says, for a type, whether the value at p encodes as null: a nil
// pointer, slice or map, a zero time, a field set without one. A pointer
// to such a value decodes as nil. nil: never.
func nullish(t reflect.Type) func(p unsafe.Pointer) bool {
	switch t {
	case timeType:
		return func(p unsafe.Pointer) bool { return (*kapi.Time)(p).IsZero() }
	case microTimeType:
		return func(p unsafe.Pointer) bool { return (*kapi.MicroTime)(p).IsZero() }
	case fieldsV1Type:
		return func(p unsafe.Pointer) bool { return (*kapi.FieldsV1)(p).Raw == nil }
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Map:
		return func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
	case reflect.Slice:
		return func(p unsafe.Pointer) bool { return (*sliceHeader)(p).data == nil }
	}
	return nil
}

func (c *compiler) compilePointer(t reflect.Type) (imageFunc, bool) {
	elemType := t.Elem()
	elem, ok := c.compile(elemType)
	if !ok {
		return nil, false
	}
	isNull := nullish(elemType)
	if elem == nil && isNull == nil {
		return nil, true
	}
	return func(p unsafe.Pointer, depth int) (unsafe.Pointer, outcome) {
		q := *(*unsafe.Pointer)(p)
		if q == nil {
			return nil, same
		}
		if depth >= maxDepth {
			return nil, unknown
		}
		// What the pointer points to decides whether it is written null:
		// a time in year 1 with a fraction is not, though its image is zero.
		if isNull != nil && isNull(q) {
			return nil, changed
		}
		if elem == nil {
			return nil, same
		}
		img, o := elem(q, depth+1)
		switch {
		case o != changed:
			return nil, o
		case img == nil && isNull != nil:
			// What is written null through another pointer: a pointer
			// to a pointer to a zero time.
			return nil, changed
		case img == nil:
			img = reflect.New(elemType).UnsafePointer()
		}
		cell := new(unsafe.Pointer) // the new pointer, its image
		*cell = img
		return unsafe.Pointer(cell), changed
	}, true
}

func (c *compiler) compileSlice(t reflect.Type) (imageFunc, bool) {
	if t.Elem().Kind() == reflect.Uint8 && !ownJSON(t.Elem()) {
		return nil, true // base64
	}
	elem, ok := c.compile(t.Elem())
	if !ok || elem == nil {
		return nil, ok
	}
	elemType, size := t.Elem(), t.Elem().Size()
	return func(p unsafe.Pointer, depth int) (unsafe.Pointer, outcome) {
		h := (*sliceHeader)(p)
		if depth >= maxDepth && h.len > 0 {
			return nil, unknown
		}
		var out reflect.Value // the image, once an element differs
		for i := range h.len {
			img, o := elem(unsafe.Add(h.data, uintptr(i)*size), depth+1)
			switch o {
			case unknown:
				return nil, unknown
			case changed:
				if !out.IsValid() {
					out = reflect.New(t)
					s := out.Elem()
					s.Grow(h.len)
					s.SetLen(h.len)
					reflect.Copy(s, reflect.NewAt(t, p).Elem())
				}
				assign(elemType, unsafe.Add((*sliceHeader)(out.UnsafePointer()).data, uintptr(i)*size), img)
			}
		}
		if out.IsValid() {
			return out.UnsafePointer(), changed
		}
		return nil, same
	}, true
}

func (c *compiler) compileArray(t reflect.Type) (imageFunc, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok || elem == nil || t.Len() == 0 {
		return nil, ok
	}
	plan := make([]field, t.Len())
	for i := range plan {
		plan[i] = field{offset: uintptr(i) * t.Elem().Size(), typ: t.Elem(), fn: elem}
	}
	return compileParts(t, plan, true), true
}

var stringMapType = reflect.TypeFor[map[string]string]()

// imageStringMap images labels and annotations without reflection.
func imageStringMap(p unsafe.Pointer, _ int) (unsafe.Pointer, outcome) {
	for k, s := range *(*map[string]string)(p) {
		if !utf8.ValidString(k) || !utf8.ValidString(s) {
			return nil, unknown
		}
	}
	return nil, same
}

func (c *compiler) compileMap(t reflect.Type) (imageFunc, bool) {
	if t == stringMapType {
		return imageStringMap, true
	}
	k := t.Key()
	if ownJSON(k) || !jsonfields.MapKeyEncodes(k) || !jsonfields.MapKeyDecodes(k) {
		return nil, false
	}
	checkKey := k.Kind() == reflect.String
	elem, ok := c.compile(t.Elem())
	if !ok || elem == nil && !checkKey {
		return nil, ok
	}
	return func(p unsafe.Pointer, depth int) (unsafe.Pointer, outcome) {
		m := reflect.NewAt(t, p).Elem()
		if m.Len() == 0 {
			return nil, same
		}
		if depth >= maxDepth {
			return nil, unknown
		}
		// Each entry is read into these, addressable as elem reads them.
		key, value := reflect.New(k).Elem(), reflect.New(t.Elem()).Elem()
		var keys []reflect.Value
		var images []unsafe.Pointer
		var it reflect.MapIter
		for it.Reset(m); it.Next(); {
			if checkKey {
				key.SetIterKey(&it)
				if !utf8.ValidString(key.String()) {
					return nil, unknown
				}
			}
			if elem == nil {
				continue
			}
			value.SetIterValue(&it)
			img, o := elem(value.Addr().UnsafePointer(), depth+1)
			switch o {
			case unknown:
				return nil, unknown
			case changed:
				changedKey := reflect.New(k).Elem()
				changedKey.SetIterKey(&it)
				keys, images = append(keys, changedKey), append(images, img)
			}
		}
		if keys == nil {
			return nil, same
		}
		out := reflect.MakeMapWithSize(t, m.Len())
		for it.Reset(m); it.Next(); {
			out.SetMapIndex(it.Key(), it.Value())
		}
		for i, key := range keys {
			if images[i] == nil {
				out.SetMapIndex(key, reflect.Zero(t.Elem()))
			} else {
				out.SetMapIndex(key, reflect.NewAt(t.Elem(), images[i]).Elem())
			}
		}
		cell := reflect.New(t)
		cell.Elem().Set(out)
		return cell.UnsafePointer(), changed
	}, true
}

// field is the plan for one field of a struct.
type field struct {
	offset uintptr // from the start of the struct, through embedded ones
	typ    reflect.Type
	fn     imageFunc
}

func (c *compiler) compileStruct(t reflect.Type) (imageFunc, bool) {
	fields := jsonfields.Of(t)
	if leaves, ok := leafFields(t); !ok || leaves != len(fields) {
		return nil, false // a field that JSON does not carry
	}
	var plan []field
	for _, f := range fields {
		if f.Optional || f.OmitZero && jsonfields.Implements(f.Type, isZeroerType) {
			return nil, false
		}
		fn, ok := c.compile(f.Type)
		if !ok {
			return nil, false
		}
		if f.OmitEmpty {
			fn = omitEmpty(f.Type, fn)
		}
		if fn != nil {
			plan = append(plan, field{offset: offsetOf(t, f.Index), typ: f.Type, fn: fn})
		}
	}
	if plan == nil {
		return nil, true
	}
	return compileParts(t, plan, false), true
}

// compileParts images a value of t part by part as plan says: a struct's
// fields, an array's elements. A value deeper than maxDepth is left to
// decoding if bounded (an array, as a slice is).
func compileParts(t reflect.Type, plan []field, bounded bool) imageFunc {
	return func(p unsafe.Pointer, depth int) (unsafe.Pointer, outcome) {
		if bounded && depth >= maxDepth {
			return nil, unknown
		}
		var out unsafe.Pointer // the image, once a part differs
		for _, f := range plan {
			img, o := f.fn(unsafe.Add(p, f.offset), depth+1)
			switch o {
			case unknown:
				return nil, unknown
			case changed:
				if out == nil {
					out = copyOf(t, p)
				}
				assign(f.typ, unsafe.Add(out, f.offset), img)
			}
		}
		if out != nil {
			return out, changed
		}
		return nil, same
	}
}

// offsetOf is where the field of struct t at index (through structs
// embedded by value) lies in a value of t.
func offsetOf(t reflect.Type, index []int) uintptr {
	var offset uintptr
	for _, i := range index {
		f := t.Field(i)
		offset += f.Offset
		t = f.Type
	}
	return offset
}

// omitEmpty adds to fn what omitempty loses: an empty slice or map comes
// back nil, a float's -0 comes back +0.
func omitEmpty(t reflect.Type, fn imageFunc) imageFunc {
	orSame := func(p unsafe.Pointer, depth int) (unsafe.Pointer, outcome) {
		if fn == nil {
			return nil, same
		}
		return fn(p, depth)
	}
	var empty func(p unsafe.Pointer) bool
	switch t.Kind() {
	case reflect.Slice:
		empty = func(p unsafe.Pointer) bool { h := (*sliceHeader)(p); return h.len == 0 && h.data != nil }
	case reflect.Map:
		empty = func(p unsafe.Pointer) bool {
			if t == stringMapType {
				m := *(*map[string]string)(p)
				return m != nil && len(m) == 0
			}
			return *(*unsafe.Pointer)(p) != nil && reflect.NewAt(t, p).Elem().Len() == 0
		}
	case reflect.Float32:
		empty = func(p unsafe.Pointer) bool { f := *(*float32)(p); return f == 0 && math.Signbit(float64(f)) }
	case reflect.Float64:
		empty = func(p unsafe.Pointer) bool { f := *(*float64)(p); return f == 0 && math.Signbit(f) }
	default:
		return fn
	}
	return func(p unsafe.Pointer, depth int) (unsafe.Pointer, outcome) {
		if empty(p) {
			return nil, changed
		}
		return orSame(p, depth)
	}
}

// leafFields counts the fields of struct t and of the structs it embeds by
// value without a JSON name, which is what encoding/json sees if no two
// share a name and none is hidden; ok is false if t embeds a pointer.
func leafFields(t reflect.Type) (int, bool) {
	n := 0
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			if sf.Type.Kind() == reflect.Pointer {
				return 0, false
			}
			if name, _, _ := strings.Cut(sf.Tag.Get("json"), ","); sf.Type.Kind() == reflect.Struct && name == "" {
				m, ok := leafFields(sf.Type)
				if !ok {
					return 0, false
				}
				n += m
				continue
			}
		}
		n++
	}
	return n, true
}
