package e2e

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
)

// The example's actions (package actions): widgets/restart (POST),
// widgets/log (GET, text, followed) and widgetreviews (answered, never
// stored), driven with kubectl and client-go's REST client.

const (
	actionsNS     = "/apis/example.com/v1/namespaces/default"
	actionsWidget = actionsNS + "/widgets/w1"
	reviewYAML    = `apiVersion: example.com/v1
kind: WidgetReview
metadata:
  name: r1
spec:
  color: Blue
  replicas: 11
`
)

// TestActionsKubectl: kubectl create --raw, get --raw (followed too),
// create -f of a review, and what kubectl says of what is not served.
func TestActionsKubectl(t *testing.T) {
	srv := startServer(t)
	k := newKubectl(t, dispatcherKubectl, srv)
	k.must(t, "create", "-f", writeFile(t, "w1.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  color: Red\n"))
	follow := k.start(t, "get", "--raw", actionsWidget+"/log?follow=true")
	out := k.must(t, "create", "--raw", actionsWidget+"/restart", "-f", writeFile(t, "restart.json", `{"reason":"from kubectl"}`))
	var restart struct {
		Kind     string
		Reason   string
		Restarts int
	}
	if err := json.Unmarshal([]byte(out), &restart); err != nil || restart.Kind != "WidgetRestart" || restart.Reason != "from kubectl" || restart.Restarts != 1 {
		t.Errorf("create --raw: %v: %s", err, out)
	}
	follow.waitLine(t, "the restart", 30*time.Second, func(l string) bool { return strings.HasSuffix(l, "restarted (generation 1): from kubectl") })
	if out := k.must(t, "get", "--raw", actionsWidget+"/log"); !strings.HasSuffix(out, "from kubectl\n") {
		t.Errorf("get --raw log: %q", out)
	}
	if r := k.run(t, "get", "--raw", actionsNS+"/widgets/nope/log"); r.err == nil || !strings.Contains(r.stderr, `Error from server (NotFound): widgets.example.com "nope" not found`) {
		t.Errorf("the log of a missing widget: %s", r)
	}
	if r := k.run(t, "create", "--raw", actionsWidget+"/bogus", "-f", writeFile(t, "empty.json", `{}`)); r.err == nil || !strings.Contains(r.stderr, "(NotFound): the server could not find the requested resource") {
		t.Errorf("an unknown subresource: %s", r)
	}
	review := writeFile(t, "review.yaml", reviewYAML)
	if out := k.must(t, "create", "-f", review, "-o", "jsonpath={.status.allowed} {.status.reason}"); out != "false a widget has at most 10 replicas" {
		t.Errorf("create -f review.yaml: %q", out)
	}
	for _, args := range [][]string{{"get", "widgetreviews"}, {"get", "widgetreviews", "--watch"}} {
		if r := k.run(t, args...); r.err == nil || !strings.Contains(r.stderr, "Error from server (MethodNotAllowed): the server does not allow this method on the requested resource") {
			t.Errorf("kubectl %v: %s", args, r)
		}
	}
	out = k.must(t, "api-resources", "--api-group", "example.com", "-o", "wide")
	if i := strings.Index(out, "widgetreviews "); i < 0 || strings.Fields(strings.SplitN(out[i:], "\n", 2)[0])[4] != "create" {
		t.Errorf("api-resources: widgetreviews is not create only:\n%s", out)
	}
	// kubectl 1.27 and 1.28 read /openapi/v2 first, the others v3 only.
	for _, bin := range pinnedKubectls() {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			out := newKubectl(t, bin, srv).must(t, "create", "-f", review, "-o", "jsonpath={.kind} {.status.allowed}")
			if out != "WidgetReview false" {
				t.Errorf("create -f review.yaml: %q", out)
			}
		})
	}
}

// TestActionsRESTClient: client-go's REST client posts to a subresource,
// streams a log and gets kube's errors as StatusErrors.
func TestActionsRESTClient(t *testing.T) {
	srv := startServer(t)
	cs, err := kubernetes.NewForConfig(restConfig(srv, nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, rc := ctxFor(t, time.Minute), cs.CoreV1().RESTClient()
	if err := rc.Post().AbsPath(actionsNS+"/widgets").SetHeader("Content-Type", "application/json").
		Body([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"color":"Red"}}`)).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	logs, err := rc.Get().AbsPath(actionsWidget+"/log").Param("follow", "true").Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	lines := bufio.NewReader(logs)
	for i, reason := range []string{"one", "two"} {
		raw, err := rc.Post().AbsPath(actionsWidget+"/restart").SetHeader("Content-Type", "application/yaml").Body([]byte("reason: " + reason + "\n")).Do(ctx).Raw()
		if err != nil || !strings.Contains(string(raw), `"restarts":`+string(rune('1'+i))) {
			t.Fatalf("restart: %v: %s", err, raw)
		}
		if line, err := lines.ReadString('\n'); err != nil || !strings.HasSuffix(line, ": "+reason+"\n") {
			t.Fatalf("log line %q: %v", line, err)
		}
	}
	raw, err := rc.Post().AbsPath(actionsNS+"/widgetreviews").SetHeader("Content-Type", "application/yaml").Body([]byte(reviewYAML)).Do(ctx).Raw()
	if err != nil || !strings.Contains(string(raw), `"allowed":false`) {
		t.Errorf("review: %v: %s", err, raw)
	}
	if err := rc.Get().AbsPath(actionsNS + "/widgetreviews").Do(ctx).Error(); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("list reviews: %v", err)
	}
	if err := rc.Delete().AbsPath(actionsWidget + "/restart").Do(ctx).Error(); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("DELETE restart: %v", err)
	}
	if err := rc.Post().AbsPath(actionsNS+"/widgets/nope/restart").SetHeader("Content-Type", "application/json").Body([]byte(`{}`)).Do(ctx).Error(); !apierrors.IsNotFound(err) {
		t.Errorf("restart of a missing widget: %v", err)
	}
	if err := rc.Post().AbsPath(actionsWidget+"/restart").Param("fieldValidation", "Strict").SetHeader("Content-Type", "application/json").Body([]byte(`{"bogus":1}`)).Do(ctx).Error(); !apierrors.IsBadRequest(err) {
		t.Errorf("restart with an unknown field: %v", err)
	}
}
