package selector

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/internal/names"
)

// Requirement is one requirement of a label or field selector.
type Requirement struct {
	Key    string
	Op     string // "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
	Values []string
}

// Matches says whether a value v (present false when the label is absent)
// meets the requirement.
func (r Requirement) Matches(v string, present bool) bool {
	switch r.Op {
	case "exists":
		return present
	case "!":
		return !present
	case "=", "in":
		return present && slices.Contains(r.Values, v)
	case "!=", "notin":
		return !present || !slices.Contains(r.Values, v)
	case "gt", "lt":
		n, err := strconv.ParseInt(v, 10, 64)
		if !present || err != nil {
			return false
		}
		bound, _ := strconv.ParseInt(r.Values[0], 10, 64)
		return r.Op == "gt" && n > bound || r.Op == "lt" && n < bound
	}
	return false
}

var (
	setRequirement = regexp.MustCompile(`^(\S+)\s+(in|notin)\s*\((.*)\)$`)
)

// ParseLabels reads the label selector syntax: comma-separated
// requirements key, !key, key=v, key==v, key!=v, key in (a,b),
// key notin (a,b), key>n, key<n.
func ParseLabels(s string) ([]Requirement, error) {
	var reqs []Requirement
	for _, part := range splitTopLevel(s) {
		part = strings.TrimSpace(part)
		var r Requirement
		switch {
		case part == "":
			return nil, fmt.Errorf("found '', expected: identifier")
		case strings.HasPrefix(part, "!"):
			r = Requirement{Key: strings.TrimSpace(part[1:]), Op: "!"}
		case setRequirement.MatchString(part):
			m := setRequirement.FindStringSubmatch(part)
			r = Requirement{Key: m[1], Op: m[2]}
			for _, v := range strings.Split(m[3], ",") {
				r.Values = append(r.Values, strings.TrimSpace(v))
			}
		default:
			key, op, value, found := cutOperator(part, "!=", "==", "=", ">", "<")
			if !found {
				r = Requirement{Key: part, Op: "exists"}
				break
			}
			if sym := leadingOperator(value); sym != "" {
				return nil, fmt.Errorf("found '%s', expected: identifier", sym)
			}
			switch op {
			case "==":
				op = "="
			case ">":
				op = "gt"
			case "<":
				op = "lt"
			}
			r = Requirement{Key: key, Op: op, Values: []string{value}}
			if op == "gt" || op == "lt" {
				if _, err := strconv.ParseInt(value, 10, 64); err != nil {
					return nil, fmt.Errorf("for 'Gt', 'Lt' operators, the value must be an integer: %q", value)
				}
			}
		}
		if msgs := names.IsQualifiedName(r.Key); len(msgs) > 0 {
			return nil, fmt.Errorf("invalid label key %q: %s", r.Key, strings.Join(msgs, "; "))
		}
		for _, v := range r.Values {
			if msgs := names.IsLabelValue(v); (r.Op != "gt" && r.Op != "lt") && len(msgs) > 0 {
				return nil, fmt.Errorf("invalid label value: %q: %s", v, strings.Join(msgs, "; "))
			}
		}
		reqs = append(reqs, r)
	}
	return reqs, nil
}

// ParseFields reads key=v, key==v and key!=v, comma-separated.
func ParseFields(s string) ([]Requirement, error) {
	var reqs []Requirement
	for _, part := range splitTopLevel(s) {
		key, op, value, found := cutOperator(strings.TrimSpace(part), "!=", "==", "=")
		if !found || key == "" {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, part)
		}
		if op == "==" {
			op = "="
		}
		reqs = append(reqs, Requirement{Key: key, Op: op, Values: []string{value}})
	}
	return reqs, nil
}

// splitTopLevel splits at commas outside parentheses; "" has no parts.
func splitTopLevel(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// cutOperator splits s at the first of ops found (earlier ops win at the same
// position, so "!=" is not read as "=").
func cutOperator(s string, ops ...string) (key, op, value string, found bool) {
	best := -1
	for _, o := range ops {
		if i := strings.Index(s, o); i >= 0 && (best < 0 || i < best) {
			best, op = i, o
		}
	}
	if best < 0 {
		return "", "", "", false
	}
	return strings.TrimSpace(s[:best]), op, strings.TrimSpace(s[best+len(op):]), true
}

// leadingOperator is the operator a value starts with ("" if none), as
// apimachinery's labels lexer reads it there: the longest of its operator
// tokens, where a value must be an identifier ("tier===" is "tier", "==",
// then "=", refused as "found '=', expected: identifier").
func leadingOperator(value string) string {
	for _, op := range []string{"!=", "==", "=", "!", ">", "<", "(", ")"} {
		if strings.HasPrefix(value, op) {
			return op
		}
	}
	return ""
}

// AuthRequirements are reqs as an authorizer reads them
// (auth.Attributes' selectors); nil when there are none.
func AuthRequirements(reqs []Requirement) []auth.SelectorRequirement {
	if len(reqs) == 0 {
		return nil
	}
	out := make([]auth.SelectorRequirement, len(reqs))
	for i, r := range reqs {
		out[i] = auth.SelectorRequirement{Key: r.Key, Operator: r.Op, Values: r.Values}
	}
	return out
}
