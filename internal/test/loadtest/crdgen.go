package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The kinds defined at run time that the harness registers: generated
// CustomResourceDefinitions shaped as the CRDs of real projects are
// (cert-manager's, Crossplane providers'), and one that defines the typed
// example's widget, for the custom objects' workloads.

const crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// kindsPerGroup is how many generated kinds share a group, as a
// Crossplane provider's do (upbound's AWS provider: 872 kinds in about 100
// groups).
const kindsPerGroup = 10

// generatedKind names the i-th generated kind.
type generatedKind struct {
	Group, Kind, Plural string
}

func genKind(i int) generatedKind {
	return generatedKind{
		Group:  fmt.Sprintf("g%03d.loadtest.example.com", i/kindsPerGroup),
		Kind:   fmt.Sprintf("Thing%04d", i),
		Plural: fmt.Sprintf("thing%04ds", i),
	}
}

func (k generatedKind) name() string { return k.Plural + "." + k.Group }

func (k generatedKind) objectsURL(base, ns string) string {
	return base + "/apis/" + k.Group + "/v1/namespaces/" + ns + "/" + k.Plural
}

// genProperties is the number of properties (at every depth, status's
// included) of the i-th generated kind's schema: 20 to 50.
func genProperties(i int) int { return 20 + (i*7)%31 }

// description is a property's description, as long as controller-gen
// makes them from a field's doc comment (most of a real CRD's bytes).
func description(field string, i int) string {
	return fmt.Sprintf("%s configures the %s of the managed resource. It is one of the settings that the provider passes on to the external API unchanged; see the API reference of version %d for its meaning and its default.", field, field, i%7+1)
}

// genCRD is the i-th generated CustomResourceDefinition, as JSON: a
// namespaced kind, one version served and stored, the status subresource,
// two printer columns, and a schema of genProperties(i) properties of
// every kind real schemas use: strings (with lengths, patterns, enums,
// formats), integers with bounds, booleans, int-or-string, maps, lists of
// strings, nested objects and list-maps, and a status with conditions.
func genCRD(i int) []byte {
	k := genKind(i)
	n := genProperties(i)
	status := map[string]any{
		"type": "object", "description": description("status", i),
		"properties": map[string]any{
			"observedGeneration": map[string]any{"type": "integer", "format": "int64", "description": description("observedGeneration", i)},
			"phase":              map[string]any{"type": "string", "enum": []any{"Pending", "Ready", "Failed"}, "description": description("phase", i)},
			"conditions": map[string]any{
				"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"type"},
				"description": description("conditions", i),
				"items": map[string]any{
					"type": "object", "required": []any{"type", "status"},
					"properties": map[string]any{
						"type":               map[string]any{"type": "string", "maxLength": 316},
						"status":             map[string]any{"type": "string", "enum": []any{"True", "False", "Unknown"}},
						"reason":             map[string]any{"type": "string", "maxLength": 1024},
						"message":            map[string]any{"type": "string", "maxLength": 32768},
						"lastTransitionTime": map[string]any{"type": "string", "format": "date-time"},
						"observedGeneration": map[string]any{"type": "integer", "format": "int64", "minimum": 0},
					},
				},
			},
		},
	}
	n -= 9 // status's properties
	spec := map[string]any{}
	for p := 0; n > 0; p++ {
		name := fmt.Sprintf("field%02d", p)
		var prop map[string]any
		switch p % 9 {
		case 0:
			prop = map[string]any{"type": "string", "maxLength": 253, "pattern": `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`}
		case 1:
			prop = map[string]any{"type": "integer", "format": "int32", "minimum": 0, "maximum": 65535}
		case 2:
			prop = map[string]any{"type": "string", "enum": []any{"Standard", "Premium", "Basic"}}
		case 3:
			prop = map[string]any{"type": "boolean"}
		case 4:
			prop = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
		case 5:
			prop = map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 16}
		case 6:
			prop = map[string]any{"x-kubernetes-int-or-string": true, "anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}}
		case 7: // a nested object: three properties
			prop = map[string]any{"type": "object", "properties": map[string]any{
				"name":      map[string]any{"type": "string", "description": description("name", p)},
				"namespace": map[string]any{"type": "string", "description": description("namespace", p)},
			}, "required": []any{"name"}}
			n -= 2
		case 8: // a list-map of objects: three properties
			prop = map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
				"items": map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
					"name":  map[string]any{"type": "string", "description": description("name", p)},
					"value": map[string]any{"type": "string", "description": description("value", p)},
				}}}
			n -= 2
		}
		prop["description"] = description(name, i)
		spec[name] = prop
		n--
	}
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": k.name()},
		"spec": map[string]any{
			"group": k.Group, "scope": "Namespaced",
			"names": map[string]any{"kind": k.Kind, "listKind": k.Kind + "List", "plural": k.Plural, "singular": strings.ToLower(k.Kind), "categories": []any{"loadtest"}},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"additionalPrinterColumns": []any{
					map[string]any{"name": "Tier", "type": "string", "jsonPath": ".spec.field02"},
					map[string]any{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
				},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "description": description(k.Kind, i),
					"properties": map[string]any{
						"apiVersion": map[string]any{"type": "string"}, "kind": map[string]any{"type": "string"}, "metadata": map[string]any{"type": "object"},
						"spec":   map[string]any{"type": "object", "description": description("spec", i), "properties": spec},
						"status": status,
					},
				}},
			}},
		},
	}
	data, err := json.Marshal(crd)
	if err != nil {
		panic(err) // maps of strings, numbers and slices
	}
	return data
}

