package codec

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/internal/jsonskip"
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

// appendCBOR appends to dst the CBOR encoding of one JSON value (a complete, valid JSON
// document as encoding/json writes it; whitespace between tokens is allowed). Objects
// become maps in the JSON's key order, duplicates kept; arrays become arrays; strings,
// keys too, become byte strings of their UTF-8 (as Kubernetes writes Go strings; a JSON
// string with invalid UTF-8 or a lone surrogate escape gets U+FFFD for it, as
// encoding/json decodes it); true, false and null the simple values. An integer literal
// (no '.', 'e', 'E') that fits int64 or uint64 becomes a CBOR integer, "-0" the integer
// 0; any other number a float in the shortest of float16, float32 and float64 that holds
// its float64 value exactly (a number beyond float64's range is an error). Heads are in
// their shortest form, lengths definite. No tag is written: the caller prefixes
// cborSelfDescribed where a whole body starts.
//
// On error, dst is returned with its length as it was (bytes beyond it may have been
// written), with an error naming the byte offset in jsonDoc.
func appendCBOR(dst, jsonDoc []byte) ([]byte, error) {
	e := jsonToCBORs.Get().(*jsonToCBOR)
	defer e.release()
	e.in = jsonDoc
	// CBOR is shorter than the JSON it comes from but for short floats.
	out, err := e.document(slices.Grow(dst, len(jsonDoc)))
	if err != nil {
		return dst, err
	}
	return e.fixHeads(out), nil
}

var jsonToCBORs = sync.Pool{New: func() any { return new(jsonToCBOR) }}

// release puts e back in its pool, unless it grew large.
func (e *jsonToCBOR) release() {
	if cap(e.stack) > 1<<10 || cap(e.longHeads) > 1<<10 || cap(e.scratch) > 64<<10 {
		return
	}
	*e = jsonToCBOR{stack: e.stack[:0], longHeads: e.longHeads[:0], scratch: e.scratch[:0]}
	jsonToCBORs.Put(e)
}

// jsonToCBOR is the state of one appendCBOR. The output is not part of it:
// it is passed along and returned, so that appending to it writes no
// pointer to the heap.
type jsonToCBOR struct {
	in  []byte
	pos int
	// stack holds the open objects and arrays, innermost last.
	stack []jsonContainer
	// longHeads are the containers whose head needs more than the one byte
	// kept for it, made room for once at the end (fixHeads).
	longHeads []cborLongHead
	// scratch holds a string being unescaped.
	scratch []byte
}

type jsonContainer struct {
	head   int // offset in the output of its one-byte head
	count  int // of members or elements so far
	object bool
}

type cborLongHead struct {
	at    int // offset in the output of the one byte kept for the head
	major byte
	count int
}

func (e *jsonToCBOR) errorf(offset int, format string, args ...any) error {
	return &cborError{op: "JSON to CBOR", msg: fmt.Sprintf(format, args...), offset: offset}
}

func (e *jsonToCBOR) skipSpace() {
	for e.pos < len(e.in) {
		switch e.in[e.pos] {
		case ' ', '\t', '\n', '\r':
			e.pos++
		default:
			return
		}
	}
}

// unexpected is the error for the byte at pos, or for the end of input.
func (e *jsonToCBOR) unexpected(what string) error {
	if e.pos >= len(e.in) {
		return e.errorf(e.pos, "unexpected end of JSON input %s", what)
	}
	return e.errorf(e.pos, "invalid character %q %s", e.in[e.pos], what)
}

