package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestKubectlWrites runs kubectl's writing commands against a widget server:
// patch of every type, server-side apply by two managers, client-side apply,
// scale, server dry-run, strict field validation, deletion held by a
// finalizer, and wait for a condition and for deletion. It runs through
// /usr/bin/kubectl (the dispatcher) and the oldest and newest pinned kubectl,
// each against a server of its own; the cases are independent (one widget
// each) and run in parallel.
func TestKubectlWrites(t *testing.T) {
	bins := map[string]string{"dispatcher": dispatcherKubectl}
	for _, bin := range pinnedKubectls() {
		if v := strings.TrimPrefix(filepath.Base(bin), "kubectl."); v == "1.27" || v == "1.33" {
			bins[v] = bin
		}
	}
	for _, name := range slices.Sorted(maps.Keys(bins)) {
		t.Run(name, func(t *testing.T) { kubectlWrites(t, bins[name]) })
	}
}

func kubectlWrites(t *testing.T, bin string) {
	srv := startServer(t)
	// Each case gets a kubectl with a HOME and discovery cache of its own, so
	// parallel kubectl processes never share a cache directory.
	cases := []step{
		{"patch-json", func(t *testing.T) { writesPatchJSON(t, newKubectl(t, bin, srv)) }},
		{"patch-merge", func(t *testing.T) { writesPatchMerge(t, newKubectl(t, bin, srv)) }},
		{"patch-strategic", func(t *testing.T) { writesPatchStrategic(t, newKubectl(t, bin, srv)) }},
		{"apply-server-side-managers", func(t *testing.T) { writesApplyServerSide(t, newKubectl(t, bin, srv)) }},
		{"apply-client-side", func(t *testing.T) { writesApplyClientSide(t, newKubectl(t, bin, srv)) }},
		{"scale", func(t *testing.T) { writesScale(t, newKubectl(t, bin, srv)) }},
		{"create-dry-run-server", func(t *testing.T) { writesDryRun(t, newKubectl(t, bin, srv)) }},
		{"create-unknown-field", func(t *testing.T) { writesUnknownField(t, newKubectl(t, bin, srv)) }},
		{"delete-finalizer-wait", func(t *testing.T) { writesFinalizer(t, newKubectl(t, bin, srv)) }},
		{"wait-condition-ready", func(t *testing.T) { writesWaitReady(t, newKubectl(t, bin, srv)) }},
	}
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.run(t)
			})
		}
	})
	if err := srv.alive(); err != nil {
		t.Fatal(err)
	}
}

// widgetYAML is a widget manifest named name; rest follows metadata.name:
// more metadata fields indented two spaces, then spec.
func widgetYAML(name, rest string) string {
	return "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: " + name + "\n" + rest
}

const twoPorts = `spec:
  color: Red
  replicas: 2
  ports:
  - name: http
    port: 80
  - name: https
    port: 443
`

func wantOutput(t *testing.T, out, want string) {
	t.Helper()
	if !strings.Contains(out, want) {
		t.Errorf("kubectl printed %q, want it to contain %q", out, want)
	}
}

