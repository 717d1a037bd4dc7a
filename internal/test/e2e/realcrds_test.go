package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// realProject is a project whose CustomResourceDefinitions ship in its Go
// module, and what TestRealCRDs does with one of its kinds.
type realProject struct {
	module  string   // module@version, taken from the module cache
	crds    []string // files or directories in the module, applied together
	applied int      // definitions kubectl reports serverside-applied
	// refused are texts of kube-apiserver's refusal of a definition among
	// crds that kube-apiserver refuses too.
	refused []string
	crd     string // the definition of the kind tried
	// sample is a file of the project's own examples with one object of
	// the kind; namespace its namespace, created first unless default.
	sample, namespace string
	resource, name    string // kubectl's resource name and the sample's name
	path              string // the object's URL path
	// columns and cells are what `kubectl get` prints: the printer
	// columns' headers and some of the sample's cells.
	columns, cells []string
	// read is a JSON path (kubectl -o jsonpath) and the value read back
	// there: the sample's, or a schema default.
	read, readValue string
	// patch is a JSON pointer to a field the JSON patch and the merge
	// patch set, with the JSON values each sets.
	patch, jsonValue, mergeValue string
	// conflict: applyA by manager "a" (the sample's manager, kubectl,
	// when empty), then applyB by manager "b" conflicts on conflictPath,
	// applied to subresource when set.
	applyA, applyB, conflictPath, subresource string
	// bad is an object its schema refuses, with kube-apiserver's message.
	bad, badMessage string
}

