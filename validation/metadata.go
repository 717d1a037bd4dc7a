package validation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/names"
)

// Metadata is validated as kube-apiserver validates it, with its words:
// clients (kubectl, controllers copying labels between objects) rely on the
// same rules holding everywhere, and the limits keep one object's metadata
// from growing without bound. These are pure functions of the values, for
// the server's request path and for any engine that checks metadata (an
// embedded resource's, say).

// TotalAnnotationBytes bounds the annotations of an object, keys and
// values together, as Kubernetes does.
const TotalAnnotationBytes = 256 << 10

// Labels checks label keys (qualified names) and values as kube-apiserver
// does, with its words; field is the path of the labels
// (metadata.labels). Keys are visited in order, so the errors are stable.
func Labels(labels map[string]string, field string) []*Error {
	valid := true
	for k, v := range labels { // the usual case, without sorting or regexps
		valid = valid && names.ValidQualifiedName(k) && names.ValidLabelValue(v)
	}
	if valid {
		return nil
	}
	var errs []*Error
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		for _, msg := range names.IsQualifiedName(k) {
			errs = append(errs, invalid(field, k, msg))
		}
		for _, msg := range names.IsLabelValue(labels[k]) {
			errs = append(errs, invalid(field, labels[k], msg))
		}
	}
	return errs
}

// Annotations checks annotation keys (qualified names, in any case) and
// that keys and values together hold at most TotalAnnotationBytes, as
// kube-apiserver does.
func Annotations(annotations map[string]string, field string) []*Error {
	valid, size := true, 0
	for k, v := range annotations { // the usual case, without sorting or regexps
		valid = valid && names.ValidQualifiedName(strings.ToLower(k))
		size += len(k) + len(v)
	}
	if valid && size <= TotalAnnotationBytes {
		return nil
	}
	var errs []*Error
	size = 0
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		// A qualified name, except that case does not matter.
		for _, msg := range names.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, invalid(field, k, msg))
		}
		size += len(k) + len(annotations[k])
	}
	if size > TotalAnnotationBytes {
		errs = append(errs, &Error{Type: kapi.CauseTypeFieldValueTooLong, Field: field,
			Detail: fmt.Sprintf("may not be more than %d bytes", TotalAnnotationBytes)})
	}
	return errs
}

// OwnerReferences checks that each reference names its apiVersion, kind,
// name and uid, and that at most one is the controller, as kube-apiserver
// does.
func OwnerReferences(refs []kapi.OwnerReference, field string) []*Error {
	var errs []*Error
	controller := ""
	for i, ref := range refs {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch gv := strings.Split(ref.APIVersion, "/"); {
		case ref.APIVersion == "":
			errs = append(errs, &Error{Type: kapi.CauseTypeFieldValueRequired, Field: at + ".apiVersion", Detail: "must not be empty"})
		case len(gv) > 2 || gv[len(gv)-1] == "": // "/v1" is the core group, as Kubernetes parses it
			errs = append(errs, invalid(at+".apiVersion", ref.APIVersion, "must be <group>/<version> or <version>"))
		}
		if ref.Kind == "" {
			errs = append(errs, &Error{Type: kapi.CauseTypeFieldValueRequired, Field: at + ".kind", Detail: "must not be empty"})
		}
		if ref.Name == "" {
			errs = append(errs, &Error{Type: kapi.CauseTypeFieldValueRequired, Field: at + ".name", Detail: "must not be empty"})
		}
		if ref.UID == "" {
			errs = append(errs, &Error{Type: kapi.CauseTypeFieldValueRequired, Field: at + ".uid", Detail: "must not be empty"})
		}
		if ref.Controller != nil && *ref.Controller {
			this := ref.Kind + "/" + ref.Name
			if controller != "" {
				errs = append(errs, invalid(field, refs, fmt.Sprintf("Only one reference can have Controller set to true. Found \"true\" in references for %v and %v", controller, this)))
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

// Finalizers checks finalizer names (qualified names), and that orphan
// and foregroundDeletion are not both set, as kube-apiserver does.
func Finalizers(finalizers []string, field string) []*Error {
	var errs []*Error
	for _, f := range finalizers {
		for _, msg := range names.IsQualifiedName(f) {
			errs = append(errs, invalid(field, f, msg))
		}
	}
	if slices.Contains(finalizers, finalizerOrphanDependents) && slices.Contains(finalizers, finalizerDeleteDependents) {
		errs = append(errs, invalid(field, finalizers, fmt.Sprintf("finalizer %s and %s cannot be both set", finalizerOrphanDependents, finalizerDeleteDependents)))
	}
	return errs
}
