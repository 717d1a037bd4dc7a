// Package jsonimage tells what decoding the JSON of a Go value gives back:
// the value the server would read from what it stores.
package jsonimage

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
// gives back: the value codec.UnmarshalJSON makes of what json.Marshal
// writes.
//
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
// An Image is made for a type whose values it can predict: see New.
// It is safe for concurrent use.
type Image struct {
	fn imageFunc // nil: every value is its own image
}

// outcome is what imaging one value found.
type outcome uint8

const (
	same    outcome = iota // the value is its own image
	changed                // the image is the value returned
	unknown                // the image cannot be told without decoding
)

// imageFunc images one value of a type, depth values down from the one
// imaged. It never changes v, nor anything v points to: a changed image is
// a new value, sharing with v only what is its own image.
type imageFunc func(v reflect.Value, depth int) (reflect.Value, outcome)

// maxDepth is how deep a value is looked into: a deeper one (a cycle of
// pointers a hook made) is left to decoding, as json.Marshal refuses it.
const maxDepth = 1000

var (
	timeType      = reflect.TypeFor[kapi.Time]()
	microTimeType = reflect.TypeFor[kapi.MicroTime]()
	fieldsV1Type  = reflect.TypeFor[kapi.FieldsV1]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType  = reflect.TypeFor[interface{ IsZero() bool }]()
)

// New returns the Image of t, or nil if a value of t may lose in JSON what
// Image cannot tell: t has an interface (a number comes back a float64), a
// type with JSON or text methods of its own other than kapi's times and
// field sets, a field encoding/json does not see (an unexported field,
// `json:"-"`, a name two fields share), a struct embedded by pointer, an
// omitzero field whose type says when it is zero, or a kind JSON cannot
// hold.
func New(t reflect.Type) *Image {
	c := compiler{seen: map[reflect.Type]*entry{}}
	fn, ok := c.compile(t)
	if !ok {
		return nil
	}
	return &Image{fn: fn}
}

// Of returns the image of v, a value of the Image's type, and whether it
// could be told. The image is v itself when nothing differs.
func (im *Image) Of(v reflect.Value) (reflect.Value, bool) {
	if im.fn == nil {
		return v, true
	}
	switch out, o := im.fn(v, 0); o {
	case same:
		return v, true
	case changed:
		return out, true
	}
	return reflect.Value{}, false
}

// New returns a pointer to a new value that is the image of v, a value of
// the Image's type, and whether the image could be told: Of's image,
// copied when it is v itself, taken as it is when Of made it (a changed
// image is a new value of its own), so that it is copied at most once.
func (im *Image) New(v reflect.Value) (reflect.Value, bool) {
	img, ok := im.Of(v)
	switch {
	case !ok:
		return reflect.Value{}, false
	case img.CanAddr() && (!v.CanAddr() || img.UnsafeAddr() != v.UnsafeAddr()):
		return img.Addr(), true
	}
	p := reflect.New(img.Type())
	p.Elem().Set(img)
	return p, true
}

// Is says whether v, a value of the Image's type, is its own image: what
// decoding its JSON gives, as a decoded value is. Two values that are
// their own images encode alike exactly when they are equal
// (reflect.DeepEqual); a float's -0, which DeepEqual finds equal to 0 but
// JSON writes apart, is therefore not told.
func (im *Image) Is(v reflect.Value) bool {
	if im.fn == nil {
		return true
	}
	_, o := im.fn(v, 0)
	return o == same
}

type entry struct {
	fn   imageFunc
	ok   bool
	done bool
}

type compiler struct {
	seen map[reflect.Type]*entry
}

// ownJSON says whether values of t (or pointers to them) encode or decode
// themselves.
func ownJSON(t reflect.Type) bool {
	return jsonfields.DecodesItself(t) || jsonfields.Implements(t, marshalerType) || jsonfields.Implements(t, textType)
}

