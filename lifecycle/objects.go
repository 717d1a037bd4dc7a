package lifecycle

import (
	"context"

	"github.com/kapi-dev/kapi"
)

// Resource names a served resource.
type Resource struct {
	Group, Version, Kind, Plural string
	Namespaced                   bool
}

// Change is one change to the objects of a resource, or the end of the
// initial ones.
type Change struct {
	// Meta is the object's metadata after the change; for a deletion, its
	// last. It is shared: read-only.
	Meta    *kapi.ObjectMeta
	Deleted bool
	// Revision is the change's; for Synced, that of the state sent.
	Revision int64
	// Synced marks the end of the initial changes; Meta is nil.
	Synced bool
}

// DeleteOptions are the options of a deletion by a controller.
type DeleteOptions struct {
	// Preconditions: the object must still have this uid and, if not
	// empty, this resourceVersion.
	UID, ResourceVersion string
	// PropagationPolicy is Background, Foreground or Orphan.
	PropagationPolicy string
}

// Objects is what the controllers need of a server. Errors wrap the
// sentinels of package storage (storage.ErrNotFound, storage.ErrConflict)
// where those apply.
type Objects interface {
	// Resources lists the served resources.
	Resources() []Resource
	// Watch calls changed with every object of res that exists, then with
	// a Synced change, then with each later change, until ctx ends (it
	// returns ctx.Err()) or it can no longer follow the changes (another
	// error: the caller watches again).
	Watch(ctx context.Context, res Resource, changed func(Change)) error
	// Read reads the current version of an object from the store; the
	// caller may change what it gets.
	Read(ctx context.Context, res Resource, namespace, name string) (kapi.Object, error)
	// List reads the current objects of a resource in a namespace ("" for
	// all), shared with other readers: the caller must not change them.
	List(ctx context.Context, res Resource, namespace string) ([]kapi.Object, error)
	// Update writes obj, or its subresource ("status", "finalize"), as a
	// PUT does, if its metadata.resourceVersion is still the stored one
	// (else ErrConflict), and returns what was stored.
	Update(ctx context.Context, res Resource, obj kapi.Object, subresource string) (kapi.Object, error)
	// Delete deletes an object as a DELETE with these options does: an
	// object with finalizers is only marked for deletion.
	Delete(ctx context.Context, res Resource, namespace, name string, opts DeleteOptions) error
}
