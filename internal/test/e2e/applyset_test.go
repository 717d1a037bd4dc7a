package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// applySetID is kubectl's ID of an ApplySet whose parent is the object
// name in namespace, of kind and group: the value of the parent's label
// applyset.kubernetes.io/id and of each member's part-of label.
func applySetID(name, namespace, kind, group string) string {
	sum := sha256.Sum256([]byte(name + "." + namespace + "." + kind + "." + group))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// widgetNames lists the widgets of the default namespace.
func widgetNames(t *testing.T, k *kubectl) []string {
	t.Helper()
	names := strings.Fields(k.must(t, "get", "widgets", "-n", "default", "-o", "jsonpath={.items[*].metadata.name}"))
	slices.Sort(names)
	return names
}

// TestKubectlApplySet prunes with kubectl's ApplySets, a Widget as the
// parent (its registration says ApplySetParent): kubectl 1.33 applies two
// widgets into the set, then prunes the one no longer in the manifests,
// and leaves alone a widget outside the set.
func TestKubectlApplySet(t *testing.T) {
	srv := startServer(t)
	k := newKubectl(t, "/usr/lib/google-cloud-sdk/bin/kubectl.1.33", srv)
	env := []string{"KUBECTL_APPLYSET=true"}
	widget := func(name, color string) string {
		return fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: %s, namespace: default}\nspec: {color: %s}\n", name, color)
	}
	// kubectl does not create custom parents: the parent comes first, with
	// the ID label, the tooling annotation and an empty list of kinds.
	k.must(t, "create", "-f", writeFile(t, "parent.yaml", fmt.Sprintf(`apiVersion: example.com/v1
kind: Widget
metadata:
  name: widgets-set
  namespace: default
  labels: {applyset.kubernetes.io/id: %s}
  annotations: {applyset.kubernetes.io/tooling: kubectl/v1.33, applyset.kubernetes.io/contains-group-kinds: ""}
spec: {color: green}
`, applySetID("widgets-set", "default", "Widget", "example.com"))))
	k.must(t, "create", "-f", writeFile(t, "outsider.yaml", widget("outsider", "red")))

	both := writeFile(t, "both.yaml", widget("a", "red")+"---\n"+widget("b", "blue"))
	out := k.mustEnv(t, env, "apply", "-n", "default", "--prune", "--applyset=widgets.example.com/widgets-set", "-f", both)
	if !strings.Contains(out, "widget.example.com/a created") || !strings.Contains(out, "widget.example.com/b created") {
		t.Fatalf("apply: %s", out)
	}
	if got := k.must(t, "get", "widget", "widgets-set", "-n", "default", "-o", `jsonpath={.metadata.annotations.applyset\.kubernetes\.io/contains-group-kinds}`); got != "Widget.example.com" {
		t.Errorf("the parent lists %q, want Widget.example.com", got)
	}
	if got := widgetNames(t, k); !slices.Equal(got, []string{"a", "b", "outsider", "widgets-set"}) {
		t.Fatalf("widgets %v after the first apply", got)
	}

	out = k.mustEnv(t, env, "apply", "-n", "default", "--prune", "--applyset=widgets.example.com/widgets-set", "-f", writeFile(t, "a.yaml", widget("a", "red")))
	if !strings.Contains(out, "widget.example.com/b pruned") {
		t.Fatalf("apply of a only: %s", out)
	}
	if got := widgetNames(t, k); !slices.Equal(got, []string{"a", "outsider", "widgets-set"}) {
		t.Fatalf("widgets %v after pruning, want b gone and the rest kept", got)
	}

	// A kind that is no parent type is refused, with kubectl's words.
	r := k.runEnv(t, env, "apply", "-n", "default", "--prune", "--applyset=widgetclasses.example.com/x", "-f", writeFile(t, "a2.yaml", widget("a", "red")))
	if r.err == nil || !strings.Contains(r.stderr, `is not permitted as an ApplySet parent`) {
		t.Errorf("a WidgetClass parent: %s", r)
	}
}

// TestKubectlPruneAllowlist: label-selected pruning works once the kinds to
// prune are named; without --prune-allowlist kubectl prunes its built-in
// default kinds, which a kapi server does not serve.
func TestKubectlPruneAllowlist(t *testing.T) {
	srv := startServer(t)
	k := newKubectl(t, "/usr/lib/google-cloud-sdk/bin/kubectl.1.33", srv)
	widget := func(name string) string {
		return fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: %s, namespace: default, labels: {app: x}}\nspec: {color: red}\n", name)
	}
	k.must(t, "apply", "-n", "default", "--prune", "-l", "app=x", "--prune-allowlist=example.com/v1/Widget", "-f", writeFile(t, "both.yaml", widget("a")+"---\n"+widget("b")))
	out := k.must(t, "apply", "-n", "default", "--prune", "-l", "app=x", "--prune-allowlist=example.com/v1/Widget", "-f", writeFile(t, "a.yaml", widget("a")))
	if !strings.Contains(out, "widget.example.com/b pruned") {
		t.Fatalf("apply of a only: %s", out)
	}
	if got := widgetNames(t, k); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("widgets %v, want [a]", got)
	}
	r := k.run(t, "apply", "-n", "default", "--prune", "-l", "app=x", "-f", writeFile(t, "a2.yaml", widget("a")))
	if r.err == nil || !strings.Contains(r.stderr, `no matches for kind "ConfigMap" in version "v1"`) {
		t.Errorf("without --prune-allowlist: %s", r)
	}
}
