package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/kapi-dev/kapi"
)

// This file runs the admission hooks of package admission on a write: it
// builds the Request from the write under way, and answers a rejection as
// kube-apiserver answers one of its admission plugins.

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
			return rq.res.about(NewStatusError(http.StatusForbidden, kapi.StatusReasonForbidden,
				fmt.Sprintf("%s %q is forbidden: %v", rq.res.qualifiedResource(), req.Name, err)), req.Name)
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
