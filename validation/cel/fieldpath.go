package cel

import (
	"strings"

	"github.com/kapi-dev/kapi/schema"
)

// normalizeFieldPath is a rule's fieldPath as an error names it: a
// property by name after a dot, a map key in brackets (.spec['x'] is
// spec.x, .labels['a'] is labels[a]); "" if it names no field of s.
func normalizeFieldPath(s *schema.Schema, path string) string {
	if !s.ValidFieldPath(path) {
		return ""
	}
	var b strings.Builder
	at := s
	rest := path
	for rest != "" && at != nil {
		var name string
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			name, rest = rest[1:1+end], rest[1+end:]
		case '[':
			end := closingQuote(rest)
			name, _ = unquoteFieldName(rest[2 : end-1])
			rest = rest[end+1:]
		default:
			return ""
		}
		if at.Properties != nil {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name)
			at = at.Properties[name]
		} else {
			b.WriteString("[" + name + "]")
			at = at.AdditionalProperties
		}
	}
	return b.String()
}

// closingQuote is the index of the ] that closes ['...'] at the start of
// s.
func closingQuote(s string) int {
	for i := 2; i < len(s); i++ {
		if s[i] == '\'' && s[i-1] != '\\' {
			return i + 1
		}
	}
	return len(s) - 1
}

func unquoteFieldName(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), true
}

// ratchet follows kube-apiserver's CEL ratcheting: an error of a rule that
// reads no oldSelf is dropped when the value it is about is unchanged by
// the update, judged by the nearest value that has an old counterpart.
type ratchet struct {
	current, parent *schema.Correlation
}

func (r ratchet) unchanged() bool {
	if r.current != nil {
		return r.current.Unchanged()
	}
	return r.parent.Unchanged()
}

func (r ratchet) key(name string) ratchet {
	if r.current == nil {
		return r
	}
	if r.parent == nil && (name == "apiVersion" || name == "kind") {
		return ratchet{}
	}
	return ratchet{current: r.current.Key(name), parent: r.current}
}

func (r ratchet) index(i int) ratchet {
	if r.current == nil {
		return r
	}
	return ratchet{current: r.current.Index(i), parent: r.current}
}
