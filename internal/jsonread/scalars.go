package jsonread

import (
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

func decodeString(d *decoder, p unsafe.Pointer) bool {
	switch d.next() {
	case '"':
		s, ok := d.str()
		*(*string)(p) = s
		return ok
	case 'n': // null leaves it as it is
		return d.literal("null")
	}
	return false
}

func decodeBool(d *decoder, p unsafe.Pointer) bool {
	switch d.next() {
	case 't':
		*(*bool)(p) = true
		return d.literal("true")
	case 'f':
		*(*bool)(p) = false
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	return false
}

// integer reads an integer's sign and magnitude; a number with a fraction
// or an exponent, or beyond 64 bits, is the fallback's.
func (d *decoder) integer() (neg bool, mag uint64, ok bool) {
	data, i := d.data, d.i
	if i < len(data) && data[i] == '-' {
		neg = true
		i++
	}
	start := i
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		digit := uint64(data[i] - '0')
		if mag > (1<<64-1-digit)/10 {
			return false, 0, false
		}
		mag = mag*10 + digit
		i++
	}
	if i == start || data[start] == '0' && i > start+1 {
		return false, 0, false
	}
	if i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E') {
		return false, 0, false
	}
	d.i = i
	return neg, mag, true
}

func intDecoder(bits int) decodeFunc {
	limit := uint64(1) << (bits - 1) // the magnitude of the least
	return func(d *decoder, p unsafe.Pointer) bool {
		switch c := d.next(); {
		case c == 'n':
			return d.literal("null")
		case c != '-' && (c < '0' || c > '9'):
			return false
		}
		neg, mag, ok := d.integer()
		if !ok || mag > limit || mag == limit && !neg {
			return false
		}
		if neg {
			mag = -mag // two's complement, as an int64 holds it
		}
		storeBits(p, bits, mag)
		return true
	}
}

func uintDecoder(bits int) decodeFunc {
	limit := uint64(1)<<(bits-1)<<1 - 1 // the greatest
	return func(d *decoder, p unsafe.Pointer) bool {
		switch c := d.next(); {
		case c == 'n':
			return d.literal("null")
		case c < '0' || c > '9':
			return false
		}
		_, n, ok := d.integer()
		if !ok || n > limit {
			return false
		}
		storeBits(p, bits, n)
		return true
	}
}

// storeBits stores the low bits of n, an integer of that many bits, at p.
func storeBits(p unsafe.Pointer, bits int, n uint64) {
	switch bits {
	case 8:
		*(*uint8)(p) = uint8(n)
	case 16:
		*(*uint16)(p) = uint16(n)
	case 32:
		*(*uint32)(p) = uint32(n)
	default:
		*(*uint64)(p) = n
	}
}

// float reads a number as strconv.ParseFloat does; one out of range is
// the fallback's.
func (d *decoder) float(bits int) (float64, bool) {
	start := d.i
	end, ok := jsonskip.Number(d.data, start)
	if !ok {
		return 0, false
	}
	d.i = end
	text := d.data[start:end]
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), bits)
	return f, err == nil
}

func decodeFloat64(d *decoder, p unsafe.Pointer) bool {
	if c := d.next(); c == 'n' {
		return d.literal("null")
	}
	f, ok := d.float(64)
	*(*float64)(p) = f
	return ok
}

func decodeFloat32(d *decoder, p unsafe.Pointer) bool {
	if c := d.next(); c == 'n' {
		return d.literal("null")
	}
	f, ok := d.float(32)
	*(*float32)(p) = float32(f)
	return ok
}

// timeDecoder reads a kapi.Time or MicroTime written as kapi writes them,
// a string of printable ASCII, as their UnmarshalJSON reads it, without
// making a string of it; anything else is the method's.
func timeDecoder(t reflect.Type) decodeFunc {
	method := methodDecoder(t, false)
	micro := t == microTimeType
	return func(d *decoder, p unsafe.Pointer) bool {
		if d.next() != '"' {
			return method(d, p)
		}
		data := d.data
		end := d.i + 1
		for end < len(data) && data[end] >= 0x20 && data[end] <= 0x7e && data[end] != '"' && data[end] != '\\' {
			end++
		}
		if end >= len(data) || data[end] != '"' {
			return method(d, p)
		}
		text := data[d.i+1 : end]
		var v time.Time
		if len(text) > 0 {
			var err error
			// time.Parse keeps no part of its text.
			if v, err = time.Parse(time.RFC3339, unsafe.String(unsafe.SliceData(text), len(text))); err != nil {
				return false
			}
			if y := v.UTC().Year(); y < 0 || y > 9999 {
				return false
			}
			v = v.Local()
		}
		if micro {
			v = v.Truncate(time.Microsecond)
		}
		*(*time.Time)(p) = v // kapi.Time and MicroTime are a time.Time
		d.i = end + 1
		return true
	}
}
