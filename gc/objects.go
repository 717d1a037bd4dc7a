package gc

import (
	"context"
	"slices"

	"github.com/kapi-dev/kapi"
)

// Resource is a registered resource, as the collector sees it.
type Resource struct {
	Group, Version, Kind, Plural string
	Namespaced                   bool
}

// Change is one change to the objects of a resource, or the end of the
// initial ones.
type Change struct {
	// Meta is the object's metadata after the change; for a deletion, its
	// last. It is shared: read-only. Of an object with no ownerReferences,
	// finalizers or deletionTimestamp it may hold only the name,
	// namespace, uid and resourceVersion: the collector reads no more.
	Meta    *kapi.ObjectMeta
	Deleted bool
	// Revision is the change's; for Synced, that of the state sent. The
	// initial changes carry their objects' own.
	Revision int64
	// Synced marks the end of the initial changes: every object that
	// existed when the watch began has been sent. Meta is nil.
	Synced bool
}

// DeleteOptions are the options of a deletion by the collector.
type DeleteOptions struct {
	// Preconditions: the object must still have this uid and, if not
	// empty, this resourceVersion.
	UID, ResourceVersion string
	// PropagationPolicy is Background, Foreground or Orphan.
	PropagationPolicy string
}

// Objects is what the collector needs of the server.
type Objects interface {
	// Resources are the registered resources.
	Resources() []Resource
	// Watch calls changed with every object of res that exists, then with
	// a Synced change, then with each later change, until ctx ends (it
	// returns ctx.Err()) or it can no longer follow the changes (another
	// error: the collector watches again).
	Watch(ctx context.Context, res Resource, changed func(Change)) error
	// Sync waits until Get reflects every write committed before it was
	// called.
	Sync(ctx context.Context) error
	// LastChange is the revision of the last change to the objects of res
	// that Get reflects: once a watch has sent the changes up to it, it
	// has sent every change Get reflects.
	LastChange(res Resource) int64
	// Get returns the current metadata of an object (shared: read-only;
	// as much of it as a Change's Meta), nil if there is none. An object that is stored but cannot be read is
	// an error.
	Get(res Resource, namespace, name string) (*kapi.ObjectMeta, error)
	// Delete deletes an object as a DELETE with these options does.
	Delete(ctx context.Context, res Resource, namespace, name string, opts DeleteOptions) error
	// UpdateMetadata changes the metadata of the object, if it still has
	// the given uid: update gets a copy of it to change (its slices its
	// own) and says whether to write it. Removing the last finalizer of an
	// object being deleted deletes it.
	UpdateMetadata(ctx context.Context, res Resource, namespace, name, uid string, update func(*kapi.ObjectMeta) bool) error
}

// The finalizers of the propagation policies.
const (
	FinalizerOrphan     = "orphan"
	FinalizerForeground = "foregroundDeletion"
)

// DeletionFinalizers are the finalizers an object gets when a DELETE with
// these options marks it for deletion, and whether they differ from the
// ones it has, as kube-apiserver decides for a resource whose default
// policy is Background (custom resources): an explicit orphanDependents
// wins, then propagationPolicy, then the finalizer the object has already.
func DeletionFinalizers(finalizers []string, orphanDependents *bool, propagationPolicy *string) ([]string, bool) {
	orphan, foreground := slices.Contains(finalizers, FinalizerOrphan), slices.Contains(finalizers, FinalizerForeground)
	switch {
	case orphanDependents != nil:
		orphan, foreground = *orphanDependents, false
	case propagationPolicy != nil:
		orphan, foreground = *propagationPolicy == "Orphan", *propagationPolicy == "Foreground"
	case orphan && foreground: // kept as they are: validation refuses both
		return finalizers, false
	}
	next := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return f == FinalizerOrphan || f == FinalizerForeground })
	if orphan {
		next = append(next, FinalizerOrphan)
	}
	if foreground {
		next = append(next, FinalizerForeground)
	}
	if len(next) == len(finalizers) && orphan == slices.Contains(finalizers, FinalizerOrphan) && foreground == slices.Contains(finalizers, FinalizerForeground) {
		return finalizers, false
	}
	return next, true
}
