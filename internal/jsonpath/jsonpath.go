// Package jsonpath evaluates the JSON paths a CustomResourceDefinition's
// additionalPrinterColumns, selectableFields and scale subresource name,
// as client-go's jsonpath (which kube-apiserver's table convertor uses)
// reads them: members after dots (.spec.replicas), a backslash escaping
// the character after it (.metadata.labels.app\.kubernetes\.io/name);
// in brackets, list indexes ([0], [-1] from the end), the wildcard [*], a
// single-quoted key (['a'], read as the path .a: ['a.b'] is a then b, as
// in client-go; ['a\.b'] is the key a.b), and the filter
// [?(@.type=="Ready")] that compares a member with a literal, which is
// what real CustomResourceDefinitions' columns use. A bracket ends at the
// first ], as in client-go. kubectl's JSONPath templates ({range},
// functions), slices and unions are not paths this package reads and are
// refused.
package jsonpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path is a parsed path; the zero Path is the whole value.
type Path struct{ steps []step }

type step struct {
	member string
	index  int  // for an index step, from the end if negative
	all    bool // the wildcard [*]
	kind   stepKind
	filter *filter
}

type stepKind uint8

const (
	memberStep stepKind = iota
	indexStep
	filterStep
)

// filter is [?(@.path op literal)]; op is == or !=.
type filter struct {
	path  Path
	equal bool
	value any
}

// ErrSyntax is the error of a path that is not one this package reads.
var ErrSyntax = errors.New("jsonpath: invalid path")

// Parse reads a path that starts with a dot (.spec.replicas).
func Parse(s string) (Path, error) {
	p, rest, err := parse(s, false)
	if err == nil && rest != "" {
		err = fmt.Errorf("%w %q: unexpected %q", ErrSyntax, s, rest)
	}
	return p, err
}

// parse reads steps until the end, or within a filter until what cannot
// continue a path.
func parse(s string, inFilter bool) (Path, string, error) {
	var p Path
	orig := s
	if !inFilter && !strings.HasPrefix(s, ".") {
		return p, s, fmt.Errorf("%w %q: it must start with a dot", ErrSyntax, orig)
	}
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
			n := memberEnd(s, inFilter)
			if n == 0 {
				return p, s, fmt.Errorf("%w %q: an empty member name", ErrSyntax, orig)
			}
			p.steps = append(p.steps, step{kind: memberStep, member: strings.ReplaceAll(s[:n], `\`, "")})
			s = s[n:]
			if s != "" && s[0] != '.' && s[0] != '[' && !inFilter {
				return p, s, fmt.Errorf("%w %q: unexpected %q", ErrSyntax, orig, s)
			}
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return p, s, fmt.Errorf("%w %q: unclosed [", ErrSyntax, orig)
			}
			inner := s[1:end]
			switch {
			case strings.HasPrefix(inner, "?("):
				f, rest, err := parseFilter(s[3:])
				if err != nil {
					return p, s, fmt.Errorf("%w %q: %v", ErrSyntax, orig, err)
				}
				p.steps = append(p.steps, step{kind: filterStep, filter: f})
				s = rest
				continue
			case inner == "*":
				p.steps = append(p.steps, step{kind: indexStep, all: true})
			case len(inner) >= 2 && inner[0] == '\'' && inner[len(inner)-1] == '\'' && !strings.Contains(inner[1:len(inner)-1], "'"):
				// client-go reads ['key'] as the path .key.
				key, err := Parse("." + inner[1:len(inner)-1])
				if err != nil {
					return p, s, err
				}
				if _, ok := key.Members(); !ok {
					return p, s, fmt.Errorf("%w %q: %q is not a key", ErrSyntax, orig, inner)
				}
				p.steps = append(p.steps, key.steps...)
			default:
				i, err := strconv.Atoi(inner)
				if err != nil || inner[0] == '+' {
					return p, s, fmt.Errorf("%w %q: %q is not an index", ErrSyntax, orig, inner)
				}
				p.steps = append(p.steps, step{kind: indexStep, index: i})
			}
			s = s[end+1:]
		default:
			if inFilter {
				return p, s, nil
			}
			return p, s, fmt.Errorf("%w %q: unexpected %q", ErrSyntax, orig, s)
		}
	}
	return p, s, nil
}

// memberEnd is where the member name at the start of s ends: at a
// character client-go's jsonpath ends an identifier at, unless a
// backslash escapes it; within a filter, also at what follows its path.
func memberEnd(s string, inFilter bool) int {
	n := 0
	for n < len(s) {
		c := s[n]
		switch {
		case c == '\\':
			n = min(n+2, len(s))
			continue
		case strings.IndexByte(".,[]$@{} \t\r\n", c) >= 0, inFilter && strings.IndexByte("=!)", c) >= 0:
			return n
		}
		n++
	}
	return n
}

// parseFilter reads @.path op literal)] after "[?(".
func parseFilter(s string) (*filter, string, error) {
	if !strings.HasPrefix(s, "@") {
		return nil, s, errors.New("a filter must start with @")
	}
	path, rest, err := parse(s[1:], true)
	if err != nil {
		return nil, s, err
	}
	rest = strings.TrimLeft(rest, " ")
	f := &filter{path: path}
	switch {
	case strings.HasPrefix(rest, "=="):
		f.equal, rest = true, rest[2:]
	case strings.HasPrefix(rest, "!="):
		rest = rest[2:]
	default:
		return nil, s, errors.New("a filter compares with == or !=")
	}
	rest = strings.TrimLeft(rest, " ")
	end := strings.Index(rest, ")]")
	if end < 0 {
		return nil, s, errors.New("unclosed filter")
	}
	lit := strings.TrimSpace(rest[:end])
	switch {
	case len(lit) >= 2 && (lit[0] == '"' || lit[0] == '\'') && lit[len(lit)-1] == lit[0]:
		f.value = lit[1 : len(lit)-1]
	case lit == "true" || lit == "false":
		f.value = lit == "true"
	default:
		n, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			return nil, s, fmt.Errorf("%q is not a literal", lit)
		}
		f.value = n
	}
	return f, rest[end+2:], nil
}

// Members returns the member names of a path made of members only
// (.spec.replicas: spec, replicas), and false for any other.
func (p Path) Members() ([]string, bool) {
	names := make([]string, len(p.steps))
	for i, st := range p.steps {
		if st.kind != memberStep {
			return nil, false
		}
		names[i] = st.member
	}
	return names, true
}

// Find returns the values the path leads to in v, a decoded JSON value,
// in order; none when it leads nowhere.
func (p Path) Find(v any) []any {
	values := []any{v}
	for _, st := range p.steps {
		var next []any
		for _, v := range values {
			switch st.kind {
			case memberStep:
				if m, ok := v.(map[string]any); ok {
					if x, ok := m[st.member]; ok {
						next = append(next, x)
					}
				}
			case indexStep:
				l, _ := v.([]any)
				i := st.index
				if i < 0 {
					i += len(l)
				}
				switch {
				case st.all:
					next = append(next, l...)
				case i >= 0 && i < len(l):
					next = append(next, l[i])
				}
			case filterStep:
				l, _ := v.([]any)
				for _, item := range l {
					if st.filter.matches(item) {
						next = append(next, item)
					}
				}
			}
		}
		values = next
	}
	return values
}

func (f *filter) matches(item any) bool {
	found := f.path.Find(item)
	if len(found) == 0 {
		return !f.equal
	}
	got := found[0]
	switch n := got.(type) {
	case int64:
		got = float64(n)
	case map[string]any, []any:
		return !f.equal // never equal to a literal
	}
	return (got == f.value) == f.equal
}
