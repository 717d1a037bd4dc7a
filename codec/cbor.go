package codec

import (
	"fmt"
	"math"
)

// CBOR (RFC 8949) is made from the JSON kapi stores, and read back into JSON,
// so that field validation and decoding into Go types stay one JSON path.
// Transcoding directly is why this is not github.com/fxamacker/cbor/v2, which
// can only go through a Go value and costs 10 to 40 times as much here
// (BenchmarkCBORLibrary, and the README's CBOR section); the end-to-end
// module's FuzzCBORMatchesKubernetes holds both to the same documents.
//
// The CBOR is what Kubernetes' serializer writes (apimachinery
// pkg/runtime/serializer/cbor/internal/modes/encode.go), but for:
//
//   - Map entries keep the JSON's order; Kubernetes sorts keys bytewise
//     (SortBytewiseLexical), and its EncodeNondeterministic mode shuffles them.
//     Decoders do not care.
//   - A number is an integer when the JSON has an integer literal that fits
//     int64 or uint64, even for a Go float64 field whose value is integral:
//     json.Marshal writes 1.0 as "1", which becomes the integer 1 here where
//     Kubernetes writes the float16 1.0. Kubernetes' decoder takes an integer
//     into a float64 field, but refuses one beyond int64 into interface{}
//     (IntDecConvertSignedOrFail): so a float64 of 2^63 or more, below 1e21,
//     held in an interface{} or decoded as unstructured, fails there.
//     Other numbers are floats in the shortest of float16, float32 and float64
//     that holds the value exactly, as Kubernetes writes them (ShortestFloat16).
//
// Every JSON string, key or value, is a CBOR byte string holding its UTF-8,
// as Kubernetes writes Go strings (StringToByteString, FieldNameToByteString).
// That is what makes []byte fields work: their JSON is a base64 string, and
// Kubernetes' decoder base64-decodes an untagged byte string into a []byte
// (ByteStringExpectedBase64) but refuses a text string there. Into a string
// field it takes the bytes as they are.
//
// Reading, cborToJSON accepts what Kubernetes' decoder accepts
// (internal/modes/decode.go), but for: a map may repeat a key (Kubernetes
// refuses the whole body; here the JSON keeps both, so the caller's
// duplicate-field check names them); integers beyond int64 become their exact
// decimal (Kubernetes refuses them into interface{}, and those below -2^63 into
// any Go type); the only tags accepted are 55799 (self-described CBOR) and 21,
// 22 and 23 (expected later encoding), where Kubernetes also takes tags 0 and
// 1 (date/time) and lets any other tag but 2 and 3 (bignums) stand for its
// content.

// cborSelfDescribed is the 3-byte tag 55799 prefix Kubernetes writes first.
var cborSelfDescribed = []byte{0xd9, 0xd9, 0xf7}

// maxCBORDepth bounds the nesting of arrays and maps, both ways. It is
// Kubernetes' MaxNestedLevels for CBOR, and encoding/json's limit, 10000:
// Kubernetes chose it to match JSON (internal/modes/decode.go).
const maxCBORDepth = 10000

// CBOR major types, shifted into place, and the simple values used.
const (
	cborUint   = 0 << 5
	cborNegint = 1 << 5
	cborBytes  = 2 << 5
	cborText   = 3 << 5
	cborArray  = 4 << 5
	cborMap    = 5 << 5
	cborTag    = 6 << 5
	cborSimple = 7 << 5

	cborFalse   = 0xf4
	cborTrue    = 0xf5
	cborNil     = 0xf6
	cborFloat16 = 0xf9
	cborFloat32 = 0xfa
	cborFloat64 = 0xfb
	cborBreak   = 0xff

	// additional information 31: indefinite length, or break for major type 7
	cborIndefinite = 31

	// tag numbers: expected later encoding (RFC 8949 3.4.5.2), self-described CBOR
	cborTagBase64URL     = 21
	cborTagBase64        = 22
	cborTagBase16        = 23
	cborTagSelfDescribed = 55799
)

// cborMinNegint is the magnitude of the least integer of major type 1,
// -2^64, whose argument 2^64-1 cannot be incremented in a uint64.
const cborMinNegint = "18446744073709551616"

// cborError is what is wrong with a document, and at which byte offset.
type cborError struct {
	op     string // "JSON to CBOR" or "CBOR to JSON"
	msg    string
	offset int
}

func (e *cborError) Error() string {
	return fmt.Sprintf("codec: %s: %s at byte offset %d", e.op, e.msg, e.offset)
}

// appendCBORHead appends the head of a data item of a major type with its
// argument, in its shortest form.
func appendCBORHead(dst []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(dst, major|byte(n))
	case n <= math.MaxUint8:
		return append(dst, major|24, byte(n))
	case n <= math.MaxUint16:
		return append(dst, major|25, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(dst, major|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(dst, major|27, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32),
		byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// cborHeadLen is the length of the shortest head with argument n.
func cborHeadLen(n int) int {
	switch {
	case n < 24:
		return 1
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	case uint64(n) <= math.MaxUint32:
		return 5
	}
	return 9
}

// appendCBORFloat appends f as the shortest of float16, float32 and float64
// that holds it exactly, as Kubernetes' ShortestFloat16 mode does. f is
// finite.
func appendCBORFloat(dst []byte, f float64) []byte {
	f32 := float32(f)
	if float64(f32) != f {
		b := math.Float64bits(f)
		return append(dst, cborFloat64, byte(b>>56), byte(b>>48), byte(b>>40), byte(b>>32),
			byte(b>>24), byte(b>>16), byte(b>>8), byte(b))
	}
	if h, ok := float16Bits(f32); ok {
		return append(dst, cborFloat16, byte(h>>8), byte(h))
	}
	b := math.Float32bits(f32)
	return append(dst, cborFloat32, byte(b>>24), byte(b>>16), byte(b>>8), byte(b))
}

// float16Bits gives the IEEE 754 half-precision bits of a finite f when
// they hold it exactly, subnormals included.
func float16Bits(f float32) (uint16, bool) {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	if b&0x7fffffff == 0 {
		return sign, true
	}
	exp := int(b>>23&0xff) - 127
	mant := b & 0x7fffff
	switch {
	case exp >= -14 && exp <= 15: // normal in half precision: 10 bits of mantissa
		if mant&0x1fff != 0 {
			return 0, false
		}
		return sign | uint16(exp+15)<<10 | uint16(mant>>13), true
	case exp >= -24 && exp < -14: // subnormal in half precision: a multiple of 2^-24
		sig := mant | 1<<23 // the value is sig * 2^(exp-23)
		shift := uint(-exp - 1)
		if sig&(1<<shift-1) != 0 {
			return 0, false
		}
		return sign | uint16(sig>>shift), true
	}
	return 0, false
}

// float16Value is the value of IEEE 754 half-precision bits.
func float16Value(h uint16) float64 {
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	var f float64
	switch exp {
	case 0:
		f = math.Ldexp(mant, -24)
	case 0x1f:
		if mant == 0 {
			f = math.Inf(1)
		} else {
			f = math.NaN()
		}
	default:
		f = math.Ldexp(mant+1024, exp-25)
	}
	if h&0x8000 != 0 {
		f = -f
	}
	return f
}

// # JSON to CBOR
