// Package ctrltest runs a controller-runtime manager against the example
// server, as a user's controller would run against a cluster: leader
// election on a coordination.k8s.io/v1 Lease, a controller reconciling
// widgets, and event recorders (core/v1 and events.k8s.io/v1) whose events
// kubectl describe shows. It is a module of its own so that
// controller-runtime is required by nothing else.
//
// The directory project is a small kubebuilder-style project of its own
// (api/v1, config/crd/bases, controller) whose suite starts its
// environment with package crd/crdtest where kubebuilder's starts
// envtest, and is otherwise as kubebuilder scaffolds it.
package ctrltest
