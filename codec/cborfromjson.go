package codec

import (
	"encoding/binary"
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
