package apiserver

import (
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
)

// totalAnnotationBytes is kube-apiserver's limit on the annotations of one
// object, keys and values together.
const totalAnnotationBytes = 256 << 10

// validateLabelsAndAnnotations checks metadata as kube-apiserver does:
// label keys and annotation keys are qualified names, label values are at
// most 63 characters of a restricted alphabet, and the annotations of one
// object total at most 256 KiB.
func validateLabelsAndAnnotations(meta *kapi.ObjectMeta) FieldErrors {
	var errs FieldErrors
	for _, k := range sortedKeys(meta.Labels) {
		if msg := qualifiedNameProblem(k); msg != "" {
			errs = append(errs, Invalid("metadata.labels", k, msg))
		}
		if v := meta.Labels[k]; len(v) > 63 || !labelValue.MatchString(v) {
			errs = append(errs, Invalid("metadata.labels", v, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, at most 63 characters"))
		}
	}
	total := 0
	for _, k := range sortedKeys(meta.Annotations) {
		if msg := qualifiedNameProblem(strings.ToLower(k)); msg != "" {
			errs = append(errs, Invalid("metadata.annotations", k, msg))
		}
		total += len(k) + len(meta.Annotations[k])
	}
	if total > totalAnnotationBytes {
		errs = append(errs, &FieldError{Type: kapi.CauseTypeFieldValueTooLong, Field: "metadata.annotations", Detail: "may not be more than 262144 bytes"})
	}
	return errs
}

// qualifiedNameProblem says what is wrong with a label or annotation key,
// or "".
func qualifiedNameProblem(key string) string {
	if !qualifiedName.MatchString(key) || !qualifiedNameLengths(key) {
		return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, at most 63 characters, with an optional DNS subdomain prefix and '/'"
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
