package admission

import (
	"context"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/auth"
)

// Operation is the kind of write an admission hook is asked about.
type Operation string

// The operations of admission, named as Kubernetes' AdmissionReview names
// them, so that a webhook's rules and a hook's switch read the same.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Request is a write about to happen, as admission hooks see it.
type Request struct {
	Operation Operation
	// Group, Version and Resource (the plural) name what is written;
	// Subresource is "status" or "scale" for writes to those.
	Group, Version, Resource, Subresource string
	Kind                                  string
	Namespace, Name                       string
	// User is who asked, when the server authenticates its requests.
	User auth.User
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

// Func admits or rejects a write. It rejects by returning an error: an
// apiserver.StatusError is answered as it is, so a hook chooses its own
// code and reason; any other error is a 403 Forbidden whose message ends
// with it, as kube-apiserver answers for its admission plugins.
type Func func(ctx context.Context, req *Request) error
