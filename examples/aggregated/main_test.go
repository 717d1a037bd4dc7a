package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/auth"
)

const kubectl133 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"

// TestMetricsAndTraces serves the example's API as newAPI builds it, with
// tokens and rules standing in for the cluster's delegated authentication
// and RBAC: kubectl get --raw /metrics reads kube-apiserver's metrics as a
// user allowed the path and is refused as one who is not, and a request
// that arrives with kube-apiserver's trace context is traced in that trace.
func TestMetricsAndTraces(t *testing.T) {
	if _, err := os.Stat(kubectl133); err != nil {
		t.Skipf("kubectl 1.33: %v", err)
	}
	rules, err := auth.RulesAuthorizer(
		auth.Binding{Users: []string{"admin"}, Rules: []auth.Rule{
			{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}},
		}},
		// As a Prometheus server's ClusterRole: get on /metrics.
		auth.Binding{Users: []string{"prometheus"}, Rules: []auth.Rule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	api, err := newAPI([]apiserver.Option{
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{
			"admin-token": {Name: "admin"}, "prometheus-token": {Name: "prometheus"}, "bob-token": {Name: "bob"},
		})),
		apiserver.WithAuthorization(rules),
	}, tp)
	if err != nil {
		t.Fatal(err)
	}
	// Over TLS, as the example serves: client-go sends no bearer token to
	// a plain-HTTP server.
	srv := httptest.NewTLSServer(api)
	t.Cleanup(func() { _ = api.Close(); srv.Close() })

	home := t.TempDir()
	kubectl := func(token string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl133, append([]string{"--server", srv.URL, "--insecure-skip-tls-verify",
			"--token", token, "--cache-dir", filepath.Join(home, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	widget := filepath.Join(home, "w.yaml")
	if err := os.WriteFile(widget, []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a, namespace: default}\nspec: {color: Red}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl("admin-token", "create", "-f", widget); err != nil {
		t.Fatalf("create: %v %s", err, out)
	}

	out, err := kubectl("prometheus-token", "get", "--raw", "/metrics")
	if err != nil {
		t.Fatalf("get --raw /metrics: %v %s", err, out)
	}
	for _, want := range []string{
		`apiserver_request_total{code="201",component="apiserver",dry_run="",group="example.com",resource="widgets",scope="resource",subresource="",verb="POST",version="v1"} 1`,
		`apiserver_storage_objects{resource="widgets.example.com"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
	if out, err := kubectl("bob-token", "get", "--raw", "/metrics"); err == nil || !strings.Contains(out, `Forbidden`) {
		t.Errorf("bob reads /metrics: %v %s", err, out)
	}

	// kube-apiserver proxies a request with its trace context: the
	// extension's span continues that trace.
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	r, err := http.NewRequest(http.MethodGet, srv.URL+"/apis/example.com/v1/namespaces/default/widgets/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer admin-token")
	r.Header.Set("Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	var names []string
	for _, s := range spans.Ended() {
		if s.SpanContext().TraceID().String() == traceID {
			names = append(names, s.Name())
		}
	}
	if len(names) == 0 {
		t.Errorf("no span in the caller's trace %s among %d spans", traceID, len(spans.Ended()))
	}
}
