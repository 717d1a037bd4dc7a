package ctrltest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// TestManager runs a controller-runtime manager with its default leader
// election (a Lease) and both its event recorders against the example
// server: the manager is elected, its controller reconciles a widget and
// writes its status, and kubectl describe shows the events it recorded.
func TestManager(t *testing.T) {
	url := startExample(t)
	cfg := &rest.Config{Host: url, QPS: -1}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		LeaderElection:          true,
		LeaderElectionID:        "widgets.example.com",
		LeaderElectionNamespace: "kube-system",
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the old API writes the core/v1 events kubectl describe reads, which the test checks beside the new API's
	recorder := mgr.GetEventRecorderFor("widget-controller")
	newRecorder := mgr.GetEventRecorder("widget-controller")
	widget := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(widgetGVK)
		return u
	}
	err = ctrl.NewControllerManagedBy(mgr).Named("widgets").For(widget()).Complete(ctrlReconciler(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		w := widget()
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, w); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		replicas, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas")
		if err := unstructured.SetNestedField(w.Object, replicas, "status", "replicas"); err != nil {
			return ctrl.Result{}, err
		}
		if err := unstructured.SetNestedField(w.Object, w.GetGeneration(), "status", "observedGeneration"); err != nil {
			return ctrl.Result{}, err
		}
		if err := mgr.GetClient().Status().Update(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
		recorder.Eventf(w, corev1.EventTypeNormal, "Reconciled", "set %d replicas", replicas)
		newRecorder.Eventf(w, nil, corev1.EventTypeNormal, "Observed", "Reconcile", "generation %d", w.GetGeneration())
		return ctrl.Result{}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the manager: %v", err)
		}
	}()
	select {
	case <-mgr.Elected():
	case err := <-done:
		t.Fatalf("the manager stopped before it was elected: %v", err)
	case <-ctx.Done():
		t.Fatal("the manager was not elected")
	}

	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	var lease coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "widgets.example.com"}, &lease); err != nil {
		t.Fatalf("the leader election lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" || lease.Spec.RenewTime == nil {
		t.Errorf("the lease of an elected manager: %+v; want a holder and a renew time", lease.Spec)
	}

	w := widget()
	w.SetNamespace("default")
	w.SetName("a")
	if err := unstructured.SetNestedField(w.Object, map[string]any{"color": "Red", "replicas": int64(3)}, "spec"); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	// The controller reconciles it: its status says so.
	for {
		got := widget()
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, got); err != nil {
			t.Fatal(err)
		}
		if n, _, _ := unstructured.NestedInt64(got.Object, "status", "replicas"); n == 3 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the widget was not reconciled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// kubectl describe (which reads core/v1 events) shows the events of
	// both recorders: events.k8s.io/v1 events are core events, as on kube.
	var described string
	for !strings.Contains(described, "Reconciled") || !strings.Contains(described, "Observed") {
		if ctx.Err() != nil {
			t.Fatalf("kubectl describe wd a shows no event:\n%s", described)
		}
		time.Sleep(50 * time.Millisecond)
		described = kubectl(t, url, "describe", "wd", "a", "-n", "default")
	}
	if !strings.Contains(described, "set 3 replicas") || !strings.Contains(described, "generation 1") || !strings.Contains(described, "widget-controller") {
		t.Errorf("kubectl describe wd a: an event lacks its message or source:\n%s", described)
	}
	// Each recorder's event reads through the other's API too.
	var core corev1.EventList
	if err := c.List(ctx, &core, client.InNamespace("default"), client.MatchingFields{"involvedObject.name": "a", "reason": "Observed"}); err != nil {
		t.Fatal(err)
	}
	if len(core.Items) != 1 || core.Items[0].Message != "generation 1" || core.Items[0].ReportingController != "widget-controller" || core.Items[0].Action != "Reconcile" || core.Items[0].EventTime.IsZero() {
		t.Errorf("the events.k8s.io/v1 recorder's event as core/v1: %+v", core.Items)
	}
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace("default"), client.MatchingFields{"regarding.name": "a", "reason": "Reconciled"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Note != "set 3 replicas" || list.Items[0].DeprecatedSource.Component != "widget-controller" || list.Items[0].DeprecatedCount < 1 { // 2 when it reconciled twice
		t.Errorf("the core/v1 recorder's event as events.k8s.io/v1: %+v", list.Items)
	}
}

type ctrlReconciler func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f ctrlReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}

// kubectl runs kubectl 1.33 against the server, with a HOME of its own.
func kubectl(t *testing.T, url string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/lib/google-cloud-sdk/bin/kubectl.1.33", append([]string{"--server", url, "--cache-dir", filepath.Join(home, "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}

// startExample builds and starts examples/widgets on a free loopback port
// and stops it when the test ends.
func startExample(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/lib/google-cloud-sdk/bin/kubectl.1.33"); err != nil {
		t.Skipf("kubectl 1.33: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "widgets")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/kapi-dev/kapi/examples/widgets")
	build.Dir = filepath.Join("..", "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build examples/widgets: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var log bytes.Buffer
	cmd := exec.Command(bin, "-addr", addr)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("server output:\n%s", log.String())
		}
	})
	url := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("the example is not ready after 20s: %v", err))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
