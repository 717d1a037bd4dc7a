package patch

import "unicode/utf8"

// checkValue moves past the value at d.i, checking it as value checks what
// it reads (JSON's grammar; strings of valid UTF-8 without surrogate
// escapes; nesting up to maxDepth, d.i read as at depth), without making
// anything of it: ok false where value would be. It is value in discard
// mode in one loop, without a call per value: the stored documents that
// compareStored and mergeStored split are checked whole, metadata's
// managedFields (which every decode of an object passes over) above all.
// FuzzCheckValue holds the two equal.
func (d *jsonReader) checkValue(depth int) bool {
	var ok bool
	d.i, ok = checkValueAt(d.data, d.i, depth)
	return ok
}

func checkValueAt(data []byte, i, depth int) (int, bool) {
	var arr [64]byte
	open := arr[:0] // the containers open: '{' or '['
	for {
		// A value.
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			if depth+len(open)+1 > maxDepth {
				return i, false
			}
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' or ']': empty
				i++
				break
			}
			open = append(open, c)
			if c == '{' {
				var ok bool
				if i, ok = checkKey(data, i); !ok {
					return i, false
				}
			}
			continue // its first value
		case c == '"':
			var ok bool
			if i, ok = checkString(data, i); !ok {
				return i, false
			}
		case c == 't':
			if !hasLiteral(data, i, "true") {
				return i, false
			}
			i += 4
		case c == 'f':
			if !hasLiteral(data, i, "false") {
				return i, false
			}
			i += 5
		case c == 'n':
			if !hasLiteral(data, i, "null") {
				return i, false
			}
			i += 4
		case c == '-' || c >= '0' && c <= '9':
			var ok bool
			if i, ok = checkNumber(data, i); !ok {
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
			i = skipSpace(data, i)
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
				if i, ok = checkKey(data, i); !ok {
					return i, false
				}
			}
			break
		}
	}
}

// skipSpace returns the index of the first byte from i on that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
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

func hasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}

// checkKey checks a member's key and the colon after it, from i (space
// before it allowed); it returns where the member's value starts.
func checkKey(data []byte, i int) (int, bool) {
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := checkString(data, i)
	if !ok {
		return i, false
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, false
	}
	return i + 1, true
}

// checkString checks the string at data[i] ('"') as jsonReader.string and
// escaped read it; it returns where the string ends.
func checkString(data []byte, i int) (int, bool) {
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
				if r >= 0xD800 && r < 0xE000 {
					return i, false // a surrogate: encoding/json's to read
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default: // c >= utf8.RuneSelf
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return i, false
			}
			i += size
		}
	}
	return i, false
}

// checkNumber checks the number at data[i] by JSON's grammar; it returns
// where the number ends.
func checkNumber(data []byte, i int) (int, bool) {
	digits := func() int {
		n := 0
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if data[i] == '-' {
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
