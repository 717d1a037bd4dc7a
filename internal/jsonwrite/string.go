package jsonwrite

import "unicode/utf8"

// safe says which ASCII bytes encoding/json writes in a string as they are
// (its safeSet); htmlSafe also leaves out <, > and & (its htmlSafeSet).
var safe, htmlSafe = func() (safe, htmlSafe [utf8.RuneSelf]bool) {
	for c := byte(' '); c < utf8.RuneSelf; c++ {
		safe[c] = c != '"' && c != '\\'
		htmlSafe[c] = safe[c] && c != '<' && c != '>' && c != '&'
	}
	return safe, htmlSafe
}()

// appendString appends s as encoding/json writes a string: quoted; ", \
// and control characters escaped (\b, \f, \n, \r, \t by name); with html,
// <, > and & as \u003c, \u003e, \u0026; U+2028 and U+2029 escaped; each
// byte of invalid UTF-8 as \ufffd.
func appendString(b []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] || !html && safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
