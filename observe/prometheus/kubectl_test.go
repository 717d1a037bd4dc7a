package prometheus_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/internal/test/observetest"
	"github.com/kapi-dev/kapi/observe/prometheus"
)

const kubectl133 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"

// TestKubectlGetRawMetrics: kubectl get --raw /metrics reads the metrics
// from the server, behind its authentication as kube-apiserver's.
func TestKubectlGetRawMetrics(t *testing.T) {
	if _, err := os.Stat(kubectl133); err != nil {
		t.Skipf("kubectl 1.33: %v", err)
	}
	m := prometheus.New()
	srv := observetest.NewServer(t, apiserver.WithObserver(m), apiserver.WithMetrics(m.Handler()))
	m.Bind(srv.API)
	observetest.Run(t, srv.URL, srv.Client())

	// Over TLS: client-go sends no bearer token to a plain-HTTP server.
	tlsSrv := httptest.NewTLSServer(srv.API)
	defer tlsSrv.Close()
	home := t.TempDir()
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl133, append([]string{"--server", tlsSrv.URL, "--insecure-skip-tls-verify",
			"--cache-dir", filepath.Join(home, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("--token", observetest.Token, "get", "--raw", "/metrics")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{
		`apiserver_request_total{code="201",component="apiserver",dry_run="",group="example.com",resource="widgets",scope="resource",subresource="",verb="POST",version="v1"} 1`,
		`apiserver_storage_objects{resource="widgets.example.com"} 0`,
		`apiserver_watch_events_total{group="example.com",resource="widgets",version="v1"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
	if out, err := run("--token", "wrong", "get", "--raw", "/metrics"); err == nil || !strings.Contains(out, "Unauthorized") {
		t.Errorf("with a wrong token: %v %s", err, out)
	}
}
