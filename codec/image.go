package codec

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// An Image says, for the values of one Go type, what decoding their JSON
// gives back: the value UnmarshalJSON makes of what json.Marshal writes.
// JSON keeps less than Go does, so the two differ even where every
// encoding of them is the same: a kapi.Time loses its fractional seconds
// and comes back in Local, a kapi.MicroTime its nanoseconds; an empty
// slice or map under omitempty comes back nil, a float's -0 under
// omitempty +0; a pointer to what encodes as null comes back nil.
//
// A server that keeps the object it stored, instead of decoding the stored
// value again, keeps its image: what a server reading the store would
// hold, which is what a user's hooks must see as the old object.
//
// An Image is made for a type whose values it can predict: see NewImage.
// It is safe for concurrent use.
type Image struct {
	typ reflect.Type
	fn  imageFunc // nil: every value is its own image
}

// outcome is what imaging one value found.
type outcome uint8

const (
	same    outcome = iota // the value is its own image
	changed                // the image is the value returned
	unknown                // the image cannot be told without decoding
)

// imageFunc images one value of a type. It never changes v, nor anything v
// points to: a changed image is a new value, sharing with v only what is
// its own image.
type imageFunc func(v reflect.Value) (reflect.Value, outcome)

var (
	timeType      = reflect.TypeFor[kapi.Time]()
	microTimeType = reflect.TypeFor[kapi.MicroTime]()
	fieldsV1Type  = reflect.TypeFor[kapi.FieldsV1]()
)

// NewImage returns the Image of t, or nil if a value of t may lose in JSON
// what Image cannot tell: t has an interface (a number comes back a
// float64), a type with JSON or text methods of its own other than
// kapi's times and field sets, a field encoding/json does not see (an
// unexported field, `json:"-"`, a name two fields share), a struct embedded
// by pointer, an omitzero field whose type says when it is zero, or a
// kind JSON cannot hold.
func NewImage(t reflect.Type) *Image {
	c := imageCompiler{seen: map[reflect.Type]*imageEntry{}}
	fn, ok := c.compile(t)
	if !ok {
		return nil
	}
	return &Image{typ: t, fn: fn}
}

// Of returns the image of v, a value of the Image's type, and whether it
// could be told. The image is v itself when nothing differs.
func (im *Image) Of(v reflect.Value) (reflect.Value, bool) {
	if im.fn == nil {
		return v, true
	}
	out, o := im.fn(v)
	switch o {
	case same:
		return v, true
	case changed:
		return out, true
	}
	return reflect.Value{}, false
}

// Is says whether v, a value of the Image's type, is its own image: what
// decoding its JSON gives, as a decoded value always is. Two values that
// are their own images encode alike exactly when they are equal.
func (im *Image) Is(v reflect.Value) bool {
	if im.fn == nil {
		return true
	}
	_, o := im.fn(v)
	return o == same
}

type imageEntry struct {
	fn   imageFunc
	ok   bool
	done bool
}

type imageCompiler struct {
	seen map[reflect.Type]*imageEntry
}

var (
	marshalerType       = reflect.TypeFor[json.Marshaler]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// ownJSON says whether values of t (or pointers to them) encode or decode
// themselves.
func ownJSON(t reflect.Type) bool {
	for _, it := range []reflect.Type{marshalerType, unmarshalerType, textMarshalerType, textUnmarshalerType} {
		if t.Implements(it) || t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(it) {
			return true
		}
	}
	return false
}

// compile returns t's imageFunc (nil if every value of t is its own image)
// and whether Image can tell the images of t's values at all.
func (c *imageCompiler) compile(t reflect.Type) (imageFunc, bool) {
	if e, ok := c.seen[t]; ok {
		if e.done {
			return e.fn, e.ok
		}
		// A recursive type: its function is known once compiled.
		return func(v reflect.Value) (reflect.Value, outcome) { return e.fn(v) }, true
	}
	e := &imageEntry{}
	c.seen[t] = e
	e.fn, e.ok = c.compileNew(t)
	e.done = true
	if e.fn == nil && e.ok {
		// A recursive use may already hold the indirection.
		e.fn = func(v reflect.Value) (reflect.Value, outcome) { return v, same }
		return nil, true
	}
	return e.fn, e.ok
}

func (c *imageCompiler) compileNew(t reflect.Type) (imageFunc, bool) {
	switch t {
	case timeType:
		return imageTime, true
	case microTimeType:
		return imageMicroTime, true
	case fieldsV1Type:
		return imageFieldsV1, true
	}
	if t.Kind() == reflect.Pointer && t.Name() == "" {
		return c.compilePointer(t)
	}
	if ownJSON(t) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return nil, true
	case reflect.String:
		return imageString, true
	case reflect.Slice:
		return c.compileSlice(t)
	case reflect.Array:
		return c.compileArray(t)
	case reflect.Map:
		return c.compileMap(t)
	case reflect.Struct:
		return c.compileStruct(t)
	}
	return nil, false // interfaces, named pointers, and what JSON cannot hold
}

