package openapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

type testWidget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		Color    string `json:"color" validate:"required" description:"color of the widget"`
		Replicas *int32 `json:"replicas,omitempty"`
		Ports    []struct {
			Name string `json:"name"`
			Port int32  `json:"port"`
		} `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"name" listType:"map" listMapKey:"name"`
		Selector map[string]string `json:"selector,omitempty"`
	} `json:"spec,omitempty"`
	Status struct {
		Conditions []kapi.Condition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

var testWidgetResource = Resource{
	Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
	Namespaced: true, Status: true, Type: reflect.TypeFor[testWidget](),
}

// mustOpenAPI generates the document and decodes it for inspection.
func mustOpenAPI(t *testing.T, group, version string, resources ...Resource) map[string]any {
	t.Helper()
	data, err := GroupVersion(group, version, resources)
	if err != nil {
		t.Fatalf("GroupVersion: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	return doc
}

// at follows object keys into v.
func at(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for i, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s is a %T, not an object", strings.Join(keys[:i], "/"), v)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("no %q at %s", k, strings.Join(keys[:i], "/"))
		}
	}
	return v
}

func has(v any, key string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[key]
	return ok
}

func wantJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("%s:\n got %s\nwant %s", what, g, want)
	}
}

const metaRef = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."

func TestOpenAPIWidgetSchema(t *testing.T) {
	doc := mustOpenAPI(t, "example.com", "v1", testWidgetResource)
	wantJSON(t, "openapi", doc["openapi"], `"3.0.0"`)
	schemas := at(t, doc, "components", "schemas").(map[string]any)

	var names []string
	for name := range schemas {
		names = append(names, name)
	}
	slices.Sort(names)
	meta := "io.k8s.apimachinery.pkg.apis.meta.v1."
	wantNames := []string{
		"com.example.v1.Widget", "com.example.v1.WidgetList",
		meta + "Condition", meta + "DeleteOptions", meta + "FieldsV1", meta + "ListMeta",
		meta + "ManagedFieldsEntry", meta + "ObjectMeta", meta + "OwnerReference", meta + "Patch",
		meta + "Preconditions", meta + "Status", meta + "StatusCause", meta + "StatusDetails", meta + "Time",
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("schemas:\n got %q\nwant %q", names, wantNames)
	}

	w := schemas["com.example.v1.Widget"]
	wantJSON(t, "Widget type", at(t, w, "type"), `"object"`)
	wantJSON(t, "Widget GVK", at(t, w, "x-kubernetes-group-version-kind"), `[{"group":"example.com","kind":"Widget","version":"v1"}]`)
	if has(w, "required") {
		t.Errorf("Widget has required %v; apiVersion, kind, metadata, spec and status are all optional", at(t, w, "required"))
	}
	for _, p := range []string{"apiVersion", "kind"} {
		wantJSON(t, p+" type", at(t, w, "properties", p, "type"), `"string"`)
		if d, _ := at(t, w, "properties", p, "description").(string); !strings.Contains(d, "More info") {
			t.Errorf("%s has no description: %q", p, d)
		}
	}
	wantJSON(t, "metadata", at(t, w, "properties", "metadata", "allOf"), `[{"$ref":"`+metaRef+`ObjectMeta"}]`)

	spec := at(t, w, "properties", "spec")
	wantJSON(t, "spec type", at(t, spec, "type"), `"object"`)
	// Required when declared (and so refused when missing); port, without
	// omitempty, is not: the server accepts a widget without it.
	wantJSON(t, "spec required", at(t, spec, "required"), `["color"]`)
	wantJSON(t, "spec.color", at(t, spec, "properties", "color"), `{"type":"string","description":"color of the widget"}`)
	wantJSON(t, "spec.replicas", at(t, spec, "properties", "replicas"), `{"type":"integer","format":"int32"}`)
	wantJSON(t, "spec.selector", at(t, spec, "properties", "selector"), `{"type":"object","additionalProperties":{"type":"string"}}`)
	wantJSON(t, "spec.ports", at(t, spec, "properties", "ports"), `{
		"type": "array",
		"items": {
			"type": "object",
			"properties": {
				"name": {"type": "string"},
				"port": {"type": "integer", "format": "int32"}
			}
		},
		"x-kubernetes-list-type": "map",
		"x-kubernetes-list-map-keys": ["name"],
		"x-kubernetes-patch-strategy": "merge",
		"x-kubernetes-patch-merge-key": "name"
	}`)
	wantJSON(t, "status.conditions", at(t, w, "properties", "status", "properties", "conditions"),
		`{"type":"array","items":{"$ref":"`+metaRef+`Condition"}}`)

	list := schemas["com.example.v1.WidgetList"]
	wantJSON(t, "WidgetList GVK", at(t, list, "x-kubernetes-group-version-kind"), `[{"group":"example.com","kind":"WidgetList","version":"v1"}]`)
	wantJSON(t, "WidgetList required", at(t, list, "required"), `["items"]`)
	wantJSON(t, "WidgetList items", at(t, list, "properties", "items", "items"), `{"$ref":"#/components/schemas/com.example.v1.Widget"}`)
	wantJSON(t, "WidgetList metadata", at(t, list, "properties", "metadata", "allOf"), `[{"$ref":"`+metaRef+`ListMeta"}]`)

	m := func(name string) any { return schemas[meta+name] }
	wantJSON(t, "Time", m("Time"), `{"description":`+mustQuote(at(t, m("Time"), "description"))+`,"type":"string","format":"date-time"}`)
	wantJSON(t, "FieldsV1 type", at(t, m("FieldsV1"), "type"), `"object"`)
	wantJSON(t, "Patch type", at(t, m("Patch"), "type"), `"object"`)

	om := m("ObjectMeta")
	if has(om, "required") {
		t.Errorf("ObjectMeta has required %v", at(t, om, "required"))
	}
	for _, f := range []string{"name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
		"deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers", "managedFields"} {
		if d, _ := at(t, om, "properties", f, "description").(string); d == "" {
			t.Errorf("ObjectMeta.%s has no description", f)
		}
	}
	wantJSON(t, "creationTimestamp", at(t, om, "properties", "creationTimestamp", "allOf"), `[{"$ref":"`+metaRef+`Time"}]`)
	wantJSON(t, "generation", at(t, om, "properties", "generation", "format"), `"int64"`)
	wantJSON(t, "labels", at(t, om, "properties", "labels", "additionalProperties"), `{"type":"string"}`)
	ownerRefs := at(t, om, "properties", "ownerReferences").(map[string]any)
	delete(ownerRefs, "description")
	wantJSON(t, "ownerReferences", ownerRefs, `{
		"type": "array",
		"items": {"$ref": "`+metaRef+`OwnerReference"},
		"x-kubernetes-list-type": "map",
		"x-kubernetes-list-map-keys": ["uid"],
		"x-kubernetes-patch-strategy": "merge",
		"x-kubernetes-patch-merge-key": "uid"
	}`)
	wantJSON(t, "finalizers list type", at(t, om, "properties", "finalizers", "x-kubernetes-list-type"), `"set"`)
	wantJSON(t, "managedFields items", at(t, om, "properties", "managedFields", "items"), `{"$ref":"`+metaRef+`ManagedFieldsEntry"}`)

	wantJSON(t, "OwnerReference required", at(t, m("OwnerReference"), "required"), `["apiVersion","kind","name","uid"]`)
	wantJSON(t, "OwnerReference map type", at(t, m("OwnerReference"), "x-kubernetes-map-type"), `"atomic"`)
	wantJSON(t, "ManagedFieldsEntry.fieldsV1", at(t, m("ManagedFieldsEntry"), "properties", "fieldsV1", "allOf"), `[{"$ref":"`+metaRef+`FieldsV1"}]`)
	// kube-openapi's, but for message, which kube-apiserver accepts without.
	wantJSON(t, "Condition required", at(t, m("Condition"), "required"), `["type","status","lastTransitionTime","reason"]`)
	wantJSON(t, "Condition.lastTransitionTime", at(t, m("Condition"), "properties", "lastTransitionTime", "allOf"), `[{"$ref":"`+metaRef+`Time"}]`)
	wantJSON(t, "Condition.observedGeneration", at(t, m("Condition"), "properties", "observedGeneration", "format"), `"int64"`)

	st := m("Status")
	if has(st, "required") {
		t.Errorf("Status has required %v", at(t, st, "required"))
	}
	wantJSON(t, "Status GVK", at(t, st, "x-kubernetes-group-version-kind"), `[{"group":"","kind":"Status","version":"v1"}]`)
	wantJSON(t, "Status.code", at(t, st, "properties", "code"), `{"description":`+mustQuote(at(t, st, "properties", "code", "description"))+`,"type":"integer","format":"int32"}`)
	wantJSON(t, "Status.details", at(t, st, "properties", "details", "allOf"), `[{"$ref":"`+metaRef+`StatusDetails"}]`)
	wantJSON(t, "StatusDetails.causes", at(t, m("StatusDetails"), "properties", "causes", "items"), `{"$ref":"`+metaRef+`StatusCause"}`)
	wantJSON(t, "StatusCause properties", keysOf(at(t, m("StatusCause"), "properties")), `["field","message","reason"]`)
	wantJSON(t, "DeleteOptions.preconditions", at(t, m("DeleteOptions"), "properties", "preconditions", "allOf"), `[{"$ref":"`+metaRef+`Preconditions"}]`)
	wantJSON(t, "DeleteOptions.propagationPolicy", at(t, m("DeleteOptions"), "properties", "propagationPolicy", "type"), `"string"`)

	// Every $ref points at a schema of the document.
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				if !has(schemas, strings.TrimPrefix(ref, "#/components/schemas/")) {
					t.Errorf("dangling $ref %s", ref)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
}

func mustQuote(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func keysOf(v any) []any {
	var keys []any
	for k := range v.(map[string]any) {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	return keys
}

// paramNames lists an operation's or path's parameters as in:name.
func paramNames(t *testing.T, v any) []string {
	t.Helper()
	if !has(v, "parameters") {
		return nil
	}
	var names []string
	for _, p := range at(t, v, "parameters").([]any) {
		names = append(names, at(t, p, "in").(string)+":"+at(t, p, "name").(string))
	}
	return names
}

func TestOpenAPIWidgetPaths(t *testing.T) {
	doc := mustOpenAPI(t, "example.com", "v1", testWidgetResource)
	paths := at(t, doc, "paths").(map[string]any)
	const (
		all        = "/apis/example.com/v1/widgets"
		collection = "/apis/example.com/v1/namespaces/{namespace}/widgets"
		item       = collection + "/{name}"
		status     = item + "/status"
	)
	wantJSON(t, "paths", keysOf(paths), `["`+collection+`","`+item+`","`+status+`","`+all+`"]`)

	listParams := []string{"query:allowWatchBookmarks", "query:continue", "query:fieldSelector", "query:labelSelector", "query:limit",
		"query:resourceVersion", "query:resourceVersionMatch", "query:sendInitialEvents", "query:timeoutSeconds", "query:watch"}
	writeParams := []string{"query:dryRun", "query:fieldManager", "query:fieldValidation"}
	patchParams := append(slices.Clone(writeParams), "query:force")
	deleteParams := []string{"query:dryRun", "query:gracePeriodSeconds", "query:ignoreStoreReadErrorWithClusterBreakingPotential", "query:orphanDependents", "query:propagationPolicy"}
	deleteCollectionParams := []string{"query:continue", "query:dryRun", "query:fieldSelector", "query:gracePeriodSeconds",
		"query:ignoreStoreReadErrorWithClusterBreakingPotential", "query:labelSelector", "query:limit", "query:orphanDependents", "query:propagationPolicy", "query:resourceVersion",
		"query:resourceVersionMatch", "query:sendInitialEvents", "query:timeoutSeconds"}
	const (
		widget     = "#/components/schemas/com.example.v1.Widget"
		widgetList = "#/components/schemas/com.example.v1.WidgetList"
		statusRef  = metaRef + "Status"
	)

	for _, tc := range []struct {
		path, method, action, operationID, description string
		params                                         []string
		response                                       string
		body                                           []string // media types
		bodyRef                                        string
	}{
		{all, "get", "list", "listExampleComV1WidgetForAllNamespaces", "list objects of kind Widget", listParams, widgetList, nil, ""},
		{collection, "get", "list", "listExampleComV1NamespacedWidget", "list objects of kind Widget", listParams, widgetList, nil, ""},
		{collection, "post", "post", "createExampleComV1NamespacedWidget", "create a Widget", writeParams, widget,
			[]string{"application/json", "application/yaml"}, widget},
		{collection, "delete", "deletecollection", "deleteExampleComV1CollectionNamespacedWidget", "delete collection of Widget",
			deleteCollectionParams, statusRef, []string{"application/json", "application/yaml"}, metaRef + "DeleteOptions"},
		{item, "get", "get", "readExampleComV1NamespacedWidget", "read the specified Widget", []string{"query:resourceVersion"}, widget, nil, ""},
		{item, "put", "put", "replaceExampleComV1NamespacedWidget", "replace the specified Widget", writeParams, widget,
			[]string{"application/json", "application/yaml"}, widget},
		{item, "patch", "patch", "patchExampleComV1NamespacedWidget", "partially update the specified Widget", patchParams, widget,
			[]string{"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"},
			metaRef + "Patch"},
		{item, "delete", "delete", "deleteExampleComV1NamespacedWidget", "delete a Widget", deleteParams, statusRef,
			[]string{"application/json", "application/yaml"}, metaRef + "DeleteOptions"},
		{status, "get", "get", "readExampleComV1NamespacedWidgetStatus", "read status of the specified Widget", []string{"query:resourceVersion"}, widget, nil, ""},
		{status, "put", "put", "replaceExampleComV1NamespacedWidgetStatus", "replace status of the specified Widget", writeParams, widget,
			[]string{"application/json", "application/yaml"}, widget},
		{status, "patch", "patch", "patchExampleComV1NamespacedWidgetStatus", "partially update status of the specified Widget", patchParams, widget,
			[]string{"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"},
			metaRef + "Patch"},
	} {
		t.Run(tc.operationID, func(t *testing.T) {
			op := at(t, paths, tc.path, tc.method)
			wantJSON(t, "operationId", at(t, op, "operationId"), mustQuote(tc.operationID))
			wantJSON(t, "description", at(t, op, "description"), mustQuote(tc.description))
			wantJSON(t, "tags", at(t, op, "tags"), `["exampleCom_v1"]`)
			wantJSON(t, "x-kubernetes-action", at(t, op, "x-kubernetes-action"), mustQuote(tc.action))
			wantJSON(t, "x-kubernetes-group-version-kind", at(t, op, "x-kubernetes-group-version-kind"),
				`{"group":"example.com","version":"v1","kind":"Widget"}`)
			if got := paramNames(t, op); !slices.Equal(got, tc.params) {
				t.Errorf("parameters:\n got %q\nwant %q", got, tc.params)
			}
			for _, mt := range []string{"application/json", "application/yaml"} {
				wantJSON(t, "200 "+mt, at(t, op, "responses", "200", "content", mt, "schema"), `{"$ref":"`+tc.response+`"}`)
			}
			wantJSON(t, "401", at(t, op, "responses", "401"), `{"description":"Unauthorized"}`)
			if tc.body == nil {
				if has(op, "requestBody") {
					t.Errorf("unexpected requestBody")
				}
				return
			}
			content := at(t, op, "requestBody", "content")
			wantJSON(t, "requestBody media types", keysOf(content), mustQuote(tc.body))
			for _, mt := range tc.body {
				wantJSON(t, "requestBody "+mt, at(t, content, mt, "schema"), `{"$ref":"`+tc.bodyRef+`"}`)
			}
		})
	}

	for path, want := range map[string][]string{
		all:        {"query:pretty"},
		collection: {"path:namespace", "query:pretty"},
		item:       {"path:name", "path:namespace", "query:pretty"},
		status:     {"path:name", "path:namespace", "query:pretty"},
	} {
		if got := paramNames(t, paths[path]); !slices.Equal(got, want) {
			t.Errorf("%s parameters:\n got %q\nwant %q", path, got, want)
		}
		for _, p := range at(t, paths[path], "parameters").([]any) {
			if at(t, p, "in") == "path" {
				wantJSON(t, path+" required", at(t, p, "required"), `true`)
			}
		}
	}
	if has(paths[all], "post") || has(paths[status], "delete") {
		t.Errorf("create across namespaces or delete of status")
	}
}

type testGadget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata"`
	Spec            struct {
		Size int64 `json:"size"`
	} `json:"spec"`
}

func TestOpenAPIClusterScopedAndCore(t *testing.T) {
	gadgets := Resource{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Type: reflect.TypeFor[testGadget]()}
	doc := mustOpenAPI(t, "example.com", "v1", gadgets)
	paths := at(t, doc, "paths")
	wantJSON(t, "paths", keysOf(paths), `["/apis/example.com/v1/gadgets","/apis/example.com/v1/gadgets/{name}"]`)
	wantJSON(t, "list id", at(t, paths, "/apis/example.com/v1/gadgets", "get", "operationId"), `"listExampleComV1Gadget"`)
	wantJSON(t, "patch id", at(t, paths, "/apis/example.com/v1/gadgets/{name}", "patch", "operationId"), `"patchExampleComV1Gadget"`)
	if got := paramNames(t, at(t, paths, "/apis/example.com/v1/gadgets/{name}")); !slices.Equal(got, []string{"path:name", "query:pretty"}) {
		t.Errorf("item parameters %q", got)
	}
	// metadata is never required, even without omitempty; nor is spec,
	// which does not declare it.
	if g := at(t, doc, "components", "schemas", "com.example.v1.Gadget"); has(g, "required") {
		t.Errorf("Gadget required %v, want none", at(t, g, "required"))
	}
	wantJSON(t, "size", at(t, doc, "components", "schemas", "com.example.v1.Gadget", "properties", "spec", "properties", "size"),
		`{"type":"integer","format":"int64"}`)

	core := gadgets
	core.Group, core.Namespaced = "", true
	doc = mustOpenAPI(t, "", "v1", core)
	paths = at(t, doc, "paths")
	wantJSON(t, "core paths", keysOf(paths),
		`["/api/v1/gadgets","/api/v1/namespaces/{namespace}/gadgets","/api/v1/namespaces/{namespace}/gadgets/{name}"]`)
	op := at(t, paths, "/api/v1/namespaces/{namespace}/gadgets/{name}", "patch")
	wantJSON(t, "core patch id", at(t, op, "operationId"), `"patchCoreV1NamespacedGadget"`)
	wantJSON(t, "core tags", at(t, op, "tags"), `["core_v1"]`)
	wantJSON(t, "core gvk", at(t, op, "x-kubernetes-group-version-kind"), `{"group":"","version":"v1","kind":"Gadget"}`)
	wantJSON(t, "core ref", at(t, op, "responses", "200", "content", "application/json", "schema"), `{"$ref":"#/components/schemas/io.k8s.api.core.v1.Gadget"}`)
	wantJSON(t, "core schema gvk", at(t, doc, "components", "schemas", "io.k8s.api.core.v1.Gadget", "x-kubernetes-group-version-kind"),
		`[{"group":"","kind":"Gadget","version":"v1"}]`)
	wantJSON(t, "core list", at(t, doc, "components", "schemas", "io.k8s.api.core.v1.GadgetList", "properties", "items", "items"),
		`{"$ref":"#/components/schemas/io.k8s.api.core.v1.Gadget"}`)
}

func TestOpenAPIDeterministic(t *testing.T) {
	gadgets := Resource{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Type: reflect.TypeFor[testGadget]()}
	first, err := GroupVersion("example.com", "v1", []Resource{testWidgetResource, gadgets})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := GroupVersion("example.com", "v1", []Resource{gadgets, testWidgetResource})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatalf("two documents of one registration differ")
		}
	}
}

