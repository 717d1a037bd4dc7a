package names

import (
	"fmt"
	"regexp"
	"strings"
)

// The syntax of qualified names (label keys, annotation keys, finalizers)
// and label values, with Kubernetes' messages.
const (
	qualifiedNameFmt    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	qualifiedNameMaxLen = 63
	labelValueFmt       = "(" + qualifiedNameFmt + ")?"
	labelValueErrMsg    = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	LabelValueMaxLen    = 63
	subdomainMaxLen     = 253
	subdomainErrMsg     = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	subdomainFmt        = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)

var (
	qualifiedNameRegexp = regexp.MustCompile("^" + qualifiedNameFmt + "$")
	labelValueRegexp    = regexp.MustCompile("^" + labelValueFmt + "$")
)

// IsQualifiedName checks a label key: an optional DNS subdomain prefix and
// '/', then a name of at most 63 characters.
// ValidQualifiedName is IsQualifiedName(value) == nil, without regexps
// (FuzzQualifiedNameMatchers holds them equal).
func ValidQualifiedName(value string) bool {
	name := value
	if i := strings.IndexByte(value, '/'); i >= 0 {
		prefix := value[:i]
		name = value[i+1:]
		if prefix == "" || len(prefix) > subdomainMaxLen || !matchesSubdomain(prefix) {
			return false
		}
	}
	return name != "" && len(name) <= qualifiedNameMaxLen && matchesQualifiedName(name)
}

// matchesQualifiedName is qualifiedNameRegexp.MatchString(s): letters and
// digits at both ends, letters, digits, '-', '_' and '.' between.
func matchesQualifiedName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
		case (c == '-' || c == '_' || c == '.') && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}

// matchesSubdomain is dns1123Subdomain.MatchString(s): dot-separated
// labels of lower-case letters, digits and '-', not at either end.
func matchesSubdomain(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			c := s[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
			continue
		}
		if i == start || s[start] == '-' || s[i-1] == '-' {
			return false // an empty label, or '-' at one of its ends
		}
		start = i + 1
	}
	return true
}

func IsQualifiedName(value string) []string {
	var msgs []string
	parts := strings.Split(value, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		prefix := parts[0]
		name = parts[1]
		if prefix == "" {
			msgs = append(msgs, "prefix part must be non-empty")
		} else {
			if len(prefix) > subdomainMaxLen {
				msgs = append(msgs, fmt.Sprintf("prefix part must be no more than %d bytes", subdomainMaxLen))
			}
			if !dns1123Subdomain.MatchString(prefix) {
				msgs = append(msgs, "prefix part "+regexError(subdomainErrMsg, subdomainFmt, "example.com"))
			}
		}
	default:
		return []string{"a valid label key " + regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc") +
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
	}
	if name == "" {
		msgs = append(msgs, "name part must be non-empty")
	} else if len(name) > qualifiedNameMaxLen {
		msgs = append(msgs, fmt.Sprintf("name part must be no more than %d bytes", qualifiedNameMaxLen))
	}
	if !qualifiedNameRegexp.MatchString(name) {
		msgs = append(msgs, "name part "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return msgs
}

// IsLabelValue checks a label value: empty, or at most 63 characters of a
// qualified name's.
func IsLabelValue(value string) []string {
	var msgs []string
	if len(value) > LabelValueMaxLen {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d bytes", LabelValueMaxLen))
	}
	if !labelValueRegexp.MatchString(value) {
		msgs = append(msgs, regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return msgs
}

// regexError is Kubernetes' wording of a value that does not match a
// pattern: the rule, examples, then the pattern, word for word as
// apimachinery's validation.RegexError writes them (a comma after each
// example, " or " between them).
func regexError(msg, pattern string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + pattern + "')"
	}
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + pattern + "')"
}

const dns1123SubdomainMessage = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

var dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// IsDNS1123Subdomain is the default name validation of Kubernetes.
func IsDNS1123Subdomain(name string) []string {
	var msgs []string
	if len(name) > 253 {
		msgs = append(msgs, "must be no more than 253 characters")
	}
	if !matchesSubdomain(name) {
		msgs = append(msgs, dns1123SubdomainMessage)
	}
	return msgs
}

const dns1123LabelMessage = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

// IsDNS1123Label checks a DNS-1123 label (a namespace's name, a version).
func IsDNS1123Label(name string) []string {
	var msgs []string
	if len(name) > 63 {
		msgs = append(msgs, "must be no more than 63 characters")
	}
	if !MatchesDNS1123Label(name) {
		msgs = append(msgs, dns1123LabelMessage)
	}
	return msgs
}

// ValidLabelValue is IsLabelValue(value) == nil, without regexps.
func ValidLabelValue(value string) bool {
	return value == "" || len(value) <= LabelValueMaxLen && matchesQualifiedName(value)
}

// MatchesDNS1123Label says whether s is a DNS-1123 label of any length:
// a subdomain of one label (FuzzQualifiedNameMatchers holds it equal to
// the regexp, which costs every create of an object a few microseconds).
func MatchesDNS1123Label(s string) bool { return !strings.Contains(s, ".") && matchesSubdomain(s) }

const (
	dns1035LabelErrMsg = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"
	dns1035LabelFmt    = "[a-z]([-a-z0-9]*[a-z0-9])?"
)

var dns1035Label = regexp.MustCompile("^" + dns1035LabelFmt + "$")

// IsDNS1035Label checks a DNS-1035 label (a resource's plural, a kind
// lower-cased, a CustomResourceDefinition's version), with Kubernetes'
// messages.
func IsDNS1035Label(name string) []string {
	var msgs []string
	if len(name) > 63 {
		msgs = append(msgs, "must be no more than 63 characters")
	}
	if !dns1035Label.MatchString(name) {
		msgs = append(msgs, regexError(dns1035LabelErrMsg, dns1035LabelFmt, "my-name", "abc-123"))
	}
	return msgs
}

// IsPathSegmentName says why name cannot be a segment of a resource's path
// (a name or a namespace), as kube's IsValidPathSegmentName: not "." or
// "..", and no "/" or "%"; nil if it can.
func IsPathSegmentName(name string) []string {
	switch {
	case name == "." || name == "..":
		return []string{fmt.Sprintf("may not be '%s'", name)}
	case strings.ContainsAny(name, "/%"):
		return []string{"may not contain '/' or '%'"}
	}
	return nil
}
