package jsonwrite

// validCompact says whether raw is one JSON value, as encoding/json's
// scanner accepts, for raw that jsonimage.RawWrittenAsIs accepts: printable
// ASCII without white space. A value nested deeper than maxDepth is not
// told valid: json.Marshal decides it.
func validCompact(raw []byte) bool {
	end := scanValue(raw, 0, 0)
	return end == len(raw)
}

// scanValue returns where the value at raw[i:] ends, or -1 if there is
// none.
func scanValue(raw []byte, i, depth int) int {
	if i >= len(raw) {
		return -1
	}
	switch c := raw[i]; {
	case c == '{':
		return scanObject(raw, i+1, depth+1)
	case c == '[':
		return scanArray(raw, i+1, depth+1)
	case c == '"':
		return scanString(raw, i+1)
	case c == '-' || '0' <= c && c <= '9':
		return scanNumber(raw, i)
	case c == 't':
		return scanLiteral(raw, i, "true")
	case c == 'f':
		return scanLiteral(raw, i, "false")
	case c == 'n':
		return scanLiteral(raw, i, "null")
	}
	return -1
}

// scanObject scans the members of an object from after its '{'.
func scanObject(raw []byte, i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	if i < len(raw) && raw[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return -1
		}
		if i = scanString(raw, i+1); i < 0 || i >= len(raw) || raw[i] != ':' {
			return -1
		}
		if i = scanValue(raw, i+1, depth); i < 0 || i >= len(raw) {
			return -1
		}
		switch raw[i] {
		case '}':
			return i + 1
		case ',':
			i++
		default:
			return -1
		}
	}
}

// scanArray scans the elements of an array from after its '['.
func scanArray(raw []byte, i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	if i < len(raw) && raw[i] == ']' {
		return i + 1
	}
	for {
		if i = scanValue(raw, i, depth); i < 0 || i >= len(raw) {
			return -1
		}
		switch raw[i] {
		case ']':
			return i + 1
		case ',':
			i++
		default:
			return -1
		}
	}
}

// scanString scans a string from after its opening quote. Every byte of
// printable ASCII may stand in a string but a backslash, which must start
// one of JSON's escapes.
func scanString(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case '"':
			return i + 1
		case '\\':
			i++
			if i >= len(raw) {
				return -1
			}
			switch raw[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+4 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) || !isHex(raw[i+3]) || !isHex(raw[i+4]) {
					return -1
				}
				i += 5
			default:
				return -1
			}
		default:
			i++
		}
	}
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber scans a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(raw []byte, i int) int {
	if raw[i] == '-' {
		i++
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case i < len(raw) && '1' <= raw[i] && raw[i] <= '9':
		i = scanDigits(raw, i)
	default:
		return -1
	}
	if i < len(raw) && raw[i] == '.' {
		if i = scanDigits(raw, i+1); i < 0 {
			return -1
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if i = scanDigits(raw, i); i < 0 {
			return -1
		}
	}
	return i
}

// scanDigits scans one digit or more.
func scanDigits(raw []byte, i int) int {
	start := i
	for i < len(raw) && '0' <= raw[i] && raw[i] <= '9' {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

func scanLiteral(raw []byte, i int, literal string) int {
	if len(raw)-i < len(literal) || string(raw[i:i+len(literal)]) != literal {
		return -1
	}
	return i + len(literal)
}
