// Package jsonpath evaluates the JSON paths a CustomResourceDefinition's
// additionalPrinterColumns, selectableFields and scale subresource name:
// members after dots (.spec.replicas) or quoted in brackets
// (['a.b']), list indexes ([0]), the wildcard [*], and the filter
// [?(@.type=="Ready")] that compares a member with a literal, which is
// what real CustomResourceDefinitions' columns use. kubectl's JSONPath
// templates ({range}, functions) are not paths and are refused.
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
	index  int // for an index step; -1 for the wildcard
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
			n := 0
			for n < len(s) && s[n] != '.' && s[n] != '[' && !(inFilter && strings.ContainsRune(" =!)", rune(s[n]))) {
				n++
			}
			if n == 0 {
				return p, s, fmt.Errorf("%w %q: an empty member name", ErrSyntax, orig)
			}
			p.steps = append(p.steps, step{kind: memberStep, member: s[:n]})
			s = s[n:]
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
				p.steps = append(p.steps, step{kind: indexStep, index: -1})
			case len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0]:
				p.steps = append(p.steps, step{kind: memberStep, member: inner[1 : len(inner)-1]})
			default:
				i, err := strconv.Atoi(inner)
				if err != nil || i < 0 {
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
				switch {
				case st.index < 0:
					next = append(next, l...)
				case st.index < len(l):
					next = append(next, l[st.index])
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
