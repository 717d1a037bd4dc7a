package crd_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/crd"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/validation"
)

const widgets = `{
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {
    "group": "example.com", "scope": "Namespaced",
    "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
    "versions": [{
      "name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"color": {"type": "string", "default": "red"}, "size": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}}}}}},
      "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
      "additionalPrinterColumns": [{"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1}],
      "selectableFields": [{"jsonPath": ".spec.color"}]
    }, {
      "name": "v1beta1", "served": true, "storage": false, "deprecated": true,
      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}},
      "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.replicas"}}
    }]
  }
}`

func read(t *testing.T, doc string) *crd.CustomResourceDefinition {
	t.Helper()
	var c crd.CustomResourceDefinition
	if err := json.Unmarshal([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	crd.SetDefaults(&c)
	return &c
}

func TestDefinition(t *testing.T) {
	c := read(t, widgets)
	if errs := crd.Validate(c, nil); len(errs) > 0 {
		t.Fatalf("a valid definition is refused: %v", errs)
	}
	d, err := crd.Definition(c)
	if err != nil {
		t.Fatal(err)
	}
	if d.Group != "example.com" || d.Kind != "Widget" || d.Plural != "widgets" || d.Singular != "widget" || d.ListKind != "WidgetList" ||
		!d.Namespaced || !slices.Equal(d.ShortNames, []string{"wd"}) || !slices.Equal(d.Categories, []string{"all"}) {
		t.Errorf("names: %+v", d)
	}
	if len(d.Versions) != 2 {
		t.Fatalf("versions: %+v", d.Versions)
	}
	v1, beta := d.Versions[0], d.Versions[1]
	if v1.Name != "v1" || !v1.Served || !v1.Storage || v1.Deprecated || !v1.Status || v1.Schema == nil {
		t.Errorf("v1: %+v", v1)
	}
	if want := (&kinds.Scale{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".status.selector"}); !reflect.DeepEqual(v1.Scale, want) {
		t.Errorf("scale: %+v", v1.Scale)
	}
	if want := []kinds.PrinterColumn{{Name: "Color", Type: "string", Priority: 1, JSONPath: ".spec.color",
		Description: "Custom resource definition column (in JSONPath format): .spec.color"}}; !reflect.DeepEqual(v1.PrinterColumns, want) {
		t.Errorf("columns: %+v", v1.PrinterColumns)
	}
	if !slices.Equal(v1.SelectableFields, []string{".spec.color"}) {
		t.Errorf("selectable fields: %v", v1.SelectableFields)
	}
	if got := v1.Schema.At("spec", "color").Default; got != "red" {
		t.Errorf("default of spec.color: %v", got)
	}
	if beta.Name != "v1beta1" || beta.Storage || !beta.Deprecated || !beta.Status || beta.Scale.LabelSelectorPath != "" || !beta.Schema.PreservesUnknownFields() {
		t.Errorf("v1beta1: %+v", beta)
	}

	// The accepted names are the served ones.
	c.Status.AcceptedNames = crd.Names{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}
	if d, _ = crd.Definition(c); d.ShortNames != nil {
		t.Errorf("short names not accepted yet are served: %v", d.ShortNames)
	}
}

func TestDefaults(t *testing.T) {
	c := read(t, widgets)
	if c.Spec.Names.Singular != "widget" || c.Spec.Names.ListKind != "WidgetList" ||
		c.Spec.Conversion == nil || c.Spec.Conversion.Strategy != crd.NoneConverter || !slices.Equal(c.Status.StoredVersions, []string{"v1"}) {
		t.Errorf("defaults: %+v %+v", c.Spec, c.Status)
	}
}

// server is a kapi server that serves definitions.
func server(t testing.TB) *apiservertest.Server {
	return apiservertest.New(t, crd.Serve, apiserver.WithNamespaces())
}

const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

func do(t testing.TB, srv *apiservertest.Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	contentType := "application/json"
	switch method {
	case "PATCH":
		contentType = "application/json-patch+json"
	case "APPLY": // server-side apply
		method, contentType = "PATCH", "application/apply-patch+yaml"
	}
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: HTTP %d %s", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, out
}

// conditionOf waits for a condition of a definition to be set, and
// returns it; a test that never sees it times out.
func conditionOf(t *testing.T, srv *apiservertest.Server, name, typ string, ok func(cond map[string]any) bool) map[string]any {
	t.Helper()
	for {
		code, c := do(t, srv, "GET", crds+"/"+name, "")
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %v", name, code, c)
		}
		status, _ := c["status"].(map[string]any)
		conds, _ := status["conditions"].([]any)
		for _, x := range conds {
			cond := x.(map[string]any)
			if cond["type"] == typ && ok(cond) {
				return c
			}
			if cond["reason"] == "InstallationFailed" {
				t.Fatalf("%s is not served: %v", name, cond["message"])
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestServe(t *testing.T) {
	srv := server(t)
	code, c := do(t, srv, "POST", crds, widgets)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	meta := c["metadata"].(map[string]any)
	spec := c["spec"].(map[string]any)
	if meta["generation"] != 1.0 || spec["conversion"].(map[string]any)["strategy"] != "None" || spec["names"].(map[string]any)["listKind"] != "WidgetList" {
		t.Errorf("created: %v", c)
	}
	if v := c["status"].(map[string]any)["storedVersions"]; !reflect.DeepEqual(v, []any{"v1"}) {
		t.Errorf("storedVersions: %v", v)
	}
	c = conditionOf(t, srv, "widgets.example.com", crd.NamesAccepted, func(cond map[string]any) bool { return cond["status"] == "True" })
	accepted := c["status"].(map[string]any)["acceptedNames"].(map[string]any)
	if accepted["plural"] != "widgets" || accepted["kind"] != "Widget" || !reflect.DeepEqual(accepted["shortNames"], []any{"wd"}) {
		t.Errorf("accepted names: %v", accepted)
	}

	// Another definition of the group that wants a name taken.
	other := strings.NewReplacer(`"widgets.example.com"`, `"gadgets.example.com"`, `"plural": "widgets"`, `"plural": "gadgets"`, `"kind": "Widget"`, `"kind": "Gadget", "singular": "gadget"`).Replace(widgets)
	if code, c = do(t, srv, "POST", crds, other); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	c = conditionOf(t, srv, "gadgets.example.com", crd.NamesAccepted, func(cond map[string]any) bool { return cond["status"] == "False" })
	for _, x := range c["status"].(map[string]any)["conditions"].([]any) {
		cond := x.(map[string]any)
		if cond["type"] == crd.NamesAccepted && (cond["reason"] != "ShortNamesConflict" || cond["message"] != `"wd" is already in use`) {
			t.Errorf("NamesAccepted: %v", cond)
		}
		if cond["type"] == crd.Established && (cond["status"] != "False" || cond["reason"] != "NotAccepted") {
			t.Errorf("Established: %v", cond)
		}
	}
	if accepted := c["status"].(map[string]any)["acceptedNames"].(map[string]any); accepted["plural"] != "gadgets" || accepted["shortNames"] != nil {
		t.Errorf("accepted names: %v", accepted)
	}

	// Once the first is gone, its short name is free.
	code, c = do(t, srv, "DELETE", crds+"/widgets.example.com", "")
	if code != http.StatusOK {
		t.Fatalf("delete: %d %v", code, c)
	}
	if f := c["metadata"].(map[string]any)["finalizers"]; !reflect.DeepEqual(f, []any{crd.CleanupFinalizer}) {
		t.Errorf("finalizers of a deleted definition: %v", f)
	}
	for {
		if code, _ = do(t, srv, "GET", crds+"/widgets.example.com", ""); code == http.StatusNotFound {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	conditionOf(t, srv, "gadgets.example.com", crd.NamesAccepted, func(cond map[string]any) bool { return cond["status"] == "True" })
}

func TestServeRefuses(t *testing.T) {
	srv := server(t)
	for name, c := range map[string]struct {
		doc    string
		causes []string
	}{
		"name": {strings.Replace(widgets, `"widgets.example.com"`, `"widget.example.com"`, 1),
			[]string{`metadata.name: Invalid value: "widget.example.com": must be spec.names.plural+"."+spec.group`}},
		"schema": {strings.Replace(widgets, `"size": {"type": "integer"}`, `"size": {}`, 1),
			[]string{"spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be empty for specified object fields"}},
		"storage": {strings.Replace(widgets, `"storage": false`, `"storage": true`, 1),
			[]string{"spec.versions: Invalid value: must have exactly one version marked as storage version", `status.storedVersions: Invalid value: ["v1"]: must have the storage version v1beta1`}},
		"webhook": {strings.Replace(widgets, `"scope": "Namespaced",`, `"scope": "Namespaced", "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://example.com/convert"}, "conversionReviewVersions": ["v1"]}},`, 1),
			[]string{"spec.conversion.strategy: Forbidden: " + crd.ErrWebhookConversion.Error()}},
	} {
		t.Run(name, func(t *testing.T) {
			code, status := do(t, srv, "POST", crds, c.doc)
			if code != http.StatusUnprocessableEntity || status["reason"] != "Invalid" {
				t.Fatalf("HTTP %d %v", code, status)
			}
			var got []string
			for _, x := range status["details"].(map[string]any)["causes"].([]any) {
				cause := x.(map[string]any)
				got = append(got, cause["field"].(string)+": "+cause["message"].(string))
			}
			if !slices.Equal(got, c.causes) {
				t.Errorf("causes:\n got %q\nwant %q", got, c.causes)
			}
		})
	}
}

// A definition's kind is in discovery as kube-apiserver lists it.
func TestDiscovery(t *testing.T) {
	srv := server(t)
	code, list := do(t, srv, "GET", "/apis/apiextensions.k8s.io/v1", "")
	if code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	var found bool
	for _, x := range list["resources"].([]any) {
		r := x.(map[string]any)
		if r["name"] != "customresourcedefinitions" {
			continue
		}
		found = true
		if r["namespaced"] != false || r["kind"] != "CustomResourceDefinition" || !reflect.DeepEqual(r["shortNames"], []any{"crd", "crds"}) || !reflect.DeepEqual(r["categories"], []any{"api-extensions"}) {
			t.Errorf("discovery: %v", r)
		}
	}
	if !found {
		t.Errorf("no customresourcedefinitions in %v", list)
	}
}

// A schema reads back as written: its numbers, its key order.
func TestSchemaRoundTrip(t *testing.T) {
	srv := server(t)
	doc := strings.Replace(widgets, `"size": {"type": "integer"}`, `"size": {"type": "integer", "maximum": 9007199254740993, "minimum": 1e2, "description": "zébu"}`, 1)
	if code, c := do(t, srv, "POST", crds, doc); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	resp, err := srv.Client().Get(srv.URL + crds + "/widgets.example.com")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(`{"type": "integer", "maximum": 9007199254740993, "minimum": 1e2, "description": "zébu"}`)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, compact.Bytes()) {
		t.Errorf("the schema changed on its way: %s", body)
	}
}

// A definition's kind is served once it is established, every object of
// it goes with the definition, and then the kind.
func TestLifecycle(t *testing.T) {
	srv := server(t)
	if code, c := do(t, srv, "POST", crds, widgets); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	conditionOf(t, srv, "widgets.example.com", crd.Established, func(cond map[string]any) bool { return cond["status"] == "True" })
	const coll = "/apis/example.com/v1/namespaces/default/widgets"
	code, w := do(t, srv, "POST", coll, `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 2}}`)
	if code != http.StatusCreated {
		t.Fatalf("create a widget: %d %v", code, w)
	}
	if color := w["spec"].(map[string]any)["color"]; color != "red" {
		t.Errorf("the schema's default is not set: %v", w)
	}
	code, w = do(t, srv, "POST", coll, `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2", "finalizers": ["example.com/hold"]}}`)
	if code != http.StatusCreated {
		t.Fatalf("create a widget: %d %v", code, w)
	}

	if code, c := do(t, srv, "DELETE", crds+"/widgets.example.com", ""); code != http.StatusOK {
		t.Fatalf("delete: %d %v", code, c)
	}
	c := conditionOf(t, srv, "widgets.example.com", crd.Terminating, func(cond map[string]any) bool { return cond["reason"] == "InstanceDeletionInProgress" })
	if f := c["metadata"].(map[string]any)["finalizers"]; !reflect.DeepEqual(f, []any{crd.CleanupFinalizer}) {
		t.Errorf("finalizers: %v", f)
	}
	// w1 goes; w2 waits for its finalizer, and so does the definition.
	// The objects are deleted one after the other: w1 may be gone before
	// w2 is marked.
	for {
		if code, _ = do(t, srv, "GET", coll+"/w1", ""); code == http.StatusNotFound {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for {
		code, w = do(t, srv, "GET", coll+"/w2", "")
		if code != http.StatusOK {
			t.Fatalf("w2: %d %v", code, w)
		}
		if w["metadata"].(map[string]any)["deletionTimestamp"] != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if code, _ = do(t, srv, "GET", crds+"/widgets.example.com", ""); code != http.StatusOK {
		t.Fatalf("the definition went before its objects: %d", code)
	}
	// While it terminates, creates are refused as kube-apiserver's
	// customresource_handler.go refuses them; the rest goes on.
	code, w = do(t, srv, "POST", coll, `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w3"}}`)
	if code != http.StatusMethodNotAllowed || w["reason"] != "MethodNotAllowed" || w["message"] != "create not allowed while custom resource definition is terminating" {
		t.Errorf("a create while the definition terminates: %d %v", code, w)
	}
	// An apply that would create is refused too, as kube's
	// TestApplyCRDuringCRDFinalization expects; one to an object that
	// exists goes on.
	code, w = do(t, srv, "APPLY", coll+"/w3?fieldManager=m", `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w3"}}`)
	if code != http.StatusMethodNotAllowed || w["message"] != "create not allowed while custom resource definition is terminating" {
		t.Errorf("an apply that creates while the definition terminates: %d %v", code, w)
	}
	code, w = do(t, srv, "APPLY", coll+"/w2?fieldManager=m", `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2", "labels": {"a": "b"}}}`)
	if code != http.StatusOK {
		t.Errorf("an apply to an object while the definition terminates: %d %v", code, w)
	}
	if code, w = do(t, srv, "GET", coll, ""); code != http.StatusOK {
		t.Errorf("a list while the definition terminates: %d %v", code, w)
	}
	if code, w = do(t, srv, "PATCH", coll+"/w2", `[{"op": "remove", "path": "/metadata/finalizers"}]`); code != http.StatusOK {
		t.Fatalf("patch w2: %d %v", code, w)
	}
	for {
		if code, _ = do(t, srv, "GET", crds+"/widgets.example.com", ""); code == http.StatusNotFound {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for { // the kind stops being served once the definition is gone
		if code, _ = do(t, srv, "GET", coll, ""); code == http.StatusNotFound {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Two replicas on one store: a definition created through one is served
// by both, and its deletion through the other takes its objects and its
// kind from both.
func TestReplicas(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	a := apiservertest.New(t, crd.Serve, apiserver.WithNamespaces(), apiserver.WithStorage(store))
	b := apiservertest.New(t, crd.Serve, apiserver.WithNamespaces(), apiserver.WithStorage(store))
	if code, c := do(t, a, "POST", crds, widgets); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	conditionOf(t, b, "widgets.example.com", crd.Established, func(cond map[string]any) bool { return cond["status"] == "True" })
	const coll = "/apis/example.com/v1/namespaces/default/widgets"
	for { // b serves the kind once it has seen the definition established
		code, w := do(t, b, "POST", coll, `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}}`)
		if code == http.StatusCreated {
			break
		}
		if code != http.StatusNotFound {
			t.Fatalf("create a widget through b: %d %v", code, w)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if code, c := do(t, b, "DELETE", crds+"/widgets.example.com", ""); code != http.StatusOK {
		t.Fatalf("delete: %d %v", code, c)
	}
	for _, srv := range []*apiservertest.Server{a, b} {
		for {
			if code, _ := do(t, srv, "GET", coll, ""); code == http.StatusNotFound {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	res, err := store.List(t.Context(), "/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range res.Items {
		if strings.Contains(kv.Key, "widgets") {
			t.Errorf("left in the store: %s", kv.Key)
		}
	}
}

// A server started on a store that holds definitions is ready once their
// kinds are served: a client that waits for /readyz finds them.
func TestRestart(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	a := apiservertest.New(t, crd.Serve, apiserver.WithNamespaces(), apiserver.WithStorage(store))
	const n = 40
	for i := range n {
		plural := fmt.Sprintf("widgets%d", i)
		doc := strings.NewReplacer(`"widgets.example.com"`, `"`+plural+`.example.com"`, `"plural": "widgets"`, `"plural": "`+plural+`"`,
			`"kind": "Widget"`, fmt.Sprintf(`"kind": "Widget%d"`, i), `"shortNames": ["wd"]`, `"shortNames": []`).Replace(widgets)
		if code, c := do(t, a, "POST", crds, doc); code != http.StatusCreated {
			t.Fatalf("create: %d %v", code, c)
		}
	}
	for i := range n {
		conditionOf(t, a, fmt.Sprintf("widgets%d.example.com", i), crd.Established, func(cond map[string]any) bool { return cond["status"] == "True" })
	}
	if err := a.API.Close(); err != nil {
		t.Fatal(err)
	}
	b := apiservertest.New(t, crd.Serve, apiserver.WithNamespaces(), apiserver.WithStorage(store))
	for i := range n {
		if code, list := do(t, b, "GET", fmt.Sprintf("/apis/example.com/v1/namespaces/default/widgets%d", i), ""); code != http.StatusOK {
			t.Fatalf("the kind is not served when the server is ready: %d %v", code, list)
		}
	}
}

// refuseSize is a kinds.Rules that refuses every widget whose spec.size
// is 13, as an x-kubernetes-validations rule would.
type refuseSize struct{}

func (refuseSize) Validate(obj, _ any) []*validation.Error {
	spec, _ := obj.(map[string]any)["spec"].(map[string]any)
	if size, _ := spec["size"].(int64); size == 13 {
		return []*validation.Error{{Type: kapi.CauseTypeFieldValueInvalid, Field: "spec.size", BadValue: size, Detail: "unlucky"}}
	}
	return nil
}

// ServeWith hands its options to every kind a definition defines.
func TestServeWith(t *testing.T) {
	rules := kinds.WithRules(func(*schema.Schema) (kinds.Rules, error) { return refuseSize{}, nil })
	srv := apiservertest.New(t, crd.ServeWith(rules), apiserver.WithNamespaces())
	if code, c := do(t, srv, "POST", crds, widgets); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	conditionOf(t, srv, "widgets.example.com", crd.Established, func(cond map[string]any) bool { return cond["status"] == "True" })
	code, st := do(t, srv, "POST", "/apis/example.com/v1/namespaces/default/widgets", `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 13}}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(st["message"]), "spec.size: Invalid value: 13: unlucky") {
		t.Errorf("the rules are not applied: %d %v", code, st)
	}
}

// A definition changed into one its kind cannot be served from stays
// Established, as in kube-apiserver, whose Established never goes back;
// the kind goes on as it was, and the problem is reported in the
// NonStructuralSchema condition until the definition is mended.
func TestFailedReserveKeepsServing(t *testing.T) {
	rules := kinds.WithRules(func(s *schema.Schema) (kinds.Rules, error) {
		if s.At("spec", "broken") != nil {
			return nil, errors.New("the rules of spec.broken do not compile")
		}
		return refuseSize{}, nil
	})
	srv := apiservertest.New(t, crd.ServeWith(rules), apiserver.WithNamespaces())
	if code, c := do(t, srv, "POST", crds, widgets); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	conditionOf(t, srv, "widgets.example.com", crd.Established, func(cond map[string]any) bool { return cond["status"] == "True" })
	const coll = "/apis/example.com/v1/namespaces/default/widgets"
	if code, w := do(t, srv, "POST", coll, `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}}`); code != http.StatusCreated {
		t.Fatalf("create a widget: %d %v", code, w)
	}
	const path = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/broken"
	if code, c := do(t, srv, "PATCH", crds+"/widgets.example.com", `[{"op": "add", "path": "`+path+`", "value": {"type": "string"}}]`); code != http.StatusOK {
		t.Fatalf("patch: %d %v", code, c)
	}
	c := conditionOf(t, srv, "widgets.example.com", crd.NonStructuralSchema, func(cond map[string]any) bool {
		return cond["status"] == "True" && cond["reason"] == "Violations" && strings.Contains(fmt.Sprint(cond["message"]), "do not compile")
	})
	for _, x := range c["status"].(map[string]any)["conditions"].([]any) {
		if cond := x.(map[string]any); cond["type"] == crd.Established && cond["status"] != "True" {
			t.Errorf("Established after a failed re-serve: %v", cond)
		}
	}
	if code, w := do(t, srv, "GET", coll+"/w", ""); code != http.StatusOK {
		t.Errorf("the kind is not served after a failed re-serve: %d %v", code, w)
	}
	if code, w := do(t, srv, "PATCH", coll+"/w", `[{"op": "replace", "path": "/spec/size", "value": 13}]`); code != http.StatusUnprocessableEntity {
		t.Errorf("the kind served is not the one served before: %d %v", code, w)
	}
	if code, c := do(t, srv, "PATCH", crds+"/widgets.example.com", `[{"op": "remove", "path": "`+path+`"}]`); code != http.StatusOK {
		t.Fatalf("patch: %d %v", code, c)
	}
	for { // mended: the condition goes
		_, c := do(t, srv, "GET", crds+"/widgets.example.com", "")
		if !strings.Contains(fmt.Sprint(c["status"]), crd.NonStructuralSchema) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A short name released by a change of another definition (not its
// deletion) is taken by the definition waiting for it, as kube-apiserver's
// naming controller requeues the group's other definitions after each
// sync.
func TestNameReleasedByChange(t *testing.T) {
	srv := server(t)
	if code, c := do(t, srv, "POST", crds, widgets); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	conditionOf(t, srv, "widgets.example.com", crd.NamesAccepted, func(cond map[string]any) bool { return cond["status"] == "True" })
	other := strings.NewReplacer(`"widgets.example.com"`, `"gadgets.example.com"`, `"plural": "widgets"`, `"plural": "gadgets"`, `"kind": "Widget"`, `"kind": "Gadget", "singular": "gadget"`).Replace(widgets)
	if code, c := do(t, srv, "POST", crds, other); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, c)
	}
	conditionOf(t, srv, "gadgets.example.com", crd.NamesAccepted, func(cond map[string]any) bool { return cond["status"] == "False" })
	// widgets gives up "wd"; a test that never sees gadgets take it times out.
	if code, c := do(t, srv, "PATCH", crds+"/widgets.example.com", `[{"op":"replace","path":"/spec/names/shortNames","value":["wdg"]}]`); code != http.StatusOK {
		t.Fatalf("patch: %d %v", code, c)
	}
	conditionOf(t, srv, "gadgets.example.com", crd.NamesAccepted, func(cond map[string]any) bool { return cond["status"] == "True" })
}