var realProjects = map[string]realProject{
	"cert-manager": {
		module:    certManager,
		crds:      []string{"deploy/crds"},
		applied:   6,
		crd:       "certificates.cert-manager.io",
		sample:    "", // cert-manager's module ships no sample objects; written to its schema
		namespace: "default", resource: "certificates.cert-manager.io", name: "example",
		path:    "/apis/cert-manager.io/v1/namespaces/default/certificates/example",
		columns: []string{"READY", "SECRET", "AGE"}, // ISSUER and STATUS are -o wide's
		cells:   []string{"example-tls"},
		read:    "{.spec.issuerRef.kind}", readValue: "Issuer",
		patch: "/spec/commonName", jsonValue: `"json.example.com"`, mergeValue: `"merge.example.com"`,
		subresource: "status",
		applyA: `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: example, namespace: default}
status:
  conditions: [{type: Ready, status: "True", reason: Issued}]
`,
		applyB: `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: example, namespace: default}
status:
  conditions: [{type: Ready, status: "False", reason: Issued}]
`,
		conflictPath: `.status.conditions[type="Ready"].status`,
		bad: `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: bad, namespace: default}
spec:
  secretName: bad-tls
  issuerRef: {name: ca-issuer, kind: Issuer, group: 7}
`,
		badMessage: `The Certificate "bad" is invalid: spec.issuerRef.group: Invalid value: "integer": spec.issuerRef.group in body must be of type string: "integer"`,
	},
	"prometheus-operator": {
		module:    prometheusOperator,
		crds:      []string{"example/prometheus-operator-crd"},
		applied:   10,
		crd:       "prometheuses.monitoring.coreos.com",
		sample:    "example/user-guides/getting-started/prometheus.yaml",
		namespace: "default", resource: "prometheuses.monitoring.coreos.com", name: "prometheus",
		path:    "/apis/monitoring.coreos.com/v1/namespaces/default/prometheuses/prometheus",
		columns: []string{"VERSION", "DESIRED", "READY", "RECONCILED", "AVAILABLE", "AGE"},
		cells:   []string{"prometheus"},
		read:    "{.spec.serviceAccountName}", readValue: "prometheus",
		patch: "/spec/replicas", jsonValue: `2`, mergeValue: `3`,
		applyA: `apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: prometheus, namespace: default}
spec:
  hostAliases: [{ip: 10.0.0.1, hostnames: [a.example]}]
`,
		applyB: `apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: prometheus, namespace: default}
spec:
  hostAliases: [{ip: 10.0.0.1, hostnames: [b.example]}]
`,
		conflictPath: `.spec.hostAliases[ip="10.0.0.1"].hostnames`,
		bad: `apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: bad, namespace: default}
spec: {logLevel: loud}
`,
		badMessage: `The Prometheus "bad" is invalid: spec.logLevel: Unsupported value: "loud": supported values: "", "debug", "info", "warn", "error"`,
	},
	"argo-cd": {
		module: argoCD,
		crds: []string{"manifests/crds/application-crd.yaml", "manifests/crds/applicationset-crd.yaml",
			"manifests/crds/appproject-crd.yaml"},
		applied:   3,
		crd:       "applications.argoproj.io",
		sample:    "docs/operator-manual/application.yaml",
		namespace: "argocd", resource: "applications.argoproj.io", name: "guestbook",
		path:    "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/guestbook",
		columns: []string{"SYNC STATUS", "HEALTH STATUS"},
		cells:   []string{"guestbook"},
		read:    "{.spec.source.repoURL}", readValue: "https://github.com/argoproj/argocd-example-apps.git",
		patch: "/spec/source/targetRevision", jsonValue: `"v1"`, mergeValue: `"v2"`,
		// Argo CD's schemas declare no list-type map: the conflict is on
		// an atomic list the sample's manager owns.
		applyB: `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: guestbook, namespace: argocd}
spec:
  info: [{name: owner, value: b}]
`,
		conflictPath: `.spec.info`,
		bad: `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: bad, namespace: argocd}
spec:
  destination: {server: https://kubernetes.default.svc}
  source: {repoURL: https://example.com/repo.git}
`,
		badMessage: `The Application "bad" is invalid: spec.project: Required value`,
	},
	"crossplane provider-kubernetes": {
		module:  crossplaneProvider,
		crds:    []string{"package/crds"},
		applied: 8,
		// Its cluster-scoped Object asks for webhook conversion through a
		// service that Crossplane's package manager fills in when it
		// installs the provider: kube-apiserver refuses it as shipped.
		refused: []string{
			`The CustomResourceDefinition "objects.kubernetes.crossplane.io" is invalid`,
			`spec.conversion.webhookClientConfig.service.name: Required value`,
			`spec.conversion.webhookClientConfig.service.namespace: Required value`,
		},
		crd:       "objects.kubernetes.m.crossplane.io",
		sample:    "examples/namespaced/object/object.yaml",
		namespace: "default", resource: "objects.kubernetes.m.crossplane.io", name: "sample-namespace",
		path:    "/apis/kubernetes.m.crossplane.io/v1alpha1/namespaces/default/objects/sample-namespace",
		columns: []string{"KIND", "PROVIDERCONFIG", "SYNCED", "READY", "AGE"},
		cells:   []string{"Namespace", "kubernetes-provider"},
		// managementPolicies is a schema default.
		read: "{.spec.managementPolicies}", readValue: `["*"]`,
		patch: "/spec/readiness", jsonValue: `{"policy":"AllTrue"}`, mergeValue: `{"policy":"SuccessfulCreate"}`,
		subresource: "status",
		applyA: `apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: sample-namespace, namespace: default}
status:
  conditions: [{type: Ready, status: "True", reason: Available, lastTransitionTime: "2026-01-01T00:00:00Z"}]
`,
		applyB: `apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: sample-namespace, namespace: default}
status:
  conditions: [{type: Ready, status: "False", reason: Available, lastTransitionTime: "2026-01-01T00:00:00Z"}]
`,
		conflictPath: `.status.conditions[type="Ready"].status`,
		bad: `apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: Object
metadata: {name: bad, namespace: default}
spec:
  forProvider: {manifest: {apiVersion: v1, kind: Namespace}}
  managementPolicies: [Destroy]
`,
		// The definition has x-kubernetes-validations rules, which the
		// schema error blocks: kube-apiserver's strategy adds a cause
		// saying so (apiextensions-apiserver v0.37.2,
		// pkg/registry/customresource/strategy.go), and kubectl lists both.
		badMessage: `The Object "bad" is invalid: 
* spec.managementPolicies[0]: Unsupported value: "Destroy": supported values: "Observe", "Create", "Update", "Delete", "LateInitialize", "*"
* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
	},
}

// The modules whose definitions TestRealCRDs applies. The newest versions
// the module proxy serves that this toolchain can download (Argo CD 3.6
// and provider-kubernetes 1.4 require a newer Go).
const (
	prometheusOperator = "github.com/prometheus-operator/prometheus-operator@v0.85.0"
	argoCD             = "github.com/argoproj/argo-cd/v3@v3.5.7"
	crossplaneProvider = "github.com/crossplane-contrib/provider-kubernetes@v1.3.1"
)

// certManagerSample is a certificate written to cert-manager's schema,
// whose module ships no sample objects.
const certManagerSample = `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: example, namespace: default}
spec:
  secretName: example-tls
  dnsNames: [example.com]
  issuerRef: {name: ca-issuer, kind: Issuer}
`

// TestRealCRDs applies the CustomResourceDefinitions of real projects to
// examples/controlplane with kubectl, server-side, and uses one kind of
// each as its users would: a sample object from the project's examples
// is applied, read back as JSON, YAML and CBOR, listed with its printer
// columns, patched by every patch type (strategic merge refused with 415
// as kube-apiserver refuses it for custom resources), applied by two
// managers that conflict on a list-map key, and an object its schema
// refuses is refused with kube-apiserver's message.
func TestRealCRDs(t *testing.T) {
	srv := startProgram(t, program{name: "examples/controlplane", bin: controlplaneBin, buildErr: controlplaneBuildErr})
	for name, p := range realProjects {
		t.Run(name, func(t *testing.T) { p.run(t, srv) })
	}
}

func (p realProject) run(t *testing.T, srv *server) {
	k := newKubectl(t, dispatcherKubectl, srv)
	dir := moduleDir(t, p.module)
	args := []string{"apply", "--server-side"}
	for _, c := range p.crds {
		args = append(args, "-f", filepath.Join(dir, c))
	}
	r := k.run(t, args...)
	if n := strings.Count(r.stdout, "serverside-applied"); n != p.applied {
		t.Fatalf("%d definitions applied, want %d: %v", n, p.applied, r)
	}
	if len(p.refused) == 0 && r.err != nil {
		t.Fatalf("apply: %v", r)
	}
	for _, want := range p.refused {
		if r.err == nil || !strings.Contains(r.stderr, want) {
			t.Errorf("want %q in the refusal: %v", want, r)
		}
	}
	k.must(t, "wait", "--for=condition=Established", "--timeout=30s", "crd/"+p.crd)
	if p.namespace != "default" {
		k.must(t, "create", "namespace", p.namespace)
	}

	t.Run("sample", func(t *testing.T) {
		if p.sample == "" {
			k.mustStdin(t, certManagerSample, "apply", "--server-side", "-f", "-")
		} else {
			k.must(t, "apply", "--server-side", "-f", filepath.Join(dir, p.sample))
		}
		if got := k.must(t, "get", p.resource, p.name, "-n", p.namespace, "-o", "jsonpath="+p.read); got != p.readValue {
			t.Errorf("%s read back: %q, want %q", p.read, got, p.readValue)
		}
	})
	t.Run("read", func(t *testing.T) { p.readBack(t, k, srv) })
	t.Run("columns", func(t *testing.T) {
		out := k.must(t, "get", p.resource, "-n", p.namespace)
		header, _, _ := strings.Cut(out, "\n")
		for _, c := range append([]string{"NAME"}, p.columns...) {
			if !strings.Contains(header, c) {
				t.Errorf("no column %s in %q", c, header)
			}
		}
		for _, c := range append([]string{p.name}, p.cells...) {
			if !strings.Contains(out, c) {
				t.Errorf("no cell %s in\n%s", c, out)
			}
		}
	})
	t.Run("patch", func(t *testing.T) { p.patches(t, k) })
	t.Run("conflict", func(t *testing.T) { p.conflict(t, k) })
	t.Run("refused", func(t *testing.T) {
		r := k.runStdin(t, p.bad, "apply", "--server-side", "-f", "-")
		if r.err == nil || !strings.Contains(r.stderr, p.badMessage) {
			t.Errorf("want %q: %v", p.badMessage, r)
		}
		if r := k.run(t, "get", p.resource, "bad", "-n", p.namespace); r.err == nil {
			t.Errorf("the refused object is there: %v", r)
		}
	})
}

// readBack reads the sample as kubectl does (JSON, YAML) and through
// HTTP in each media type the server offers for custom resources: all
// are the same object.
func (p realProject) readBack(t *testing.T, k *kubectl, srv *server) {
	var want map[string]any
	if err := json.Unmarshal([]byte(k.must(t, "get", p.resource, p.name, "-n", p.namespace, "-o", "json")), &want); err != nil {
		t.Fatal(err)
	}
	var fromYAML map[string]any
	if err := yaml.Unmarshal([]byte(k.must(t, "get", p.resource, p.name, "-n", p.namespace, "-o", "yaml")), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromYAML, want) {
		t.Errorf("kubectl -o yaml:\n%v\nwant\n%v", fromYAML, want)
	}
	for _, accept := range []string{"application/json", "application/yaml", "application/cbor"} {
		r := rawDo(t, http.MethodGet, srv.URL+p.path, nil, "Accept", accept)
		if r.code != http.StatusOK || !strings.HasPrefix(r.contentType(), accept) {
			t.Errorf("GET as %s: %v", accept, r)
			continue
		}
		var got map[string]any
		var err error
		switch accept {
		case "application/cbor":
			var u unstructured.Unstructured
			if _, _, err = k8sCBOR.Decode(r.body, nil, &u); err == nil {
				got = u.Object
			}
		case "application/yaml":
			err = yaml.Unmarshal(r.body, &got)
		default:
			err = json.Unmarshal(r.body, &got)
		}
		if err != nil {
			t.Errorf("GET as %s: %v", accept, err)
			continue
		}
		// kubectl hides managedFields; CBOR decodes numbers as int64 and
		// float64: compare as JSON.
		if meta, ok := got["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("GET as %s:\n%s\nwant\n%s", accept, g, w)
		}
	}
}

// patches patches the sample by every patch type kubectl sends.
func (p realProject) patches(t *testing.T, k *kubectl) {
	get := func() string {
		return k.must(t, "get", p.resource, p.name, "-n", p.namespace, "-o", "json")
	}
	at := func(doc string) string {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		for _, part := range strings.Split(p.patch, "/")[1:] {
			m, _ := v.(map[string]any)
			v = m[part]
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	jsonPatch := `[{"op":"add","path":"` + p.patch + `","value":` + p.jsonValue + `}]`
	k.must(t, "patch", p.resource, p.name, "-n", p.namespace, "--type=json", "-p", jsonPatch)
	if got := at(get()); got != p.jsonValue {
		t.Errorf("after the JSON patch %s: %s", jsonPatch, got)
	}
	merge := p.mergeValue
	parts := strings.Split(p.patch, "/")[1:]
	for i := len(parts) - 1; i >= 0; i-- {
		merge = `{"` + parts[i] + `":` + merge + `}`
	}
	k.must(t, "patch", p.resource, p.name, "-n", p.namespace, "--type=merge", "-p", merge)
	if got := at(get()); got != p.mergeValue {
		t.Errorf("after the merge patch %s: %s", merge, got)
	}
	r := k.run(t, "patch", p.resource, p.name, "-n", p.namespace, "--type=strategic", "-p", merge)
	// kubectl words kube-apiserver's 415 so.
	if r.err == nil || !strings.Contains(r.stderr, "error: application/strategic-merge-patch+json is not supported by ") ||
		!strings.Contains(r.stderr, ": the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml") {
		t.Errorf("a strategic merge patch of a custom resource: %v", r)
	}
	// A patch its schema refuses leaves the object as it was.
	bad := `[{"op":"add","path":"` + p.patch + `","value":[7]}]`
	if r := k.run(t, "patch", p.resource, p.name, "-n", p.namespace, "--type=json", "-p", bad); r.err == nil || !strings.Contains(r.stderr, "is invalid") {
		t.Errorf("a JSON patch its schema refuses: %v", r)
	}
	if got := at(get()); got != p.mergeValue {
		t.Errorf("after a refused patch: %s", got)
	}
}

// conflict applies two managers' configurations that set the same field
// of a list-map item differently.
func (p realProject) conflict(t *testing.T, k *kubectl) {
	args := []string{"apply", "--server-side", "-f", "-"}
	if p.subresource != "" {
		args = append(args, "--subresource="+p.subresource)
	}
	first := "kubectl"
	if p.applyA != "" {
		first = "a"
		k.mustStdin(t, p.applyA, append(args, "--field-manager=a")...)
	}
	r := k.runStdin(t, p.applyB, append(args, "--field-manager=b")...)
	want := `Apply failed with 1 conflict: conflict with "` + first + `"`
	if r.err == nil || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, p.conflictPath) {
		t.Fatalf("want %s: %s: %v", want, p.conflictPath, r)
	}
	k.mustStdin(t, p.applyB, append(args, "--field-manager=b", "--force-conflicts")...)
	obj := k.getJSON(t, p.resource, p.name, "-n", p.namespace, "--show-managed-fields")
	meta := obj["metadata"].(map[string]any)
	var managers []string
	for _, e := range meta["managedFields"].([]any) {
		managers = append(managers, e.(map[string]any)["manager"].(string))
	}
	if !strings.Contains(strings.Join(managers, ","), "b") {
		t.Errorf("managers after the forced apply: %v", managers)
	}
	// b's value is there.
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(p.applyB), &cfg); err != nil {
		t.Fatal(err)
	}
	for key, v := range cfg {
		if key == "spec" || key == "status" {
			got, _ := json.Marshal(obj[key])
			for field, want := range v.(map[string]any) {
				w, _ := json.Marshal(want)
				if !strings.Contains(string(got), strings.Trim(string(w), "[]")) {
					t.Errorf("%s.%s after the forced apply: %s, want %s in it", key, field, got, w)
				}
			}
		}
	}
}
