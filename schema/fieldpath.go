package schema

import (
	"strings"
)

// ValidFieldPath says whether path (.spec.ports['http'].port, the
// fieldPath of an x-kubernetes-validations rule) names a field the schema
// specifies: member names after dots or quoted in brackets, nothing else.
func (s *Schema) ValidFieldPath(path string) bool {
	_, ok := s.FieldPath(path)
	return ok
}

// FieldPath is a rule's fieldPath as kube-apiserver names the field in an
// error: a property by name after a dot, a key of additionalProperties in
// brackets (.spec['x'].labels['a'] is spec.x.labels[a]); ok is false if
// path names no field the schema specifies.
func (s *Schema) FieldPath(path string) (field string, ok bool) {
	toks := fieldPathTokens(path)
	var b strings.Builder
	at := s
	for i := 0; i < len(toks); i++ {
		var name string
		switch toks[i] {
		case "[":
			if i+1 >= len(toks) {
				return "", false
			}
			i++
			t := toks[i]
			if len(t) < 2 || t[0] != '\'' || t[len(t)-1] != '\'' {
				return "", false
			}
			var ok bool
			if name, ok = unescapeQuoted(t[1 : len(t)-1]); !ok {
				return "", false
			}
			if i+1 >= len(toks) || toks[i+1] != "]" {
				return "", false
			}
			i++
		case ".":
			if i+1 >= len(toks) {
				return "", false
			}
			i++
			name = toks[i]
		default:
			return "", false
		}
		switch {
		case at == nil:
			return "", false
		case at.Properties != nil:
			var ok bool
			if at, ok = at.Properties[name]; !ok {
				return "", false
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name)
		case at.HasAdditionalProperties:
			at = at.AdditionalProperties
			b.WriteString("[" + name + "]")
		default:
			return "", false
		}
	}
	return b.String(), true
}

// fieldPathTokens splits a field path into ".", "[", "]", quoted strings
// and names.
func fieldPathTokens(path string) []string {
	var toks []string
	for len(path) > 0 {
		n := len(path)
		if path[0] == '\'' {
			for i := 1; i < len(path); i++ {
				if path[i] == '\'' && path[i-1] != '\\' {
					n = i + 1
					break
				}
			}
		} else if i := strings.IndexAny(path, ".[]"); i == 0 {
			n = 1
		} else if i > 0 {
			n = i
		}
		toks = append(toks, path[:n])
		path = path[n:]
	}
	return toks
}

// unescapeQuoted reads the escapes of a quoted name in a field path.
func unescapeQuoted(s string) (string, bool) {
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
		case '\'', '\\':
			b.WriteByte(s[i])
		default:
			return "", false
		}
	}
	return b.String(), true
}
