package crd_test

import (
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/crd"
)

// A server that serves CustomResourceDefinitions, and the kinds they
// define once applied (kubectl apply --server-side -f crd.yaml).
func ExampleServe() {
	api, err := apiserver.New(apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents())
	if err != nil {
		panic(err)
	}
	if err := crd.Serve(api); err != nil {
		panic(err)
	}
	defer api.Close()
	// http.ListenAndServe(":8080", api)
	// Output:
}

// Validate words its refusals as kube-apiserver does.
func ExampleValidate() {
	var c crd.CustomResourceDefinition
	_ = json.Unmarshal([]byte(`{
	  "metadata": {"name": "widgets.example.com"},
	  "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
	    "versions": [{"name": "v1", "served": true, "storage": true,
	      "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"properties": {"color": {"type": "string"}}}}}}}]}}`), &c)
	crd.SetDefaults(&c)
	for _, err := range crd.Validate(&c, nil) {
		fmt.Println(err)
	}
	// Output:
	// spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields
}

// Definition is what serves the kind: names, versions, schemas.
func ExampleDefinition() {
	var c crd.CustomResourceDefinition
	_ = json.Unmarshal([]byte(`{
	  "metadata": {"name": "widgets.example.com"},
	  "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
	    "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
	      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}`), &c)
	crd.SetDefaults(&c)
	d, err := crd.Definition(&c)
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Group, d.Kind, d.Plural, d.ListKind, d.Namespaced, d.Versions[0].Name, d.Versions[0].Status)
	// Output:
	// example.com Widget widgets WidgetList true v1 true
}