type testNode struct {
	Name     string      `json:"name"`
	Children []*testNode `json:"children,omitempty"`
}

type testTree struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Root            testNode        `json:"root"`
	Other           *testNode       `json:"other,omitempty"`
	Parent          *testTree       `json:"parent,omitempty"`
	Pair            testPair        `json:"pair"`
	Opaque          testOpaque      `json:"opaque"`
	Stamp           time.Time       `json:"stamp"`
	Raw             json.RawMessage `json:"raw,omitempty"`
}

type testPair struct{ A, B testLeaf }

type testLeaf struct {
	V string `json:"v"`
}

type testOpaque struct{}

func (testOpaque) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

func TestOpenAPIRecursiveTypes(t *testing.T) {
	trees := Resource{Group: "example.com", Version: "v1", Kind: "Tree", Plural: "trees", Type: reflect.TypeFor[testTree]()}
	doc := mustOpenAPI(t, "example.com", "v1", trees)
	schemas := at(t, doc, "components", "schemas")
	props := at(t, schemas, "com.example.v1.Tree", "properties")
	wantJSON(t, "root", at(t, props, "root"), `{"allOf":[{"$ref":"#/components/schemas/com.example.v1.testNode"}]}`)
	wantJSON(t, "other", at(t, props, "other"), `{"allOf":[{"$ref":"#/components/schemas/com.example.v1.testNode"}]}`)
	wantJSON(t, "parent", at(t, props, "parent"), `{"allOf":[{"$ref":"#/components/schemas/com.example.v1.Tree"}]}`)
	wantJSON(t, "node", at(t, schemas, "com.example.v1.testNode"), `{
		"type": "object",
		"properties": {
			"name": {"type": "string"},
			"children": {"type": "array", "items": {"$ref": "#/components/schemas/com.example.v1.testNode"}}
		}
	}`)
	// A type used twice but not recursively stays inline.
	wantJSON(t, "pair", at(t, props, "pair"), `{
		"type": "object",
		"properties": {
			"A": {"type": "object", "properties": {"v": {"type": "string"}}},
			"B": {"type": "object", "properties": {"v": {"type": "string"}}}
		}
	}`)
	wantJSON(t, "opaque", at(t, props, "opaque"), `{"x-kubernetes-preserve-unknown-fields":true}`)
	wantJSON(t, "raw", at(t, props, "raw"), `{"x-kubernetes-preserve-unknown-fields":true}`)
	wantJSON(t, "stamp", at(t, props, "stamp"), `{"type":"string","format":"date-time"}`)
}

