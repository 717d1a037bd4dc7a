package cel

import "strings"

// reserved are the words CEL keeps for itself or may one day; a property
// so named is read as __name__ (self.__namespace__), as in Kubernetes,
// which also accepts the plain name where CEL's grammar allows it.
var reserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true,
	"as": true, "break": true, "const": true, "continue": true, "else": true,
	"for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true,
	"var": true, "void": true, "while": true,
}

// escape is the name under which a rule reads a property: names with
// '-', '.' or '/' spell them __dash__, __dot__ and __slash__ (and a
// literal "__" as __underscores__). It says false for a name a rule
// cannot read at all (one with other characters, or a leading digit),
// which kube-apiserver leaves out of the rule's types.
func escape(name string) (string, bool) {
	if name == "" || ('0' <= name[0] && name[0] <= '9') {
		return "", false
	}
	if reserved[name] {
		return "__" + name + "__", true
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' && i+1 < len(name) && name[i+1] == '_':
			b.WriteString("__underscores__")
			i++
		case c == '-':
			b.WriteString("__dash__")
		case c == '.':
			b.WriteString("__dot__")
		case c == '/':
			b.WriteString("__slash__")
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape is the property name a rule's field name reads.
func unescape(field string) (string, bool) {
	if strings.HasPrefix(field, "__") && strings.HasSuffix(field, "__") && len(field) > 4 && reserved[field[2:len(field)-2]] {
		return field[2 : len(field)-2], true
	}
	var b strings.Builder
	for i := 0; i < len(field); {
		if !strings.HasPrefix(field[i:], "__") {
			b.WriteByte(field[i])
			i++
			continue
		}
		end := strings.Index(field[i+2:], "__")
		if end <= 0 {
			b.WriteString(field[i:])
			break
		}
		switch word := field[i+2 : i+2+end]; word {
		case "underscores":
			b.WriteString("__")
		case "dot":
			b.WriteByte('.')
		case "dash":
			b.WriteByte('-')
		case "slash":
			b.WriteByte('/')
		default:
			return "", false
		}
		i += 2 + end + 2
	}
	return b.String(), true
}
