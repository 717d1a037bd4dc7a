package schemadiff_test

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/crd"
)

// The definitions' differential test: package crd's validation of a
// CustomResourceDefinition against apiextensions-apiserver's
// ValidateCustomResourceDefinition (and ...Update), on the real CRDs of
// crdModules and on mutations of them and of a small definition.

// kubeDefinitionErrors is apiextensions-apiserver's verdict on a
// definition created (old nil) or updated, old as stored (established).
func kubeDefinitionErrors(t testing.TB, doc, oldDoc []byte) []string {
	t.Helper()
	internal := func(doc []byte) *apiextensions.CustomResourceDefinition {
		var v1 apiextensionsv1.CustomResourceDefinition
		if err := json.Unmarshal(doc, &v1); err != nil {
			t.Fatalf("kube cannot read the definition: %v", err)
		}
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&v1)
		var out apiextensions.CustomResourceDefinition
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, &out, nil); err != nil {
			t.Fatalf("kube cannot convert the definition: %v", err)
		}
		// As the registry's strategy does before validating a write.
		for _, v := range out.Spec.Versions {
			if v.Storage {
				if !slices.Contains(out.Status.StoredVersions, v.Name) {
					out.Status.StoredVersions = append(out.Status.StoredVersions, v.Name)
				}
				break
			}
		}
		return &out
	}
	var errs field.ErrorList
	if oldDoc == nil {
		errs = crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal(doc))
	} else {
		errs = crdvalidation.ValidateCustomResourceDefinitionUpdate(context.Background(), internal(doc), internal(oldDoc))
	}
	var out []string
	for _, e := range errs {
		if strings.HasPrefix(e.Field, "metadata.") && e.Field != "metadata.name" && !strings.HasPrefix(e.Field, "metadata.annotations[api-approved") {
			continue // the request path's, not the definition's
		}
		if strings.Contains(e.Detail, "compilation failed") || strings.Contains(e.Detail, "estimated rule cost") {
			continue // CEL: the validation/cel module's
		}
		if v := reflect.ValueOf(e.BadValue); v.Kind() == reflect.Pointer && !v.IsNil() {
			e.BadValue = v.Elem().Interface() // printed so too
		}
		if v := reflect.ValueOf(e.BadValue); v.Kind() == reflect.String {
			e.BadValue = v.String() // a named string type
		}
		out = append(out, definitionText(string(e.Type), e.Field, e.BadValue, e.Detail, e.Error()))
	}
	slices.Sort(out)
	return out
}

func ourDefinitionErrors(t testing.TB, doc, oldDoc []byte) []string {
	t.Helper()
	read := func(doc []byte) *crd.CustomResourceDefinition {
		var c crd.CustomResourceDefinition
		if err := json.Unmarshal(doc, &c); err != nil {
			t.Fatalf("kapi cannot read the definition: %v", err)
		}
		crd.SetDefaults(&c)
		return &c
	}
	var old *crd.CustomResourceDefinition
	if oldDoc != nil {
		old = read(oldDoc)
	}
	var out []string
	for _, e := range crd.Validate(read(doc), old) {
		out = append(out, definitionText(string(e.Type), e.Field, e.BadValue, e.Detail, e.Error()))
	}
	slices.Sort(out)
	return out
}

// definitionText is an error as compared: whole where its value is a
// scalar, else without the value (kube prints its internal Go structs
// there).
func definitionText(typ, path string, value any, detail, whole string) string {
	switch value.(type) {
	case string, bool, int, int32, int64, float64:
		return typ + " | " + whole
	case nil:
		if typ == "FieldValueRequired" || typ == "FieldValueForbidden" {
			return typ + " | " + whole
		}
	}
	return typ + " | " + path + " | " + detail
}

// compareDefinition compares the verdicts and returns kube's.
func compareDefinition(t *testing.T, doc, oldDoc []byte) []string {
	t.Helper()
	kube, ours := kubeDefinitionErrors(t, doc, oldDoc), ourDefinitionErrors(t, doc, oldDoc)
	if !slices.Equal(kube, ours) {
		t.Errorf("kube and kapi differ\nkube only:\n  %s\nkapi only:\n  %s", strings.Join(missing(kube, ours), "\n  "), strings.Join(missing(ours, kube), "\n  "))
	}
	return kube
}

// baseDefinition is a small valid definition the mutations start from.
const baseDefinition = `{
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {
    "group": "example.com", "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
    "versions": [{
      "name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"color": {"type": "string"}, "size": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}, "labels": {"type": "object", "additionalProperties": {"type": "string"}}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}}}}}},
      "subresources": {"status": {}},
      "additionalPrinterColumns": [{"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
      "selectableFields": [{"jsonPath": ".spec.color"}]
    }]
  }
}`