type testEmbedded struct {
	Shared string `json:"shared"`
	Inner  string `json:"inner,omitempty"`
}

type testEmbedded2 struct {
	Shared string `json:"shared"`
	Deep   string
}

type testKinds struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	testEmbedded
	*testEmbedded2
	Shared  int               `json:"shared,omitempty"` // shallower: hides both embedded ones
	B       bool              `json:"b"`
	I8      int8              `json:"i8"`
	I       int               `json:"i"`
	U64     uint64            `json:"u64"`
	F32     float32           `json:"f32"`
	F64     float64           `json:"f64"`
	Bytes   []byte            `json:"bytes"`
	Array   [2]byte           `json:"array"`
	Quoted  int64             `json:"quoted,string"`
	Any     any               `json:"any"`
	IntMap  map[int]string    `json:"intMap"`
	Nested  map[string][]bool `json:"nested"`
	Skipped string            `json:"-"`
	//lint:ignore SA5008 encoding/json names this field "-"; the schema must too
	Dash       string `json:"-,"`
	unexported string
	Untagged   string
	Zero       kapi.Time           `json:"zero,omitzero"`
	When       *kapi.Time          `json:"when"`
	Labelled   string              `json:"labelled" description:"a label"`
	Owner      kapi.OwnerReference `json:"owner"`
}

