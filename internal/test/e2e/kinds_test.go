package e2e

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/kinds"
	kschema "github.com/kapi-dev/kapi/schema"
)

// gadgetSchema is the openAPIV3Schema of the kind TestKubectlKinds defines
// while the server serves.
const gadgetSchema = `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["size"],
      "properties": {
        "size": {"type": "string", "enum": ["small", "large"]},
        "replicas": {"type": "integer", "minimum": 0, "default": 1},
        "ports": {
          "type": "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}
        }
      }
    },
    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
  }
}`

const gadgetG1 = `apiVersion: example.org/v1
kind: Gadget
metadata:
  name: g1
spec:
  size: small
  ports:
  - name: http
    port: 80
`

// TestKubectlKinds defines a kind from a schema on a server that already
// serves, then drives it with kubectl (a fresh HOME) and client-go's
// dynamic client: server-side apply, get with the printer columns and as
// YAML, patches of every type, kube-apiserver's 422 wording, a watch that
// ends when the kind is removed, and the 404 after.
func TestKubectlKinds(t *testing.T) {
	srv, err := apiserver.New(apiserver.WithNamespaces())
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer srv.Close()
	defer hs.Close()
	s, err := kschema.Parse([]byte(gadgetSchema))
	if err != nil {
		t.Fatal(err)
	}
	k := newKubectl(t, dispatcherKubectl, &server{URL: hs.URL})
	if r := k.run(t, "get", "gadgets"); r.err == nil {
		t.Fatalf("gadgets are served before the kind is defined:\n%s", r)
	}

	def := kinds.Definition{
		Group: "example.org", Kind: "Gadget", Plural: "gadgets", Namespaced: true, ShortNames: []string{"gd"},
		Versions: []kinds.Version{{
			Name: "v1", Served: true, Storage: true, Schema: s, Status: true,
			PrinterColumns: []kinds.PrinterColumn{
				{Name: "Size", Type: "string", JSONPath: ".spec.size"},
				{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
				{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			},
		}},
	}
	if err := kinds.Register(srv, def); err != nil {
		t.Fatal(err)
	}

	g1 := writeFile(t, "g1.yaml", gadgetG1)
	k.must(t, "apply", "--server-side", "-f", g1)
	out := k.must(t, "get", "gd")
	if !strings.Contains(out, "SIZE") || !strings.Contains(out, "REPLICAS") || !hasRowNamed(out, "g1") || !strings.Contains(out, "small") {
		t.Errorf("kubectl get gd:\n%s", out)
	}
	if out := k.must(t, "get", "gadget", "g1", "-o", "yaml"); !strings.Contains(out, "replicas: 1") || !strings.Contains(out, "kind: Gadget") {
		t.Errorf("kubectl get -o yaml (defaulted replicas):\n%s", out)
	}
	if out := k.must(t, "explain", "gadget.spec.size"); !strings.Contains(out, "FIELD: size <string>") || !strings.Contains(out, "small") {
		t.Errorf("kubectl explain gadget.spec.size:\n%s", out)
	}
	k.must(t, "patch", "gadget", "g1", "--type=merge", "-p", `{"spec":{"replicas":2}}`)
	k.must(t, "patch", "gadget", "g1", "--type=json", "-p", `[{"op":"replace","path":"/spec/size","value":"large"}]`)
	// No strategic merge patch of a custom resource, as in kube-apiserver.
	if r := k.run(t, "patch", "gadget", "g1", "--type=strategic", "-p", `{"spec":{"ports":[{"name":"https","port":443}]}}`); r.err == nil || !strings.Contains(r.stderr, "application/strategic-merge-patch+json is not supported by example.org/v1, Kind=Gadget") {
		t.Errorf("a strategic merge patch: %v", r)
	}
	obj := k.getJSON(t, "gadget", "g1")
	spec := obj["spec"].(map[string]any)
	if spec["replicas"] != float64(2) || spec["size"] != "large" || len(spec["ports"].([]any)) != 1 {
		t.Errorf("after patches: %v", spec)
	}

	// Refused with kube-apiserver's words.
	bad := writeFile(t, "bad.yaml", strings.Replace(gadgetG1, "size: small", "size: huge", 1))
	r := k.run(t, "apply", "--server-side", "--force-conflicts", "-f", bad)
	if r.err == nil || !strings.Contains(r.stderr, `The Gadget "g1" is invalid: spec.size: Unsupported value: "huge": supported values: "small", "large"`) {
		t.Errorf("an invalid apply:\n%s", r)
	}
	unknown := writeFile(t, "unknown.yaml", gadgetG1+"  bogus: 1\n")
	if r := k.run(t, "apply", "--server-side", "--force-conflicts", "-f", unknown); r.err == nil || !strings.Contains(r.stderr, `unknown field "spec.bogus"`) {
		t.Errorf("an apply with an unknown field:\n%s", r)
	}

	// A dynamic client's watch, which ends when the kind is removed.
	dyn, err := dynamic.NewForConfig(&rest.Config{Host: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "example.org", Version: "v1", Resource: "gadgets"}
	w, err := dyn.Resource(gvr).Namespace("default").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != "ADDED" {
		t.Fatalf("watch: %v", ev)
	}

	k.must(t, "delete", "gadget", "g1")
	if r := k.run(t, "get", "gadget", "g1"); r.err == nil || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("after delete:\n%s", r)
	}
	if err := kinds.Remove(srv, "example.org", "Gadget"); err != nil {
		t.Fatal(err)
	}
	for range w.ResultChan() { // the DELETED event, then the end
	}
	if _, err := dyn.Resource(gvr).Namespace("default").List(context.Background(), metav1.ListOptions{}); err == nil {
		t.Error("gadgets are listed after the kind was removed")
	}
}
