// Package gc is kapi's garbage collector: it deletes the objects whose
// owners are gone, as kube-controller-manager's garbage collector does for a
// Kubernetes cluster, inside the server.
//
// # Owners and dependents
//
// An object names its owners in metadata.ownerReferences (apiVersion, kind,
// name, uid). An owner is an object of any registered resource; a reference
// to a namespaced owner is looked up in the dependent's namespace, and one
// from a cluster-scoped dependent to a namespaced kind is invalid: as in
// Kubernetes, it is left alone (and logged), never collected. A reference
// whose owner is absent, or present with another uid, is dangling. An
// object all of whose references dangle is deleted; one with a live owner
// loses its dangling references and stays.
//
// # Propagation policies
//
// A DELETE chooses what becomes of the dependents ([DeletionFinalizers]):
//
//   - Background (the default, as for custom resources in Kubernetes): the
//     owner goes at once, the collector deletes its dependents after.
//   - Foreground: the owner gets the finalizer foregroundDeletion and a
//     deletionTimestamp; the collector deletes its dependents (those that
//     have dependents of their own in the foreground too) and removes the
//     finalizer once no dependent with blockOwnerDeletion is left.
//   - Orphan (or orphanDependents=true): the owner gets the finalizer
//     orphan; the collector removes the references to it from its
//     dependents, then the finalizer.
//
// # Shape
//
// The collector reads and writes through [Objects], the small seam the
// server implements. It watches every resource and keeps a graph of the
// objects that have owners, by uid, and of the dependents of each owner.
// Changes put objects on a queue; workers decide on each from the server's
// latest state, never from the graph alone, and write with preconditions
// (the uid, and the resourceVersion it decided on), so that a decision made
// on stale state fails instead of harming. That is also what makes it safe
// for several replicas on one store to collect at the same time: each
// write of one of them that another has made already is a no-op or a
// conflict. The graph is rebuilt from the server's objects whenever the
// collector starts (level-triggered), so a dependent whose owner was
// deleted while no server ran is collected when one starts.
package gc
