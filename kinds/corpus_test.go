package kinds_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/kinds"
)

// TestHostileInput sends a kind without a Go type what clients should
// not: every answer is a Status with a 4xx code, never a 500.
func TestHostileInput(t *testing.T) {
	srv, c := newServer(t)
	if err := kinds.Register(srv, widgetDefinition(t)); err != nil {
		t.Fatal(err)
	}
	c.want("POST", "/apis/example.com/v1/namespaces/default/widgets", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red"}}`, 201)
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	bodies := []string{
		``, `null`, `[]`, `"x"`, `{`, `{"metadata":1}`, `{"metadata":{"name":1}}`, `{"kind":1}`, `{"apiVersion":[]}`,
		`{"metadata":{"name":"a"},"spec":1}`, `{"metadata":{"name":"a"},"spec":{"replicas":1e400}}`,
		`{"metadata":{"name":"a"},"spec":{"replicas":"x"}}`, `{"metadata":{"name":"a"},"spec":{"ports":[{"port":1}]}}`,
		`{"metadata":{"name":"a"},"spec":{"ports":[{"name":"x"},{"name":"x"}]}}`, `{"metadata":{"name":"a"},"status":[1]}`,
		`{"metadata":{"name":"a"},"spec":` + deep + `}`, `{"metadata":{"name":"a","labels":{"x":1}}}`,
		`{"apiVersion":"other/v1","kind":"Widget","metadata":{"name":"a"}}`, `{"kind":"Gadget","metadata":{"name":"a"}}`,
	}
	type req struct{ method, path, contentType string }
	var reqs []req
	for _, ct := range []string{"application/json", "application/yaml", "application/cbor", "application/vnd.kubernetes.protobuf"} {
		reqs = append(reqs, req{"POST", "/apis/example.com/v1/namespaces/default/widgets", ct}, req{"PUT", "/apis/example.com/v1/namespaces/default/widgets/a", ct},
			req{"PUT", "/apis/example.com/v1/namespaces/default/widgets/a/status", ct}, req{"PUT", "/apis/example.com/v1/namespaces/default/widgets/a/scale", ct})
	}
	for _, ct := range []string{"application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json", "application/apply-patch+yaml"} {
		reqs = append(reqs, req{"PATCH", "/apis/example.com/v1/namespaces/default/widgets/a", ct}, req{"PATCH", "/apis/example.com/v1/namespaces/default/widgets/a/status", ct},
			req{"PATCH", "/apis/example.com/v1/namespaces/default/widgets/a/scale", ct})
	}
	for _, r := range reqs {
		for _, body := range bodies {
			code, out, _ := c.do(r.method, r.path+"?fieldValidation=Strict", r.contentType, body)
			if code < 400 {
				continue // some are fine as patches
			}
			var status struct{ Kind string }
			if code >= 500 || json.Unmarshal([]byte(out), &status) != nil || status.Kind != "Status" {
				t.Errorf("%s %s (%s) %.60q: %d %.300s", r.method, r.path, r.contentType, body, code, out)
			}
		}
	}
	for _, path := range []string{"/apis/example.com/v1/namespaces/default/widgets?fieldSelector=spec.bogus%3D1",
		"/apis/example.com/v1/widgets/a/b/c/d", "/apis/example.com/v1/namespaces/default/widgets/a/bogus", "/apis/example.com/v2/widgets", "/apis/example.com//widgets"} {
		if code, out, _ := c.do("GET", path, "", ""); code < 400 || code >= 500 {
			t.Errorf("GET %s: %d %.300s", path, code, out)
		}
	}
	c.want("GET", "/apis/example.com/v1/namespaces/default/widgets/a", "", "", 200)
}
