package jsonwrite

import (
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/kapi-dev/kapi/internal/jsonimage"
)

// floatAppender writes a float of bits bits as encoding/json does: as
// ECMAScript writes numbers, in exponent form below 1e-6 and from 1e21 up,
// with no leading zero in a negative exponent. NaN and the infinities,
// which json.Marshal refuses, are left to it.
func floatAppender(bits int) appendFunc {
	return func(b []byte, v reflect.Value, _ int) ([]byte, bool) {
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return b, false
		}
		format := byte('f')
		// float32's cutoffs are compared as float32, as encoding/json does.
		if abs := math.Abs(f); abs != 0 {
			if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
				format = 'e'
			}
		}
		b = strconv.AppendFloat(b, f, format, -1, bits)
		if format == 'e' {
			// e-09 is written e-9.
			if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
				b[n-2] = b[n-1]
				b = b[:n-1]
			}
		}
		return b, true
	}
}

// timeAppender writes a kapi time as its MarshalJSON does: null when zero,
// else in UTC in layout. encoding/json writes what that returns as it is:
// it has nothing to compact or escape.
func timeAppender(layout string) appendFunc {
	return func(b []byte, v reflect.Value, _ int) ([]byte, bool) {
		return AppendTime(b, jsonimage.TimeOf(v), layout), true
	}
}

// AppendTime appends t as a kapi time's MarshalJSON writes it: null when
// zero, else a string of t in UTC in layout.
func AppendTime(b []byte, t time.Time, layout string) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, layout)
	return append(b, '"')
}

// appendFieldsV1 writes a kapi.FieldsV1 as json.Marshal writes what its
// MarshalJSON returns: null for no set, else its raw JSON, checked and
// compacted, escaped for HTML. Raw JSON that would pass those unchanged is
// written as it is; any other is left to json.Marshal, which may refuse it.
func appendFieldsV1(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	raw := v.Field(0).Bytes()
	switch {
	case raw == nil:
		return append(b, "null"...), true
	case !jsonimage.RawWrittenAsIs(raw) || !validCompact(raw):
		return b, false
	}
	return append(b, raw...), true
}
