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
// envtest, and is otherwise as kubebuilder scaffolds it. With
// KAPI_ENVTEST_ASSETS naming a directory of envtest's binaries
// (kube-apiserver, etcd, kubectl; internal/test/aggregation's
// build-kube-apiserver.sh builds the first two from the Go module proxy),
// the same suite runs on envtest itself, and TestStartupSideBySide times
// the two environments' start-up in turn; without it (CI) the suite runs
// on crdtest and that test is skipped.
package ctrltest