func writesPatchJSON(t *testing.T, k *kubectl) {
	k.must(t, "create", "-f", writeFile(t, "w.yaml", widgetYAML("pjson", twoPorts)))

	out := k.must(t, "patch", "widget", "pjson", "--type=json", "-p",
		`[{"op":"test","path":"/spec/color","value":"Red"},`+
			`{"op":"replace","path":"/spec/color","value":"Blue"},`+
			`{"op":"remove","path":"/spec/ports/0"},`+
			`{"op":"add","path":"/spec/ports/-","value":{"name":"metrics","port":9090}}]`)
	wantOutput(t, out, "widget.example.com/pjson patched")
	obj := k.getJSON(t, "widget", "pjson")
	wantField(t, obj, "Blue", "spec", "color")
	wantField(t, obj, 2, "spec", "replicas")
	wantField(t, obj, 2, "metadata", "generation")
	ports, order := portsOf(t, obj)
	if !slices.Equal(order, []string{"https", "metrics"}) {
		t.Errorf("spec.ports names = %v, want [https metrics] (http removed, metrics appended)", order)
	}
	if p := ports["metrics"]; p == nil || fmt.Sprint(p["port"]) != "9090" || p["protocol"] != "TCP" {
		t.Errorf("spec.ports metrics = %v, want port 9090 with the defaulted protocol TCP", p)
	}

	// A failing test operation rejects the whole patch and changes nothing.
	rv := str(obj, "metadata", "resourceVersion")
	r := k.run(t, "patch", "widget", "pjson", "--type=json", "-p",
		`[{"op":"test","path":"/spec/color","value":"Red"},{"op":"replace","path":"/spec/color","value":"Green"}]`)
	if r.err == nil {
		t.Errorf("a JSON patch whose test operation fails succeeded; %s", r)
	}
	after := k.getJSON(t, "widget", "pjson")
	wantField(t, after, "Blue", "spec", "color")
	wantField(t, after, rv, "metadata", "resourceVersion")

	// A path that does not exist is a client error, not a success or a 500.
	r = k.run(t, "patch", "widget", "pjson", "--type=json", "-p", `[{"op":"replace","path":"/spec/nothere/x","value":1}]`)
	if r.err == nil || strings.Contains(r.stderr, "InternalError") {
		t.Errorf("a JSON patch of a missing path should fail with a client error; %s", r)
	}
}

func writesPatchMerge(t *testing.T, k *kubectl) {
	k.must(t, "create", "-f", writeFile(t, "w.yaml", widgetYAML("pmerge", twoPorts)))

	out := k.must(t, "patch", "widget", "pmerge", "--type=merge", "-p",
		`{"metadata":{"labels":{"tier":"gold"}},"spec":{"size":7,"selector":{"app":"pmerge"}}}`)
	wantOutput(t, out, "widget.example.com/pmerge patched")
	obj := k.getJSON(t, "widget", "pmerge")
	wantField(t, obj, "gold", "metadata", "labels", "tier")
	wantField(t, obj, 7, "spec", "size")
	wantField(t, obj, "pmerge", "spec", "selector", "app")
	wantField(t, obj, "Red", "spec", "color")
	wantField(t, obj, 2, "metadata", "generation")

	// null removes a field; a list is replaced whole (merge patch knows no
	// merge keys).
	k.must(t, "patch", "widget", "pmerge", "--type=merge", "-p",
		`{"spec":{"size":null,"ports":[{"name":"grpc","port":9000}]}}`)
	obj = k.getJSON(t, "widget", "pmerge")
	if v, ok := field(obj, "spec", "size"); ok {
		t.Errorf("spec.size = %v after a merge patch set it to null, want it gone", v)
	}
	if _, order := portsOf(t, obj); !slices.Equal(order, []string{"grpc"}) {
		t.Errorf("spec.ports names = %v after a merge patch, want the patch's list [grpc]", order)
	}
	wantField(t, obj, 3, "metadata", "generation")

	// A patch that changes nothing writes nothing.
	rv := str(obj, "metadata", "resourceVersion")
	k.must(t, "patch", "widget", "pmerge", "--type=merge", "-p", `{"spec":{"color":"Red"}}`)
	obj = k.getJSON(t, "widget", "pmerge")
	wantField(t, obj, rv, "metadata", "resourceVersion")
	wantField(t, obj, 3, "metadata", "generation")

	// Patching a widget that does not exist is NotFound.
	r := k.run(t, "patch", "widget", "nosuch", "--type=merge", "-p", `{"spec":{"size":1}}`)
	if r.err == nil || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("patch of a missing widget should fail with NotFound; %s", r)
	}
}

