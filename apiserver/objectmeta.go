package apiserver

import (
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

// validateObjectMeta checks what kube-apiserver checks of metadata besides
// name and namespace: generateName (on create: old is nil), label keys and
// values, annotation keys and their total size, owner references, and
// finalizer names (package validation has the rules). Keys are visited in
// order, so the causes are stable.
func (rq *request) validateObjectMeta(meta *kapi.ObjectMeta, old kapi.Object) FieldErrors {
	var errs FieldErrors
	if old == nil && meta.GenerateName != "" {
		// A prefix: a trailing '-' is fine, the suffix follows it.
		for _, msg := range rq.res.validateName(maskTrailingDash(meta.GenerateName)) {
			errs = append(errs, Invalid("metadata.generateName", meta.GenerateName, msg))
		}
	}
	for _, list := range [][]*validation.Error{
		validation.Labels(meta.Labels, "metadata.labels"),
		validation.Annotations(meta.Annotations, "metadata.annotations"),
		validation.OwnerReferences(meta.OwnerReferences, "metadata.ownerReferences"),
		validation.Finalizers(meta.Finalizers, "metadata.finalizers"),
	} {
		for _, e := range list {
			errs = append(errs, (*FieldError)(e))
		}
	}
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
