// Package fuzzfill makes Go values of any type from a fuzzer's bytes, for
// the tests that hold kapi's reflective JSON code (internal/jsonimage,
// internal/jsonwrite) to encoding/json. Only tests import it.
package fuzzfill

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/kapi-dev/kapi"
)

// Choices are the values a Filler picks from.
type Choices struct {
	Strings    []string  // valid UTF-8
	BadStrings []string  // not UTF-8: one string in 64 is one of them
	Floats     []float64 // finite
	Raw        [][]byte  // what a FieldsV1 holds
	// Odd adds what only an encoder meets, never a decoded object: NaN
	// and -Inf, the extreme 64-bit integers, uintptrs, interfaces,
	// json.Number (from Numbers) and json.RawMessage, time.Time, and maps
	// of 19 entries.
	Odd     bool
	Numbers []string
}

// Filler fills values from data, one choice a byte, then zeros once data
// runs out.
type Filler struct {
	data  []byte
	depth int
	c     *Choices
}

// New returns a Filler of data choosing among c.
func New(data []byte, c *Choices) *Filler { return &Filler{data: data, c: c} }

// Input fills data with the bytes of a random stream: inputs for a test
// that runs a fuzz target's check many times without the fuzzer.
func Input(data []byte, seed, stream uint64) {
	rng := rand.New(rand.NewPCG(seed, stream))
	for j := range data {
		data[j] = byte(rng.Uint32())
	}
}

// Byte is the next byte of the input.
func (f *Filler) Byte() byte {
	if len(f.data) == 0 {
		return 0
	}
	b := f.data[0]
	f.data = f.data[1:]
	return b
}

// Rare says yes one time in n.
func (f *Filler) Rare(n byte) bool { return f.Byte()%n == 0 }

var (
	now   = time.Now()
	zones = []*time.Location{time.UTC, time.Local, time.FixedZone("east", 5*3600+1800), time.FixedZone("west", -7*3600)}
)

// Time is a time as a client or a clock makes them, and some that JSON
// does not give back as they are.
func (f *Filler) Time() time.Time {
	switch b := f.Byte(); {
	case b < 64:
		return time.Time{}
	case b == 64:
		return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) // written, not read back
	case b == 65:
		return time.Date(0, 1, 1, 0, 30, 0, 0, time.FixedZone("x", 3600)) // year -1 in UTC
	case b == 66:
		return time.Date(1, 1, 1, 0, 0, 0, 500_000_500, time.UTC) // not zero, its image is
	case b < 96:
		return now // a monotonic reading, nanoseconds
	}
	sec := int64(binary.LittleEndian.Uint32([]byte{f.Byte(), f.Byte(), f.Byte(), f.Byte()}))
	ns := int64(f.Byte()) * 3_906_251 % 1_000_000_000
	if f.Byte()%2 == 0 {
		ns = ns / 1000 * 1000
	}
	return time.Unix(sec, ns).In(zones[int(f.Byte())%len(zones)])
}

// Fill sets v, which is settable, to a value of its type: nil pointers,
// slices and maps among others, bounded in depth.
func (f *Filler) Fill(v reflect.Value) {
	f.depth++
	defer func() { f.depth-- }()
	if f.special(v) {
		return
	}
	c, deep := f.c, f.depth > 6
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.Byte()%2 == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := int64(int8(f.Byte()))
		if c.Odd && n == -128 && v.Type().Bits() == 64 {
			n = math.MinInt64
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if v.Kind() == reflect.Uintptr && !c.Odd {
			return
		}
		n := uint64(f.Byte())
		if c.Odd && n == 255 && v.Type().Bits() == 64 {
			n = math.MaxUint64
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		switch b := f.Byte(); {
		case c.Odd && b == 255:
			v.SetFloat(math.NaN())
		case c.Odd && b == 254:
			v.SetFloat(math.Inf(-1))
		default:
			v.SetFloat(c.Floats[int(b)%len(c.Floats)])
		}
	case reflect.String:
		b := int(f.Byte())
		if b < 4 {
			v.SetString(c.BadStrings[b%len(c.BadStrings)])
			return
		}
		v.SetString(c.Strings[b%len(c.Strings)])
	case reflect.Interface:
		if c.Odd && f.Rare(4) {
			v.Set(reflect.ValueOf("held"))
		}
	case reflect.Pointer:
		if deep || f.Byte()%3 == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		f.Fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		n := int(f.Byte() % 4)
		if n == 0 || deep {
			return
		}
		s := reflect.MakeSlice(v.Type(), n-1, n-1)
		for i := range n - 1 {
			f.Fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			f.Fill(v.Index(i))
		}
	case reflect.Map:
		n := int(f.Byte() % 4)
		if n == 0 || deep {
			return
		}
		if c.Odd && n == 3 {
			n = 20 // past what an encoder sorts on the stack
		}
		m := reflect.MakeMap(v.Type())
		for range n - 1 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.Fill(k)
			f.Fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.Fill(v.Field(i))
			}
		}
	}
}

// special fills the types that are not made of their kind's values, and
// says whether v was one.
func (f *Filler) special(v reflect.Value) bool {
	switch v.Type() {
	case reflect.TypeFor[kapi.Time]():
		v.Set(reflect.ValueOf(kapi.Time{Time: f.Time()}))
	case reflect.TypeFor[kapi.MicroTime]():
		v.Set(reflect.ValueOf(kapi.MicroTime{Time: f.Time()}))
	case reflect.TypeFor[kapi.FieldsV1]():
		raw := f.c.Raw[int(f.Byte())%len(f.c.Raw)]
		if raw != nil {
			raw = append([]byte{}, raw...)
		}
		v.Set(reflect.ValueOf(kapi.FieldsV1{Raw: raw}))
	case reflect.TypeFor[time.Time]():
		if !f.c.Odd {
			return false
		}
		v.Set(reflect.ValueOf(f.Time()))
	case reflect.TypeFor[json.Number]():
		if !f.c.Odd {
			return false
		}
		if f.Rare(4) {
			v.SetString(f.c.Numbers[int(f.Byte())%len(f.c.Numbers)])
		}
	case reflect.TypeFor[json.RawMessage]():
		if !f.c.Odd {
			return false
		}
		if f.Rare(4) {
			v.SetBytes([]byte(`{"a": 1}`))
		}
	default:
		return false
	}
	return true
}