func writesPatchStrategic(t *testing.T, k *kubectl) {
	requireStrategicMergePatch(t)
	k.must(t, "create", "-f", writeFile(t, "w.yaml", widgetYAML("psmp", twoPorts)))

	// spec.ports merges by name: the patch changes http's port, keeps its
	// defaulted protocol, and leaves https alone.
	out := k.must(t, "patch", "widget", "psmp", "--type=strategic", "-p",
		`{"spec":{"ports":[{"name":"http","port":8080}]}}`)
	wantOutput(t, out, "widget.example.com/psmp patched")
	obj := k.getJSON(t, "widget", "psmp")
	ports, order := portsOf(t, obj)
	if !slices.Equal(order, []string{"http", "https"}) {
		t.Errorf("spec.ports names = %v, want [http https]", order)
	}
	if p := ports["http"]; fmt.Sprint(p["port"]) != "8080" || p["protocol"] != "TCP" {
		t.Errorf("spec.ports http = %v, want port 8080 and protocol TCP kept", p)
	}
	if p := ports["https"]; fmt.Sprint(p["port"]) != "443" {
		t.Errorf("spec.ports https = %v, want it untouched (port 443)", p)
	}
	wantField(t, obj, "Red", "spec", "color")

	// A new item goes before the ones the patch did not mention.
	k.must(t, "patch", "widget", "psmp", "--type=strategic", "-p",
		`{"spec":{"ports":[{"name":"grpc","port":9000}]}}`)
	obj = k.getJSON(t, "widget", "psmp")
	if _, order := portsOf(t, obj); !slices.Equal(order, []string{"grpc", "http", "https"}) {
		t.Errorf("spec.ports names = %v after adding grpc, want [grpc http https]", order)
	}

	// $patch: delete removes the item with that name, and only it.
	k.must(t, "patch", "widget", "psmp", "--type=strategic", "-p",
		`{"spec":{"ports":[{"name":"https","$patch":"delete"}]}}`)
	obj = k.getJSON(t, "widget", "psmp")
	if _, order := portsOf(t, obj); !slices.Equal(order, []string{"grpc", "http"}) {
		t.Errorf("spec.ports names = %v after $patch: delete of https, want [grpc http]", order)
	}

	// $setElementOrder puts the merged list in the order it gives, new items
	// included.
	k.must(t, "patch", "widget", "psmp", "--type=strategic", "-p",
		`{"spec":{"$setElementOrder/ports":[{"name":"http"},{"name":"admin"},{"name":"grpc"}],`+
			`"ports":[{"name":"admin","port":8443}]}}`)
	obj = k.getJSON(t, "widget", "psmp")
	ports, order = portsOf(t, obj)
	if !slices.Equal(order, []string{"http", "admin", "grpc"}) {
		t.Errorf("spec.ports names = %v after $setElementOrder, want [http admin grpc]", order)
	}
	if p := ports["admin"]; fmt.Sprint(p["port"]) != "8443" || p["protocol"] != "TCP" {
		t.Errorf("spec.ports admin = %v, want port 8443 with the defaulted protocol TCP", p)
	}
	if p := ports["http"]; fmt.Sprint(p["port"]) != "8080" {
		t.Errorf("spec.ports http = %v, want port 8080 kept", p)
	}
	wantField(t, obj, 2, "spec", "replicas")
	wantField(t, obj, "Red", "spec", "color")
}

