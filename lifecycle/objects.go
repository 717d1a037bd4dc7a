package lifecycle

import (
	"context"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/gc"
)

// Resource, Change and DeleteOptions are the garbage collector's: both
// kinds of controller see the server through the same seam.
type (
	Resource      = gc.Resource
	Change        = gc.Change
	DeleteOptions = gc.DeleteOptions
)

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
	// Objects stored there that cannot be read (corrupt, or encrypted
	// under a lost key) are an error, returned with those that can be.
	List(ctx context.Context, res Resource, namespace string) ([]kapi.Object, error)
	// Update writes obj, or its subresource ("status", "finalize"), as a
	// PUT does, if its metadata.resourceVersion is still the stored one
	// (else ErrConflict), and returns what was stored, shared with other
	// readers: the caller must not change it.
	Update(ctx context.Context, res Resource, obj kapi.Object, subresource string) (kapi.Object, error)
	// Delete deletes an object as a DELETE with these options does: an
	// object with finalizers is only marked for deletion.
	Delete(ctx context.Context, res Resource, namespace, name string, opts DeleteOptions) error
}
