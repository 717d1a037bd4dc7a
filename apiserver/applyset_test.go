package apiserver_test

import (
	"net/http"
	"testing"

	"github.com/kapi-dev/kapi/apiserver/apiservertest"
)

// TestApplySetParentTypes: kubectl's question for ApplySet parent types is
// answered with a CRD of each kind registered as one (the example's
// Widget), whatever version registered it.
func TestApplySetParentTypes(t *testing.T) {
	_, c := newTestServer(t)
	var list struct {
		Kind  string
		Items []struct{ Metadata struct{ Name string } }
	}
	c.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions?labelSelector=applyset.kubernetes.io%2Fis-parent-type").mustCode(t, http.StatusOK).into(t, &list)
	if list.Kind != "CustomResourceDefinitionList" || len(list.Items) != 1 || list.Items[0].Metadata.Name != "widgets.example.com" {
		t.Errorf("parent types %+v, want widgets.example.com", list)
	}
	// A server without parent types does not answer.
	plain := apiservertest.New(t, nil)
	resp, err := plain.Client().Get(plain.URL + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("without parent types: %d, want 404", resp.StatusCode)
	}
}