func TestOpenAPIFieldKinds(t *testing.T) {
	r := Resource{Group: "kinds.example.com", Version: "v1alpha1", Kind: "Kinds", Plural: "kinds", Type: reflect.TypeFor[testKinds]()}
	doc := mustOpenAPI(t, r.Group, r.Version, r)
	s := at(t, doc, "components", "schemas", "com.example.kinds.v1alpha1.Kinds")
	_ = testKinds{}.unexported
	wantJSON(t, "property names", keysOf(at(t, s, "properties")), `["-","Deep","Untagged","any","apiVersion","array","b","bytes","f32","f64","i","i8","inner","intMap","kind","labelled","metadata","nested","owner","quoted","shared","u64","when","zero"]`)
	// Only what declares it is required; none here.
	if has(s, "required") {
		t.Errorf("required %v, want none", at(t, s, "required"))
	}
	for name, want := range map[string]string{
		"shared":   `{"type":"integer","format":"int64"}`,
		"inner":    `{"type":"string"}`,
		"Deep":     `{"type":"string"}`,
		"b":        `{"type":"boolean"}`,
		"i8":       `{"type":"integer","format":"int32"}`,
		"i":        `{"type":"integer","format":"int64"}`,
		"u64":      `{"type":"integer"}`,
		"f32":      `{"type":"number","format":"float"}`,
		"f64":      `{"type":"number","format":"double"}`,
		"bytes":    `{"type":"string","format":"byte"}`,
		"array":    `{"type":"array","items":{"type":"integer","format":"int32"}}`,
		"quoted":   `{"type":"string"}`,
		"any":      `{"x-kubernetes-preserve-unknown-fields":true}`,
		"intMap":   `{"type":"object","additionalProperties":{"type":"string"}}`,
		"nested":   `{"type":"object","additionalProperties":{"type":"array","items":{"type":"boolean"}}}`,
		"-":        `{"type":"string"}`,
		"Untagged": `{"type":"string"}`,
		"zero":     `{"allOf":[{"$ref":"` + metaRef + `Time"}]}`,
		"when":     `{"allOf":[{"$ref":"` + metaRef + `Time"}]}`,
		"labelled": `{"type":"string","description":"a label"}`,
		"owner":    `{"allOf":[{"$ref":"` + metaRef + `OwnerReference"}]}`,
	} {
		wantJSON(t, name, at(t, s, "properties", name), want)
	}
	wantJSON(t, "tag", at(t, doc, "paths", "/apis/kinds.example.com/v1alpha1/kinds", "get", "tags"), `["kindsExampleCom_v1alpha1"]`)
	wantJSON(t, "id", at(t, doc, "paths", "/apis/kinds.example.com/v1alpha1/kinds", "get", "operationId"), `"listKindsExampleComV1alpha1Kinds"`)
	wantJSON(t, "description", at(t, doc, "paths", "/apis/kinds.example.com/v1alpha1/kinds", "post", "description"), `"create Kinds"`)
}

