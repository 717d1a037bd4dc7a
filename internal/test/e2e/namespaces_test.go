package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TestKubectlNamespaces drives namespaces with kubectl 1.27 and 1.33 as a
// user would, and checks that kubectl prints what it prints against
// kube-apiserver (KUBERNETES-FACTS.md): a missing namespace, a missing
// widget, a create into a missing or a terminating namespace, the table of
// namespaces, and a delete that returns once the namespace and its widgets
// are gone.
func TestKubectlNamespaces(t *testing.T) {
	for _, version := range []string{"1.27", "1.33"} {
		t.Run(version, func(t *testing.T) {
			srv := startServer(t)
			k := newKubectl(t, "/usr/lib/google-cloud-sdk/bin/kubectl."+version, srv)
			widget := writeFile(t, "w.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\nspec:\n  color: Red\n")
			held := writeFile(t, "held.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\nspec:\n  color: Red\n")

			wantErr := func(want string, args ...string) {
				t.Helper()
				r := k.run(t, args...)
				if r.err == nil || lastLines(strings.TrimSpace(r.stderr), 1) != want {
					t.Errorf("%s\nwant the error %q", r, want)
				}
			}
			// kubectl asks for the namespace after a 404, and names it.
			wantErr(`Error from server (NotFound): namespaces "nowhere" not found`, "get", "wd", "a", "-n", "nowhere")
			wantErr(`Error from server (NotFound): widgets.example.com "a" not found`, "get", "wd", "a", "-n", "default")
			wantErr(`Error from server (NotFound): error when creating "`+widget+`": namespaces "nowhere" not found`, "create", "-n", "nowhere", "-f", widget)

			k.must(t, "create", "ns", "termns")
			k.must(t, "create", "-n", "termns", "-f", held)
			k.must(t, "delete", "ns", "termns", "--wait=false")
			wantErr(`Error from server (Forbidden): error when creating "`+widget+`": widgets.example.com "a" is forbidden: unable to create new content in namespace termns because it is being terminated`,
				"create", "-n", "termns", "-f", widget)
			if phase := k.must(t, "get", "ns", "termns", "-o", "jsonpath={.status.phase}"); phase != "Terminating" {
				t.Errorf("a deleted namespace with content held by a finalizer: phase %q, want Terminating", phase)
			}

			out := k.must(t, "get", "ns")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if fields := strings.Fields(lines[0]); strings.Join(fields, " ") != "NAME STATUS AGE" {
				t.Errorf("kubectl get ns: header %q, want NAME STATUS AGE\n%s", lines[0], out)
			}
			for _, want := range []string{"default Active", "kube-system Active", "kube-public Active", "kube-node-lease Active", "termns Terminating"} {
				found := false
				for _, l := range lines[1:] {
					f := strings.Fields(l)
					found = found || len(f) == 3 && f[0]+" "+f[1] == want
				}
				if !found {
					t.Errorf("kubectl get ns: no row %q\n%s", want, out)
				}
			}

			// Apply, label, and every output of kubectl, on a namespace itself.
			ns := writeFile(t, "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: applied\n  labels:\n    team: a\n")
			k.must(t, "apply", "--server-side", "-f", ns)
			k.must(t, "label", "ns", "applied", "env=prod")
			if got := k.must(t, "get", "ns", "-l", "team=a,env=prod", "-o", "name"); got != "namespace/applied\n" {
				t.Errorf("kubectl get ns -l team=a,env=prod: %q", got)
			}
			for _, out := range []string{"yaml", "json", "wide"} {
				if got := k.must(t, "get", "ns", "applied", "-o", out); !strings.Contains(got, "applied") {
					t.Errorf("kubectl get ns applied -o %s:\n%s", out, got)
				}
			}
			if got := k.must(t, "get", "ns", "applied", "-o", "jsonpath={.metadata.labels.kubernetes\\.io/metadata\\.name} {.spec.finalizers}"); got != `applied ["kubernetes"]` {
				t.Errorf("the label and finalizer kube gives a namespace: %q", got)
			}

			k.must(t, "create", "ns", "x")
			for _, name := range []string{"w1", "w2", "w3"} {
				file := writeFile(t, name+".yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: "+name+"\nspec:\n  color: Blue\n")
				k.must(t, "create", "-n", "x", "-f", file)
			}
			k.must(t, "delete", "ns", "x") // waits until it is gone
			wantErr(`Error from server (NotFound): namespaces "x" not found`, "get", "ns", "x")
			if out := k.must(t, "get", "wd", "-A", "-o", "name"); out != "widget.example.com/held\n" {
				t.Errorf("after kubectl delete ns x, widgets left: %q; want only termns's held widget", out)
			}

			// The finalizer goes: so do the widget and its namespace.
			k.must(t, "patch", "-n", "termns", "wd", "held", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
			k.must(t, "wait", "--for=delete", "ns/termns", "--timeout=30s")
			wantErr(`Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted`, "delete", "ns", "default")
		})
	}
}

// TestNamespacesClientGo uses namespaces through client-go's typed
// clientset, which speaks protobuf: create (with kube's finalizer, phase and
// label), list, watch, delete (Terminating), the finalize subresource, and
// the controller removing what the namespace held.
func TestNamespacesClientGo(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 60*time.Second)
	cs, err := kubernetes.NewForConfig(restConfig(srv, nil))
	if err != nil {
		t.Fatal(err)
	}
	namespaces := cs.CoreV1().Namespaces()
	ns, err := namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "team-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ns.Name, "team-") || ns.Status.Phase != corev1.NamespaceActive ||
		len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != corev1.FinalizerKubernetes || ns.Labels[corev1.LabelMetadataName] != ns.Name {
		t.Errorf("created namespace: %+v; want phase Active, finalizer kubernetes and the label %s=%s", ns, corev1.LabelMetadataName, ns.Name)
	}
	w, err := namespaces.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + ns.Name, ResourceVersion: ns.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(ns.Name)
	for _, name := range []string{"a", "b"} {
		if _, err := widgets.Create(ctx, newWidget(name, map[string]any{"color": "Red"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := namespaces.Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Its widgets go, then it goes.
	var sawTerminating bool
	for ev := range w.ResultChan() {
		got, ok := ev.Object.(*corev1.Namespace)
		if !ok {
			t.Fatalf("watch: %v %T", ev.Type, ev.Object)
		}
		sawTerminating = sawTerminating || got.Status.Phase == corev1.NamespaceTerminating && got.DeletionTimestamp != nil
		if ev.Type == "DELETED" {
			break
		}
	}
	if !sawTerminating {
		t.Errorf("watching a deleted namespace: never saw it Terminating")
	}
	if list, err := widgets.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("widgets of the deleted namespace: %v, %v; want none", list, err)
	}

	// A client may finalize a namespace itself, as kube's own controller does.
	_, err = namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "held"},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/hold"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := namespaces.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var held *corev1.Namespace
	for {
		held, err = namespaces.Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(held.Spec.Finalizers) == 1 { // the controller removed its own
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	held.Spec.Finalizers = nil
	if _, err := namespaces.Finalize(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := namespaces.Get(ctx, "held", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("after the last finalizer went: %v; want not found", err)
	}
}

// createNamespace creates a namespace for a test's objects: the example
// server has only kube's own until then.
func createNamespace(t *testing.T, ctx context.Context, client dynamic.Interface, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := client.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}
