package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestKubectlEvents: an event recorded with client-go's typed clientset
// (protobuf) about a widget is what kubectl describe, kubectl events and
// kubectl get events show, with kubectl 1.27 and 1.33.
func TestKubectlEvents(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	w, err := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace).Create(ctx, newWidget("a", map[string]any{"color": "red"}), metav1.CreateOptions{})
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
