package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kubectlAccess is the kubectl of the access tests: the newest pinned one.
const kubectlAccess = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"

// TestAccessKubectl: kubectl auth whoami, auth can-i (yes and no), auth
// can-i --list and --as (allowed and refused) against examples/secured.
func TestAccessKubectl(t *testing.T) {
	s := startSecured(t)
	ca := filepath.Join(s.dir, "ca.crt")
	k := newKubectl(t, kubectlAccess, s.server)
	run := func(token string, args ...string) result {
		t.Helper()
		return k.run(t, append([]string{"--certificate-authority", ca, "--token", token}, args...)...)
	}
	want := func(r result, ok bool, stdout, stderr string) {
		t.Helper()
		if (r.err == nil) != ok || !strings.Contains(r.stdout, stdout) || !strings.Contains(r.stderr, stderr) {
			t.Errorf("want success %v, %q in stdout, %q in stderr\n%s", ok, stdout, stderr, r)
		}
	}

	r := run(viewerToken, "auth", "whoami")
	want(r, true, "Username    viewer", "")
	want(r, true, "Groups      [viewers system:authenticated]", "")
	want(run(adminToken, "auth", "whoami", "--as", "alice", "--as-group", "viewers"), true, "Groups      [viewers system:authenticated]", "")

	want(run(adminToken, "auth", "can-i", "create", "widgets", "-n", viewerNS), true, "yes", "")
	want(run(viewerToken, "auth", "can-i", "list", "widgets", "-n", viewerNS), true, "yes", "")
	// "no" exits 1.
	want(run(viewerToken, "auth", "can-i", "create", "widgets", "-n", viewerNS), false, "no", "")
	want(run(viewerToken, "auth", "can-i", "list", "widgets", "-n", otherNS), false, "no", "")
	want(run(viewerToken, "auth", "can-i", "get", "/apis"), true, "yes", "")

	r = run(viewerToken, "auth", "can-i", "--list", "-n", viewerNS)
	want(r, true, "widgets.example.com ", "")
	var widgetsLine string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "widgets.example.com ") {
			widgetsLine = strings.Join(strings.Fields(line), " ")
		}
	}
	if widgetsLine != "widgets.example.com [] [] [get list]" {
		t.Errorf("the viewer's widget rule: %q\n%s", widgetsLine, r)
	}
	if r := run(viewerToken, "auth", "can-i", "--list", "-n", otherNS); strings.Contains(r.stdout, "widgets.example.com") || r.err != nil {
		t.Errorf("in %s the viewer has no widget rule:\n%s", otherNS, r)
	}

	// --as: the admin acts as alice, who may only read widgets when in
	// group viewers; the viewer may not impersonate anyone.
	want(run(adminToken, "--as", "alice", "--as-group", "viewers", "get", "widgets", "-n", viewerNS), true, "a ", "")
	want(run(adminToken, "--as", "alice", "get", "widgets", "-n", viewerNS), false, "",
		"Error from server (Forbidden): "+forbiddenMessage("alice", "list", "widgets", viewerNS, ""))
	want(run(viewerToken, "--as", "alice", "get", "widgets", "-n", viewerNS), false, "",
		`Error from server (Forbidden): users "alice" is forbidden: User "viewer" cannot impersonate resource "users" in API group "" at the cluster scope`)
	want(run(viewerToken, "--as", "alice", "auth", "can-i", "list", "widgets"), false, "",
		`users "alice" is forbidden: User "viewer" cannot impersonate resource "users" in API group "" at the cluster scope`)

	// The reviews are in discovery as kube-apiserver lists them.
	r = run(viewerToken, "api-resources", "--api-group", "authorization.k8s.io")
	for _, name := range []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"} {
		if !slices.ContainsFunc(strings.Split(r.stdout, "\n"), func(l string) bool { return strings.HasPrefix(l, name+" ") }) {
			t.Errorf("%s not in api-resources:\n%s", name, r)
		}
	}
}

// TestOpenAPIV2Kubectl: /openapi/v2 is a valid Swagger 2.0 document for
// every pinned kubectl (1.27 and 1.28 read it before v3): raw in JSON,
// and kubectl explain and apply work past it.
func TestOpenAPIV2Kubectl(t *testing.T) {
	srv := startServer(t)
	for _, bin := range pinnedKubectls() {
		t.Run(strings.TrimPrefix(filepath.Base(bin), "kubectl."), func(t *testing.T) {
			k := newKubectl(t, bin, srv)
			if out := k.must(t, "get", "--raw", "/openapi/v2"); !strings.Contains(out, `"swagger":"2.0"`) {
				t.Errorf("/openapi/v2: %.300s", out)
			}
			if out := k.must(t, "explain", "widgets.spec"); !strings.Contains(out, "color") {
				t.Errorf("explain: %s", out)
			}
		})
	}
}
