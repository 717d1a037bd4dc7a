package crddiff

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// certManager is the module whose Certificate definition is served, as
// internal/test/e2e's TestRealCRDs takes it from the module cache.
const certManager = "github.com/cert-manager/cert-manager@v1.21.2"

const (
	certC = crds + "/certificates.cert-manager.io"
	certs = "/apis/cert-manager.io/v1/namespaces/diff/certificates"
)

// TestCertManager runs a script on cert-manager's Certificate definition
// and compares kapi's answers with kube-apiserver's in
// testdata/cert-manager.json.
func TestCertManager(t *testing.T) {
	dir := moduleDir(t, certManager)
	crd, err := os.ReadFile(filepath.Join(dir, "deploy", "crds", "cert-manager.io_certificates.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, "cert-manager", certSteps(string(crd)), commonKnown)
}

func certificate(name, spec string) string {
	return "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: " + name + ", namespace: diff}\nspec: " + spec + "\n"
}

func certSteps(crd string) []step {
	const status = "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: example, namespace: diff}\nstatus:\n  conditions: [{type: Ready, status: \"%s\", reason: Issued}]\n"
	return []step{
		{name: "namespace", method: "POST", path: ns, body: `{apiVersion: v1, kind: Namespace, metadata: {name: diff}}`, pick: func(any) any { return nil }},
		{name: "crd create", method: "POST", path: crds, body: crd, pick: noSpec},
		{name: "crd established", method: "GET", path: certC, until: established, pick: noSpec},
		{name: "served", method: "GET", path: certs, until: code(200)},
		{name: "create", method: "POST", path: certs + "?fieldManager=kubectl", body: certificate("example",
			`{secretName: example-tls, dnsNames: [example.com], issuerRef: {name: ca-issuer, kind: Issuer}, bogus: 1}`)},
		{name: "create invalid type", method: "POST", path: certs, body: certificate("bad",
			`{secretName: bad-tls, issuerRef: {name: ca-issuer, kind: Issuer, group: 7}}`)},
		{name: "create missing required", method: "POST", path: certs, body: certificate("bad",
			`{dnsNames: [a.example.com], privateKey: {algorithm: DSA, rotationPolicy: Sometimes}, duration: 1h}`)},
		{name: "create strict", method: "POST", path: certs + "?fieldValidation=Strict", body: certificate("bad",
			`{secretName: bad-tls, issuerRef: {name: ca-issuer}, unknown: {a: 1}}`)},
		{name: "get", method: "GET", path: certs + "/example"},
		{name: "get table", method: "GET", path: certs + "/example", accept: tableAccept},
		{name: "list table", method: "GET", path: certs, accept: tableAccept},
		{name: "json patch", method: "PATCH", path: certs + "/example", ctype: patchType, body: `[{op: replace, path: /spec/commonName, value: json.example.com}]`},
		{name: "merge patch", method: "PATCH", path: certs + "/example", ctype: mergeType, body: `{spec: {commonName: merge.example.com, renewBefore: 1h}}`},
		{name: "status apply a", method: "PATCH", path: certs + "/example/status?fieldManager=a", ctype: applyType, body: fmt.Sprintf(status, "True")},
		{name: "status apply b conflict", method: "PATCH", path: certs + "/example/status?fieldManager=b", ctype: applyType, body: fmt.Sprintf(status, "False")},
		{name: "status apply b force", method: "PATCH", path: certs + "/example/status?fieldManager=b&force=true", ctype: applyType, body: fmt.Sprintf(status, "False")},
		{name: "list field selector", method: "GET", path: certs + "?fieldSelector=spec.secretName%3Dexample-tls"},
		{name: "crd delete", method: "DELETE", path: certC, pick: noSpec},
		{name: "crd gone", method: "GET", path: certC, until: code(404)},
	}
}

// moduleDir is where the module cache holds module (downloaded if need
// be); the test is skipped when it cannot be had.
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
