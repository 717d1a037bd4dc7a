package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/crd"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// applySetID is kubectl's ID of an ApplySet whose parent is the object
// name in namespace, of kind and group: the value of the parent's label
// applyset.kubernetes.io/id and of each member's part-of label.
func applySetID(name, namespace, kind, group string) string {
	sum := sha256.Sum256([]byte(name + "." + namespace + "." + kind + "." + group))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// applySetParent is a manifest of the parent of an ApplySet as kubectl
// wants it before the first apply (kubectl does not create custom
// parents): the ID label, the tooling annotation and an empty list of
// kinds.
func applySetParent(group, version, kind, name, spec string) string {
	return fmt.Sprintf(`apiVersion: %s/%s
kind: %s
metadata:
  name: %s
  namespace: default
  labels: {applyset.kubernetes.io/id: %s}
  annotations: {applyset.kubernetes.io/tooling: kubectl/v1.33, applyset.kubernetes.io/contains-group-kinds: ""}
spec: %s
`, group, version, kind, name, applySetID(name, "default", kind, group), spec)
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
	k.must(t, "create", "-f", writeFile(t, "parent.yaml", applySetParent("example.com", "v1", "Widget", "widgets-set", "{color: Green}")))
	k.must(t, "create", "-f", writeFile(t, "outsider.yaml", widget("outsider", "Red")))

	both := writeFile(t, "both.yaml", widget("a", "Red")+"---\n"+widget("b", "Blue"))
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

	out = k.mustEnv(t, env, "apply", "-n", "default", "--prune", "--applyset=widgets.example.com/widgets-set", "-f", writeFile(t, "a.yaml", widget("a", "Red")))
	if !strings.Contains(out, "widget.example.com/b pruned") {
		t.Fatalf("apply of a only: %s", out)
	}
	if got := widgetNames(t, k); !slices.Equal(got, []string{"a", "outsider", "widgets-set"}) {
		t.Fatalf("widgets %v after pruning, want b gone and the rest kept", got)
	}

	// A kind that is no parent type is refused, with kubectl's words.
	r := k.runEnv(t, env, "apply", "-n", "default", "--prune", "--applyset=widgetclasses.example.com/x", "-f", writeFile(t, "a2.yaml", widget("a", "Red")))
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
		return fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: %s, namespace: default, labels: {app: x}}\nspec: {color: Red}\n", name)
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

// TestKubectlApplySetCRDParent prunes with an ApplySet whose parent is a
// custom resource of a kind a CustomResourceDefinition defines on a server
// that serves them (crd.Serve): kubectl accepts the parent's kind because
// its CRD carries applyset.kubernetes.io/is-parent-type=true (kubectl's
// pkg/cmd/apply/applyset.go asks for CRDs with that label); a Widget
// (ApplySetParent in its registration) stays a parent type beside it, and
// a CRD without the label is refused.
func TestKubectlApplySetCRDParent(t *testing.T) {
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return errors.Join(widgetapi.Register(s), crd.Serve(s))
	}, apiserver.WithNamespaces())
	k := newKubectl(t, "/usr/lib/google-cloud-sdk/bin/kubectl.1.33", &server{URL: srv.URL})
	env := []string{"KUBECTL_APPLYSET=true"}
	definition := func(kind, plural string, labels string) string {
		return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[2]s.example.org
  labels: {%[3]s}
spec:
  group: example.org
  scope: Namespaced
  names: {kind: %[1]s, plural: %[2]s, singular: %[4]s}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, kind, plural, labels, strings.ToLower(kind))
	}
	k.must(t, "apply", "-f", writeFile(t, "crds.yaml", definition("Bundle", "bundles", "applyset.kubernetes.io/is-parent-type: \"true\"")+"---\n"+
		definition("Plain", "plains", "")))
	k.must(t, "wait", "--for=condition=Established", "--timeout=30s", "crd/bundles.example.org", "crd/plains.example.org")

	k.must(t, "create", "-f", writeFile(t, "parent.yaml", applySetParent("example.org", "v1", "Bundle", "set", "{}")))
	widget := func(name string) string {
		return fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: %s, namespace: default}\nspec: {color: Red}\n", name)
	}
	out := k.mustEnv(t, env, "apply", "-n", "default", "--prune", "--applyset=bundles.example.org/set", "-f", writeFile(t, "both.yaml", widget("a")+"---\n"+widget("b")))
	if !strings.Contains(out, "widget.example.com/a created") || !strings.Contains(out, "widget.example.com/b created") {
		t.Fatalf("apply: %s", out)
	}
	if got := k.must(t, "get", "bundle", "set", "-n", "default", "-o", `jsonpath={.metadata.annotations.applyset\.kubernetes\.io/contains-group-kinds}`); got != "Widget.example.com" {
		t.Errorf("the parent lists %q, want Widget.example.com", got)
	}
	out = k.mustEnv(t, env, "apply", "-n", "default", "--prune", "--applyset=bundles.example.org/set", "-f", writeFile(t, "a.yaml", widget("a")))
	if !strings.Contains(out, "widget.example.com/b pruned") {
		t.Fatalf("apply of a only: %s", out)
	}
	if got := widgetNames(t, k); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("widgets %v after pruning, want [a]", got)
	}

	// The typed kind registered as a parent type is one still.
	k.must(t, "create", "-f", writeFile(t, "wparent.yaml", applySetParent("example.com", "v1", "Widget", "wset", "{color: Green}")))
	if r := k.runEnv(t, env, "apply", "-n", "default", "--prune", "--applyset=widgets.example.com/wset", "-f", writeFile(t, "c.yaml", widget("c"))); r.err != nil {
		t.Errorf("a Widget parent beside CRDs: %s", r)
	}

	r := k.runEnv(t, env, "apply", "-n", "default", "--prune", "--applyset=plains.example.org/x", "-f", writeFile(t, "a2.yaml", widget("a")))
	if r.err == nil || !strings.Contains(r.stderr, `is not permitted as an ApplySet parent`) {
		t.Errorf("a parent whose CRD lacks the label: %s", r)
	}
}
