package jsonskip

import "unicode/utf8"

// MaxDepth is how deeply containers may nest: encoding/json's limit.
const MaxDepth = 10000

// Strings says how strings are checked.
type Strings bool

const (
	// AnyText accepts what encoding/json decodes: invalid UTF-8 and lone
	// surrogate escapes included (they read as U+FFFD).
	AnyText Strings = false
	// Exact accepts valid UTF-8 and escapes of scalar values only.
	Exact Strings = true
)

// Value returns the offset after the JSON value at data[i] (white space
// before it allowed) and true, or where it found it invalid and false.
// depth is how many containers are open around data[i]: a value nested
// deeper than MaxDepth in all is invalid.
func Value(data []byte, i, depth int, s Strings) (int, bool) {
	var arr [64]byte
	open := arr[:0] // the containers open: '{' or '['
	for {
		// A value.
		i = Space(data, i)
		if i >= len(data) {
			return i, false
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			if depth+len(open)+1 > MaxDepth {
				return i, false
			}
			i = Space(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' or ']': empty
				i++
				break
			}
			open = append(open, c)
			if c == '{' {
				var ok bool
				if i, ok = Key(data, i, s); !ok {
					return i, false
				}
			}
			continue // its first value
		case c == '"':
			var ok bool
			if i, ok = String(data, i, s); !ok {
				return i, false
			}
		case c == 't':
			if !HasLiteral(data, i, "true") {
				return i, false
			}
			i += 4
		case c == 'f':
			if !HasLiteral(data, i, "false") {
				return i, false
			}
			i += 5
		case c == 'n':
			if !HasLiteral(data, i, "null") {
				return i, false
			}
			i += 4
		case c == '-' || c >= '0' && c <= '9':
			var ok bool
			if i, ok = Number(data, i); !ok {
				return i, false
			}
		default:
			return i, false
		}
		// After a value: the next one, or the end of containers.
		for {
			if len(open) == 0 {
				return i, true
			}
			i = Space(data, i)
			if i >= len(data) {
				return i, false
			}
			top := open[len(open)-1]
			if c := data[i]; c == top+2 {
				i++
				open = open[:len(open)-1]
				continue
			} else if c != ',' {
				return i, false
			}
			i++
			if top == '{' {
				var ok bool
				if i, ok = Key(data, i, s); !ok {
					return i, false
				}
			}
			break
		}
	}
}

// Space returns the offset of the first byte from i on that is not JSON
// white space.
func Space(data []byte, i int) int {
	if i < len(data) && data[i] > ' ' {
		return i // compact JSON: no space anywhere
	}
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// HasLiteral says whether data holds lit at i.
func HasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}

// Key moves past a member's name and the colon after it, from i (white
// space before either allowed); it returns where the member's value may
// start (white space before it is the value's to skip).
func Key(data []byte, i int, s Strings) (int, bool) {
	i = Space(data, i)
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := String(data, i, s)
	if !ok {
		return i, false
	}
	i = Space(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, false
	}
	return i + 1, true
}

// plainByte says which bytes a string holds as they are: not '"', '\\',
// a control character or part of a multi-byte character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// String moves past the string at data[i], which is '"'; it returns where
// the string ends.
func String(data []byte, i int, s Strings) (int, bool) {
	i++
	for i < len(data) {
		c := data[i]
		if plainByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(data) {
				return i, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return i, false
				}
				r := 0
				for _, h := range data[i+2 : i+6] {
					switch {
					case h >= '0' && h <= '9':
						r = r<<4 | int(h-'0')
					case h >= 'a' && h <= 'f':
						r = r<<4 | int(h-'a'+10)
					case h >= 'A' && h <= 'F':
						r = r<<4 | int(h-'A'+10)
					default:
						return i, false
					}
				}
				if s == Exact && r >= 0xD800 && r < 0xE000 {
					return i, false // a surrogate: encoding/json's to read
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		case s == AnyText: // c >= utf8.RuneSelf
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return i, false
			}
			i += size
		}
	}
	return i, false
}

// Number moves past the number at data[i] by JSON's grammar; it returns
// where the number ends.
func Number(data []byte, i int) (int, bool) {
	digits := func() int {
		n := 0
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(data) && data[i] == '-' {
		i++
	}
	if i < len(data) && data[i] == '0' {
		i++
	} else if digits() == 0 {
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if digits() == 0 {
			return i, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, false
		}
	}
	return i, true
}

// Unescape is the byte the JSON string escape \e stands for, for every
// escape but \u (ok false for it, and for one JSON has not).
func Unescape(e byte) (c byte, ok bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
