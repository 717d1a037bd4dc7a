// Package observetest is the known request sequence the observers' tests
// (audit, and the prometheus and otel modules under observe/) drive through
// a server, and what kube-apiserver records for it, read from its source
// (k8s.io/apiserver v0.37.2: endpoints/metrics/metrics.go,
// endpoints/filters/audit.go, audit/request.go).
package observetest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
)

// Widget is the sequence's resource: widgets.example.com/v1, namespaced.
type Widget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		Size int `json:"size"`
	} `json:"spec"`
}

// Token authenticates as User.
const Token = "observe-token"

// User is who sends the sequence.
var User = apiserver.User{Name: "alice", UID: "u-1", Groups: []string{"devs"}}

// PanicSize is a size whose validation panics, for the Panic stage.
const PanicSize = 13

// NewServer starts a server serving widgets that authenticates Token as
// User, with opts (the observers under test).
func NewServer(t testing.TB, opts ...apiserver.Option) *apiservertest.Server {
	t.Helper()
	opts = append([]apiserver.Option{apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{Token: User}))}, opts...)
	return apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[Widget]{
			Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true,
			Validate: func(_ context.Context, w, _ *Widget) apiserver.FieldErrors {
				if w.Spec.Size == PanicSize {
					panic("observetest: a widget of the panic size")
				}
				return nil
			},
		})
	}, opts...)
}

// Step is one request of the sequence and the status it must answer.
type Step struct {
	Method, Path, Body string
	Code               int
	// Verb, MetricsVerb, Scope are what kube-apiserver records for it:
	// the audit event's verb, the metrics' verb and scope labels.
	Verb, MetricsVerb, Scope string
}

const ns = "/apis/example.com/v1/namespaces/default/widgets"

// Sequence is create, get, list, watch (ended by the server after one
// second, with the created widget's ADDED event), update, a create that
// conflicts (409), delete, and a get of what was deleted (404).
var Sequence = []Step{
	{"POST", ns, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"size":1}}`, 201, "create", "POST", "resource"},
	{"GET", ns + "/a", "", 200, "get", "GET", "resource"},
	{"GET", ns, "", 200, "list", "LIST", "namespace"},
	{"GET", ns + "?watch=true&timeoutSeconds=1", "", 200, "watch", "WATCH", "namespace"},
	{"PUT", ns + "/a", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"size":2}}`, 200, "update", "PUT", "resource"},
	{"POST", ns, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"size":3}}`, 409, "create", "POST", "resource"},
	{"DELETE", ns + "/a", "", 200, "delete", "DELETE", "resource"},
	{"GET", ns + "/a", "", 404, "get", "GET", "resource"},
}

// Request is a request as User, with a JSON body unless body is "".
func Request(t testing.TB, method, url, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+Token)
	req.Header.Set("User-Agent", "observetest/1.0")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// Run sends the sequence to the server at url, failing the test on an
// unexpected status, and returns each response's Audit-Id.
func Run(t testing.TB, url string, c *http.Client) []string {
	t.Helper()
	var ids []string
	for _, s := range Sequence {
		resp, err := c.Do(Request(t, s.Method, url+s.Path, s.Body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != s.Code {
			t.Fatalf("%s %s: %d %s, want %d", s.Method, s.Path, resp.StatusCode, data, s.Code)
		}
		ids = append(ids, resp.Header.Get("Audit-Id"))
	}
	// The server reads a connection's next request once the last one's
	// handler has returned: after this answer every observer has seen the
	// whole sequence end.
	resp, err := c.Get(url + "/version")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return ids
}