type testBad struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		Items []struct {
			Done chan bool `json:"done"`
		} `json:"items"`
	} `json:"spec"`
}

type testBadKey struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	ByPoint         map[struct{ X, Y int }]string `json:"byPoint"`
}

func TestOpenAPIErrors(t *testing.T) {
	widget := testWidgetResource
	for _, tc := range []struct {
		name, group, version string
		resources            []Resource
		want                 string
	}{
		{"unsupported field", "example.com", "v1", []Resource{{Group: "example.com", Version: "v1", Kind: "Bad", Plural: "bads", Type: reflect.TypeFor[testBad]()}},
			"spec.items[].done"},
		{"map key", "example.com", "v1", []Resource{{Group: "example.com", Version: "v1", Kind: "Bad", Plural: "bads", Type: reflect.TypeFor[testBadKey]()}},
			"byPoint"},
		{"other group", "other.example.com", "v1", []Resource{widget}, "example.com/v1"},
		{"twice", "example.com", "v1", []Resource{widget, widget}, "twice"},
		{"not a struct", "example.com", "v1", []Resource{{Group: "example.com", Version: "v1", Kind: "P", Plural: "ps", Type: reflect.TypeFor[*testWidget]()}}, "not a struct"},
		{"no plural", "example.com", "v1", []Resource{{Group: "example.com", Version: "v1", Kind: "P", Type: reflect.TypeFor[testWidget]()}}, "plural"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := GroupVersion(tc.group, tc.version, tc.resources)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// Named types that refer to themselves without a struct, or point to
// themselves.
type (
	testTreeMap   map[string]testTreeMap
	testSelfList  []testSelfList
	testArrayTree [2]*testArrayTree
	testMapA      map[string]testListB
	testListB     []testMapA
	testPP        *testPP
	testPA        *testPB
	testPB        *testPA
)

type testRecursiveKinds struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Tree            testTreeMap   `json:"tree"`
	List            testSelfList  `json:"list"`
	Array           testArrayTree `json:"array"`
	A               testMapA      `json:"a"`
	B               *testListB    `json:"b,omitempty"`
}

type testPointerCycle struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	P               testPP `json:"p,omitempty"`
}

type testPointerCycle2 struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		P *testPA `json:"p,omitempty"`
	} `json:"spec"`
}