// document reads the JSON value, without recursion: containers are on e.stack.
func (e *jsonToCBOR) document(out []byte) ([]byte, error) {
	var err error
	for {
		// A value.
		e.skipSpace()
		if e.pos >= len(e.in) {
			return out, e.unexpected("looking for a value")
		}
		switch c := e.in[e.pos]; c {
		case '{', '[':
			if len(e.stack) == maxCBORDepth {
				return out, e.errorf(e.pos, "nesting deeper than %d", maxCBORDepth)
			}
			e.pos++
			e.push(jsonContainer{head: len(out), object: c == '{'})
			out = append(out, 0)
			e.skipSpace()
			if e.pos < len(e.in) && e.in[e.pos] == c+2 { // '}' or ']'
				e.pos++
				e.close(out)
				break
			}
			if c == '{' {
				if out, err = e.key(out); err != nil {
					return out, err
				}
			}
			continue
		case '"':
			e.pos++
			if out, err = e.str(out); err != nil {
				return out, err
			}
		case 't':
			if out, err = e.literal(out, "true", cborTrue); err != nil {
				return out, err
			}
		case 'f':
			if out, err = e.literal(out, "false", cborFalse); err != nil {
				return out, err
			}
		case 'n':
			if out, err = e.literal(out, "null", cborNil); err != nil {
				return out, err
			}
		default:
			if c != '-' && !jsonDigit(c) {
				return out, e.unexpected("looking for a value")
			}
			if out, err = e.number(out); err != nil {
				return out, err
			}
		}

		// After a value: a comma, or the end of containers, or of the document.
		for {
			if len(e.stack) == 0 {
				e.skipSpace()
				if e.pos < len(e.in) {
					return out, e.unexpected("after top-level value")
				}
				return out, nil
			}
			top := &e.stack[len(e.stack)-1]
			top.count++
			e.skipSpace()
			if e.pos >= len(e.in) {
				return out, e.unexpected("in an object or array")
			}
			c := e.in[e.pos]
			if c == ',' {
				e.pos++
				if top.object {
					if out, err = e.key(out); err != nil {
						return out, err
					}
				}
				break
			}
			if c == '}' && top.object || c == ']' && !top.object {
				e.pos++
				e.close(out)
				continue
			}
			return out, e.unexpected("after a value in an object or array")
		}
	}
}

// push opens a container. (Not append: reslicing within capacity writes no
// pointer.)
func (e *jsonToCBOR) push(c jsonContainer) {
	if len(e.stack) == cap(e.stack) {
		e.stack = append(e.stack, c)
		return
	}
	e.stack = e.stack[:len(e.stack)+1]
	e.stack[len(e.stack)-1] = c
}

// close ends the innermost container, writing its head in out.
func (e *jsonToCBOR) close(out []byte) {
	top := e.stack[len(e.stack)-1]
	e.stack = e.stack[:len(e.stack)-1]
	major := byte(cborArray)
	if top.object {
		major = cborMap
	}
	if top.count < 24 {
		out[top.head] = major | byte(top.count)
		return
	}
	out[top.head] = major | 24
	e.longHeads = append(e.longHeads, cborLongHead{at: top.head, major: major, count: top.count})
}

// fixHeads makes room for the heads longer than one byte, moving each byte
// of out at most once.
func (e *jsonToCBOR) fixHeads(out []byte) []byte {
	if len(e.longHeads) == 0 {
		return out
	}
	// Containers close inside out; heads are needed in order of offset.
	slices.SortFunc(e.longHeads, func(a, b cborLongHead) int { return a.at - b.at })
	grow := 0
	for _, h := range e.longHeads {
		grow += cborHeadLen(h.count) - 1
	}
	end := len(out)
	out = slices.Grow(out, grow)[:end+grow]
	for i := len(e.longHeads) - 1; i >= 0; i-- {
		h := e.longHeads[i]
		// Bytes after h.at move by the growth of heads up to and including h.
		copy(out[h.at+1+grow:], out[h.at+1:end])
		grow -= cborHeadLen(h.count) - 1
		// Appending to an empty slice of out writes in place: the room is there.
		appendCBORHead(out[h.at+grow:h.at+grow], h.major, uint64(h.count))
		end = h.at
	}
	return out
}

// key reads a member name and its colon.
func (e *jsonToCBOR) key(out []byte) ([]byte, error) {
	e.skipSpace()
	if e.pos >= len(e.in) || e.in[e.pos] != '"' {
		return out, e.unexpected("looking for the beginning of an object key string")
	}
	e.pos++
	out, err := e.str(out)
	if err != nil {
		return out, err
	}
	e.skipSpace()
	if e.pos >= len(e.in) || e.in[e.pos] != ':' {
		return out, e.unexpected("after object key")
	}
	e.pos++
	return out, nil
}