func writesApplyServerSide(t *testing.T, k *kubectl) {
	requireServerSideApply(t)
	alice := writeFile(t, "alice.yaml", widgetYAML("ssa", "spec:\n  color: Red\n  replicas: 2\n"))
	bob := writeFile(t, "bob.yaml", widgetYAML("ssa", "spec:\n  replicas: 4\n"))

	out := k.must(t, "apply", "--server-side", "--field-manager=alice", "-f", alice)
	wantOutput(t, out, "widget.example.com/ssa serverside-applied")

	r := k.run(t, "apply", "--server-side", "--field-manager=bob", "-f", bob)
	if r.err == nil {
		t.Fatalf("bob's apply of spec.replicas, which alice owns, succeeded; %s", r)
	}
	for _, want := range []string{`conflict with "alice"`, ".spec.replicas"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the conflict error should contain %q; %s", want, r)
		}
	}
	obj := k.getJSON(t, "widget", "ssa")
	wantField(t, obj, 2, "spec", "replicas")

	out = k.must(t, "apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", bob)
	wantOutput(t, out, "widget.example.com/ssa serverside-applied")

	// kubectl hides managedFields unless asked.
	obj = k.getJSON(t, "widget", "ssa", "--show-managed-fields")
	wantField(t, obj, 4, "spec", "replicas")
	wantField(t, obj, "Red", "spec", "color")
	entries := managedFieldsOf(t, obj)
	a, okA := entries["alice/Apply"]
	b, okB := entries["bob/Apply"]
	if !okA || !okB {
		t.Fatalf("managedFields = %s, want Apply entries for alice and bob", mustJSON(entries))
	}
	for _, e := range []managedField{a, b} {
		if e.APIVersion != "example.com/v1" || e.FieldsType != "FieldsV1" || e.Time == "" {
			t.Errorf("managedFields entry %s: apiVersion %q fieldsType %q time %q, want example.com/v1, FieldsV1 and a time",
				e.Manager, e.APIVersion, e.FieldsType, e.Time)
		}
	}
	if !owns(b.FieldsV1, "f:spec", "f:replicas") {
		t.Errorf("bob forced spec.replicas but his fieldsV1 lacks f:spec/f:replicas: %s", mustJSON(b.FieldsV1))
	}
	if owns(a.FieldsV1, "f:spec", "f:replicas") {
		t.Errorf("alice lost spec.replicas to bob's force but still owns it: %s", mustJSON(a.FieldsV1))
	}
	if !owns(a.FieldsV1, "f:spec", "f:color") {
		t.Errorf("alice's fieldsV1 lacks f:spec/f:color, which nobody took from her: %s", mustJSON(a.FieldsV1))
	}
}

func writesApplyClientSide(t *testing.T, k *kubectl) {
	const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
	// The ports spell out their protocol: kubectl sends a custom resource's
	// apply as a JSON merge patch, which replaces a list whole, so a list the
	// server defaulted into would never compare unchanged.
	full := writeFile(t, "full.yaml", widgetYAML("csa", "  labels:\n    team: x\nspec:\n  color: Red\n  size: 5\n"+
		"  ports:\n  - name: http\n    port: 80\n    protocol: TCP\n  - name: https\n    port: 443\n    protocol: TCP\n"))
	out := k.must(t, "apply", "-f", full)
	wantOutput(t, out, "widget.example.com/csa created")
	obj := k.getJSON(t, "widget", "csa")
	wantField(t, obj, 5, "spec", "size")
	wantField(t, obj, "x", "metadata", "labels", "team")
	var applied map[string]any
	if err := json.Unmarshal([]byte(str(obj, "metadata", "annotations", lastApplied)), &applied); err != nil {
		t.Fatalf("annotation %s is not JSON: %v; object: %s", lastApplied, err, mustJSON(obj))
	}
	wantField(t, applied, 5, "spec", "size")
	wantField(t, applied, "Red", "spec", "color")
	wantField(t, applied, "csa", "metadata", "name")
	if _, ok := field(applied, "spec", "replicas"); ok {
		t.Errorf("the last-applied configuration holds the defaulted spec.replicas, which the file does not: %v", applied)
	}

	// The same file again changes nothing.
	rv := str(obj, "metadata", "resourceVersion")
	out = k.must(t, "apply", "-f", full)
	wantOutput(t, out, "widget.example.com/csa unchanged")
	obj = k.getJSON(t, "widget", "csa")
	wantField(t, obj, rv, "metadata", "resourceVersion")
	wantField(t, obj, 1, "metadata", "generation")

	// Fields removed from the file are removed from the object; a field the
	// file never set (the defaulted replicas) stays.
	out = k.must(t, "apply", "-f", writeFile(t, "less.yaml", widgetYAML("csa", "spec:\n  color: Red\n"+
		"  ports:\n  - name: http\n    port: 80\n    protocol: TCP\n")))
	wantOutput(t, out, "widget.example.com/csa configured")
	obj = k.getJSON(t, "widget", "csa")
	if v, ok := field(obj, "spec", "size"); ok {
		t.Errorf("spec.size = %v, want it removed with its line in the file", v)
	}
	if v, ok := field(obj, "metadata", "labels", "team"); ok {
		t.Errorf("label team = %v, want it removed with its line in the file", v)
	}
	if ports, order := portsOf(t, obj); !slices.Equal(order, []string{"http"}) || ports["http"]["protocol"] != "TCP" {
		t.Errorf("spec.ports = %v, want just http (https removed with its lines in the file, protocol still defaulted)", ports)
	}
	wantField(t, obj, "Red", "spec", "color")
	wantField(t, obj, 1, "spec", "replicas")
	wantField(t, obj, 2, "metadata", "generation")
	applied = nil
	if err := json.Unmarshal([]byte(str(obj, "metadata", "annotations", lastApplied)), &applied); err != nil {
		t.Fatalf("annotation %s is not JSON: %v", lastApplied, err)
	}
	if v, ok := field(applied, "spec", "size"); ok {
		t.Errorf("the last-applied configuration still has spec.size %v", v)
	}
}