// mutations change a definition (decoded JSON) into one kube-apiserver
// may refuse.
var mutations = map[string]func(c map[string]any){
	"name":              func(c map[string]any) { set(c, "other.example.com", "metadata", "name") },
	"group no dot":      func(c map[string]any) { set(c, "example", "spec", "group") },
	"group invalid":     func(c map[string]any) { set(c, "Example.com", "spec", "group") },
	"group empty":       func(c map[string]any) { set(c, "", "spec", "group") },
	"scope empty":       func(c map[string]any) { set(c, "", "spec", "scope") },
	"scope unknown":     func(c map[string]any) { set(c, "Global", "spec", "scope") },
	"plural invalid":    func(c map[string]any) { set(c, "Widgets", "spec", "names", "plural") },
	"plural empty":      func(c map[string]any) { set(c, "", "spec", "names", "plural") },
	"singular invalid":  func(c map[string]any) { set(c, "a_b", "spec", "names", "singular") },
	"kind invalid":      func(c map[string]any) { set(c, "Wid_get", "spec", "names", "kind") },
	"kind empty":        func(c map[string]any) { set(c, "", "spec", "names", "kind") },
	"listKind same":     func(c map[string]any) { set(c, get(c, "spec", "names", "kind"), "spec", "names", "listKind") },
	"listKind invalid":  func(c map[string]any) { set(c, "9List", "spec", "names", "listKind") },
	"shortName invalid": func(c map[string]any) { set(c, []any{"ok", "No!"}, "spec", "names", "shortNames") },
	"category invalid":  func(c map[string]any) { set(c, []any{"all", "-x"}, "spec", "names", "categories") },
	"accepted invalid": func(c map[string]any) {
		set(c, map[string]any{"plural": "A", "kind": "k k"}, "status", "acceptedNames")
	},
	"version invalid":    func(c map[string]any) { set(c, "V1", "spec", "versions", 0, "name") },
	"no versions":        func(c map[string]any) { set(c, []any{}, "spec", "versions") },
	"no storage":         func(c map[string]any) { set(c, false, "spec", "versions", 0, "storage") },
	"two versions":       func(c map[string]any) { addVersion(c, "v2", false) },
	"two storages":       func(c map[string]any) { addVersion(c, "v2", true) },
	"duplicate versions": func(c map[string]any) { addVersion(c, get(c, "spec", "versions", 0, "name").(string), false) },
	"schema missing":     func(c map[string]any) { del(c, "spec", "versions", 0, "schema") },
	"schema missing in one": func(c map[string]any) {
		addVersion(c, "v2", false)
		del(c, "spec", "versions", 1, "schema")
	},
	"schema differs with errors": func(c map[string]any) {
		addVersion(c, "v2", false)
		set(c, map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{"spec": map[string]any{}}}}, "spec", "versions", 1, "schema")
	},
	"schema error shared": func(c map[string]any) {
		set(c, map[string]any{"type": "object", "properties": map[string]any{"spec": map[string]any{"properties": map[string]any{"x": map[string]any{"type": "string"}}}}}, "spec", "versions", 0, "schema", "openAPIV3Schema")
	},
	"status root type": func(c map[string]any) { set(c, "array", "spec", "versions", 0, "schema", "openAPIV3Schema", "type") },
	"status root anyOf": func(c map[string]any) {
		set(c, []any{map[string]any{"required": []any{"spec"}}}, "spec", "versions", 0, "schema", "openAPIV3Schema", "anyOf")
	},
	"status root nullable": func(c map[string]any) { set(c, true, "spec", "versions", 0, "schema", "openAPIV3Schema", "nullable") },
	"status root fine": func(c map[string]any) {
		set(c, "a widget", "spec", "versions", 0, "schema", "openAPIV3Schema", "description")
	},
	"scale": func(c map[string]any) {
		set(c, map[string]any{"specReplicasPath": "spec.size", "statusReplicasPath": ".spec.size", "labelSelectorPath": ".x"}, "spec", "versions", 0, "subresources", "scale")
	},
	"scale empty": func(c map[string]any) { set(c, map[string]any{}, "spec", "versions", 0, "subresources", "scale") },
	"scale fine": func(c map[string]any) {
		set(c, map[string]any{"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}, "spec", "versions", 0, "subresources", "scale")
	},
	"columns": func(c map[string]any) {
		set(c, []any{map[string]any{}, map[string]any{"name": "x", "type": "float", "format": "uuid", "jsonPath": "spec.x"}, map[string]any{"name": "y", "type": "date", "format": "date-time", "jsonPath": ".metadata.creationTimestamp", "priority": 1}}, "spec", "versions", 0, "additionalPrinterColumns")
	},
	"selectable": func(c map[string]any) {
		set(c, []any{map[string]any{}, map[string]any{"jsonPath": ".spec.nope"}, map[string]any{"jsonPath": ".spec.tags[0]"}, map[string]any{"jsonPath": ".spec"},
			map[string]any{"jsonPath": ".spec.color"}, map[string]any{"jsonPath": ".spec.color"}, map[string]any{"jsonPath": "spec.color"}, map[string]any{"jsonPath": ".spec."},
			map[string]any{"jsonPath": ".spec.labels.a"}, map[string]any{"jsonPath": ".metadata.name"}}, "spec", "versions", 0, "selectableFields")
	},
	"selectable too many": func(c map[string]any) {
		var l []any
		for _, p := range []string{".spec.color", ".spec.size", ".spec.labels.a", ".spec.labels.b", ".spec.labels.c", ".spec.labels.d", ".spec.labels.e", ".spec.labels.f", ".spec.labels.g"} {
			l = append(l, map[string]any{"jsonPath": p})
		}
		set(c, l, "spec", "versions", 0, "selectableFields")
	},
	"selectable without schema": func(c map[string]any) {
		del(c, "spec", "versions", 0, "schema")
		set(c, []any{map[string]any{"jsonPath": ".spec.color"}}, "spec", "versions", 0, "selectableFields")
	},
	"webhook without config": func(c map[string]any) { set(c, map[string]any{"strategy": "Webhook"}, "spec", "conversion") },
	"webhook url": func(c map[string]any) {
		set(c, map[string]any{"strategy": "Webhook", "webhook": map[string]any{"clientConfig": map[string]any{"url": "http://u:p@/x?y#z"}, "conversionReviewVersions": []any{"v9", "v9", "X"}}}, "spec", "conversion")
	},
	"webhook service": func(c map[string]any) {
		set(c, map[string]any{"strategy": "Webhook", "webhook": map[string]any{"clientConfig": map[string]any{"service": map[string]any{"name": "", "namespace": "ns", "path": "x//Y/", "port": 0}}, "conversionReviewVersions": []any{"v1"}}}, "spec", "conversion")
	},
	"webhook both": func(c map[string]any) {
		set(c, map[string]any{"strategy": "Webhook", "webhook": map[string]any{"clientConfig": map[string]any{"url": "https://x", "service": map[string]any{"name": "a", "namespace": "b"}}}}, "spec", "conversion")
	},
	"none with webhook": func(c map[string]any) {
		set(c, map[string]any{"strategy": "None", "webhook": map[string]any{"clientConfig": map[string]any{"url": "https://x"}, "conversionReviewVersions": []any{"v1"}}}, "spec", "conversion")
	},
	"strategy unknown":      func(c map[string]any) { set(c, map[string]any{"strategy": "Magic"}, "spec", "conversion") },
	"strategy empty":        func(c map[string]any) { set(c, map[string]any{"strategy": ""}, "spec", "conversion") },
	"preserveUnknownFields": func(c map[string]any) { set(c, true, "spec", "preserveUnknownFields") },
	"preserve with webhook": func(c map[string]any) {
		set(c, true, "spec", "preserveUnknownFields")
		set(c, map[string]any{"strategy": "Webhook", "webhook": map[string]any{"clientConfig": map[string]any{"url": "https://x"}, "conversionReviewVersions": []any{"v1"}}}, "spec", "conversion")
	},
	"preserve with defaults": func(c map[string]any) {
		set(c, true, "spec", "preserveUnknownFields")
		set(c, "red", "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "color", "default")
	},
	"deprecationWarning undeprecated": func(c map[string]any) { set(c, "old", "spec", "versions", 0, "deprecationWarning") },
	"deprecationWarning empty": func(c map[string]any) {
		set(c, true, "spec", "versions", 0, "deprecated")
		set(c, "", "spec", "versions", 0, "deprecationWarning")
	},
	"deprecationWarning long": func(c map[string]any) {
		set(c, true, "spec", "versions", 0, "deprecated")
		set(c, strings.Repeat("é", 200)+"\x01", "spec", "versions", 0, "deprecationWarning")
	},
	"protected group": func(c map[string]any) {
		set(c, "widgets.x.k8s.io", "metadata", "name")
		set(c, "x.k8s.io", "spec", "group")
	},
	"protected group invalid": func(c map[string]any) {
		set(c, "widgets.x.k8s.io", "metadata", "name")
		set(c, "x.k8s.io", "spec", "group")
		set(c, map[string]any{"api-approved.kubernetes.io": "yes"}, "metadata", "annotations")
	},
	"protected group approved": func(c map[string]any) {
		set(c, "widgets.kubernetes.io", "metadata", "name")
		set(c, "kubernetes.io", "spec", "group")
		set(c, map[string]any{"api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/pull/1111"}, "metadata", "annotations")
	},
	"stored versions": func(c map[string]any) {
		set(c, map[string]any{"storedVersions": []any{"v0", "v1", "v0"}}, "status")
	},
}

// updates change a stored (established) definition into an update.
var updates = map[string]func(c map[string]any){
	"scope":       func(c map[string]any) { set(c, "Cluster", "spec", "scope") },
	"kind":        func(c map[string]any) { set(c, "Gadget", "spec", "names", "kind") },
	"plural":      func(c map[string]any) { set(c, "gadgets", "spec", "names", "plural") },
	"group":       func(c map[string]any) { set(c, "example.org", "spec", "group") },
	"new version": func(c map[string]any) { addVersion(c, "v2", false) },
	"storage moves": func(c map[string]any) {
		addVersion(c, "v2", true)
		set(c, false, "spec", "versions", 0, "storage")
	},
	"stored version dropped": func(c map[string]any) {
		addVersion(c, "v2", true)
		set(c, map[string]any{"storedVersions": []any{"v1", "v2"}}, "status")
		del(c, "spec", "versions", 0)
	},
}

func TestDefinitionMutations(t *testing.T) {
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			compareDefinition(t, mutated(t, []byte(baseDefinition), mutate), nil)
		})
	}
	compareDefinition(t, []byte(baseDefinition), nil)
}