// compile returns t's imageFunc (nil if every value of t is its own image)
// and whether Image can tell the images of t's values at all.
func (c *compiler) compile(t reflect.Type) (imageFunc, bool) {
	if e, ok := c.seen[t]; ok {
		if e.done {
			return e.fn, e.ok
		}
		// A recursive type: its function is known once compiled.
		return func(v reflect.Value, depth int) (reflect.Value, outcome) { return e.fn(v, depth) }, true
	}
	e := &entry{}
	c.seen[t] = e
	e.fn, e.ok = c.compileNew(t)
	e.done = true
	if e.fn == nil && e.ok {
		// A recursive use may already hold the indirection.
		e.fn = func(v reflect.Value, _ int) (reflect.Value, outcome) { return v, same }
		return nil, true
	}
	return e.fn, e.ok
}

func (c *compiler) compileNew(t reflect.Type) (imageFunc, bool) {
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
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return nil, true
	case reflect.Float32, reflect.Float64:
		return imageFloat, true
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

// imageFloat leaves -0 to decoding: it is its own image, but equal to 0
// for reflect.DeepEqual though written apart (see Is).
func imageFloat(v reflect.Value, _ int) (reflect.Value, outcome) {
	if f := v.Float(); f == 0 && math.Signbit(f) {
		return v, unknown
	}
	return v, same
}

// imageString: encoding/json writes invalid UTF-8 as U+FFFD, byte by byte.
func imageString(v reflect.Value, _ int) (reflect.Value, outcome) {
	if utf8.ValidString(v.String()) {
		return v, same
	}
	return v, unknown
}

// TimeOf reads the time.Time of v, a kapi.Time or kapi.MicroTime, without
// copying it into an interface where it can be addressed (internal/jsonwrite
// reads times so too).
func TimeOf(v reflect.Value) time.Time {
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

// imageTime and imageMicroTime image kapi's times.
var (
	imageTime = timeImager(func(int) int { return 0 },
		func(t time.Time) reflect.Value { return reflect.ValueOf(kapi.Time{Time: t}) })
	imageMicroTime = timeImager(func(ns int) int { return ns / 1000 * 1000 },
		func(t time.Time) reflect.Value { return reflect.ValueOf(kapi.MicroTime{Time: t}) })
)

// timeImager images a time type that keeps nanos of the nanoseconds and
// wraps a time.Time as wrap does.
func timeImager(nanos func(int) int, wrap func(time.Time) reflect.Value) imageFunc {
	return func(v reflect.Value, _ int) (reflect.Value, outcome) {
		t := TimeOf(v)
		img, ok := timeImage(t, nanos)
		switch {
		case !ok:
			return v, unknown
		case img == t:
			return v, same
		}
		return wrap(img), changed
	}
}

// imageFieldsV1 says a field set is its own image when json.Marshal writes
// its raw JSON as it is (RawWrittenAsIs); any other is left to decoding.
func imageFieldsV1(v reflect.Value, _ int) (reflect.Value, outcome) {
	raw := v.Field(0).Bytes()
	if raw == nil || len(raw) > 0 && string(raw) != "null" && RawWrittenAsIs(raw) {
		return v, same
	}
	return v, unknown
}

// RawWrittenAsIs says whether json.Marshal writes raw, the valid JSON a
// Marshaler returned, as it is: it holds no white space (compacting
// removes it), nothing encoding/json escapes in HTML-safe output (<, >,
// &, U+2028, U+2029) and, to be plain, nothing outside printable ASCII.
func RawWrittenAsIs(raw []byte) bool {
	for _, b := range raw {
		if notAsIs[b] {
			return false
		}
	}
	return true
}

var notAsIs = func() (t [256]bool) {
	for b := range 256 {
		t[b] = b <= ' ' || b > '~' || b == '<' || b == '>' || b == '&'
	}
	return t
}()

// nullish says, for a type, whether a value of it encodes as null: a nil
// pointer, slice or map, a zero time, a field set without one. A pointer
// to such a value decodes as nil. nil: never.
func nullish(t reflect.Type) func(reflect.Value) bool {
	switch t {
	case timeType, microTimeType:
		return func(v reflect.Value) bool { return TimeOf(v).IsZero() }
	case fieldsV1Type:
		return func(v reflect.Value) bool { return v.Field(0).IsNil() }
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		return reflect.Value.IsNil
	}
	return nil
}

func (c *compiler) compilePointer(t reflect.Type) (imageFunc, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok {
		return nil, false
	}
	isNull := nullish(t.Elem())
	if elem == nil && isNull == nil {
		return nil, true
	}
	return func(v reflect.Value, depth int) (reflect.Value, outcome) {
		if v.IsNil() {
			return v, same
		}
		if depth >= maxDepth {
			return v, unknown
		}
		// What the pointer points to decides whether it is written null:
		// a time in year 1 with a fraction is not, though its image is zero.
		if isNull != nil && isNull(v.Elem()) {
			return reflect.Zero(t), changed
		}
		if elem == nil {
			return v, same
		}
		e, o := elem(v.Elem(), depth+1)
		if o != changed {
			return v, o
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, changed
	}, true
}

func (c *compiler) compileSlice(t reflect.Type) (imageFunc, bool) {
	if t.Elem().Kind() == reflect.Uint8 && !ownJSON(t.Elem()) {
		return nil, true // base64
	}
	return c.compileElems(t, func(v reflect.Value) reflect.Value {
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		reflect.Copy(out, v)
		return out
	})
}

func (c *compiler) compileArray(t reflect.Type) (imageFunc, bool) {
	return c.compileElems(t, func(v reflect.Value) reflect.Value {
		out := reflect.New(t).Elem()
		out.Set(v)
		return out
	})
}

// compileElems images the elements of a slice or array type t; each element
// changed is set on a copy of the value that fresh makes.
func (c *compiler) compileElems(t reflect.Type, fresh func(reflect.Value) reflect.Value) (imageFunc, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok || elem == nil {
		return nil, ok
	}
	return func(v reflect.Value, depth int) (reflect.Value, outcome) {
		if depth >= maxDepth && v.Len() > 0 {
			return v, unknown
		}
		var out reflect.Value
		for i := range v.Len() {
			e, o := elem(v.Index(i), depth+1)
			switch o {
			case unknown:
				return v, unknown
			case changed:
				if !out.IsValid() {
					out = fresh(v)
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

func (c *compiler) compileMap(t reflect.Type) (imageFunc, bool) {
	if t == stringMapType { // labels and annotations: no reflection
		return func(v reflect.Value, _ int) (reflect.Value, outcome) {
			for k, s := range v.Interface().(map[string]string) {
				if !utf8.ValidString(k) || !utf8.ValidString(s) {
					return v, unknown
				}
			}
			return v, same
		}, true
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
	return func(v reflect.Value, depth int) (reflect.Value, outcome) {
		if depth >= maxDepth && v.Len() > 0 {
			return v, unknown
		}
		var keys, values []reflect.Value
		for it := v.MapRange(); it.Next(); {
			if checkKey && !utf8.ValidString(it.Key().String()) {
				return v, unknown
			}
			if elem == nil {
				continue
			}
			e, o := elem(it.Value(), depth+1)
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

// field is the plan for one field of a struct.
type field struct {
	index []int
	fn    imageFunc
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
			plan = append(plan, field{index: f.Index, fn: fn})
		}
	}
	if plan == nil {
		return nil, true
	}
	return func(v reflect.Value, depth int) (reflect.Value, outcome) {
		var out reflect.Value
		for _, f := range plan {
			e, o := f.fn(v.FieldByIndex(f.index), depth+1)
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
	orSame := func(v reflect.Value, depth int) (reflect.Value, outcome) {
		if fn == nil {
			return v, same
		}
		return fn(v, depth)
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Map:
		return func(v reflect.Value, depth int) (reflect.Value, outcome) {
			if v.Len() == 0 && !v.IsNil() {
				return reflect.Zero(t), changed
			}
			return orSame(v, depth)
		}
	case reflect.Float32, reflect.Float64:
		return func(v reflect.Value, depth int) (reflect.Value, outcome) {
			if f := v.Float(); f == 0 && math.Signbit(f) {
				return reflect.Zero(t), changed
			}
			return orSame(v, depth)
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
