package kinds_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

// widgetSchema is the openAPIV3Schema of the test kind.
const widgetSchema = `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "properties": {
        "color": {"type": "string", "enum": ["red", "green", "blue"]},
        "replicas": {"type": "integer", "minimum": 0, "default": 1},
        "ports": {
          "type": "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}
        },
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
      }
    },
    "status": {
      "type": "object",
      "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}}
    }
  }
}`

// widgetDefinition is a namespaced kind example.com/Widget in v1 (stored)
// and v1beta1 (deprecated), with the status and scale subresources, a
// column and a selectable field.
func widgetDefinition(t testing.TB) kinds.Definition {
	t.Helper()
	s, err := schema.Parse([]byte(widgetSchema))
	if err != nil {
		t.Fatal(err)
	}
	v := kinds.Version{
		Name: "v1", Served: true, Storage: true, Schema: s, Status: true,
		Scale:            &kinds.Scale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".status.selector"},
		PrinterColumns:   []kinds.PrinterColumn{{Name: "Color", Type: "string", JSONPath: ".spec.color"}, {Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"}, {Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}},
		SelectableFields: []string{".spec.color"},
	}
	beta := v
	beta.Name, beta.Storage, beta.Deprecated = "v1beta1", false, true
	return kinds.Definition{
		Group: "example.com", Kind: "Widget", Plural: "widgets", Namespaced: true,
		ShortNames: []string{"wd"}, Categories: []string{"all"},
		Versions: []kinds.Version{v, beta},
	}
}

type client struct {
	t   *testing.T
	url string
}

// do sends a request and returns the response's code, body and headers.
func (c client) do(method, path, contentType, body string) (int, string, http.Header) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Header
}

func (c client) want(method, path, contentType, body string, code int) string {
	c.t.Helper()
	got, out, _ := c.do(method, path, contentType, body)
	if got != code {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, got, code, out)
	}
	return out
}

// table lists path as a Table, as kubectl get does.
func (c client) table(path string) []byte {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.url+path, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return data
}

func newServer(t *testing.T) (*apiserver.Server, client) {
	srv, err := apiserver.New()
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return srv, client{t, hs.URL}
}

