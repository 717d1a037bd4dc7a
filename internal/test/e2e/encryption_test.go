package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEncryptionAtRestKubectl: the example server on a bolt file with
// -encryption-config, driven by kubectl. The widget reads back whole, the
// file holds none of its spec; restarted with a new key first and the old
// one after, it still reads; restarted without the old key, that widget is
// unreadable while the others list.
func TestEncryptionAtRestKubectl(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	config := func(name, keys string) string {
		path := filepath.Join(dir, name)
		file := `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [widgets.example.com]
  providers:
  - aesgcm:
      keys:` + keys + `
  - identity: {}
`
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const key1 = "\n      - {name: key1, secret: dGhpcnR5LXR3byBieXRlcyBvZiBzZWNyZXQga2V5ISE=}"
	const key2 = "\n      - {name: key2, secret: YW5vdGhlciB0aGlydHktdHdvLWJ5dGUgc2VjcmV0ISE=}"
	widget := filepath.Join(dir, "widget.yaml")
	if err := os.WriteFile(widget, []byte(`apiVersion: example.com/v1
kind: Widget
metadata: {name: secret-widget, namespace: default}
spec: {color: Red, selector: {app: zebra-confidential-7731}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, config string) *kubectl {
		srv := startProgram(t, program{name: "examples/widgets", bin: widgetsBin, buildErr: widgetsBuildErr,
			args: []string{"-data", data, "-encryption-config", config}})
		return newKubectl(t, dispatcherKubectl, srv)
	}

	t.Run("write", func(t *testing.T) {
		k := start(t, config("one.yaml", key1))
		k.must(t, "apply", "-f", widget)
		if got := k.must(t, "get", "widget", "secret-widget", "-o", "jsonpath={.spec.selector.app}"); got != "zebra-confidential-7731" {
			t.Errorf("kubectl get: %q", got)
		}
		file, err := os.ReadFile(filepath.Join(data, "kapi.db"))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(file, []byte("zebra-confidential")) || !bytes.Contains(file, []byte("k8s:enc:aesgcm:v1:key1:")) {
			t.Error("the bolt file holds the widget's spec in clear")
		}
	})
	t.Run("rotated", func(t *testing.T) {
		k := start(t, config("two.yaml", key2+key1))
		if got := k.must(t, "get", "widget", "secret-widget", "-o", "jsonpath={.spec.selector.app}"); got != "zebra-confidential-7731" {
			t.Errorf("kubectl get with the old key second: %q", got)
		}
	})
	t.Run("key lost", func(t *testing.T) {
		k := start(t, config("lost.yaml", key2))
		other := filepath.Join(dir, "other.yaml")
		if err := os.WriteFile(other, []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: other, namespace: default}\nspec: {color: Blue}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		k.must(t, "apply", "-f", other)
		// A widget that no longer decrypts is a corrupt object: the list
		// and the GET name its key, as kube-apiserver names one.
		if r := k.run(t, "get", "widgets", "-o", "name"); r.err == nil || !strings.Contains(r.String(), "StorageReadError") || !strings.Contains(r.String(), "/widgets.example.com/default/secret-widget") {
			t.Errorf("kubectl get widgets with one under a lost key: %s", r)
		}
		if r := k.run(t, "get", "widget", "secret-widget"); r.err == nil || !strings.Contains(r.String(), "corrupt object") {
			t.Errorf("the widget under a lost key reads: %s", r)
		}
		if got := k.must(t, "get", "widget", "other", "-o", "name"); strings.TrimSpace(got) != "widget.example.com/other" {
			t.Errorf("kubectl get widget other: %q", got)
		}
	})
}
