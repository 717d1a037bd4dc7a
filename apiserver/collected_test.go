package apiserver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/storage/memory"
)

// The watch cache keeps the decoded objects of its recent items only
// (watch.Item): every read and write must answer the same for an object
// decoded again from its stored value as for the one a write handed the
// cache, in every format and view, with selectors (which read the cache's
// summaries, not the objects) and in the other version.
func TestReadsOfDecodedAgain(t *testing.T) {
	age := regexp.MustCompile(`"[0-9]+[smhdy]"\],"object"`)
	var doOn func(srv http.Handler, method, path, accept, body string, want int) string
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv := newWidgetHandler(t, apiserver.WithStorage(store))
	do := func(method, path, accept, body string, want int) string {
		t.Helper()
		return doOn(srv, method, path, accept, body, want)
	}
	doOn = func(srv http.Handler, method, path, accept, body string, want int) string {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, path, r)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			if method == "PATCH" {
				req.Header.Set("Content-Type", "application/merge-patch+json")
			}
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Fatalf("%s %s (%s): %d, want %d: %s", method, path, accept, rec.Code, want, rec.Body)
		}
		// A Table's age cell moves with the clock.
		return age.ReplaceAllString(rec.Body.String(), `"AGE"],"object"`)
	}
	const v1 = "/apis/example.com/v1"
	for _, w := range []struct{ ns, name, app, color string }{
		{"default", "a", "x", "Red"}, {"default", "b", "y", "Blue"}, {"other", "c", "x", "Blue"},
	} {
		do("POST", v1+"/namespaces/"+w.ns+"/widgets", "", fmt.Sprintf(
			`{"metadata":{"name":%q,"labels":{"app":%q}},"spec":{"color":%q,"size":1,"ports":[{"name":"default","port":80}]}}`,
			w.name, w.app, w.color), http.StatusCreated)
	}
	// Enough other widgets that a, b and c leave the recent items: the
	// reads below decode them again.
	for i := range 1100 {
		do("POST", v1+"/namespaces/filler/widgets", "", fmt.Sprintf(`{"metadata":{"name":"f%d","labels":{"app":"filler"}},"spec":{"color":"Green"}}`, i), http.StatusCreated)
	}
	table := "application/json;as=Table;v=v1;g=meta.k8s.io"
	meta := "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
	reads := []struct{ path, accept string }{
		{v1 + "/namespaces/default/widgets/a", ""},
		{v1 + "/namespaces/default/widgets/a", "application/yaml"},
		{v1 + "/namespaces/default/widgets/a", "application/vnd.kubernetes.protobuf"},
		{v1 + "/namespaces/default/widgets/a", "application/cbor"},
		{v1 + "/namespaces/default/widgets/a", table},
		{v1 + "/namespaces/default/widgets/a", meta},
		{"/apis/example.com/v1beta1/namespaces/default/widgets/a", ""},
		{v1 + "/widgets", ""},
		{v1 + "/widgets", table},
		{v1 + "/widgets?labelSelector=app%3Dx", ""},
		{v1 + "/widgets?labelSelector=app%20in%20(y)", ""},
		{v1 + "/widgets?labelSelector=!app", ""},
		{v1 + "/widgets?fieldSelector=spec.color%3DBlue", ""},
		{v1 + "/widgets?fieldSelector=metadata.name%3Db", ""},
		{v1 + "/widgets?fieldSelector=metadata.namespace%3Dother", ""},
		{v1 + "/widgets?fieldSelector=metadata.namespace!%3Dother,spec.color%3DBlue&labelSelector=app", ""},
		{v1 + "/namespaces/default/widgets?fieldSelector=metadata.name!%3Da", "application/vnd.kubernetes.protobuf"},
		{"/apis/example.com/v1beta1/widgets?fieldSelector=spec.color%3DBlue", ""},
	}
	before := make([]string, len(reads))
	for i, r := range reads {
		before[i] = do("GET", r.path, r.accept, "", http.StatusOK)
	}
	// What the selectors should select, not only what they selected before.
	for i, want := range map[int][]string{9: {`"a"`, `"c"`}, 10: {`"b"`}, 12: {`"b"`, `"c"`}, 13: {`"b"`}, 14: {`"c"`}, 15: {`"b"`}, 17: {`"b"`, `"c"`}} {
		if got := strings.Count(before[i], `"namespace":`); got != len(want) {
			t.Errorf("%s: %d objects, want %v: %s", reads[i].path, got, want, before[i])
		}
		for _, name := range want {
			if !strings.Contains(before[i], `"name":`+name) {
				t.Errorf("%s: %s not selected: %s", reads[i].path, name, before[i])
			}
		}
	}
	for i, r := range reads {
		if got := do("GET", r.path, r.accept, "", http.StatusOK); got != before[i] {
			t.Errorf("GET %s (%s) again:\n%s\nbefore:\n%s", r.path, r.accept, got, before[i])
		}
	}
	// A write to an object decoded again starts from it; what the cache
	// then holds reads, in every format, as a server that starts on the
	// same store, and decodes every value, reads it.
	one := reads[:7]
	for _, w := range []struct{ method, path, contentType, body string }{
		{"PATCH", v1 + "/namespaces/default/widgets/a", "application/merge-patch+json", `{"metadata":{"labels":{"tier":"web"}},"spec":{"color":"Green"}}`},
		{"PATCH", v1 + "/namespaces/default/widgets/a?fieldManager=m&force=true", "application/apply-patch+yaml", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"size":3}}`},
		{"PATCH", v1 + "/namespaces/default/widgets/a/status", "application/merge-patch+json", `{"status":{"observedGeneration":1}}`},
		{"PATCH", "/apis/example.com/v1beta1/namespaces/default/widgets/a", "application/strategic-merge-patch+json", `{"spec":{"port":8080}}`},
		{"PUT", v1 + "/namespaces/default/widgets/a", "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","labels":{"app":"x"}},"spec":{"color":"Green","size":2,"ports":[{"name":"default","port":81}]}}`},
		{"POST", v1 + "/namespaces/default/widgets", "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"d","labels":{"app":"x"}},"spec":{"color":"Green","size":2,"ports":[{"name":"default","port":81}]}}`},
	} {
		req := httptest.NewRequest(w.method, w.path, strings.NewReader(w.body))
		req.Header.Set("Content-Type", w.contentType)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d: %s", w.method, w.path, rec.Code, rec.Body)
		}
		other := newWidgetHandler(t, apiserver.WithStorage(store))
		for _, r := range one {
			path := strings.Replace(r.path, "/widgets/a", "/widgets/"+map[bool]string{true: "d", false: "a"}[w.method == "POST"], 1)
			if got, want := do("GET", path, r.accept, "", http.StatusOK), doOn(other, "GET", path, r.accept, "", http.StatusOK); got != want {
				t.Errorf("after %s %s (%s), GET %s (%s) of the written object:\n%s\ndecoded from its stored value:\n%s", w.method, w.path, w.contentType, path, r.accept, got, want)
			}
		}
		_ = other.Close()
	}
	if got := do("GET", v1+"/widgets?fieldSelector=spec.color%3DGreen&labelSelector=app%3Dx", "", "", http.StatusOK); !strings.Contains(got, `"name":"a"`) || !strings.Contains(got, `"name":"d"`) || strings.Count(got, `"namespace":`) != 2 {
		t.Errorf("after the writes, spec.color=Green,app=x selects %s", got)
	}
}
