package apiserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/names"
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
		valid = valid && names.ValidQualifiedName(k) && names.ValidLabelValue(v)
	}
	if valid {
		return nil
	}
	var errs FieldErrors
	for _, k := range sortedKeys(labels) {
		for _, msg := range names.IsQualifiedName(k) {
			errs = append(errs, Invalid(field, k, msg))
		}
		for _, msg := range names.IsLabelValue(labels[k]) {
			errs = append(errs, Invalid(field, labels[k], msg))
		}
	}
	return errs
}

func validateAnnotations(annotations map[string]string, field string) FieldErrors {
	valid, size := true, 0
	for k, v := range annotations { // the usual case, without sorting or regexps
		valid = valid && names.ValidQualifiedName(strings.ToLower(k))
		size += len(k) + len(v)
	}
	if valid && size <= totalAnnotationBytes {
		return nil
	}
	var errs FieldErrors
	size = 0
	for _, k := range sortedKeys(annotations) {
		// A qualified name, except that case does not matter.
		for _, msg := range names.IsQualifiedName(strings.ToLower(k)) {
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
		for _, msg := range names.IsQualifiedName(f) {
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
