// Package jsonimage tells what decoding the JSON of a Go value gives back:
// the value the server would read from what it stores.
package jsonimage

import (
	"encoding"
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"time"
	"unicode/utf8"
	"unsafe"

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
// An Image is made for a type whose values it can predict: see New. It
// walks a value by a plan compiled once for the type, reading the value's
// memory at offsets the plan holds, as internal/jsonread decodes: a write
// images its object, and reflect.Value's per-field lookups were most of
// that cost.
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

// imageFunc images the value of its type at p, depth values down from the
// one imaged. It never changes the value, nor anything it points to. A
// changed image is img: a pointer to a new value of the type, sharing with
// the value only what is its own image, or nil where the image is the
// type's zero value.
type imageFunc func(p unsafe.Pointer, depth int) (img unsafe.Pointer, o outcome)

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
	return &Image{typ: t, fn: fn}
}

// Of returns the image of v, a value of the Image's type, and whether it
// could be told. The image is v itself when nothing differs.
func (im *Image) Of(v reflect.Value) (reflect.Value, bool) {
	if im.fn == nil {
		return v, true
	}
	switch img, o := im.image(v); o {
	case same:
		return v, true
	case changed:
		return im.value(img).Elem(), true
	}
	return reflect.Value{}, false
}

// New returns a pointer to a new value that is the image of v, a value of
// the Image's type, and whether the image could be told: Of's image,
// copied when it is v itself, taken as it is when Of made it (a changed
// image is a new value of its own), so that it is copied at most once.
func (im *Image) New(v reflect.Value) (reflect.Value, bool) {
	if im.fn != nil {
		switch img, o := im.image(v); o {
		case unknown:
			return reflect.Value{}, false
		case changed:
			return im.value(img), true
		}
	}
	p := reflect.New(im.typ)
	p.Elem().Set(v)
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
	_, o := im.image(v)
	return o == same
}

// image images v where it is, or, if it cannot be addressed, a copy of it.
func (im *Image) image(v reflect.Value) (unsafe.Pointer, outcome) {
	if v.CanAddr() {
		return im.fn(v.Addr().UnsafePointer(), 0)
	}
	p := reflect.New(im.typ)
	p.Elem().Set(v)
	return im.fn(p.UnsafePointer(), 0)
}

// value is a pointer to img, a changed image: a new zero value for nil.
func (im *Image) value(img unsafe.Pointer) reflect.Value {
	if img == nil {
		return reflect.New(im.typ)
	}
	return reflect.NewAt(im.typ, img)
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
		return func(p unsafe.Pointer, depth int) (unsafe.Pointer, outcome) { return e.fn(p, depth) }, true
	}
	e := &entry{}
	c.seen[t] = e
	e.fn, e.ok = c.compileNew(t)
	e.done = true
	if e.fn == nil && e.ok {
		// A recursive use may already hold the indirection.
		e.fn = func(unsafe.Pointer, int) (unsafe.Pointer, outcome) { return nil, same }
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
	case reflect.Float32:
		return imageFloat32, true
	case reflect.Float64:
		return imageFloat64, true
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

// imageFloat32 and imageFloat64 leave -0 to decoding: it is its own
// image, but equal to 0 for reflect.DeepEqual though written apart (see
// Is).
func imageFloat32(p unsafe.Pointer, _ int) (unsafe.Pointer, outcome) {
	if f := *(*float32)(p); f == 0 && math.Signbit(float64(f)) {
		return nil, unknown
	}
	return nil, same
}

func imageFloat64(p unsafe.Pointer, _ int) (unsafe.Pointer, outcome) {
	if f := *(*float64)(p); f == 0 && math.Signbit(f) {
		return nil, unknown
	}
	return nil, same
}

// imageString: encoding/json writes invalid UTF-8 as U+FFFD, byte by byte.
func imageString(p unsafe.Pointer, _ int) (unsafe.Pointer, outcome) {
	if utf8.ValidString(*(*string)(p)) {
		return nil, same
	}
	return nil, unknown
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
func imageTime(p unsafe.Pointer, _ int) (unsafe.Pointer, outcome) {
	img, o := timeOutcome((*kapi.Time)(p).Time, func(int) int { return 0 })
	if o != changed || img == (time.Time{}) {
		return nil, o
	}
	return unsafe.Pointer(&kapi.Time{Time: img}), o
}

func imageMicroTime(p unsafe.Pointer, _ int) (unsafe.Pointer, outcome) {
	img, o := timeOutcome((*kapi.MicroTime)(p).Time, func(ns int) int { return ns / 1000 * 1000 })
	if o != changed || img == (time.Time{}) {
		return nil, o
	}
	return unsafe.Pointer(&kapi.MicroTime{Time: img}), o
}

// timeOutcome images t, the time.Time of a time type that keeps nanos of
// the nanoseconds.
func timeOutcome(t time.Time, nanos func(int) int) (time.Time, outcome) {
	img, ok := timeImage(t, nanos)
	switch {
	case !ok:
		return img, unknown
	case img == t:
		return img, same
	}
	return img, changed
}

// imageFieldsV1 says a field set is its own image when json.Marshal writes
// its raw JSON as it is (RawWrittenAsIs); any other is left to decoding.
func imageFieldsV1(p unsafe.Pointer, _ int) (unsafe.Pointer, outcome) {
	raw := (*kapi.FieldsV1)(p).Raw
	if raw == nil || len(raw) > 0 && string(raw) != "null" && RawWrittenAsIs(raw) {
		return nil, same
	}
	return nil, unknown
}

// RawWrittenAsIs says whether json.Marshal writes raw, the valid JSON a
// Marshaler returned, as it is: it holds no white space (compacting
// removes it), nothing encoding/json escapes in HTML-safe output (<, >,
// &, U+2028, U+2029) and, to be plain, nothing outside printable ASCII.
//
// Every write that records managedFields asks this of each field set, a
// few hundred bytes or more: eight bytes are tested at a time
// (notAsIsWord), the rest one by one.
func RawWrittenAsIs(raw []byte) bool {
	for len(raw) >= 8 {
		if notAsIsWord(binary.LittleEndian.Uint64(raw)) {
			return false
		}
		raw = raw[8:]
	}
	for _, b := range raw {
		if notAsIs[b] {
			return false
		}
	}
	return true
}

// notAsIsWord says whether any of the eight bytes of w is notAsIs: below
// '!' (space and control characters), above '~', or one of '<', '>', '&'
// ('<' and '>' are the two bytes that are '>' once bit 1 is set). Each
// test is exact for the word as a whole (a borrow or carry can mark a
// byte wrongly only beside a byte that matches).
func notAsIsWord(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (w - ones*'!') &^ w & highs
	above := ((w + ones*(0x7f-'~')) | w) & highs
	return below|above|zeroByte((w|ones*2)^(ones*'>'))|zeroByte(w^(ones*'&')) != 0
}

// zeroByte is non-zero when a byte of v is zero.
func zeroByte(v uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (v - ones) &^ v & highs
}

var notAsIs = func() (t [256]bool) {
	for b := range 256 {
		t[b] = b <= ' ' || b > '~' || b == '<' || b == '>' || b == '&'
	}
	return t
}()
