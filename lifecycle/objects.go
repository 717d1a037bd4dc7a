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

// Objects is what the controllers need of a server. Errors wrap the
// sentinels of package storage (storage.ErrNotFound, storage.ErrConflict)
// where those apply.
type Objects interface {
	// Resources lists the served resources.
	Resources() []Resource
	// Get reads the current version of an object; the caller may change
	// what it gets.
	Get(ctx context.Context, r Resource, namespace, name string) (kapi.Object, error)
	// List reads the current objects of a resource in a namespace ("" for
	// all), shared with other readers: the caller must not change them.
	List(ctx context.Context, r Resource, namespace string) ([]kapi.Object, error)
	// Update writes obj, or its subresource ("status", "finalize"), if its
	// metadata.resourceVersion is still the stored one (else ErrConflict),
	// and returns what was stored.
	Update(ctx context.Context, r Resource, obj kapi.Object, subresource string) (kapi.Object, error)
	// Delete deletes an object as a DELETE with propagationPolicy
	// Background would, if its uid is uid: an object with finalizers is
	// only marked for deletion.
	Delete(ctx context.Context, r Resource, namespace, name, uid string) error
	// Watch calls changed with every object of r as it is when the watch
	// starts, then with every later version, a deleted object's last one
	// included, until ctx ends. It returns ctx's error, or why it could not
	// go on.
	Watch(ctx context.Context, r Resource, changed func(obj kapi.Object, deleted bool)) error
}
