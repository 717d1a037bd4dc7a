package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/kapi-dev/kapi"
)

// Operation is the kind of write an admission hook is asked about.
type Operation string

// The operations of admission, named as Kubernetes' AdmissionReview names them.
const (
	OperationCreate Operation = "CREATE"
	OperationUpdate Operation = "UPDATE"
	OperationDelete Operation = "DELETE"
)

// AdmissionRequest is a write about to happen, as admission hooks see it.
type AdmissionRequest struct {
	Operation Operation
	// Group, Version and Resource (the plural) name what is written;
	// Subresource is "status" or "scale" for writes to those.
	Group, Version, Resource, Subresource string
	Kind                                  string
	Namespace, Name                       string
	// User is who asked, when an authenticator runs.
	User User
	// DryRun is true when nothing will be stored (dryRun=All): hooks with
	// side effects must not act on it.
	DryRun bool
	// Object is the object as it will be stored, in the storage version
	// whatever Version the request was in: nil on delete. A mutating hook
	// may change it; validating hooks must not.
	Object kapi.Object
	// OldObject is the stored object: nil on create.
	OldObject kapi.Object
}

// AdmissionFunc admits or rejects a write. It rejects by returning an error:
// a *StatusError is answered as it is; any other error is a 403 Forbidden
// whose message ends with it, as kube-apiserver answers for its admission
// plugins.
type AdmissionFunc func(ctx context.Context, req *AdmissionRequest) error

// WithMutatingAdmission adds hooks that may change every object written, in
// order, before the resource's validation.
func WithMutatingAdmission(hooks ...AdmissionFunc) Option {
	return func(c *config) { c.mutating = append(c.mutating, hooks...) }
}

// WithValidatingAdmission adds hooks that accept or reject every write after
// the resource's validation, just before it is stored.
func WithValidatingAdmission(hooks ...AdmissionFunc) Option {
	return func(c *config) { c.validating = append(c.validating, hooks...) }
}

// admissionRequest describes the write rq is making.
func (rq *request) admissionRequest(ctx context.Context, op Operation, obj, old kapi.Object, dryRun bool) *AdmissionRequest {
	user, _ := UserFrom(ctx)
	name := rq.name
	if obj != nil {
		name = obj.GetObjectMeta().Name
	}
	return &AdmissionRequest{
		Operation: op, Group: rq.res.Group, Version: rq.res.Version, Resource: rq.res.Plural,
		Subresource: rq.subresource, Kind: rq.res.Kind, Namespace: rq.namespace, Name: name,
		User: user, DryRun: dryRun, Object: obj, OldObject: old,
	}
}

// admit runs hooks on a write; the first to reject ends it.
func (rq *request) admit(ctx context.Context, hooks []AdmissionFunc, req *AdmissionRequest) error {
	for _, hook := range hooks {
		if err := hook(ctx, req); err != nil {
			var se *StatusError
			if errors.As(err, &se) {
				return se
			}
			e := NewStatusError(http.StatusForbidden, kapi.StatusReasonForbidden,
				fmt.Sprintf("%s %q is forbidden: %v", rq.res.qualifiedResource(), req.Name, err))
			e.Status.Details = &kapi.StatusDetails{Name: req.Name, Group: rq.res.Group, Kind: rq.res.Plural}
			return e
		}
	}
	return nil
}

// mutate runs the mutating hooks on a write; they may change obj in place.
func (rq *request) mutate(ctx context.Context, op Operation, obj, old kapi.Object, dryRun bool) error {
	if len(rq.s.config.mutating) == 0 {
		return nil
	}
	return rq.admit(ctx, rq.s.config.mutating, rq.admissionRequest(ctx, op, obj, old, dryRun))
}

// admitValid runs the validating hooks on a write.
func (rq *request) admitValid(ctx context.Context, op Operation, obj, old kapi.Object, dryRun bool) error {
	if len(rq.s.config.validating) == 0 {
		return nil
	}
	return rq.admit(ctx, rq.s.config.validating, rq.admissionRequest(ctx, op, obj, old, dryRun))
}