func writesScale(t *testing.T, k *kubectl) {
	k.must(t, "create", "-f", writeFile(t, "w.yaml", widgetYAML("scaled", "spec:\n  color: Green\n  replicas: 2\n")))

	out := k.must(t, "scale", "--replicas=3", "widget/scaled")
	wantOutput(t, out, "widget.example.com/scaled scaled")
	obj := k.getJSON(t, "widget", "scaled")
	wantField(t, obj, 3, "spec", "replicas")
	wantField(t, obj, 2, "metadata", "generation")
	wantField(t, obj, "Green", "spec", "color")

	// A precondition on the current count that does not hold changes nothing.
	r := k.run(t, "scale", "--current-replicas=2", "--replicas=5", "widget/scaled")
	if r.err == nil {
		t.Errorf("scale with --current-replicas=2 of a widget at 3 succeeded; %s", r)
	}
	wantField(t, k.getJSON(t, "widget", "scaled"), 3, "spec", "replicas")

	k.must(t, "scale", "--current-replicas=3", "--replicas=5", "widget/scaled")
	var scale map[string]any
	raw := k.must(t, "get", "--raw", "/apis/example.com/v1/namespaces/default/widgets/scaled/scale")
	if err := json.Unmarshal([]byte(raw), &scale); err != nil {
		t.Fatalf("GET scale is not JSON: %v\n%s", err, raw)
	}
	wantField(t, scale, "autoscaling/v1", "apiVersion")
	wantField(t, scale, "Scale", "kind")
	wantField(t, scale, 5, "spec", "replicas")
	wantField(t, k.getJSON(t, "widget", "scaled"), 5, "spec", "replicas")
}

func writesDryRun(t *testing.T, k *kubectl) {
	file := writeFile(t, "w.yaml", widgetYAML("dry", "spec:\n  color: Blue\n"))
	out := k.must(t, "create", "--dry-run=server", "-f", file)
	wantOutput(t, out, "widget.example.com/dry created (server dry run)")

	// The answer is the object as it would have been stored, defaults included.
	var obj map[string]any
	out = k.must(t, "create", "--dry-run=server", "-f", file, "-o", "json")
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("create --dry-run=server -o json printed something that is not JSON: %v\n%s", err, out)
	}
	wantField(t, obj, "dry", "metadata", "name")
	wantField(t, obj, "Blue", "spec", "color")
	wantField(t, obj, 1, "spec", "replicas")

	if r := k.run(t, "get", "widget", "dry"); r.err == nil || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("get after a server dry run should fail with NotFound; %s", r)
	}
	// Nothing was stored, so a real create does not find it there.
	out = k.must(t, "create", "-f", file)
	wantOutput(t, out, "widget.example.com/dry created")
	stored := k.getJSON(t, "widget", "dry")

	// A dry-run patch or delete answers and leaves the object as it was.
	out = k.must(t, "patch", "widget", "dry", "--dry-run=server", "--type=merge", "-p", `{"spec":{"color":"Red"}}`)
	wantOutput(t, out, "widget.example.com/dry patched") // kubectl patch prints no dry-run suffix
	out = k.must(t, "delete", "widget", "dry", "--dry-run=server")
	wantOutput(t, out, `widget.example.com "dry" deleted (server dry run)`)
	obj = k.getJSON(t, "widget", "dry")
	wantField(t, obj, "Blue", "spec", "color")
	wantField(t, obj, str(stored, "metadata", "resourceVersion"), "metadata", "resourceVersion")
}

