package builtin

import "github.com/kapi-dev/kapi"

// Namespace is core/v1 Namespace: a scope for the names of namespaced
// objects, which are deleted with it.
type Namespace struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec   NamespaceSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status NamespaceStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// NamespaceSpec holds the finalizers that must be removed (through the
// finalize subresource) before a deleted namespace goes.
type NamespaceSpec struct {
	Finalizers []string `json:"finalizers,omitempty" protobuf:"bytes,1,rep,name=finalizers" description:"Finalizers is an opaque list of values that must be empty to permanently remove object from storage."`
}

// NamespaceStatus is the namespace's phase and the conditions of its deletion.
type NamespaceStatus struct {
	Phase      string               `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase" description:"Phase is the current lifecycle phase of the namespace: Active or Terminating."`
	Conditions []NamespaceCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" listType:"map" listMapKey:"type" protobuf:"bytes,2,rep,name=conditions"`
}

// NamespaceCondition is one aspect of a namespace's deletion.
type NamespaceCondition struct {
	Type               string    `json:"type" protobuf:"bytes,1,opt,name=type"`
	Status             string    `json:"status" protobuf:"bytes,2,opt,name=status"`
	LastTransitionTime kapi.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	Reason             string    `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	Message            string    `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// Namespace phases.
const (
	NamespaceActive      = "Active"
	NamespaceTerminating = "Terminating"
)

// FinalizerKubernetes is the finalizer every namespace gets on creation; the
// namespace deletion controller removes it once the namespace is empty.
const FinalizerKubernetes = "kubernetes"

// The conditions of a terminating namespace, as kube-controller-manager's
// namespace controller sets them.
const (
	NamespaceDeletionDiscoveryFailure = "NamespaceDeletionDiscoveryFailure"
	NamespaceDeletionGVParsingFailure = "NamespaceDeletionGroupVersionParsingFailure"
	NamespaceDeletionContentFailure   = "NamespaceDeletionContentFailure"
	NamespaceContentRemaining         = "NamespaceContentRemaining"
	NamespaceFinalizersRemaining      = "NamespaceFinalizersRemaining"
)

// NamespaceTerminatingCause is the cause type of the 403 that refuses new
// content in a terminating namespace.
const NamespaceTerminatingCause = "NamespaceTerminating"

// Namespaces kube-apiserver creates and keeps: default, kube-system,
// kube-public and kube-node-lease.
const (
	NamespaceDefault   = "default"
	NamespaceSystem    = "kube-system"
	NamespacePublic    = "kube-public"
	NamespaceNodeLease = "kube-node-lease"
)
