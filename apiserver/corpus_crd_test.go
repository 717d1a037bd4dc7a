package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/crd"
)

// The CustomResourceDefinitions the corpus server serves (package crd),
// and the bad input for them.

const corpusCRDs = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// corpusRegister registers what the corpus server serves.
func corpusRegister(s *apiserver.Server) error {
	if err := withActions(s); err != nil {
		return err
	}
	return crd.Serve(s)
}

func crdDoc(plural string) doc {
	return doc{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": doc{"name": plural + ".corpus.example.com"},
		"spec": doc{"group": "corpus.example.com", "scope": "Namespaced",
			"names": doc{"plural": plural, "kind": "Gizmo"},
			"versions": []any{doc{"name": "v1", "served": true, "storage": true,
				"schema": doc{"openAPIV3Schema": doc{"type": "object", "properties": doc{"spec": doc{"type": "object", "properties": doc{"size": doc{"type": "integer"}}}}}}}}}}
}

// corpusSeedCRDs creates a definition and waits until it is established,
// so that its controller writes nothing while the corpus runs.
func corpusSeedCRDs(c *apiClient) {
	c.do(http.MethodPost, corpusCRDs, crdDoc("gizmos")).mustCode(c.t, http.StatusCreated)
	for deadline := time.Now().Add(time.Minute); ; {
		r := c.do(http.MethodGet, corpusCRDs+"/gizmos.corpus.example.com", nil).mustCode(c.t, http.StatusOK)
		if strings.Contains(string(r.Body), `"reason":"InitialNamesAccepted"`) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the corpus's definition is not established: %s", r.Body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// crdCorpus is the bad input for definitions: bodies of the wrong shape in
// every text format, and definitions kube-apiserver refuses.
func crdCorpus() []corpusCase {
	var cases []corpusCase
	add := func(name, method, path string, body []byte, code int, header ...string) {
		cases = append(cases, corpusCase{name: "crd/" + name, method: method, path: path, body: body, code: code, header: header})
	}
	item := corpusCRDs + "/gizmos.corpus.example.com"
	for _, f := range textFormats {
		for _, m := range []struct {
			name string
			v    any
			path []any
		}{
			{"spec string", "x", []any{"spec"}},
			{"versions map", doc{}, []any{"spec", "versions"}},
			{"served string", "yes", []any{"spec", "versions", 0, "served"}},
			{"names list", []any{}, []any{"spec", "names"}},
			{"shortNames string", "g", []any{"spec", "names", "shortNames"}},
			{"priority string", []any{doc{"name": "a", "type": "string", "jsonPath": ".a", "priority": "1"}}, []any{"spec", "versions", 0, "additionalPrinterColumns"}},
		} {
			add(fmt.Sprintf("type/%s/%s", f.name, m.name), http.MethodPost, corpusCRDs, f.encode(with(crdDoc("new"), m.v, m.path...)), 400, "Content-Type", f.contentType)
		}
	}
	for _, c := range []struct {
		name string
		v    any
		path []any
	}{
		{"schema string", "x", []any{"spec", "versions", 0, "schema", "openAPIV3Schema"}},
		{"schema unknown keyword", doc{"type": "object", "bogus": 1}, []any{"spec", "versions", 0, "schema", "openAPIV3Schema"}},
		{"schema type number", doc{"type": 1}, []any{"spec", "versions", 0, "schema", "openAPIV3Schema"}},
		{"schema not structural", doc{"type": "object", "properties": doc{"spec": doc{}}}, []any{"spec", "versions", 0, "schema", "openAPIV3Schema"}},
		{"schema bad pattern", doc{"type": "object", "properties": doc{"a": doc{"type": "string", "pattern": "("}}}, []any{"spec", "versions", 0, "schema", "openAPIV3Schema"}},
		{"name", "other.corpus.example.com", []any{"metadata", "name"}},
		{"no versions", []any{}, []any{"spec", "versions"}},
		{"webhook conversion", doc{"strategy": "Webhook", "webhook": doc{"clientConfig": doc{"url": "https://x"}, "conversionReviewVersions": []any{"v1"}}}, []any{"spec", "conversion"}},
		{"selectable field of a list", []any{doc{"jsonPath": ".spec[0]"}}, []any{"spec", "versions", 0, "selectableFields"}},
		{"column type", []any{doc{"name": "a", "type": "list", "jsonPath": ".a"}}, []any{"spec", "versions", 0, "additionalPrinterColumns"}},
	} {
		add("invalid/"+c.name, http.MethodPost, corpusCRDs, encJSON(with(crdDoc("new"), c.v, c.path...)), 422, "Content-Type", mtJSON)
	}
	changed := func(v any, path ...any) []byte { return encJSON(with(crdDoc("gizmos"), v, path...)) }
	add("update/group", http.MethodPut, item, changed("other.example.com", "spec", "group"), 422, "Content-Type", mtJSON)
	add("update/scope", http.MethodPut, item, changed("Cluster", "spec", "scope"), 422, "Content-Type", mtJSON)
	add("update/kind", http.MethodPut, item, changed("Other", "spec", "names", "kind"), 422, "Content-Type", mtJSON)
	add("status/accepted names", http.MethodPut, item+"/status", changed(doc{"acceptedNames": doc{"plural": "NO", "kind": "Gizmo"}}, "status"), 422, "Content-Type", mtJSON)
	add("unknown subresource", http.MethodGet, item+"/scale", nil, 404)
	add("namespaced", http.MethodGet, "/apis/apiextensions.k8s.io/v1/namespaces/default/customresourcedefinitions", nil, 404)
	return cases
}
