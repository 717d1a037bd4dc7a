// Package controller is the example project's controller: it reconciles
// CronJobs as a kubebuilder project's internal/controller does.
package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1 "github.com/kapi-dev/kapi/internal/test/ctrltest/project/api/v1"
)

// CronJobReconciler reconciles a CronJob: its status counts its replicas
// as active (none while suspended) and says it is Ready.
type CronJobReconciler struct {
	client.Client
	Recorder events.EventRecorder
}

// Reconcile brings a CronJob's status to what its spec says.
func (r *CronJobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cj batchv1.CronJob
	if err := r.Get(ctx, req.NamespacedName, &cj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	active := int32(0)
	if cj.Spec.Replicas != nil && (cj.Spec.Suspend == nil || !*cj.Spec.Suspend) {
		active = *cj.Spec.Replicas
	}
	cj.Status.Active = active
	meta.SetStatusCondition(&cj.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled", Message: "schedule " + cj.Spec.Schedule, ObservedGeneration: cj.Generation})
	if err := r.Status().Update(ctx, &cj); err != nil {
		return ctrl.Result{}, err
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(&cj, nil, corev1.EventTypeNormal, "Reconciled", "Reconcile", "%d active", active)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler with a manager.
func (r *CronJobReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&batchv1.CronJob{}).Named("cronjob").Complete(r)
}