func (e *jsonToCBOR) literal(out []byte, word string, item byte) ([]byte, error) {
	if len(e.in)-e.pos < len(word) || string(e.in[e.pos:e.pos+len(word)]) != word {
		return out, e.errorf(e.pos, "invalid literal, expected %q", word)
	}
	e.pos += len(word)
	return append(out, item), nil
}

// jsonStringStop marks the bytes that end the fast scan of a JSON string:
// the quote, the backslash, control characters and non-ASCII bytes.
var jsonStringStop = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf
	}
	return t
}()

// Bytes eight at a time, in a uint64 (SWAR): swarLess and swarEqual set the
// high bit of the bytes that are so. The lowest bit set is exact; above it,
// a borrow may set more, so only the first match counts.
const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// swarLess is set for the bytes of x below n (n <= 0x80).
func swarLess(x uint64, n byte) uint64 { return (x - swarOnes*uint64(n)) &^ x & swarHigh }

// swarEqual is set for the bytes of x equal to c.
func swarEqual(x uint64, c byte) uint64 {
	y := x ^ swarOnes*uint64(c)
	return (y - swarOnes) &^ y & swarHigh
}

// jsonPlainPrefix is how many bytes s starts with that are none of the
// bytes jsonStringStop marks, counted eight at a time: up to the first such
// byte, or to the last len(s)%8 bytes, which it does not look at.
func jsonPlainPrefix(s []byte) int {
	i := 0
	for ; len(s)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if m := swarLess(x, 0x20) | swarEqual(x, '"') | swarEqual(x, '\\') | x&swarHigh; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	return i
}

// str reads a string whose opening quote is before e.pos and writes it as
// a byte string.
func (e *jsonToCBOR) str(out []byte) ([]byte, error) {
	in := e.in
	start := e.pos
	ascii := true
	for i := start; ; i++ {
		// jsonPlainPrefix, by hand: the call costs more than short strings.
		for ; len(in)-i >= 8; i += 8 {
			x := binary.LittleEndian.Uint64(in[i:])
			if m := swarLess(x, 0x20) | swarEqual(x, '"') | swarEqual(x, '\\') | x&swarHigh; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
		}
		if i >= len(in) {
			break
		}
		c := in[i]
		if !jsonStringStop[c] {
			continue
		}
		switch {
		case c == '"':
			s := in[start:i]
			if !ascii && !utf8.Valid(s) {
				return e.unquoted(out, start)
			}
			e.pos = i + 1
			return append(appendCBORHead(out, cborBytes, uint64(len(s))), s...), nil
		case c == '\\':
			return e.unquoted(out, start)
		case c < 0x20:
			return out, e.errorf(i, "invalid control character %q in string literal", c)
		}
		ascii = false
	}
	return out, e.errorf(len(in), "unexpected end of JSON input in string literal")
}