func writesUnknownField(t *testing.T, k *kubectl) {
	file := writeFile(t, "w.yaml", widgetYAML("bogus", "spec:\n  color: Blue\n  bogus: 1\n"))
	r := k.run(t, "create", "-f", file)
	if r.err == nil {
		t.Fatalf("create with spec.bogus succeeded under kubectl's default (strict) validation; %s", r)
	}
	if !strings.Contains(r.stderr, `unknown field "spec.bogus"`) {
		t.Errorf("the error should name the unknown field spec.bogus; %s", r)
	}
	if r := k.run(t, "get", "widget", "bogus"); r.err == nil || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("the widget with an unknown field was stored; %s", r)
	}
	// With validation off the field is dropped and the rest is stored.
	k.must(t, "create", "--validate=false", "-f", file)
	obj := k.getJSON(t, "widget", "bogus")
	if v, ok := field(obj, "spec", "bogus"); ok {
		t.Errorf("spec.bogus = %v was stored", v)
	}
	wantField(t, obj, "Blue", "spec", "color")
}

func writesFinalizer(t *testing.T, k *kubectl) {
	k.must(t, "create", "-f", writeFile(t, "w.yaml",
		widgetYAML("held", "  finalizers:\n  - example.com/hold\nspec:\n  color: Red\n")))

	out := k.must(t, "delete", "widget", "held", "--wait=false")
	wantOutput(t, out, `widget.example.com "held" deleted`)
	obj := k.getJSON(t, "widget", "held")
	if str(obj, "metadata", "deletionTimestamp") == "" {
		t.Errorf("a deleted widget with a finalizer has no deletionTimestamp: %s", mustJSON(obj))
	}
	if f, _ := field(obj, "metadata", "finalizers"); fmt.Sprint(f) != "[example.com/hold]" {
		t.Errorf("finalizers = %v, want [example.com/hold]", f)
	}

	// Once deletion has started no finalizer may be added.
	r := k.run(t, "patch", "widget", "held", "--type=json", "-p",
		`[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/more"}]`)
	if r.err == nil || !strings.Contains(r.stderr, "no new finalizers can be added") {
		t.Errorf("adding a finalizer to a widget being deleted should be refused; %s", r)
	}

	// wait --for=delete, started while the widget still exists, returns once
	// the last finalizer is gone. -v=6 shows when its watch has begun.
	w := k.start(t, "wait", "--for=delete", "widget/held", "--timeout=55s", "-v=6")
	w.waitStderr(t, "its watch", 30*time.Second, "watch=true")
	w.running(t, "while the widget still had its finalizer")

	out = k.must(t, "patch", "widget", "held", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	wantOutput(t, out, "widget.example.com/held patched")
	out = w.finish(t, "the finalizer was removed", 60*time.Second)
	wantOutput(t, out, "condition met")

	r = k.run(t, "get", "widget", "held")
	if r.err == nil || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("get after the last finalizer was removed should fail with NotFound; %s", r)
	}
}