// imageString: encoding/json writes invalid UTF-8 as U+FFFD, byte by byte.
func imageString(v reflect.Value) (reflect.Value, outcome) {
	if utf8.ValidString(v.String()) {
		return v, same
	}
	return v, unknown
}

// timeOf reads the time.Time of a kapi.Time or kapi.MicroTime.
func timeOf(v reflect.Value) time.Time {
	f := v.Field(0)
	if f.CanAddr() {
		return *(*time.Time)(f.Addr().UnsafePointer())
	}
	return f.Interface().(time.Time)
}

// timeImage is what kapi's times decode from what they encode: the zero
// time from null; else the instant in UTC cut to the precision of the
// layout (nanos keeps the nanoseconds written), read back in Local.
func timeImage(t time.Time, nanos func(int) int) (time.Time, bool) {
	if t.IsZero() {
		return time.Time{}, true
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return time.Time{}, false // written, but not read back
	}
	return time.Unix(t.Unix(), int64(nanos(t.Nanosecond()))), true
}

func imageTime(v reflect.Value) (reflect.Value, outcome) {
	t := timeOf(v)
	img, ok := timeImage(t, func(int) int { return 0 })
	switch {
	case !ok:
		return v, unknown
	case img == t:
		return v, same
	}
	return reflect.ValueOf(kapi.Time{Time: img}), changed
}

func imageMicroTime(v reflect.Value) (reflect.Value, outcome) {
	t := timeOf(v)
	img, ok := timeImage(t, func(ns int) int { return ns / 1000 * 1000 })
	switch {
	case !ok:
		return v, unknown
	case img == t:
		return v, same
	}
	return reflect.ValueOf(kapi.MicroTime{Time: img}), changed
}

// imageFieldsV1 says a field set is its own image when its raw JSON is
// what json.Marshal writes of it: compact, printable ASCII, nothing it
// escapes for HTML. Any other is left to decoding.
func imageFieldsV1(v reflect.Value) (reflect.Value, outcome) {
	raw := v.Field(0).Bytes()
	if raw == nil {
		return v, same
	}
	if len(raw) == 0 || string(raw) == "null" {
		return v, unknown
	}
	plain := true
	for _, b := range raw {
		if fieldsV1Special[b] {
			plain = false
			break
		}
	}
	if plain { // no space, nothing escaped: as the server writes field sets
		return v, same
	}
	inString, escaped := false, false
	for _, b := range raw {
		switch {
		case b < 0x20 || b > 0x7e || b == '<' || b == '>' || b == '&':
			return v, unknown
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == ' ':
			return v, unknown
		}
	}
	return v, same
}

// fieldsV1Special are the bytes that need a closer look in a field set.
var fieldsV1Special = func() (t [256]bool) {
	for b := range 256 {
		t[b] = b < 0x20 || b > 0x7e || b == ' ' || b == '<' || b == '>' || b == '&'
	}
	return t
}()

// nullish says, for a type, whether a value of it encodes as null: a nil
// pointer, slice or map, a zero time, a field set without one. A pointer
// to such a value decodes as nil. nil: never.
func nullish(t reflect.Type) func(reflect.Value) bool {
	switch t {
	case timeType, microTimeType:
		return func(v reflect.Value) bool { return timeOf(v).IsZero() }
	case fieldsV1Type:
		return func(v reflect.Value) bool { return v.Field(0).IsNil() }
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		return reflect.Value.IsNil
	}
	return nil
}