// TestRegisterWhileServing defines a kind on a server already serving,
// uses it as a client would, and removes it.
func TestRegisterWhileServing(t *testing.T) {
	srv, c := newServer(t)
	c.want("GET", "/apis/example.com/v1/namespaces/default/widgets", "", "", 404)
	if out := c.want("GET", "/apis", "", "", 200); strings.Contains(out, "example.com") {
		t.Fatalf("/apis lists example.com before it is defined: %s", out)
	}
	if err := kinds.Register(srv, widgetDefinition(t)); err != nil {
		t.Fatal(err)
	}

	// Discovery, both forms, and OpenAPI.
	if out := c.want("GET", "/apis/example.com/v1", "", "", 200); !strings.Contains(out, `"name":"widgets"`) || !strings.Contains(out, `"widgets/status"`) {
		t.Errorf("/apis/example.com/v1: %s", out)
	}
	if out := c.want("GET", "/apis", "", "", 200); !strings.Contains(out, `"example.com/v1"`) {
		t.Errorf("/apis: %s", out)
	}
	if out := c.want("GET", "/openapi/v3/apis/example.com/v1", "", "", 200); !strings.Contains(out, `"com.example.v1.Widget"`) || !strings.Contains(out, `"enum":["red","green","blue"]`) {
		t.Errorf("openapi: %s", out)
	}

	// A create with an unknown field: pruned, with a warning; defaulted.
	code, out, h := c.do("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","zz":1,"bogus":1},"spec":{"color":"red","bogus":true,"free":{"x":{"y":1}}},"status":{"replicas":5}}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, out)
	}
	// metadata's sorted, as kube-apiserver re-encodes metadata before it
	// decodes it strictly; then the pruned fields.
	if w := h.Values("Warning"); len(w) != 3 || !strings.Contains(w[0], `unknown field \"metadata.bogus\"`) || !strings.Contains(w[1], `unknown field \"metadata.zz\"`) || !strings.Contains(w[2], `unknown field \"spec.bogus\"`) {
		t.Errorf("warnings: %q", w)
	}
	// The scale subresource's path through something that is not an
	// object is named as apimachinery's accessors name it: the whole path
	// up to the member that could not be read.
	if out := c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"s"},"spec":"x"}`, 422); !strings.Contains(out, `.spec.replicas accessor error: x is of the type string`) {
		t.Errorf("a spec that is not an object: %s", out)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatal(err)
	}
	spec := obj["spec"].(map[string]any)
	if spec["replicas"] != float64(1) || spec["bogus"] != nil || spec["free"].(map[string]any)["x"] == nil || obj["status"] != nil {
		t.Errorf("created: %s", out)
	}

	// Strict: refused as kube-apiserver refuses it.
	out = c.want("POST", "/apis/example.com/v1/namespaces/default/widgets?fieldValidation=Strict", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"b"},"spec":{"bogus":1}}`, 400)
	if !strings.Contains(out, `Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.bogus\"`) {
		t.Errorf("strict: %s", out)
	}

	// Invalid: 422 with kube-apiserver's words.
	out = c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"c"},"spec":{"color":"purple","replicas":-1}}`, 422)
	for _, want := range []string{
		`Widget.example.com \"c\" is invalid: [spec.color: Unsupported value: \"purple\": supported values: \"red\", \"green\", \"blue\", spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, .spec.replicas: Invalid value: -1: should be a non-negative integer]`,
		`"kind":"Widget"`, `"reason":"FieldValueNotSupported"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("422: want %s in %s", want, out)
		}
	}

	// Patches of every type, and apply, merge list-map items by key.
	c.want("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a", "application/merge-patch+json", `{"spec":{"ports":[{"name":"http","port":80}]}}`, 200)
	// No strategic merge patch of a custom resource, as in kube-apiserver.
	out = c.want("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a", "application/strategic-merge-patch+json", `{"spec":{"ports":[{"name":"https","port":443}]}}`, 415)
	if !strings.Contains(out, `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`) {
		t.Errorf("strategic merge: %s", out)
	}
	c.want("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a", "application/json-patch+json", `[{"op":"replace","path":"/spec/color","value":"blue"}]`, 200)
	out = c.want("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a?fieldManager=other", "application/apply-patch+yaml",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"ports":[{"name":"ssh","port":22}]}}`, 200)
	if !strings.Contains(out, `{"name":"ssh","port":22}`) || !strings.Contains(out, `{"name":"http","port":80}`) {
		t.Errorf("apply: %s", out)
	}
	out = c.want("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a?fieldManager=third", "application/apply-patch+yaml",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"ports":[{"name":"ssh","port":2222}]}}`, 409)
	if !strings.Contains(out, `conflict with \"other\"`) || !strings.Contains(out, `.spec.ports[name=\"ssh\"].port`) {
		t.Errorf("apply conflict: %s", out)
	}
	// An unknown field in an apply configuration is dropped with a
	// warning (fieldValidation Warn), not merged.
	_, out, header := c.do("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a?fieldManager=fourth", "application/apply-patch+yaml",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"bogus":1,"color":"blue"}}`)
	if w := header.Get("Warning"); !strings.Contains(w, `unknown field \"spec.bogus\"`) || strings.Contains(out, "bogus\":1") || !strings.Contains(out, `"color":"blue"`) {
		t.Errorf("apply with an unknown field: %s (Warning %q), want it applied without the field", out, w)
	}

	// The status subresource: writes to the object leave status, writes
	// to status leave the rest.
	// (A PUT must name the resourceVersion it replaces, as a custom
	// resource's must in kube-apiserver: this merge patch needs not.)
	c.want("PUT", "/apis/example.com/v1/namespaces/default/widgets/a/status", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"default"},"spec":{"color":"green"},"status":{"replicas":3}}`, 422)
	c.want("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a/status", "application/merge-patch+json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"default"},"spec":{"color":"green"},"status":{"replicas":3}}`, 200)
	out = c.want("GET", "/apis/example.com/v1/namespaces/default/widgets/a", "", "", 200)
	if !strings.Contains(out, `"status":{"replicas":3}`) || !strings.Contains(out, `"color":"blue"`) {
		t.Errorf("after status write: %s", out)
	}

	// Table with the printer columns; field selector.
	data := c.table("/apis/example.com/v1/namespaces/default/widgets")
	if !strings.Contains(string(data), `"name":"Color"`) || !strings.Contains(string(data), `"cells":["a","blue",1,`) {
		t.Errorf("table: %s", data)
	}
	if out := c.want("GET", "/apis/example.com/v1/namespaces/default/widgets?fieldSelector=spec.color%3Dred", "", "", 200); strings.Contains(out, `"name":"a"`) {
		t.Errorf("field selector spec.color=red lists a blue widget: %s", out)
	}
	if out := c.want("GET", "/apis/example.com/v1/namespaces/default/widgets?fieldSelector=spec.color%3Dblue", "", "", 200); !strings.Contains(out, `"name":"a"`) {
		t.Errorf("field selector spec.color=blue: %s", out)
	}

	// The deprecated version: the same object, another apiVersion, a warning.
	code, out, h = c.do("GET", "/apis/example.com/v1beta1/namespaces/default/widgets/a", "", "")
	if code != 200 || !strings.Contains(out, `"apiVersion":"example.com/v1beta1"`) || !strings.Contains(h.Get("Warning"), "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget") {
		t.Errorf("v1beta1: %d %s %q", code, out, h.Values("Warning"))
	}

	// A watch, then removal: the watch ends, the resource is gone.
	resp, err := http.Get(c.url + "/apis/example.com/v1/namespaces/default/widgets?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	if !events.Scan() || !strings.Contains(events.Text(), `"ADDED"`) {
		t.Fatalf("watch: %s", events.Text())
	}
	if err := kinds.Remove(srv, "example.com", "Widget"); err != nil {
		t.Fatal(err)
	}
	for events.Scan() { // to its end
	}
	c.want("GET", "/apis/example.com/v1/namespaces/default/widgets/a", "", "", 404)
	c.want("GET", "/apis/example.com/v1", "", "", 404)
	if out := c.want("GET", "/apis", "", "", 200); strings.Contains(out, "example.com") {
		t.Errorf("/apis lists example.com after removal: %s", out)
	}
	if err := kinds.Remove(srv, "example.com", "Widget"); err == nil {
		t.Error("a second Remove succeeded")
	}

	// Registered again, it serves the objects it left in storage.
	if err := kinds.Register(srv, widgetDefinition(t)); err != nil {
		t.Fatal(err)
	}
	if out := c.want("GET", "/apis/example.com/v1/namespaces/default/widgets/a", "", "", 200); !strings.Contains(out, `"color":"blue"`) {
		t.Errorf("after registering again: %s", out)
	}
}