func writesWaitReady(t *testing.T, k *kubectl) {
	k.must(t, "create", "-f", writeFile(t, "w.yaml", widgetYAML("ready", "spec:\n  color: Green\n")))

	// Not ready yet: a short wait times out.
	if r := k.run(t, "wait", "--for=condition=Ready", "widget/ready", "--timeout=1s"); r.err == nil {
		t.Errorf("wait --for=condition=Ready succeeded before the widget had a Ready condition; %s", r)
	}

	w := k.start(t, "wait", "--for=condition=Ready", "widget/ready", "--timeout=55s", "-v=6")
	w.waitStderr(t, "its watch", 30*time.Second, "watch=true")
	w.running(t, "before the widget had a Ready condition")

	// The status subresource takes status and ignores the spec.
	out := k.must(t, "patch", "widget", "ready", "--subresource=status", "--type=merge", "-p",
		`{"spec":{"color":"Blue"},"status":{"replicas":1,"conditions":[{"type":"Ready","status":"True",`+
			`"reason":"Up","message":"serving","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	wantOutput(t, out, "widget.example.com/ready patched")
	out = w.finish(t, "the Ready condition was set", 60*time.Second)
	wantOutput(t, out, "widget.example.com/ready condition met")

	obj := k.getJSON(t, "widget", "ready")
	wantField(t, obj, "Green", "spec", "color")
	wantField(t, obj, 1, "metadata", "generation")
	wantField(t, obj, 1, "status", "replicas")
	conds, _ := field(obj, "status", "conditions")
	if c, ok := conds.([]any); !ok || len(c) != 1 || fmt.Sprint(c[0].(map[string]any)["type"]) != "Ready" {
		t.Errorf("status.conditions = %v, want one Ready condition", conds)
	}
	// Once met, a wait returns at once.
	out = k.must(t, "wait", "--for=condition=Ready", "widget/ready", "--timeout=30s")
	wantOutput(t, out, "condition met")
}

// TestDynamicApply drives server-side apply through client-go's dynamic
// client: an apply creates a missing widget and changes it later; an apply
// without a field manager is refused; and, once field ownership lands, a
// second manager's apply of a field the first one owns is a 409 whose causes
// name the field and the owner, until it forces.
func TestDynamicApply(t *testing.T) {
	srv := startServer(t)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)

	t.Run("creates-then-changes", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t, 60*time.Second)
		obj, err := widgets.Apply(ctx, "applied", newWidget("applied", map[string]any{"color": "Blue", "size": int64(2)}),
			metav1.ApplyOptions{FieldManager: "alice"})
		if err != nil {
			t.Fatalf("apply of a missing widget: %v", err)
		}
		if obj.GetUID() == "" || obj.GetGeneration() != 1 {
			t.Errorf("apply created uid %q generation %d, want a uid and generation 1", obj.GetUID(), obj.GetGeneration())
		}
		wantField(t, obj.Object, "Blue", "spec", "color")
		wantField(t, obj.Object, 1, "spec", "replicas") // defaulted

		obj, err = widgets.Apply(ctx, "applied", newWidget("applied", map[string]any{"color": "Blue", "size": int64(3)}),
			metav1.ApplyOptions{FieldManager: "alice"})
		if err != nil {
			t.Fatalf("second apply: %v", err)
		}
		wantField(t, obj.Object, 3, "spec", "size")
		if obj.GetGeneration() != 2 {
			t.Errorf("generation after an apply that changed spec.size = %d, want 2", obj.GetGeneration())
		}
		got, err := widgets.Get(ctx, "applied", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantField(t, got.Object, 3, "spec", "size")
	})

	t.Run("needs-field-manager", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t, 60*time.Second)
		_, err := widgets.Apply(ctx, "unmanaged", newWidget("unmanaged", map[string]any{"color": "Red"}), metav1.ApplyOptions{})
		// kube-apiserver's ValidatePatchOptions: 422, one Required cause.
		const want = `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`
		if st := statusOfErr(t, err); st.Code != 422 || st.Reason != metav1.StatusReasonInvalid || st.Message != want {
			t.Errorf("apply without a field manager: %d %s %q, want 422 Invalid %q", st.Code, st.Reason, st.Message, want)
		}
		if _, err := widgets.Get(ctx, "unmanaged", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after a refused apply: %v, want NotFound", err)
		}
	})

	t.Run("conflict-then-force", func(t *testing.T) {
		requireServerSideApply(t)
		t.Parallel()
		ctx := ctxFor(t, 60*time.Second)
		_, err := widgets.Apply(ctx, "contested", newWidget("contested", map[string]any{"color": "Red", "replicas": int64(2)}),
			metav1.ApplyOptions{FieldManager: "alice"})
		if err != nil {
			t.Fatalf("alice's apply: %v", err)
		}
		bobs := newWidget("contested", map[string]any{"replicas": int64(4)})

		_, err = widgets.Apply(ctx, "contested", bobs, metav1.ApplyOptions{FieldManager: "bob"})
		// kube-apiserver names an applier by name alone; the apiVersion only
		// for a manager that wrote with an update (below).
		wantApplyConflict(t, err, ".spec.replicas", `"alice"`)
		got, err := widgets.Get(ctx, "contested", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantField(t, got.Object, 2, "spec", "replicas")

		forced, err := widgets.Apply(ctx, "contested", bobs, metav1.ApplyOptions{FieldManager: "bob", Force: true})
		if err != nil {
			t.Fatalf("bob's forced apply: %v", err)
		}
		wantField(t, forced.Object, 4, "spec", "replicas")
		wantField(t, forced.Object, "Red", "spec", "color")
		owners := map[string]metav1.ManagedFieldsEntry{}
		for _, e := range forced.GetManagedFields() {
			owners[e.Manager+"/"+string(e.Operation)] = e
		}
		a, okA := owners["alice/Apply"]
		b, okB := owners["bob/Apply"]
		if !okA || !okB {
			t.Fatalf("managedFields = %s, want Apply entries for alice and bob", mustJSON(forced.GetManagedFields()))
		}
		var aliceFields, bobFields map[string]any
		if err := json.Unmarshal(a.FieldsV1.GetRawBytes(), &aliceFields); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b.FieldsV1.GetRawBytes(), &bobFields); err != nil {
			t.Fatal(err)
		}
		if !owns(bobFields, "f:spec", "f:replicas") || owns(aliceFields, "f:spec", "f:replicas") {
			t.Errorf("after the force bob should own spec.replicas and alice not; alice %s, bob %s", a.FieldsV1.GetRawBytes(), b.FieldsV1.GetRawBytes())
		}
		if !owns(aliceFields, "f:spec", "f:color") {
			t.Errorf("alice's fieldsV1 lacks f:spec/f:color, which nobody took from her: %s", a.FieldsV1.GetRawBytes())
		}

		// Now alice is the one who conflicts.
		_, err = widgets.Apply(ctx, "contested", newWidget("contested", map[string]any{"color": "Red", "replicas": int64(2)}),
			metav1.ApplyOptions{FieldManager: "alice"})
		wantApplyConflict(t, err, ".spec.replicas", `"bob"`)

		// A field set by an update belongs to its manager too, named with
		// the apiVersion it wrote.
		_, err = widgets.Patch(ctx, "contested", types.MergePatchType, []byte(`{"spec":{"size":9}}`),
			metav1.PatchOptions{FieldManager: "carol"})
		if err != nil {
			t.Fatalf("carol's merge patch: %v", err)
		}
		_, err = widgets.Apply(ctx, "contested", newWidget("contested", map[string]any{"size": int64(1)}),
			metav1.ApplyOptions{FieldManager: "dave"})
		wantApplyConflict(t, err, ".spec.size", `"carol" using example.com/v1`)
	})
}

// wantApplyConflict checks that err is kube-apiserver's 409 for an apply
// that conflicts on one field with one other manager, described as owner.
func wantApplyConflict(t *testing.T, err error, field, owner string) {
	t.Helper()
	if !apierrors.IsConflict(err) {
		t.Fatalf("apply of %s, which %s owns: err = %v, want a 409 Conflict", field, owner, err)
	}
	st := statusOfErr(t, err)
	if st.Code != 409 || st.Reason != metav1.StatusReasonConflict {
		t.Errorf("status %d %s, want 409 Conflict; %s", st.Code, st.Reason, mustJSON(st))
	}
	cause := "conflict with " + owner
	if want := "Apply failed with 1 conflict: " + cause + ": " + field; st.Message != want {
		t.Errorf("message = %q, want %q", st.Message, want)
	}
	if st.Details == nil || len(st.Details.Causes) != 1 {
		t.Fatalf("want exactly one cause; status: %s", mustJSON(st))
	}
	if c := st.Details.Causes[0]; c.Type != metav1.CauseTypeFieldManagerConflict || c.Field != field || c.Message != cause {
		t.Errorf("cause = {%s %q %q}, want {FieldManagerConflict %q %q}", c.Type, c.Field, c.Message, field, cause)
	}
}
