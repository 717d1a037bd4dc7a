package delegation_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/delegation"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// TestNamespaceLifecycle creates widgets in the cluster's namespaces: an
// active one admits them (and is remembered), a missing one is 404, a
// terminating one 403, as kube-apiserver answers.
func TestNamespaceLifecycle(t *testing.T) {
	var lookups atomic.Int32
	cluster := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lookups.Add(1)
		name := strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/")
		phase := map[string]string{"team-a": "Active", "leaving": "Terminating"}[name]
		if phase == "" || r.Header.Get("Authorization") != "Bearer server-token" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","code":404}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Namespace", "metadata": map[string]any{"name": name}, "status": map[string]any{"phase": phase}})
	}))
	t.Cleanup(cluster.Close)
	lifecycle, err := delegation.NamespaceLifecycle(delegation.Cluster{Host: cluster.URL, Client: cluster.Client(), BearerToken: "server-token"})
	if err != nil {
		t.Fatal(err)
	}
	api, err := apiserver.New(apiserver.WithValidatingAdmission(lifecycle))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	if err := widgetapi.Register(api); err != nil {
		t.Fatal(err)
	}
	create := func(ns, name string) (int, kapi.Status) {
		req := httptest.NewRequest(http.MethodPost, "/apis/example.com/v1/namespaces/"+ns+"/widgets",
			strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"`+name+`"},"spec":{"color":"Red"}}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var st kapi.Status
		_ = json.Unmarshal(rec.Body.Bytes(), &st)
		return rec.Code, st
	}
	if code, _ := create("team-a", "a"); code != http.StatusCreated {
		t.Errorf("in an active namespace: HTTP %d", code)
	}
	if code, _ := create("team-a", "b"); code != http.StatusCreated || lookups.Load() != 1 {
		t.Errorf("again: HTTP %d after %d lookups, want 1 (remembered)", code, lookups.Load())
	}
	code, st := create("gone", "a")
	if code != http.StatusNotFound || st.Message != `namespaces "gone" not found` || st.Reason != kapi.StatusReasonNotFound {
		t.Errorf("in a missing namespace: HTTP %d %+v", code, st)
	}
	code, st = create("leaving", "a")
	if code != http.StatusForbidden || st.Message != `widgets.example.com "a" is forbidden: unable to create new content in namespace leaving because it is being terminated` ||
		st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != "NamespaceTerminating" {
		t.Errorf("in a terminating namespace: HTTP %d %+v", code, st)
	}
}
