package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// certManager is the module whose definitions the control plane is tried
// with, and where in it they are.
const certManager = "github.com/cert-manager/cert-manager@v1.21.2"

// TestControlPlaneKubectl drives examples/controlplane as a user would:
// kubectl applies cert-manager's definitions server-side, their kinds are
// served at once, a certificate is created, listed with its printer
// columns, read back and refused where its schema says so, and deleting
// its definition deletes it, then the kind.
func TestControlPlaneKubectl(t *testing.T) {
	srv := startProgram(t, program{name: "examples/controlplane", bin: controlplaneBin, buildErr: controlplaneBuildErr})
	k := newKubectl(t, dispatcherKubectl, srv)
	crds := filepath.Join(moduleDir(t, certManager), "deploy", "crds")

	out := k.must(t, "apply", "--server-side", "-f", crds)
	if strings.Count(out, "serverside-applied") != 6 {
		t.Fatalf("apply: %s", out)
	}
	// Applied again with a change, by the same manager: no conflict.
	out = k.must(t, "apply", "--server-side", "-f", crds)
	if strings.Count(out, "serverside-applied") != 6 {
		t.Fatalf("apply again: %s", out)
	}
	k.must(t, "wait", "--for=condition=Established", "--timeout=30s", "crd/certificates.cert-manager.io")
	if out := k.must(t, "get", "crd"); !strings.Contains(out, "certificates.cert-manager.io") || !strings.Contains(out, "CREATED AT") {
		t.Errorf("get crd: %s", out)
	}
	crd := k.getJSON(t, "crd", "certificates.cert-manager.io")
	status := crd["status"].(map[string]any)
	if v := status["storedVersions"]; len(v.([]any)) != 1 || v.([]any)[0] != "v1" {
		t.Errorf("storedVersions: %v", v)
	}
	if names := status["acceptedNames"].(map[string]any); names["kind"] != "Certificate" || names["plural"] != "certificates" {
		t.Errorf("acceptedNames: %v", names)
	}

	cert := certManagerSample
	k.mustStdin(t, cert, "apply", "--server-side", "-f", "-")
	if out := k.must(t, "get", "certs"); !strings.Contains(out, "SECRET") || !strings.Contains(out, "example-tls") {
		t.Errorf("get certs (short name, printer columns): %s", out)
	}
	got := k.getJSON(t, "certificate", "example")
	if spec := got["spec"].(map[string]any); spec["secretName"] != "example-tls" {
		t.Errorf("read back: %v", got)
	}
	bad := strings.Replace(cert, "name: example,", "name: bad,", 1)
	bad = strings.Replace(bad, "kind: Issuer", "kind: Issuer, group: 7", 1)
	if r := k.runStdin(t, bad, "apply", "--server-side", "-f", "-"); r.err == nil || !strings.Contains(r.stderr, "spec.issuerRef.group") {
		t.Errorf("a certificate its schema refuses: %v", r)
	}

	k.must(t, "delete", "crd", "certificates.cert-manager.io")
	if r := k.run(t, "get", "certificates", "-A"); r.err == nil {
		t.Errorf("certificates are still served: %v", r)
	}
	if out := k.must(t, "get", "crd"); strings.Contains(out, "certificates.cert-manager.io") {
		t.Errorf("the definition is still there: %s", out)
	}
}

func (k *kubectl) runStdin(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := k.command(t.Context(), nil, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return result{args: args, stdout: stdout.String(), stderr: stderr.String(), err: err}
}

func (k *kubectl) mustStdin(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := k.runStdin(t, stdin, args...)
	if r.err != nil {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), r)
	}
	return r.stdout
}

// moduleDir finds a module in the module cache, or downloads it through
// the module proxy.
func moduleDir(t *testing.T, module string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go mod download %s: %v", module, err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		t.Skipf("go mod download %s: %s", module, out)
	}
	return info.Dir
}
