// Package builtin holds the Go types of the Kubernetes built-in kinds that a
// kapi server can serve beside a user's own resources: core/v1 Namespace,
// coordination.k8s.io/v1 Lease, core/v1 Event and events.k8s.io/v1 Event.
//
// # Wire form
//
// The types carry Kubernetes' JSON names and protobuf field numbers, so that
// client-go's typed clients (which ask for protobuf), controller-runtime and
// kubectl read and write them as they do against kube-apiserver. Only the
// fields are here: what the server does with them (a namespace's phase and
// finalizer, an event's time to live) is set up by the options of package
// apiserver that serve them (WithNamespaces, WithLeases, WithEvents).
//
// # Names
//
// The two Event kinds share a name in Kubernetes; here core/v1's is Event
// (what kubectl describe reads) and events.k8s.io/v1's is EventsEvent: two
// forms of one stored event, as in Kubernetes. EventToCore and
// EventFromCore convert between them as kube-apiserver does; a server
// stores both as core/v1 events.
package builtin
