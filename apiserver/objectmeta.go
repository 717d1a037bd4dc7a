package apiserver

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
)

// Metadata is validated as kube-apiserver validates it, with its words:
// clients (kubectl, controllers copying labels between objects) rely on the
// same rules holding everywhere, and the limits keep one object's metadata
// from growing without bound.

// totalAnnotationBytes bounds the annotations of an object, keys and values
// together, as Kubernetes does.
const totalAnnotationBytes = 256 << 10

// validateObjectMeta checks what kube-apiserver checks of metadata besides
// name and namespace: generateName (on create: old is nil), label keys and
// values, annotation keys and their total size, owner references, and
// finalizer names. Keys are visited in order, so the causes are stable.
func (rq *request) validateObjectMeta(meta *kapi.ObjectMeta, old kapi.Object) FieldErrors {
	var errs FieldErrors
	if old == nil && meta.GenerateName != "" {
		// A prefix: a trailing '-' is fine, the suffix follows it.
		for _, msg := range rq.res.validateName(maskTrailingDash(meta.GenerateName)) {
			errs = append(errs, Invalid("metadata.generateName", meta.GenerateName, msg))
		}
	}
	errs = append(errs, validateLabels(meta.Labels, "metadata.labels")...)
	errs = append(errs, validateAnnotations(meta.Annotations, "metadata.annotations")...)
	errs = append(errs, validateOwnerReferences(meta.OwnerReferences, "metadata.ownerReferences")...)
	errs = append(errs, validateFinalizers(meta.Finalizers, "metadata.finalizers")...)
	return errs
}

// maskTrailingDash makes a generateName's trailing '-' acceptable to a name
// rule, as Kubernetes does before checking a prefix.
func maskTrailingDash(name string) string {
	if len(name) > 1 && strings.HasSuffix(name, "-") {
		return name[:len(name)-2] + "a"
	}
	return name
}

func validateLabels(labels map[string]string, field string) FieldErrors {
	valid := true
	for k, v := range labels { // the usual case, without sorting or regexps
		valid = valid && validQualifiedName(k) && (v == "" || len(v) <= labelValueMaxLen && matchesQualifiedName(v))
	}
	if valid {
		return nil
	}
	var errs FieldErrors
	for _, k := range sortedKeys(labels) {
		for _, msg := range isQualifiedName(k) {
			errs = append(errs, Invalid(field, k, msg))
		}
		for _, msg := range isLabelValue(labels[k]) {
			errs = append(errs, Invalid(field, labels[k], msg))
		}
	}
	return errs
}

func validateAnnotations(annotations map[string]string, field string) FieldErrors {
	valid, size := true, 0
	for k, v := range annotations { // the usual case, without sorting or regexps
		valid = valid && validQualifiedName(strings.ToLower(k))
		size += len(k) + len(v)
	}
	if valid && size <= totalAnnotationBytes {
		return nil
	}
	var errs FieldErrors
	size = 0
	for _, k := range sortedKeys(annotations) {
		// A qualified name, except that case does not matter.
		for _, msg := range isQualifiedName(strings.ToLower(k)) {
			errs = append(errs, Invalid(field, k, msg))
		}
		size += len(k) + len(annotations[k])
	}
	if size > totalAnnotationBytes {
		errs = append(errs, &FieldError{Type: kapi.CauseTypeFieldValueTooLong, Field: field,
			Detail: fmt.Sprintf("may not be more than %d bytes", totalAnnotationBytes)})
	}
	return errs
}

func validateOwnerReferences(refs []kapi.OwnerReference, field string) FieldErrors {
	var errs FieldErrors
	controller := ""
	for i, ref := range refs {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch gv := strings.Split(ref.APIVersion, "/"); {
		case ref.APIVersion == "":
			errs = append(errs, Required(at+".apiVersion", "must not be empty"))
		case len(gv) > 2 || gv[len(gv)-1] == "": // "/v1" is the core group, as Kubernetes parses it
			errs = append(errs, Invalid(at+".apiVersion", ref.APIVersion, "must be <group>/<version> or <version>"))
		}
		if ref.Kind == "" {
			errs = append(errs, Required(at+".kind", "must not be empty"))
		}
		if ref.Name == "" {
			errs = append(errs, Required(at+".name", "must not be empty"))
		}
		if ref.UID == "" {
			errs = append(errs, Required(at+".uid", "must not be empty"))
		}
		if ref.Controller != nil && *ref.Controller {
			this := ref.Kind + "/" + ref.Name
			if controller != "" {
				errs = append(errs, Invalid(field, refs, fmt.Sprintf("Only one reference can have Controller set to true. Found \"true\" in references for %v and %v", controller, this)))
			} else {
				controller = this
			}
		}
	}
	return errs
}

const (
	finalizerOrphanDependents = "orphan"
	finalizerDeleteDependents = "foregroundDeletion"
)

func validateFinalizers(finalizers []string, field string) FieldErrors {
	var errs FieldErrors
	for _, f := range finalizers {
		for _, msg := range isQualifiedName(f) {
			errs = append(errs, Invalid(field, f, msg))
		}
	}
	if slices.Contains(finalizers, finalizerOrphanDependents) && slices.Contains(finalizers, finalizerDeleteDependents) {
		errs = append(errs, Invalid(field, finalizers, fmt.Sprintf("finalizer %s and %s cannot be both set", finalizerOrphanDependents, finalizerDeleteDependents)))
	}
	return errs
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The syntax of qualified names (label keys, annotation keys, finalizers)
// and label values, with Kubernetes' messages.
const (
	qualifiedNameFmt    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	qualifiedNameMaxLen = 63
	labelValueFmt       = "(" + qualifiedNameFmt + ")?"
	labelValueErrMsg    = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueMaxLen    = 63
	subdomainMaxLen     = 253
	subdomainErrMsg     = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	subdomainFmt        = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)

var (
	qualifiedNameRegexp = regexp.MustCompile("^" + qualifiedNameFmt + "$")
	labelValueRegexp    = regexp.MustCompile("^" + labelValueFmt + "$")
)

// isQualifiedName checks a label key: an optional DNS subdomain prefix and
// '/', then a name of at most 63 characters.
// validQualifiedName is isQualifiedName(value) == nil, without regexps
// (FuzzQualifiedNameMatchers holds them equal).
func validQualifiedName(value string) bool {
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

func isQualifiedName(value string) []string {
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

// isLabelValue checks a label value: empty, or at most 63 characters of a
// qualified name's.
func isLabelValue(value string) []string {
	var msgs []string
	if len(value) > labelValueMaxLen {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d bytes", labelValueMaxLen))
	}
	if !labelValueRegexp.MatchString(value) {
		msgs = append(msgs, regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return msgs
}

// regexError is Kubernetes' wording of a value that does not match a
// pattern: the rule, examples, then the pattern.
func regexError(msg, pattern string, examples ...string) string {
	quoted := make([]string, len(examples))
	for i, e := range examples {
		quoted[i] = "'" + e + "'"
	}
	return msg + " (e.g. " + strings.Join(quoted, " or ") + ", regex used for validation is '" + pattern + "')"
}
