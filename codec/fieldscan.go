package codec

import (
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// The checker's reading of JSON: one token at a time, at c.pos.

// syntaxError is the error for input that is not JSON at c.pos.
func (c *checker) syntaxError(what string) error {
	if c.pos >= len(c.data) {
		return fmt.Errorf("codec: invalid JSON: unexpected end of input")
	}
	return fmt.Errorf("codec: invalid JSON at byte offset %d: %s", c.pos, what)
}

func (c *checker) skipSpace() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// open reads the '{' or '[' at c.pos and reports whether the object or
// array is empty.
func (c *checker) open(end byte) (empty bool, err error) {
	c.pos++
	if c.depth++; c.depth > maxDepth {
		return false, fmt.Errorf("codec: invalid JSON at byte offset %d: nested deeper than %d", c.pos-1, maxDepth)
	}
	c.skipSpace()
	if c.pos < len(c.data) && c.data[c.pos] == end {
		c.pos++
		c.depth--
		return true, nil
	}
	return false, nil
}

// next reads what follows a member or element: a comma, after which there
// is more, or the end of the object or array.
func (c *checker) next(end byte) (more bool, err error) {
	c.skipSpace()
	if c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ',':
			c.pos++
			c.skipSpace()
			return true, nil
		case end:
			c.pos++
			c.depth--
			return false, nil
		}
	}
	if end == '}' {
		return false, c.syntaxError("after object member")
	}
	return false, c.syntaxError("after array element")
}

// memberName reads a member's name and the colon after it. It returns the
// name unquoted, in the document or in c.key.
func (c *checker) memberName() (name []byte, err error) {
	if c.pos >= len(c.data) || c.data[c.pos] != '"' {
		return nil, c.syntaxError("looking for an object key")
	}
	start := c.pos + 1
	plain, err := c.str()
	if err != nil {
		return nil, err
	}
	name = c.data[start : c.pos-1]
	if !plain {
		c.key = appendUnquoted(c.key[:0], name)
		name = c.key
	}
	c.skipSpace()
	if c.pos >= len(c.data) || c.data[c.pos] != ':' {
		return nil, c.syntaxError("after object key")
	}
	c.pos++
	c.skipSpace()
	return name, nil
}

// skip reads any value (jsonskip.Value, as encoding/json reads strings).
func (c *checker) skip() error {
	end, ok := jsonskip.Value(c.data, c.pos, c.depth, jsonskip.AnyText)
	c.pos = end
	if !ok {
		return c.syntaxError("in value")
	}
	return nil
}

// str reads a member name and reports whether it is plain: without escapes or
// invalid UTF-8, so that its content is its value. (Values are skipped by
// jsonskip; a name is read here, where its plainness is found in the same
// pass.)
func (c *checker) str() (plain bool, err error) {
	plain, ascii := true, true
	start := c.pos + 1
	for i := start; i < len(c.data); i++ {
		switch b := c.data[i]; {
		case b == '"':
			c.pos = i + 1
			if !ascii && plain {
				plain = utf8.Valid(c.data[start:i])
			}
			return plain, nil
		case b == '\\':
			plain = false
			if i++; i >= len(c.data) {
				c.pos = i
				return false, c.syntaxError("")
			}
			switch c.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					if i++; i >= len(c.data) || !isHex(c.data[i]) {
						c.pos = i
						return false, c.syntaxError("in \\u escape")
					}
				}
			default:
				c.pos = i
				return false, c.syntaxError("in string escape")
			}
		case b < ' ':
			c.pos = i
			return false, c.syntaxError("control character in string")
		case b >= utf8.RuneSelf:
			ascii = false
		}
	}
	c.pos = len(c.data)
	return false, c.syntaxError("")
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

// appendUnquoted appends the value of a string's content, as encoding/json
// unquotes it: invalid UTF-8 and lone surrogates become U+FFFD.
func appendUnquoted(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\' && r+1 < len(s):
			r++
			switch s[r] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := hex4(s[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if len(s) >= r+6 && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != unicode.ReplacementChar {
							dst = utf8.AppendRune(dst, dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default:
				dst = append(dst, s[r])
			}
			r++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
		}
	}
	return dst
}

// hex4 reads four hex digits; the document was checked to have them.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return unicode.ReplacementChar
	}
	var r rune
	for _, b := range s[:4] {
		switch {
		case '0' <= b && b <= '9':
			b -= '0'
		case 'a' <= b && b <= 'f':
			b -= 'a' - 10
		case 'A' <= b && b <= 'F':
			b -= 'A' - 10
		default:
			return unicode.ReplacementChar
		}
		r = r*16 + rune(b)
	}
	return r
}
