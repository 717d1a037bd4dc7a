// Package lifecycle runs, inside a kapi server, the controllers that
// Kubernetes runs in kube-controller-manager for the life and death of
// objects: the namespace deletion controller, and the expiry of events.
//
// # The seam
//
// A controller sees the server through Objects, a handful of methods that
// read, write and delete objects of any served resource as a request would
// (admission and finalizers apply), and watch them. Package apiserver
// implements it and starts the controllers its options ask for; nothing here
// knows HTTP.
//
// # Namespace deletion
//
// NamespaceDeleter does what kube-controller-manager's namespace controller
// does: for every namespace marked for deletion it deletes every object of
// every namespaced resource in it (each honouring its own finalizers),
// reports progress in the namespace's conditions (NamespaceContentRemaining,
// NamespaceFinalizersRemaining, NamespaceDeletionContentFailure, with
// kube's reasons and messages), and once nothing is left removes the
// "kubernetes" finalizer through the finalize subresource, after which the
// server removes the namespace.
//
// It is level-triggered: it learns of namespaces from a watch that starts
// with every current one, so a server restarted midway picks up where it
// stopped, and it acts on what it reads, not on what it remembers. Several
// replicas sharing one store may run it at once: a conflict is retried from
// a fresh read, and an object another replica already deleted is fine.
//
// # Event expiry
//
// EventExpiry deletes events whose last write is older than a time to live,
// as kube-apiserver's --event-ttl (one hour by default) bounds them.
package lifecycle
