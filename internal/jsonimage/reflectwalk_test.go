package jsonimage

import (
	"math"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// This is the walk Image made by reflect.Value before it was compiled to
// read memory at offsets (kept as it was, its names prefixed "reflect"):
// the oracle the compiled walk is held to (see compiled_test.go).

// reflectImage is Image as it was: see Image.
type reflectImage struct {
	fn reflectFunc // nil: every value is its own image
}

// reflectFunc images one value of a type, depth values down from the one
// imaged. It never changes v, nor anything v points to: a changed image is
// a new value, sharing with v only what is its own image.
type reflectFunc func(v reflect.Value, depth int) (reflect.Value, outcome)

// newReflectImage is New as it was: nil for the types New refuses.
func newReflectImage(t reflect.Type) *reflectImage {
	c := reflectCompiler{seen: map[reflect.Type]*reflectEntry{}}
	fn, ok := c.compile(t)
	if !ok {
		return nil
	}
	return &reflectImage{fn: fn}
}

// Of returns the image of v, a value of the Image's type, and whether it
// could be told. The image is v itself when nothing differs.
func (im *reflectImage) Of(v reflect.Value) (reflect.Value, bool) {
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
func (im *reflectImage) New(v reflect.Value) (reflect.Value, bool) {
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
func (im *reflectImage) Is(v reflect.Value) bool {
	if im.fn == nil {
		return true
	}
	_, o := im.fn(v, 0)
	return o == same
}

type reflectEntry struct {
	fn   reflectFunc
	ok   bool
	done bool
}

type reflectCompiler struct {
	seen map[reflect.Type]*reflectEntry
}

// compile returns t's reflectFunc (nil if every value of t is its own image)
// and whether Image can tell the images of t's values at all.
func (c *reflectCompiler) compile(t reflect.Type) (reflectFunc, bool) {
	if e, ok := c.seen[t]; ok {
		if e.done {
			return e.fn, e.ok
		}
		// A recursive type: its function is known once compiled.
		return func(v reflect.Value, depth int) (reflect.Value, outcome) { return e.fn(v, depth) }, true
	}
	e := &reflectEntry{}
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

func (c *reflectCompiler) compileNew(t reflect.Type) (reflectFunc, bool) {
	switch t {
	case timeType:
		return reflectTime, true
	case microTimeType:
		return reflectMicroTime, true
	case fieldsV1Type:
		return reflectFieldsV1, true
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
		return reflectFloat, true
	case reflect.String:
		return reflectString, true
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

// reflectFloat leaves -0 to decoding: it is its own image, but equal to 0
// for reflect.DeepEqual though written apart (see Is).
func reflectFloat(v reflect.Value, _ int) (reflect.Value, outcome) {
	if f := v.Float(); f == 0 && math.Signbit(f) {
		return v, unknown
	}
	return v, same
}

// reflectString: encoding/json writes invalid UTF-8 as U+FFFD, byte by byte.
func reflectString(v reflect.Value, _ int) (reflect.Value, outcome) {
	if utf8.ValidString(v.String()) {
		return v, same
	}
	return v, unknown
}

// reflectTime and reflectMicroTime image kapi's times.
var (
	reflectTime = reflectTimeImager(func(int) int { return 0 },
		func(t time.Time) reflect.Value { return reflect.ValueOf(kapi.Time{Time: t}) })
	reflectMicroTime = reflectTimeImager(func(ns int) int { return ns / 1000 * 1000 },
		func(t time.Time) reflect.Value { return reflect.ValueOf(kapi.MicroTime{Time: t}) })
)

// reflectTimeImager images a time type that keeps nanos of the nanoseconds and
// wraps a time.Time as wrap does.
func reflectTimeImager(nanos func(int) int, wrap func(time.Time) reflect.Value) reflectFunc {
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

// reflectFieldsV1 says a field set is its own image when json.Marshal writes
// its raw JSON as it is (RawWrittenAsIs); any other is left to decoding.
func reflectFieldsV1(v reflect.Value, _ int) (reflect.Value, outcome) {
	raw := v.Field(0).Bytes()
	if raw == nil || len(raw) > 0 && string(raw) != "null" && RawWrittenAsIs(raw) {
		return v, same
	}
	return v, unknown
}

// nullish says, for a type, whether a value of it encodes as null: a nil
// pointer, slice or map, a zero time, a field set without one. A pointer
// to such a value decodes as nil. nil: never.
func reflectNullish(t reflect.Type) func(reflect.Value) bool {
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

func (c *reflectCompiler) compilePointer(t reflect.Type) (reflectFunc, bool) {
	elem, ok := c.compile(t.Elem())
	if !ok {
		return nil, false
	}
	isNull := reflectNullish(t.Elem())
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
		// Fixed since: what is written null through another pointer.
		if e.Kind() == reflect.Pointer && e.IsNil() {
			return reflect.Zero(t), changed
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, changed
	}, true
}

func (c *reflectCompiler) compileSlice(t reflect.Type) (reflectFunc, bool) {
	if t.Elem().Kind() == reflect.Uint8 && !ownJSON(t.Elem()) {
		return nil, true // base64
	}
	return c.compileElems(t, func(v reflect.Value) reflect.Value {
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		reflect.Copy(out, v)
		return out
	})
}

func (c *reflectCompiler) compileArray(t reflect.Type) (reflectFunc, bool) {
	return c.compileElems(t, func(v reflect.Value) reflect.Value {
		out := reflect.New(t).Elem()
		out.Set(v)
		return out
	})
}

// compileElems images the elements of a slice or array type t; each element
// changed is set on a copy of the value that fresh makes.
func (c *reflectCompiler) compileElems(t reflect.Type, fresh func(reflect.Value) reflect.Value) (reflectFunc, bool) {
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

func (c *reflectCompiler) compileMap(t reflect.Type) (reflectFunc, bool) {
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
type reflectField struct {
	index []int
	fn    reflectFunc
}

func (c *reflectCompiler) compileStruct(t reflect.Type) (reflectFunc, bool) {
	fields := jsonfields.Of(t)
	if leaves, ok := leafFields(t); !ok || leaves != len(fields) {
		return nil, false // a field that JSON does not carry
	}
	var plan []reflectField
	for _, f := range fields {
		if f.Optional || f.OmitZero && jsonfields.Implements(f.Type, isZeroerType) {
			return nil, false
		}
		fn, ok := c.compile(f.Type)
		if !ok {
			return nil, false
		}
		if f.OmitEmpty {
			fn = reflectOmitEmpty(f.Type, fn)
		}
		if fn != nil {
			plan = append(plan, reflectField{index: f.Index, fn: fn})
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
func reflectOmitEmpty(t reflect.Type, fn reflectFunc) reflectFunc {
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

// Oracle is the walk as it was, for the tests of package jsonimage_test.
type Oracle = reflectImage

// NewOracle is newReflectImage, for the tests of package jsonimage_test.
func NewOracle(t reflect.Type) *Oracle { return newReflectImage(t) }
