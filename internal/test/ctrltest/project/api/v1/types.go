// Package v1 is the API of the example project: batch.example.com/v1
// CronJob, as a kubebuilder project's api/v1 holds it (its deep copies
// written by hand here instead of by controller-gen).
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the project's API group and version.
var GroupVersion = schema.GroupVersion{Group: "batch.example.com", Version: "v1"}

// AddToScheme adds the project's types to a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &CronJob{}, &CronJobList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// CronJob is the Schema for the cronjobs API.
type CronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CronJobSpec   `json:"spec,omitempty"`
	Status CronJobStatus `json:"status,omitempty"`
}

// CronJobSpec defines the desired state of CronJob.
type CronJobSpec struct {
	Schedule string `json:"schedule"`
	Suspend  *bool  `json:"suspend,omitempty"`
	Replicas *int32 `json:"replicas,omitempty"`
}

// CronJobStatus defines the observed state of CronJob.
type CronJobStatus struct {
	Active           int32              `json:"active,omitempty"`
	LastScheduleTime *metav1.Time       `json:"lastScheduleTime,omitempty"`
	Conditions       []metav1.Condition `json:"conditions,omitempty"`
}

// CronJobList contains a list of CronJob.
type CronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronJob `json:"items"`
}

// DeepCopyObject copies a CronJob.
func (in *CronJob) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.Suspend != nil {
		v := *in.Spec.Suspend
		out.Spec.Suspend = &v
	}
	if in.Spec.Replicas != nil {
		v := *in.Spec.Replicas
		out.Spec.Replicas = &v
	}
	if in.Status.LastScheduleTime != nil {
		out.Status.LastScheduleTime = in.Status.LastScheduleTime.DeepCopy()
	}
	out.Status.Conditions = make([]metav1.Condition, len(in.Status.Conditions))
	for i := range in.Status.Conditions {
		in.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
	}
	if in.Status.Conditions == nil {
		out.Status.Conditions = nil
	}
	return &out
}

// DeepCopyObject copies a CronJobList.
func (in *CronJobList) DeepCopyObject() runtime.Object {
	out := *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]CronJob, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopyObject().(*CronJob)
	}
	return &out
}