func TestDefinitionUpdates(t *testing.T) {
	established := mutated(t, []byte(baseDefinition), func(c map[string]any) {
		set(c, map[string]any{"storedVersions": []any{"v1"}, "conditions": []any{map[string]any{"type": "Established", "status": "True"}}}, "status")
	})
	for name, mutate := range updates {
		t.Run(name, func(t *testing.T) {
			compareDefinition(t, mutated(t, established, mutate), established)
		})
	}
}

// TestRealDefinitions compares the verdicts on real projects' definitions,
// and on each with a share of the mutations (every mutation meets several
// definitions; all of them on each would take minutes, kube's CEL
// compilation of every rule being most of it).
func TestRealDefinitions(t *testing.T) {
	names := slices.Sorted(maps.Keys(mutations))
	names = slices.DeleteFunc(names, func(name string) bool {
		// Written for baseDefinition's schema.
		return strings.HasPrefix(name, "selectable") || strings.HasPrefix(name, "status root") || strings.HasPrefix(name, "scale") || name == "schema error shared" || name == "preserve with defaults"
	})
	k := 0
	for _, m := range crdModules {
		dir := filepath.Join(moduleDir(t, m.module), m.dir)
		for _, d := range crdDocs(t, dir) {
			doc, share := d.json, k
			k++
			t.Run(strings.Split(m.module, "@")[0]+"/"+d.file, func(t *testing.T) {
				kube := compareDefinition(t, doc, nil)
				if refused := slices.Contains(m.refused, d.file); refused != (len(kube) > 0) {
					t.Fatalf("kube's verdict on a real definition: %v, want it refused: %v", kube, refused)
				}
				for i, name := range names {
					if testing.Short() || i%6 != share%6 {
						continue
					}
					t.Run(name, func(t *testing.T) { compareDefinition(t, mutated(t, doc, mutations[name]), nil) })
				}
			})
		}
	}
}

