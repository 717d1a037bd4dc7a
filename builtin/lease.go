package builtin

import "github.com/kapi-dev/kapi"

// Lease is coordination.k8s.io/v1 Lease: what leader election (client-go's
// leaderelection, controller-runtime managers) holds and renews.
type Lease struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec LeaseSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// LeaseSpec is who holds a lease and until when.
type LeaseSpec struct {
	HolderIdentity       *string         `json:"holderIdentity,omitempty" protobuf:"bytes,1,opt,name=holderIdentity" description:"holderIdentity contains the identity of the holder of a current lease."`
	LeaseDurationSeconds *int32          `json:"leaseDurationSeconds,omitempty" protobuf:"varint,2,opt,name=leaseDurationSeconds" description:"leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it."`
	AcquireTime          *kapi.MicroTime `json:"acquireTime,omitempty" protobuf:"bytes,3,opt,name=acquireTime" description:"acquireTime is a time when the current lease was acquired."`
	RenewTime            *kapi.MicroTime `json:"renewTime,omitempty" protobuf:"bytes,4,opt,name=renewTime" description:"renewTime is a time when the current holder of a lease has last updated the lease."`
	LeaseTransitions     *int32          `json:"leaseTransitions,omitempty" protobuf:"varint,5,opt,name=leaseTransitions" description:"leaseTransitions is the number of transitions of a lease between holders."`
	Strategy             *string         `json:"strategy,omitempty" protobuf:"bytes,6,opt,name=strategy" description:"Strategy indicates the strategy for picking the leader for coordinated leader election."`
	PreferredHolder      *string         `json:"preferredHolder,omitempty" protobuf:"bytes,7,opt,name=preferredHolder" description:"PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up."`
}
