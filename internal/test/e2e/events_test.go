package e2e

import (
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestKubectlEvents: an event recorded with client-go's typed clientset
// (protobuf) about a widget is what kubectl describe, kubectl events and
// kubectl get events show, with kubectl 1.27 and 1.33.
func TestKubectlEvents(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	w, err := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace).Create(ctx, newWidget("a", map[string]any{"color": "Red"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(restConfig(srv, nil))
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	_, err = cs.CoreV1().Events(testNamespace).Create(ctx, &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "a.187a"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Namespace: testNamespace, Name: "a", UID: w.GetUID(),
			ResourceVersion: w.GetResourceVersion()},
		Reason: "Painted", Message: "painted red", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "painter"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The same event through events.k8s.io/v1 (protobuf), as kube-apiserver
	// serves it: one storage, kube's field mapping.
	ev, err := cs.EventsV1().Events(testNamespace).Get(ctx, "a.187a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Note != "painted red" || ev.Regarding.Name != "a" || ev.Regarding.UID != w.GetUID() || ev.DeprecatedSource.Component != "painter" || ev.DeprecatedCount != 1 || ev.Reason != "Painted" {
		t.Errorf("the core event through events.k8s.io/v1: %+v", ev)
	}
	for _, version := range []string{"1.27", "1.33"} {
		t.Run(version, func(t *testing.T) {
			k := newKubectl(t, "/usr/lib/google-cloud-sdk/bin/kubectl."+version, srv)
			described := k.must(t, "describe", "wd", "a")
			if !regexp.MustCompile(`(?m)^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n.*\n\s+Normal\s+Painted\s+\S+\s+painter\s+painted red$`).MatchString(described) {
				t.Errorf("kubectl describe wd a does not show the event:\n%s", described)
			}
			got := k.must(t, "get", "events")
			lines := strings.Split(strings.TrimSpace(got), "\n")
			if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "LAST SEEN TYPE REASON OBJECT MESSAGE" ||
				!regexp.MustCompile(`^\S+\s+Normal\s+Painted\s+widget/a\s+painted red$`).MatchString(lines[1]) {
				t.Errorf("kubectl get events:\n%s", got)
			}
			if version != "1.27" { // kubectl events is in 1.33
				got = k.must(t, "events", "--for", "widget.example.com/a")
				if !strings.Contains(got, "Painted") || !strings.Contains(got, "painted red") {
					t.Errorf("kubectl events --for widget.example.com/a:\n%s", got)
				}
			}
		})
	}
}

// TestLeasesClientGo: a Lease written and read back through client-go's
// typed clientset (protobuf) keeps its times to the microsecond, as
// metav1.MicroTime does, and an update from a stale read is a conflict.
func TestLeasesClientGo(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	cfg := restConfig(srv, nil)
	var mu sync.Mutex
	var protobufBodies int // requests and answers in protobuf
	cfg.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err != nil {
				return resp, err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, ct := range []string{req.Header.Get("Content-Type"), resp.Header.Get("Content-Type")} {
				if strings.HasPrefix(ct, "application/vnd.kubernetes.protobuf") {
					protobufBodies++
				}
			}
			return resp, err
		})
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	leases := cs.CoordinationV1().Leases("kube-node-lease")
	renew := metav1.NewMicroTime(time.Date(2026, 11, 25, 11, 0, 0, 123456789, time.UTC))
	holder, duration := "node-a", int32(40)
	created, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &renew}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := leases.Get(ctx, "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 25, 11, 0, 0, 123456000, time.UTC)
	if got.Spec.RenewTime == nil || !got.Spec.RenewTime.Time.Equal(want) || *got.Spec.HolderIdentity != holder || *got.Spec.LeaseDurationSeconds != duration {
		t.Errorf("the lease read back: %+v; want renewTime %v", got.Spec, want)
	}
	got.Spec.RenewTime = &metav1.MicroTime{Time: want.Add(time.Second)}
	if _, err := leases.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	created.Spec.HolderIdentity = ptrTo("node-b")
	if _, err := leases.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("an update from a stale read: %v; want a conflict", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if protobufBodies < 6 { // create, get and the updates, both ways
		t.Errorf("%d protobuf bodies; want the typed client to have spoken protobuf", protobufBodies)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestCreateOnUpdateClientGo: client-go's typed Update of a Lease or an
// events.k8s.io/v1 Event that does not exist creates it, as kube-apiserver
// allows for both (their strategies' AllowCreateOnUpdate); an Update of a
// missing widget is NotFound, as for a custom resource.
func TestCreateOnUpdateClientGo(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	cs, err := kubernetes.NewForConfig(restConfig(srv, nil))
	if err != nil {
		t.Fatal(err)
	}
	holder := "elector-1"
	lease, err := cs.CoordinationV1().Leases(testNamespace).Update(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "leader", ResourceVersion: "12"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}, metav1.UpdateOptions{FieldManager: "elector"})
	if err != nil {
		t.Fatal(err)
	}
	if lease.UID == "" || *lease.Spec.HolderIdentity != holder || len(lease.ManagedFields) != 1 || lease.ManagedFields[0].Manager != "elector" {
		t.Errorf("the lease an update created: %+v", lease)
	}
	if _, err := cs.CoordinationV1().Leases(testNamespace).Get(ctx, "leader", metav1.GetOptions{}); err != nil {
		t.Errorf("get the lease an update created: %v", err)
	}
	ev, err := cs.EventsV1().Events(testNamespace).Update(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "leader.1"}, EventTime: metav1.NowMicro(),
		ReportingController: "example.com/elector", ReportingInstance: "elector-1", Action: "Elect", Reason: "LeaderElection",
		Regarding: corev1.ObjectReference{Kind: "Lease", Namespace: testNamespace, Name: "leader"}, Note: "elector-1 became leader", Type: corev1.EventTypeNormal,
	}, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	core, err := cs.CoreV1().Events(testNamespace).Get(ctx, "leader.1", metav1.GetOptions{})
	if err != nil || core.UID != ev.UID || core.Message != "elector-1 became leader" {
		t.Errorf("the event an update created, read as a core event: %+v, %v", core, err)
	}
	_, err = dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace).Update(ctx, newWidget("missing", map[string]any{"color": "Red"}), metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("update of a missing widget: %v; want NotFound", err)
	}
}
