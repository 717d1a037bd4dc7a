package codec

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf8"
)

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
