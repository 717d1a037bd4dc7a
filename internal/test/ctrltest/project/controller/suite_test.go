package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kapi-dev/kapi/crd/crdtest"
	batchv1 "github.com/kapi-dev/kapi/internal/test/ctrltest/project/api/v1"
)

// The suite as kubebuilder scaffolds it (with testing instead of Ginkgo),
// its environment's start changed from envtest's (and the client limits of
// the configuration envtest returns written out)
//
//	testEnv = &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
//	cfg, err = testEnv.Start()
//
// to crdtest's, and nothing else; with KAPI_ENVTEST_ASSETS set, it runs on
// envtest itself instead (envtest_test.go), to compare the two.
var (
	cfg       *rest.Config
	k8sClient client.Client
	testEnv   *crdtest.Environment
	ctx       context.Context
	cancel    context.CancelFunc
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	started := time.Now()
	stopEnv, name := func() error { return testEnv.Stop() }, "crdtest"
	var err error
	if assets := os.Getenv(envtestAssets); assets != "" {
		if cfg, stopEnv, err = startEnvtest(assets); err != nil {
			panic(err)
		}
		name = "envtest"
	} else {
		testEnv = &crdtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
		host, err := testEnv.Start()
		if err != nil {
			panic(err)
		}
		// The client limits envtest's configuration carries
		// (controller-runtime's envtest/server.go): client-go's default,
		// 5 requests/s, would make this suite wait on its own client.
		cfg = &rest.Config{Host: host, QPS: 1000, Burst: 2000}
	}
	fmt.Fprintf(os.Stderr, "the suite's environment (%s) started in %v\n", name, time.Since(started).Round(time.Millisecond))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := batchv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if k8sClient, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		panic(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		panic(err)
	}
	if err := (&CronJobReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("cronjob-controller")}).SetupWithManager(mgr); err != nil {
		panic(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	code := m.Run()

	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	if err := stopEnv(); err != nil {
		panic(err)
	}
	os.Exit(code)
}

// eventually polls until ok holds, failing the test after a minute.
func eventually(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("not so after a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCronJobReconciled(t *testing.T) {
	three := int32(3)
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "default"},
		Spec:       batchv1.CronJobSpec{Schedule: "0 3 * * *", Replicas: &three},
	}
	if err := k8sClient.Create(ctx, cj); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Name: "nightly", Namespace: "default"}
	var got batchv1.CronJob
	eventually(t, func() bool {
		return k8sClient.Get(ctx, key, &got) == nil && got.Status.Active == 3 && len(got.Status.Conditions) == 1
	})
	if c := got.Status.Conditions[0]; c.Type != "Ready" || c.Status != metav1.ConditionTrue || c.Message != "schedule 0 3 * * *" || c.ObservedGeneration != 1 {
		t.Errorf("condition: %+v", c)
	}

	// Suspended, it has none active.
	suspend := true
	got.Spec.Suspend = &suspend
	if err := k8sClient.Update(ctx, &got); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool {
		return k8sClient.Get(ctx, key, &got) == nil && got.Status.Active == 0 && got.Status.Conditions[0].ObservedGeneration == 2
	})
}

func TestCronJobDefaultsAndValidation(t *testing.T) {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "defaulted", Namespace: "default"}, Spec: batchv1.CronJobSpec{Schedule: "@hourly"}}
	if err := k8sClient.Create(ctx, cj); err != nil {
		t.Fatal(err)
	}
	if cj.Spec.Replicas == nil || *cj.Spec.Replicas != 1 {
		t.Errorf("replicas not defaulted by the schema: %v", cj.Spec.Replicas)
	}
	bad := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"}, Spec: batchv1.CronJobSpec{Schedule: ""}}
	err := k8sClient.Create(ctx, bad)
	if err == nil || !contains(err.Error(), "spec.schedule: Invalid value: \"\": spec.schedule in body should be at least 1 chars long") {
		t.Errorf("an empty schedule: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