// TestScale reads and writes a kind's replicas through /scale.
func TestScale(t *testing.T) {
	srv, c := newServer(t)
	if err := kinds.Register(srv, widgetDefinition(t)); err != nil {
		t.Fatal(err)
	}
	c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red","replicas":2}}`, 201)
	c.want("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a/status", "application/merge-patch+json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"status":{"replicas":1,"selector":"app=a"}}`, 200)
	out := c.want("GET", "/apis/example.com/v1/namespaces/default/widgets/a/scale", "", "", 200)
	if !strings.Contains(out, `"spec":{"replicas":2}`) || !strings.Contains(out, `"status":{"replicas":1,"selector":"app=a"}`) {
		t.Errorf("scale: %s", out)
	}
	c.want("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a/scale", "application/merge-patch+json", `{"spec":{"replicas":5}}`, 200)
	if out := c.want("GET", "/apis/example.com/v1/namespaces/default/widgets/a", "", "", 200); !strings.Contains(out, `"replicas":5`) || !strings.Contains(out, `"color":"red"`) {
		t.Errorf("after scaling: %s", out)
	}
	if out := c.want("GET", "/apis/example.com/v1", "", "", 200); !strings.Contains(out, `"widgets/scale"`) {
		t.Errorf("discovery lacks widgets/scale: %s", out)
	}
}

// TestMediaTypesAndReadDefaults serves a kind's objects in each media type
// kube-apiserver serves custom resources in, refuses protobuf as it does,
// and defaults stored objects when they are read, as it does.
func TestMediaTypesAndReadDefaults(t *testing.T) {
	srv, c := newServer(t)
	def := widgetDefinition(t)
	if err := kinds.Register(srv, def); err != nil {
		t.Fatal(err)
	}
	c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","labels":{"app":"x"}},"spec":{"color":"red"}}`, 201)
	get := func(path, accept string) (int, string, string) {
		req, _ := http.NewRequest("GET", c.url+path, nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(data)
	}
	item, list := "/apis/example.com/v1/namespaces/default/widgets/a", "/apis/example.com/v1/namespaces/default/widgets"
	for _, tc := range []struct {
		path, accept, contentType, contains string
		code                                int
	}{
		{item, "application/yaml", "application/yaml", "color: red", 200},
		{item, "application/cbor", "application/cbor", "color", 200},
		{item, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", "application/json", `"kind":"PartialObjectMetadata"`, 200},
		{list, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", "application/json", `"app":"x"`, 200},
		{item, "application/vnd.kubernetes.protobuf", "", "", 406},
	} {
		code, ct, body := get(tc.path, tc.accept)
		if code != tc.code || code == 200 && (!strings.HasPrefix(ct, tc.contentType) || !strings.Contains(body, tc.contains)) {
			t.Errorf("GET %s as %s: %d %s %.200q", tc.path, tc.accept, code, ct, body)
		}
	}

	// A schema that gains a default: objects stored before are read with it.
	s, err := schema.Parse([]byte(strings.Replace(widgetSchema, `"color": {"type": "string", "enum": ["red", "green", "blue"]}`,
		`"color": {"type": "string", "enum": ["red", "green", "blue"]}, "shape": {"type": "string", "default": "round"}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	def.Versions[0].Schema, def.Versions[1].Schema = s, s
	if err := kinds.Register(srv, def); err != nil {
		t.Fatal(err)
	}
	if out := c.want("GET", item, "", "", 200); !strings.Contains(out, `"shape":"round"`) {
		t.Errorf("a stored object read after its schema gained a default: %s", out)
	}
	if out := c.want("GET", list, "", "", 200); !strings.Contains(out, `"shape":"round"`) {
		t.Errorf("listed after the schema gained a default: %s", out)
	}
}

// noGreen is a Rules that refuses green widgets, as an
// x-kubernetes-validations rule compiled by package validation/cel would.
type noGreen struct{}

func (noGreen) Validate(obj, old any) []*validation.Error {
	spec, _ := obj.(map[string]any)["spec"].(map[string]any)
	if spec["color"] == "green" {
		return []*validation.Error{{Type: kapi.CauseTypeFieldValueInvalid, Field: "spec.color", BadValue: "green", Detail: "no green, and it was " + fmt.Sprint(old != nil)}}
	}
	return nil
}

// TestRules checks what WithRules plugs in: rules run after the schema's
// validation, their errors in the same 422, old given on update.
func TestRules(t *testing.T) {
	srv, c := newServer(t)
	if err := kinds.Register(srv, widgetDefinition(t), kinds.WithRules(func(*schema.Schema) (kinds.Rules, error) { return noGreen{}, nil })); err != nil {
		t.Fatal(err)
	}
	out := c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"green"}}`, 422)
	if !strings.Contains(out, `Widget.example.com \"a\" is invalid: spec.color: Invalid value: \"green\": no green, and it was false`) {
		t.Errorf("create: %s", out)
	}
	c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red"}}`, 201)
	out = c.want("PATCH", "/apis/example.com/v1/namespaces/default/widgets/a", "application/merge-patch+json", `{"spec":{"color":"green"}}`, 422)
	if !strings.Contains(out, "no green, and it was true") {
		t.Errorf("update: %s", out)
	}
	if err := kinds.Register(srv, widgetDefinition(t), kinds.WithRules(func(*schema.Schema) (kinds.Rules, error) { return nil, errors.New("bad rule") })); !errors.Is(err, kinds.ErrDefinition) {
		t.Errorf("a rule that does not compile: %v", err)
	}
}

// TestGarbageCollection deletes the dependents of a deleted owner when both
// are of kinds defined while the server serves, as kube-apiserver's
// collector does for custom resources.
func TestGarbageCollection(t *testing.T) {
	srv, c := newServer(t)
	c.want("GET", "/apis", "", "", 200) // serving: the kind is added to a running collector
	if err := kinds.Register(srv, widgetDefinition(t)); err != nil {
		t.Fatal(err)
	}
	var owner struct{ Metadata struct{ UID string } }
	if err := json.Unmarshal([]byte(c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"owner"},"spec":{"color":"red"}}`, 201)), &owner); err != nil {
		t.Fatal(err)
	}
	c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"dependent","ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"owner","uid":"`+owner.Metadata.UID+`"}]},"spec":{"color":"red"}}`, 201)
	resp, err := http.Get(c.url + "/apis/example.com/v1/namespaces/default/widgets?watch=true&fieldSelector=metadata.name%3Ddependent")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	if !events.Scan() || !strings.Contains(events.Text(), `"ADDED"`) {
		t.Fatalf("watch: %s", events.Text())
	}
	c.want("DELETE", "/apis/example.com/v1/namespaces/default/widgets/owner", "", "", 200)
	for events.Scan() {
		if strings.Contains(events.Text(), `"DELETED"`) {
			return
		}
	}
	t.Fatal("the watch ended before the dependent was deleted")
}

// A kind of the program's own is never replaced nor removed by one
// defined at run time, as a CRD cannot take over kube-apiserver's own
// kinds; the program's kind keeps serving.
func TestProgramKindsStay(t *testing.T) {
	srv, err := apiserver.New(apiserver.WithLeases())
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	c := client{t, hs.URL}
	c.want("GET", "/apis/coordination.k8s.io/v1/leases", "", "", http.StatusOK)

	def := widgetDefinition(t)
	def.Group, def.Kind, def.Plural, def.Singular, def.ShortNames = "coordination.k8s.io", "Lease", "leases", "lease", nil
	for i := range def.Versions {
		def.Versions[i].Scale, def.Versions[i].SelectableFields = nil, nil
	}
	if err := kinds.Register(srv, def); err == nil {
		t.Error("a kind defined at run time replaced the built-in Lease")
	}
	if err := kinds.Remove(srv, "coordination.k8s.io", "Lease"); err == nil {
		t.Error("the built-in Lease was removed")
	}
	c.want("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", "application/json",
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"a"}}`, http.StatusCreated)
}

// TestSchemaSeesWholeObject: a schema validates the whole object, as
// kube-apiserver's does, so a root that requires metadata (Argo CD's
// Application and AppProject do) accepts every object, and a pattern on
// metadata.name refuses a name with kube's words.
func TestSchemaSeesWholeObject(t *testing.T) {
	s, err := schema.Parse([]byte(`{"type": "object", "required": ["apiVersion", "kind", "metadata", "spec"],
	  "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}},
	    "spec": {"type": "object", "properties": {"color": {"type": "string"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	srv, c := newServer(t)
	def := kinds.Definition{Group: "example.com", Kind: "Widget", Plural: "widgets", Namespaced: true,
		Versions: []kinds.Version{{Name: "v1", Served: true, Storage: true, Schema: s}}}
	if err := kinds.Register(srv, def); err != nil {
		t.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/default/widgets"
	c.want("POST", path, "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red"}}`, 201)
	c.want("PATCH", path+"/a", "application/merge-patch+json", `{"spec":{"color":"blue"}}`, 200)
	out := c.want("POST", path, "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"toolong"},"spec":{}}`, 422)
	if !strings.Contains(out, `metadata.name: Too long: may not be more than 5 bytes`) {
		t.Errorf("a name its schema refuses: %s", out)
	}
	out = c.want("POST", path, "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"b"}}`, 422)
	if !strings.Contains(out, `spec: Required value`) {
		t.Errorf("no spec: %s", out)
	}
}

// TestStatusApply: server-side apply to the status subresource records
// its manager (subresource status) and so conflicts with another's, as
// kube-apiserver's does; before, the status write kept the stored
// managedFields and every manager's apply to /status went unrecorded.
func TestStatusApply(t *testing.T) {
	srv, c := newServer(t)
	if err := kinds.Register(srv, widgetDefinition(t)); err != nil {
		t.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/default/widgets/a"
	c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red"}}`, 201)
	apply := func(manager string, replicas int, code int) string {
		return c.want("PATCH", path+"/status?fieldManager="+manager, "application/apply-patch+yaml",
			fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"status":{"replicas":%d}}`, replicas), code)
	}
	out := apply("a", 1, 200)
	if !strings.Contains(out, `"manager":"a","operation":"Apply","apiVersion":"example.com/v1"`) || !strings.Contains(out, `"subresource":"status"`) {
		t.Errorf("a's apply is not recorded: %s", out)
	}
	if out := apply("b", 2, 409); !strings.Contains(out, `Apply failed with 1 conflict: conflict with \"a\" with subresource \"status\": .status.replicas`) {
		t.Errorf("b's apply: %s", out)
	}
	c.want("PATCH", path+"/status?fieldManager=b&force=true", "application/apply-patch+yaml",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"status":{"replicas":2}}`, 200)
	if out := apply("a", 3, 409); !strings.Contains(out, `conflict with \"b\" with subresource \"status\": .status.replicas`) {
		t.Errorf("a's apply after b forced it: %s", out)
	}
}

// TestObjectWithoutCreationTime: an object without a creation time (a
// watch's BOOKMARK) has no creationTimestamp member, as kube-apiserver
// writes a custom resource's (its metadata a map), not a typed object's
// "creationTimestamp":null.
func TestObjectWithoutCreationTime(t *testing.T) {
	for _, meta := range []kapi.ObjectMeta{{ResourceVersion: "7"}, {}, {Name: "a", Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}} {
		o := &kinds.Object{TypeMeta: kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}, ObjectMeta: meta}
		data, err := json.Marshal(o)
		if err != nil || strings.Contains(string(data), "creationTimestamp") {
			t.Errorf("%+v: %s %v", meta, data, err)
		}
		var back kinds.Object
		if err := json.Unmarshal(data, &back); err != nil || back.ResourceVersion != meta.ResourceVersion || back.Name != meta.Name {
			t.Errorf("%s read back as %+v: %v", data, back.ObjectMeta, err)
		}
	}
}