// within runs f, failing the test rather than hanging it if f does not
// return in a few seconds.
func within[T any](t *testing.T, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("did not return in 10s")
		panic("not reached")
	}
}

func TestOpenAPIRecursiveNonStructTypes(t *testing.T) {
	r := Resource{Group: "example.com", Version: "v1", Kind: "Rec", Plural: "recs", Type: reflect.TypeFor[testRecursiveKinds]()}
	doc := within(t, func() map[string]any { return mustOpenAPI(t, r.Group, r.Version, r) })
	schemas := at(t, doc, "components", "schemas")
	props := at(t, schemas, "com.example.v1.Rec", "properties")
	ref := func(name string) string { return `{"$ref":"#/components/schemas/com.example.v1.` + name + `"}` }
	for field, name := range map[string]string{"tree": "testTreeMap", "list": "testSelfList", "array": "testArrayTree", "a": "testMapA"} {
		wantJSON(t, field, at(t, props, field), `{"allOf":[`+ref(name)+`]}`)
	}
	wantJSON(t, "testTreeMap", at(t, schemas, "com.example.v1.testTreeMap"), `{"type":"object","additionalProperties":`+ref("testTreeMap")+`}`)
	wantJSON(t, "testSelfList", at(t, schemas, "com.example.v1.testSelfList"), `{"type":"array","items":`+ref("testSelfList")+`}`)
	wantJSON(t, "testArrayTree", at(t, schemas, "com.example.v1.testArrayTree"), `{"type":"array","items":`+ref("testArrayTree")+`}`)
	// Of two types that refer to each other, the one met first is the component.
	wantJSON(t, "testMapA", at(t, schemas, "com.example.v1.testMapA"), `{"type":"object","additionalProperties":{"type":"array","items":`+ref("testMapA")+`}}`)
	wantJSON(t, "b", at(t, props, "b"), `{"type":"array","items":`+ref("testMapA")+`}`)
	if has(schemas, "com.example.v1.testListB") {
		t.Errorf("testListB, not itself recursive, has a component")
	}
}

