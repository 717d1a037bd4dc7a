package apiserver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// A kind of several versions, stored in the one the controllers do not
// write in: the collector deletes a dependent named by another version
// than its owner's, and the namespace deleter deletes what is left.
func TestCollectorAndNamespaceDeleterAcrossVersions(t *testing.T) {
	srv := apiservertest.New(t, func(s *apiserver.Server) error { return widgetapi.RegisterStoringIn(s, "v1beta1") }, apiserver.WithNamespaces())
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	c.do(http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "ns"}}).mustCode(t, http.StatusCreated)
	const v1, v1beta1 = "/apis/example.com/v1/namespaces/ns/widgets", "/apis/example.com/v1beta1/namespaces/ns/widgets"
	var owner struct{ Metadata kapi.ObjectMeta }
	c.do(http.MethodPost, v1, map[string]any{"metadata": map[string]any{"name": "owner"}, "spec": map[string]any{"color": "Red", "ports": []any{map[string]any{"name": "a", "port": 1}, map[string]any{"name": "b", "port": 2}}}}).mustCode(t, http.StatusCreated).into(t, &owner)
	c.do(http.MethodPost, v1beta1, map[string]any{"metadata": map[string]any{"name": "child", "finalizers": []string{"example.com/keep"},
		"ownerReferences": []any{map[string]any{"apiVersion": "example.com/v1beta1", "kind": "Widget", "name": "owner", "uid": owner.Metadata.UID}}}, "spec": map[string]any{"color": "Blue"}}).mustCode(t, http.StatusCreated)
	c.do(http.MethodPost, v1beta1, map[string]any{"metadata": map[string]any{"name": "other"}, "spec": map[string]any{"color": "Blue", "port": 80}}).mustCode(t, http.StatusCreated)
	c.do(http.MethodDelete, v1+"/owner?propagationPolicy=Foreground", nil).mustCode(t, http.StatusOK)
	wait := func(what string, gone func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !gone(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
	}
	// The child is marked (its finalizer holds it), the owner waits for it.
	wait("the child is not marked for deletion", func() bool {
		var w struct{ Metadata kapi.ObjectMeta }
		c.get(v1+"/child").mustCode(t, http.StatusOK).into(t, &w)
		return w.Metadata.DeletionTimestamp != nil
	})
	c.do(http.MethodPatch, v1+"/child", []byte(`{"metadata":{"finalizers":null}}`), "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	wait("the owner is still there", func() bool { return c.get(v1+"/owner").Code == http.StatusNotFound })
	c.do(http.MethodDelete, "/api/v1/namespaces/ns", nil).mustCode(t, http.StatusOK)
	wait("the namespace is still there", func() bool { return c.get("/api/v1/namespaces/ns").Code == http.StatusNotFound })
	for _, name := range []string{"child", "other"} {
		if code := c.get(v1beta1 + "/" + name).Code; code != http.StatusNotFound {
			t.Errorf("%s: %d", name, code)
		}
	}
}