// genObject is an object of the i-th generated kind that its schema
// admits.
func genObject(k generatedKind, ns, name string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":%q,"kind":%q,"metadata":{"name":%q,"namespace":%q},"spec":{"field00":"a-name","field01":8080,"field02":"Premium","field03":true,"field04":{"team":"platform"}}}`,
		k.Group+"/v1", k.Kind, name, ns)
}

var applyHeader = http.Header{"Content-Type": {"application/apply-patch+yaml"}, "Accept": {"application/json"}}

// applyCRD applies a CustomResourceDefinition server-side, as kubectl
// apply --server-side does (its JSON is YAML).
func applyCRD(ctx context.Context, c *http.Client, base, name string, doc []byte) error {
	_, _, _, err := send(ctx, c, "PATCH", base+crdsPath+"/"+name+"?fieldManager=kubectl&fieldValidation=Strict&force=false", applyHeader, doc, false)
	return err
}

// waitEstablished waits until the definition name has the condition
// Established, as kubectl wait --for condition=established does.
func waitEstablished(ctx context.Context, c *http.Client, base, name string) error {
	for {
		_, body, _, err := send(ctx, c, "GET", base+crdsPath+"/"+name, jsonHeader, nil, true)
		if err != nil {
			return err
		}
		var def struct {
			Status struct {
				Conditions []struct{ Type, Status string } `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal(body, &def); err != nil {
			return err
		}
		for _, cond := range def.Status.Conditions {
			if cond.Type == "Established" && cond.Status == "True" {
				return nil
			}
		}
		if err := pause(ctx, time.Millisecond); err != nil {
			return fmt.Errorf("%s not established: %w", name, err)
		}
	}
}

// createWhenServed creates obj at url as soon as the kind is served: a
// 404 (not served yet) is tried again.
func createWhenServed(ctx context.Context, c *http.Client, url string, obj []byte) error {
	for {
		_, _, _, err := send(ctx, c, "POST", url, jsonHeader, obj, false)
		var he *httpError
		if !errors.As(err, &he) || he.Code != http.StatusNotFound {
			return err
		}
		if err := pause(ctx, time.Millisecond); err != nil {
			return fmt.Errorf("not served: %w", err)
		}
	}
}

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// widgetCRD defines the typed example's widget (examples/widgets'
// example.com/v1 Widget) as a CustomResourceDefinition: the same fields,
// constraints, defaults, list-map keys, subresources, printer columns and
// selectable field, so that the same requests make the same objects of
// both and the workloads run unchanged against a control plane serving it.
const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"Widget","listKind":"WidgetList","plural":"widgets","singular":"widget","shortNames":["wd"]},
"versions":[{"name":"v1","served":true,"storage":true,
 "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.selector"}},
 "selectableFields":[{"jsonPath":".spec.color"}],
 "additionalPrinterColumns":[{"name":"Color","type":"string","description":"Color of the widget.","jsonPath":".spec.color"},{"name":"Replicas","type":"integer","description":"Desired number of replicas.","jsonPath":".spec.replicas"},{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}],
 "schema":{"openAPIV3Schema":{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","required":["color"],"properties":{
   "color":{"type":"string","enum":["Red","Green","Blue"],"description":"Color of the widget: Red, Green or Blue."},
   "replicas":{"type":"integer","format":"int32","minimum":0,"default":1,"description":"Desired number of replicas; defaults to 1."},
   "size":{"type":"integer","format":"int32","minimum":0,"description":"Size of the widget."},
   "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object","required":["name"],"properties":{
     "name":{"type":"string"},"port":{"type":"integer","format":"int32","minimum":1,"maximum":65535},"protocol":{"type":"string","enum":["TCP","UDP","SCTP"],"default":"TCP"}}}},
   "selector":{"type":"object","additionalProperties":{"type":"string"}}}},
  "status":{"type":"object","properties":{
   "replicas":{"type":"integer","format":"int32","minimum":0},"selector":{"type":"string"},"observedGeneration":{"type":"integer","format":"int64"},
   "conditions":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["type"],"items":{"type":"object","required":["type","status"],"properties":{
     "type":{"type":"string"},"status":{"type":"string"},"observedGeneration":{"type":"integer","format":"int64"},"lastTransitionTime":{"type":"string","format":"date-time"},"reason":{"type":"string"},"message":{"type":"string"}}}}}}}}}}]}}`

// defineWidgets makes t, a control plane, serve widgets as a custom
// resource (widgetCRD), and waits until a widget can be created.
func defineWidgets(ctx context.Context, t *target) error {
	c := t.client(1)
	defer c.CloseIdleConnections()
	if err := applyCRD(ctx, c, t.URL, "widgets.example.com", []byte(widgetCRD)); err != nil {
		return fmt.Errorf("defining widgets: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return waitEstablished(ctx, c, t.URL, "widgets.example.com")
}