func TestOpenAPIPointerCycles(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[testPointerCycle](), reflect.TypeFor[testPointerCycle2]()} {
		t.Run(typ.Name(), func(t *testing.T) {
			r := Resource{Group: "example.com", Version: "v1", Kind: "P", Plural: "ps", Type: typ}
			err := within(t, func() error {
				_, err := GroupVersion(r.Group, r.Version, []Resource{r})
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "p: type") {
				t.Errorf("error %v, want one naming the field p", err)
			}
		})
	}
}

// Map keys: both ways a JSON object, as encoding/json encodes and decodes.
type (
	testTextKey      struct{ s string }
	testPtrTextKey   struct{ s string }
	testWriteOnlyKey struct{ s string }
)

func (k testTextKey) MarshalText() ([]byte, error)      { return []byte(k.s), nil }
func (k *testTextKey) UnmarshalText(b []byte) error     { k.s = string(b); return nil }
func (k *testPtrTextKey) MarshalText() ([]byte, error)  { return []byte(k.s), nil }
func (k *testPtrTextKey) UnmarshalText(b []byte) error  { k.s = string(b); return nil }
func (k testWriteOnlyKey) MarshalText() ([]byte, error) { return []byte(k.s), nil }

type testKeyed[K comparable] struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	ByKey           map[K]string `json:"byKey"`
}