func (c *imageCompiler) compilePointer(t reflect.Type) (imageFunc, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok {
		return nil, false
	}
	isNull := nullish(t.Elem())
	if elem == nil && isNull == nil {
		return nil, true
	}
	return func(v reflect.Value) (reflect.Value, outcome) {
		if v.IsNil() {
			return v, same
		}
		e, o := v.Elem(), same
		if elem != nil {
			if e, o = elem(e); o == unknown {
				return v, unknown
			}
		}
		if isNull != nil && isNull(e) {
			return reflect.Zero(t), changed
		}
		if o == same {
			return v, same
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, changed
	}, true
}

func (c *imageCompiler) compileSlice(t reflect.Type) (imageFunc, bool) {
	if t.Elem().Kind() == reflect.Uint8 && !ownJSON(t.Elem()) {
		return nil, true // base64
	}
	elem, ok := c.compile(t.Elem())
	if !ok || elem == nil {
		return nil, ok
	}
	return func(v reflect.Value) (reflect.Value, outcome) {
		var out reflect.Value
		for i := range v.Len() {
			e, o := elem(v.Index(i))
			switch o {
			case unknown:
				return v, unknown
			case changed:
				if !out.IsValid() {
					out = reflect.MakeSlice(t, v.Len(), v.Len())
					reflect.Copy(out, v)
				}
				out.Index(i).Set(e)
			}
		}
		if out.IsValid() {
			return out, changed
		}
		return v, same
	}, true
}

func (c *imageCompiler) compileArray(t reflect.Type) (imageFunc, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok || elem == nil {
		return nil, ok
	}
	return func(v reflect.Value) (reflect.Value, outcome) {
		var out reflect.Value
		for i := range v.Len() {
			e, o := elem(v.Index(i))
			switch o {
			case unknown:
				return v, unknown
			case changed:
				if !out.IsValid() {
					out = reflect.New(t).Elem()
					out.Set(v)
				}
				out.Index(i).Set(e)
			}
		}
		if out.IsValid() {
			return out, changed
		}
		return v, same
	}, true
}

var stringMapType = reflect.TypeFor[map[string]string]()

func (c *imageCompiler) compileMap(t reflect.Type) (imageFunc, bool) {
	if t == stringMapType { // labels and annotations: no reflection
		return func(v reflect.Value) (reflect.Value, outcome) {
			for k, s := range v.Interface().(map[string]string) {
				if !utf8.ValidString(k) || !utf8.ValidString(s) {
					return v, unknown
				}
			}
			return v, same
		}, true
	}
	k := t.Key()
	var checkKey bool
	switch k.Kind() {
	case reflect.String:
		checkKey = true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		return nil, false
	}
	if ownJSON(k) {
		return nil, false
	}
	elem, ok := c.compile(t.Elem())
	if !ok || elem == nil && !checkKey {
		return nil, ok
	}
	return func(v reflect.Value) (reflect.Value, outcome) {
		var keys, values []reflect.Value
		for it := v.MapRange(); it.Next(); {
			if checkKey && !utf8.ValidString(it.Key().String()) {
				return v, unknown
			}
			if elem == nil {
				continue
			}
			e, o := elem(it.Value())
			switch o {
			case unknown:
				return v, unknown
			case changed:
				keys, values = append(keys, it.Key()), append(values, e)
			}
		}
		if keys == nil {
			return v, same
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), it.Value())
		}
		for i, key := range keys {
			out.SetMapIndex(key, values[i])
		}
		return out, changed
	}, true
}

// imageField is the plan for one field of a struct.
type imageField struct {
	index []int
	fn    imageFunc
}

func (c *imageCompiler) compileStruct(t reflect.Type) (imageFunc, bool) {
	fields := jsonfields.Of(t)
	if leaves, ok := leafFields(t); !ok || leaves != len(fields) {
		return nil, false // a field that JSON does not carry
	}
	var plan []imageField
	for _, f := range fields {
		if f.Optional {
			return nil, false
		}
		fn, ok := c.compile(f.Type)
		if !ok {
			return nil, false
		}
		if f.OmitZero && (f.Type.Implements(reflect.TypeFor[interface{ IsZero() bool }]()) ||
			reflect.PointerTo(f.Type).Implements(reflect.TypeFor[interface{ IsZero() bool }]())) {
			return nil, false
		}
		if f.OmitEmpty {
			fn = omitEmpty(f.Type, fn)
		}
		if fn != nil {
			plan = append(plan, imageField{index: f.Index, fn: fn})
		}
	}
	if plan == nil {
		return nil, true
	}
	return func(v reflect.Value) (reflect.Value, outcome) {
		var out reflect.Value
		for _, f := range plan {
			e, o := f.fn(v.FieldByIndex(f.index))
			switch o {
			case unknown:
				return v, unknown
			case changed:
				if !out.IsValid() {
					out = reflect.New(t).Elem()
					out.Set(v)
				}
				out.FieldByIndex(f.index).Set(e)
			}
		}
		if out.IsValid() {
			return out, changed
		}
		return v, same
	}, true
}

// omitEmpty adds to fn what omitempty loses: an empty slice or map comes
// back nil, a float's -0 comes back +0.
func omitEmpty(t reflect.Type, fn imageFunc) imageFunc {
	orSame := func(v reflect.Value) (reflect.Value, outcome) {
		if fn == nil {
			return v, same
		}
		return fn(v)
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Map:
		return func(v reflect.Value) (reflect.Value, outcome) {
			if v.Len() == 0 && !v.IsNil() {
				return reflect.Zero(t), changed
			}
			return orSame(v)
		}
	case reflect.Float32, reflect.Float64:
		return func(v reflect.Value) (reflect.Value, outcome) {
			if f := v.Float(); f == 0 && math.Signbit(f) {
				return reflect.Zero(t), changed
			}
			return orSame(v)
		}
	}
	return fn
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