func mutated(t testing.TB, doc []byte, mutate func(map[string]any)) []byte {
	t.Helper()
	var c map[string]any
	if err := json.Unmarshal(doc, &c); err != nil {
		t.Fatal(err)
	}
	mutate(c)
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// walk follows a path of keys and indexes, making objects on the way.
func walk(c any, path []any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m := c.(map[string]any)
			if m[k] == nil {
				m[k] = map[string]any{}
			}
			c = m[k]
		case int:
			c = c.([]any)[k]
		}
	}
	return c
}

func set(c map[string]any, v any, path ...any) {
	parent := walk(c, path[:len(path)-1])
	switch k := path[len(path)-1].(type) {
	case string:
		parent.(map[string]any)[k] = v
	case int:
		parent.([]any)[k] = v
	}
}

func get(c map[string]any, path ...any) any { return walk(c, path) }

func del(c map[string]any, path ...any) {
	parent := walk(c, path[:len(path)-1])
	switch k := path[len(path)-1].(type) {
	case string:
		delete(parent.(map[string]any), k)
	case int:
		l := parent.([]any)
		set(c, append(l[:k:k], l[k+1:]...), path[:len(path)-1]...)
	}
}

// addVersion adds a copy of the first version under another name.
func addVersion(c map[string]any, name string, storage bool) {
	versions := get(c, "spec", "versions").([]any)
	var v map[string]any
	b, _ := json.Marshal(versions[0])
	_ = json.Unmarshal(b, &v)
	v["name"], v["storage"] = name, storage
	set(c, append(versions, v), "spec", "versions")
}
