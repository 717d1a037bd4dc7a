package discovery_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/discovery"
)

// TestDocuments checks the shapes clients read: the legacy group list with
// its preferred version, a group version's resources with subresources,
// and the aggregated form asked for by Accept.
func TestDocuments(t *testing.T) {
	d := discovery.New([]discovery.GroupVersion{
		{Version: "v1", Resources: []discovery.Resource{{Kind: "Namespace", Plural: "namespaces", Singular: "namespace", Verbs: []string{"get"}}}},
		{Group: "example.com", Version: "v1", Resources: []discovery.Resource{{Kind: "Widget", Plural: "widgets", Singular: "widget", Namespaced: true, Verbs: []string{"get"},
			Subresources: []discovery.Subresource{{Name: "status", Verbs: []string{"get"}}, {Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get"}}}}}},
		{Group: "example.com", Version: "v1beta1"},
	})
	js := func(v any) string { data, _ := json.Marshal(v); return string(data) }
	if got := js(d.Groups); !strings.Contains(got, `"versions":[{"groupVersion":"example.com/v1","version":"v1"},{"groupVersion":"example.com/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"example.com/v1","version":"v1"}`) {
		t.Errorf("groups: %s", got)
	}
	if got := js(d.Resources[[2]string{"example.com", "v1"}]); !strings.Contains(got, `{"name":"widgets/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get"]}`) {
		t.Errorf("resources: %s", got)
	}
	if d.Group["example.com"] == nil || d.Group["nowhere"] != nil || js(d.CoreVersions) != `["v1"]` {
		t.Errorf("group %v, core versions %v", d.Group, d.CoreVersions)
	}
	r := httptest.NewRequest("GET", "/apis", nil)
	r.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
	w := httptest.NewRecorder()
	if !d.ServeAggregated(w, r, false) || !strings.Contains(w.Body.String(), `"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"}`) ||
		strings.Contains(w.Body.String(), "namespaces") {
		t.Errorf("aggregated /apis: %s", w.Body)
	}
	if d.ServeAggregated(httptest.NewRecorder(), httptest.NewRequest("GET", "/api", nil), true) {
		t.Error("served the aggregated form to a request without its Accept")
	}
}