func TestOpenAPIMapKeys(t *testing.T) {
	for _, tc := range []struct {
		typ reflect.Type
		ok  bool
	}{
		{reflect.TypeFor[testKeyed[testTextKey]](), true},
		{reflect.TypeFor[testKeyed[int8]](), true},
		{reflect.TypeFor[testKeyed[testPtrTextKey]](), false},   // encoding/json cannot encode it
		{reflect.TypeFor[testKeyed[testWriteOnlyKey]](), false}, // nor decode this one
		{reflect.TypeFor[testKeyed[float64]](), false},
	} {
		t.Run(tc.typ.Name(), func(t *testing.T) {
			r := Resource{Group: "example.com", Version: "v1", Kind: "K", Plural: "ks", Type: tc.typ}
			_, err := GroupVersion(r.Group, r.Version, []Resource{r})
			if (err == nil) != tc.ok {
				t.Errorf("error %v; want one: %v", err, !tc.ok)
			}
			// encoding/json agrees.
			v := reflect.New(tc.typ)
			v.Elem().FieldByName("ByKey").Set(reflect.MakeMap(tc.typ.Field(2).Type))
			v.Elem().FieldByName("ByKey").SetMapIndex(reflect.New(tc.typ.Field(2).Type.Key()).Elem(), reflect.ValueOf("x"))
			data, err := json.Marshal(v.Interface())
			if err == nil {
				err = json.Unmarshal(data, v.Interface())
			}
			if (err == nil) != tc.ok {
				t.Errorf("encoding/json round trip: %v", err)
			}
		})
	}
}