// unquoted writes the string starting at start, which has escapes or
// invalid UTF-8, as encoding/json decodes it: invalid bytes and lone
// surrogates become U+FFFD.
func (e *jsonToCBOR) unquoted(out []byte, start int) ([]byte, error) {
	in := e.in
	b := e.scratch[:0]
	defer func() { e.scratch = b }()
	for i := start; i < len(in); {
		n := jsonPlainPrefix(in[i:])
		b = append(b, in[i:i+n]...)
		if i += n; i >= len(in) {
			break
		}
		c := in[i]
		switch {
		case c == '"':
			e.pos = i + 1
			return append(appendCBORHead(out, cborBytes, uint64(len(b))), b...), nil
		case c < 0x20:
			return out, e.errorf(i, "invalid control character %q in string literal", c)
		case c == '\\':
			if i+1 >= len(in) {
				return out, e.errorf(len(in), "unexpected end of JSON input in string escape code")
			}
			switch esc := in[i+1]; esc {
			default:
				c, ok := jsonskip.Unescape(esc)
				if !ok {
					return out, e.errorf(i, "invalid escape %q in string literal", esc)
				}
				b = append(b, c)
			case 'u':
				r := jsonHex4(in[i+2:])
				if r < 0 {
					return out, e.errorf(i, "invalid \\u escape in string literal")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if len(in)-i >= 6 && in[i] == '\\' && in[i+1] == 'u' {
						if r2 := jsonHex4(in[i+2:]); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b = utf8.AppendRune(b, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, in[i:i+size]...)
			}
			i += size
		}
	}
	return out, e.errorf(len(in), "unexpected end of JSON input in string literal")
}

// jsonHex4 is the value of the 4 hex digits s starts with, or -1.
func jsonHex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// number reads a JSON number at e.pos.
func (e *jsonToCBOR) number(out []byte) ([]byte, error) {
	in := e.in
	start := e.pos
	i := start
	neg := in[i] == '-'
	if neg {
		i++
	}
	digits := i
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case i < len(in) && jsonDigit(in[i]):
		for i < len(in) && jsonDigit(in[i]) {
			i++
		}
	default:
		e.pos = i
		return out, e.unexpected("in numeric literal")
	}
	intEnd := i
	integer := true
	if i < len(in) && in[i] == '.' {
		integer = false
		i++
		if i >= len(in) || !jsonDigit(in[i]) {
			e.pos = i
			return out, e.unexpected("after decimal point in numeric literal")
		}
		for i < len(in) && jsonDigit(in[i]) {
			i++
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		integer = false
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if i >= len(in) || !jsonDigit(in[i]) {
			e.pos = i
			return out, e.unexpected("in exponent of numeric literal")
		}
		for i < len(in) && jsonDigit(in[i]) {
			i++
		}
	}
	e.pos = i
	if integer {
		// Kubernetes' decoder refuses integers below math.MinInt64 into any Go
		// type, float64 included, so those are floats here. Those above
		// math.MaxInt64 stay unsigned, as Kubernetes writes a uint64 field
		// (its decoder refuses them into interface{}, as it does its own).
		if n, ok := parseDecimalUint64(in[digits:intEnd]); ok && (!neg || n <= 1<<63) {
			switch {
			case !neg:
				return appendCBORHead(out, cborUint, n), nil
			case n == 0:
				return append(out, cborUint), nil // -0
			}
			return appendCBORHead(out, cborNegint, n-1), nil
		}
	}
	f, err := strconv.ParseFloat(string(in[start:i]), 64)
	if err != nil {
		return out, e.errorf(start, "number %s is out of the range of float64", in[start:i])
	}
	return appendCBORFloat(out, f), nil
}

func jsonDigit(c byte) bool { return '0' <= c && c <= '9' }

// parseDecimalUint64 is the value of decimal digits, if it fits uint64.
func parseDecimalUint64(s []byte) (uint64, bool) {
	if len(s) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range s {
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// # CBOR to JSON

// cborToJSON decodes one CBOR data item that must span all of data, and returns its
// JSON text. Tag 55799 (self-described CBOR, as Kubernetes writes first) may precede
// any item and is dropped. Tags 21, 22 and 23 (expected later encoding) make the byte
// string they enclose a JSON string of its base64url (unpadded), base64 (standard,
// padded, as encoding/json writes []byte) or lowercase hex encoding, as Kubernetes'
// decoder does; on other items they are dropped. Any other tag is an error.
//
// Map keys must be byte or text strings; repeated keys are written as they are, so the
// caller's duplicate-field check names them. A text string must be valid UTF-8. A byte
// string without a tag becomes a JSON string of its bytes (a Go string field takes them
// so in Kubernetes, and a []byte field base64-decodes them, as from JSON), with U+FFFD
// for each byte of invalid UTF-8, as encoding/json writes a Go string (but as the
// character, not \ufffd). Strings are escaped as encoding/json escapes them (with
// \u003c, \u003e and \u0026).
//
// Integers (major types 0 and 1, the whole range -2^64 to 2^64-1) become exact
// decimal integers; those below -2^63 are floats to appendCBOR. Floats (half, single,
// double) become JSON numbers as encoding/json writes a float64, with ".0" added where
// that would be an integer literal that appendCBOR reads as an integer (one that fits
// int64 or uint64): so a float stays a float both ways, a Go float64 field takes it
// with the same value, and an integer field refuses it, as Kubernetes' decoder refuses
// a float for one. NaN and infinities are an error, as are undefined and simple values
// other than false, true and null.
//
// Indefinite-length strings, arrays and maps are accepted, as Kubernetes accepts them;
// the chunks of an indefinite-length string must be definite-length strings of its
// type, each valid UTF-8 for a text string.
//
// On hostile input: arrays and maps nest at most maxCBORDepth deep; a declared length
// or count larger than the bytes left is an error before anything is read for it (no
// allocation follows a declared length); the output is at most 8 bytes per input byte
// plus 2. An error names what is wrong and its byte offset in data.
func cborToJSON(data []byte) ([]byte, error) {
	d := cborToJSONStates.Get().(*cborToJSONState)
	defer d.release()
	d.in = data
	// The JSON of a Kubernetes object is about 1.3 times its CBOR.
	out, err := d.document(make([]byte, 0, len(data)+len(data)/3+64))
	if err != nil {
		return nil, err
	}
	return out, nil
}

var cborToJSONStates = sync.Pool{New: func() any { return new(cborToJSONState) }}

// release puts d back in its pool, unless it grew large.
func (d *cborToJSONState) release() {
	if cap(d.stack) > 1<<10 || cap(d.scratch) > 64<<10 {
		return
	}
	*d = cborToJSONState{stack: d.stack[:0], scratch: d.scratch[:0]}
	cborToJSONStates.Put(d)
}

// cborToJSONState is the state of one cborToJSON. The output is not part of
// it: it is passed along and returned, so that appending to it writes no
// pointer to the heap.
type cborToJSONState struct {
	in    []byte
	pos   int
	stack []cborContainer
	// scratch gathers the chunks of an indefinite-length string.
	scratch []byte
}

type cborContainer struct {
	left  int // items (keys and values) still to come; -1 if of indefinite length
	items int // items written
	isMap bool
}

func (d *cborToJSONState) errorf(offset int, format string, args ...any) error {
	return &cborError{op: "CBOR to JSON", msg: fmt.Sprintf(format, args...), offset: offset}
}

var cborMajorNames = [8]string{"unsigned integer", "negative integer", "byte string", "text string", "array", "map", "tag", "simple value or float"}

// document reads the data item, without recursion: containers are on d.stack.
func (d *cborToJSONState) document(out []byte) ([]byte, error) {
	key := false
	for {
		var err error
		if out, err = d.item(out, key); err != nil {
			return out, err
		}
		// Close what is complete.
		for len(d.stack) > 0 {
			top := &d.stack[len(d.stack)-1]
			if top.left > 0 {
				break
			}
			if top.left < 0 {
				if d.pos >= len(d.in) || d.in[d.pos] != cborBreak {
					break
				}
				if top.isMap && top.items%2 == 1 {
					return out, d.errorf(d.pos, "break code after a map key, before its value")
				}
				d.pos++
			}
			if top.isMap {
				out = append(out, '}')
			} else {
				out = append(out, ']')
			}
			d.stack = d.stack[:len(d.stack)-1]
		}
		if len(d.stack) == 0 {
			if d.pos < len(d.in) {
				return out, d.errorf(d.pos, "%d bytes after the data item", len(d.in)-d.pos)
			}
			return out, nil
		}
		// The separator before the next item.
		top := &d.stack[len(d.stack)-1]
		key = top.isMap && top.items%2 == 0
		switch {
		case key && top.items > 0, !top.isMap && top.items > 0:
			out = append(out, ',')
		case top.isMap && !key:
			out = append(out, ':')
		}
		top.items++
		if top.left > 0 {
			top.left--
		}
	}
}

// head reads the head of a data item at d.pos: its major type (shifted into
// place), additional information and argument.
func (d *cborToJSONState) head() (major, info byte, arg uint64, err error) {
	if d.pos >= len(d.in) {
		return 0, 0, 0, d.errorf(d.pos, "unexpected end of CBOR data")
	}
	ib := d.in[d.pos]
	major, info = ib&0xe0, ib&0x1f
	switch {
	case info < 24:
		d.pos++
		return major, info, uint64(info), nil
	case info == cborIndefinite:
		d.pos++
		return major, info, 0, nil
	case info > 27:
		return 0, 0, 0, d.errorf(d.pos, "reserved additional information %d", info)
	}
	n := 1 << (info - 24) // 1, 2, 4 or 8 bytes follow
	if len(d.in)-d.pos-1 < n {
		return 0, 0, 0, d.errorf(d.pos, "unexpected end of CBOR data in a head")
	}
	for _, b := range d.in[d.pos+1 : d.pos+1+n] {
		arg = arg<<8 | uint64(b)
	}
	d.pos += 1 + n
	return major, info, arg, nil
}

// item writes one data item, or, for an array or map, its opening and pushes
// it on d.stack. key says it is a map key.
func (d *cborToJSONState) item(out []byte, key bool) ([]byte, error) {
	var laterEncoding uint64 // the innermost tag 21, 22 or 23 before the item
	for {
		start := d.pos
		major, info, arg, err := d.head()
		if err != nil {
			return out, err
		}
		if info == cborIndefinite && (major == cborUint || major == cborNegint || major == cborTag) {
			return out, d.errorf(start, "indefinite length for a CBOR %s", cborMajorNames[major>>5])
		}
		if key && major != cborBytes && major != cborText && major != cborTag {
			if major == cborSimple && info == cborIndefinite {
				return out, d.errorf(start, "break code where a map key is expected")
			}
			return out, d.errorf(start, "map key is a CBOR %s, not a string", cborMajorNames[major>>5])
		}
		switch major {
		case cborTag:
			switch arg {
			case cborTagSelfDescribed:
			case cborTagBase64URL, cborTagBase64, cborTagBase16:
				laterEncoding = arg
			default:
				return out, d.errorf(start, "tag %d is not supported", arg)
			}
			continue
		case cborUint:
			return strconv.AppendUint(out, arg, 10), nil
		case cborNegint:
			out = append(out, '-')
			if arg == math.MaxUint64 {
				return append(out, cborMinNegint...), nil
			}
			return strconv.AppendUint(out, arg+1, 10), nil
		case cborBytes, cborText:
			return d.str(out, start, major, info, arg, laterEncoding)
		case cborArray, cborMap:
			if len(d.stack) == maxCBORDepth {
				return out, d.errorf(start, "nesting deeper than %d", maxCBORDepth)
			}
			c := cborContainer{left: -1, isMap: major == cborMap}
			if info != cborIndefinite {
				perItem := uint64(1)
				if c.isMap {
					perItem = 2
				}
				if left := uint64(len(d.in) - d.pos); arg > left/perItem {
					return out, d.errorf(start, "%s of %d items declared, with %d bytes left", cborMajorNames[major>>5], arg, left)
				}
				c.left = int(arg * perItem)
			}
			d.push(c)
			if c.isMap {
				return append(out, '{'), nil
			}
			return append(out, '['), nil
		}
		return d.simple(out, start, info, arg)
	}
}

// push opens a container. (Not append: reslicing within capacity writes no
// pointer.)
func (d *cborToJSONState) push(c cborContainer) {
	if len(d.stack) == cap(d.stack) {
		d.stack = append(d.stack, c)
		return
	}
	d.stack = d.stack[:len(d.stack)+1]
	d.stack[len(d.stack)-1] = c
}

func (d *cborToJSONState) simple(out []byte, start int, info byte, arg uint64) ([]byte, error) {
	var f float64
	switch info {
	case cborFalse & 0x1f:
		return append(out, "false"...), nil
	case cborTrue & 0x1f:
		return append(out, "true"...), nil
	case cborNil & 0x1f:
		return append(out, "null"...), nil
	case cborFloat16 & 0x1f:
		f = float16Value(uint16(arg))
	case cborFloat32 & 0x1f:
		f = float64(math.Float32frombits(uint32(arg)))
	case cborFloat64 & 0x1f:
		f = math.Float64frombits(arg)
	case cborIndefinite:
		return out, d.errorf(start, "unexpected break code")
	case 24:
		if arg < 32 {
			return out, d.errorf(start, "simple value %d in two bytes is not well-formed", arg)
		}
		return out, d.errorf(start, "simple value %d is not supported", arg)
	case 23:
		return out, d.errorf(start, "undefined is not supported")
	default:
		return out, d.errorf(start, "simple value %d is not supported", info)
	}
	if math.IsNaN(f) {
		return out, d.errorf(start, "floating-point NaN is not supported")
	}
	if math.IsInf(f, 0) {
		return out, d.errorf(start, "floating-point infinity is not supported")
	}
	return appendJSONFloat(out, f), nil
}

// str writes a byte or text string whose head, at start, has been read.
func (d *cborToJSONState) str(out []byte, start int, major, info byte, arg uint64, laterEncoding uint64) ([]byte, error) {
	var s []byte
	if info == cborIndefinite {
		var err error
		if s, err = d.chunks(major); err != nil {
			return out, err
		}
	} else {
		if left := uint64(len(d.in) - d.pos); arg > left {
			return out, d.errorf(start, "%s of %d bytes declared, with %d bytes left", cborMajorNames[major>>5], arg, left)
		}
		s = d.in[d.pos : d.pos+int(arg)]
		d.pos += int(arg)
	}
	if major == cborText {
		out, valid := appendJSONString(out, s)
		if !valid {
			return out, d.errorf(start, "invalid UTF-8 in a text string")
		}
		return out, nil
	}
	switch laterEncoding {
	case cborTagBase64URL:
		out = append(base64.RawURLEncoding.AppendEncode(append(out, '"'), s), '"')
	case cborTagBase64:
		out = append(base64.StdEncoding.AppendEncode(append(out, '"'), s), '"')
	case cborTagBase16:
		out = append(hex.AppendEncode(append(out, '"'), s), '"')
	default:
		out, _ = appendJSONString(out, s)
	}
	return out, nil
}

// chunks gathers the chunks of an indefinite-length string, up to its break
// code, into d.scratch.
func (d *cborToJSONState) chunks(major byte) ([]byte, error) {
	b := d.scratch[:0]
	defer func() { d.scratch = b }()
	for {
		if d.pos < len(d.in) && d.in[d.pos] == cborBreak {
			d.pos++
			return b, nil
		}
		at := d.pos
		m, info, n, err := d.head()
		if err != nil {
			return nil, err
		}
		if m != major || info == cborIndefinite {
			return nil, d.errorf(at, "a chunk of an indefinite-length %s must be a definite-length %s", cborMajorNames[major>>5], cborMajorNames[major>>5])
		}
		if left := uint64(len(d.in) - d.pos); n > left {
			return nil, d.errorf(at, "%s chunk of %d bytes declared, with %d bytes left", cborMajorNames[major>>5], n, left)
		}
		chunk := d.in[d.pos : d.pos+int(n)]
		if major == cborText && !utf8.Valid(chunk) {
			return nil, d.errorf(at, "invalid UTF-8 in a text string chunk")
		}
		b = append(b, chunk...)
		d.pos += int(n)
	}
}

// jsonSafe marks the ASCII bytes encoding/json writes as they are in a
// string (it escapes <, > and & for HTML).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes a Go string. valid reports whether s was valid UTF-8; each byte
// that was not is written as U+FFFD (itself, where encoding/json writes
// \ufffd, so that what appendCBOR makes of it comes back the same).
func appendJSONString(dst, s []byte) (_ []byte, valid bool) {
	const hexDigits = "0123456789abcdef"
	valid = true
	dst = append(dst, '"')
	copied := 0
	for i := 0; i < len(s); {
		for ; len(s)-i >= 8; i += 8 {
			x := binary.LittleEndian.Uint64(s[i:])
			if m := swarLess(x, 0x20) | swarEqual(x, '"') | swarEqual(x, '\\') | swarEqual(x, '<') |
				swarEqual(x, '>') | swarEqual(x, '&') | x&swarHigh; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[copied:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			copied = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			valid = false
			dst = append(dst, s[copied:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[copied:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		copied = i
	}
	dst = append(dst, s[copied:]...)
	return append(dst, '"'), valid
}

// appendJSONFloat appends finite f as encoding/json writes a float64, with
// ".0" added to an integral value that would otherwise be an integer literal
// appendCBOR makes an integer of (one that fits int64 or uint64).
func appendJSONFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json does
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
		return dst
	}
	if f == math.Trunc(f) && -0x1p63 <= f && f < 0x1p64 {
		dst = append(dst, '.', '0')
	}
	return dst
}
