package actions_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/observe"
)

const (
	ns      = "/apis/example.com/v1/namespaces/default"
	widget  = ns + "/widgets/w1"
	reviews = ns + "/widgetreviews"
)

// client talks to a test server over loopback.
type client struct {
	t   *testing.T
	srv *apiservertest.Server
}

type response struct {
	code   int
	body   string
	header http.Header
}

func (c client) do(method, path, contentType, body string, header ...string) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.srv.URL+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.srv.Client().Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, string(data), resp.Header}
}

// want checks the code and, for an error, that the body is a Status with
// the reason and message given (message "": any).
func (c client) want(r response, code int, reason, message string) {
	c.t.Helper()
	if r.code != code {
		c.t.Fatalf("code %d, want %d: %s", r.code, code, r.body)
	}
	if code < 400 {
		return
	}
	var st kapi.Status
	if err := json.Unmarshal([]byte(r.body), &st); err != nil || st.Kind != "Status" || string(st.Reason) != reason || int(st.Code) != code ||
		message != "" && st.Message != message {
		c.t.Fatalf("not the Status %d %s %q: %s", code, reason, message, r.body)
	}
}

func newClient(t *testing.T, opts ...apiserver.Option) client { return newClientAs(t, nil, opts...) }

// newClientAs is newClient, creating the widget with the header given.
func newClientAs(t *testing.T, header []string, opts ...apiserver.Option) client {
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		if err := widgetapi.Register(s); err != nil {
			return err
		}
		return widgetapi.RegisterActions(s)
	}, opts...)
	c := client{t, srv}
	c.want(c.do("POST", ns+"/widgets", "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"color":"Red"}}`, header...), 201, "", "")
	return c
}

const (
	notAllowed = "the server does not allow this method on the requested resource"
	notFound   = "the server could not find the requested resource"
)

// TestSubresource drives widgets/restart and widgets/log as clients do:
// a POST in each media type, its answer negotiated, the log answered in
// text, and what is not served answered as kube-apiserver does.
func TestSubresource(t *testing.T) {
	c := newClient(t)
	for i, tc := range []struct{ contentType, body, accept string }{
		{"application/json", `{"reason":"json"}`, ""},
		{"application/yaml", "reason: yaml\n", "application/yaml"},
		{"application/cbor", "\xa1\x66reason\x64cbor", "application/cbor"},
	} {
		r := c.do("POST", widget+"/restart", tc.contentType, tc.body, "Accept", tc.accept)
		c.want(r, 201, "", "")
		if want := map[string]string{"": "application/json"}[tc.accept]; want == "" && r.header.Get("Content-Type") != tc.accept || want != "" && r.header.Get("Content-Type") != want {
			t.Errorf("%s: answered in %s", tc.contentType, r.header.Get("Content-Type"))
		}
		if tc.accept == "" {
			var out widgetapi.WidgetRestart
			if err := json.Unmarshal([]byte(r.body), &out); err != nil || out.Kind != "WidgetRestart" || out.APIVersion != "example.com/v1" || out.Reason != "json" || out.Restarts != int32(i+1) {
				t.Errorf("answer %s: %v", r.body, err)
			}
		}
	}
	c.want(c.do("POST", widget+"/restart?dryRun=All", "application/json", `{}`), 201, "", "")
	r := c.do("GET", widget+"/log", "", "")
	c.want(r, 200, "", "")
	if r.header.Get("Content-Type") != "text/plain" || strings.Count(r.body, "\n") != 3 || !strings.Contains(r.body, "restarted (generation 1): cbor\n") {
		t.Errorf("log (%s): %q", r.header.Get("Content-Type"), r.body)
	}
	for _, tc := range []struct {
		method, path, contentType, body string
		code                            int
		reason, message                 string
	}{
		{"POST", ns + "/widgets/nope/restart", "application/json", `{}`, 404, "NotFound", `widgets.example.com "nope" not found`},
		{"GET", ns + "/widgets/nope/log", "", "", 404, "NotFound", `widgets.example.com "nope" not found`},
		{"GET", widget + "/bogus", "", "", 404, "NotFound", notFound},
		{"POST", widget + "/bogus", "application/json", `{}`, 404, "NotFound", notFound},
		{"GET", "/apis/example.com/v1/widgets/w1/restart", "", "", 404, "NotFound", notFound},
		{"GET", "/apis/example.com/v1beta1/namespaces/default/widgets/w1/restart", "", "", 404, "NotFound", notFound},
		{"GET", widget + "/restart", "", "", 405, "MethodNotAllowed", notAllowed},
		{"PUT", widget + "/restart", "application/json", `{}`, 405, "MethodNotAllowed", notAllowed},
		{"DELETE", widget + "/restart", "", "", 405, "MethodNotAllowed", notAllowed},
		{"PATCH", widget + "/restart", "application/merge-patch+json", `{}`, 405, "MethodNotAllowed", notAllowed},
		{"POST", widget + "/log", "application/json", `{}`, 405, "MethodNotAllowed", notAllowed},
		{"POST", widget + "/status", "application/json", `{}`, 405, "MethodNotAllowed", notAllowed},
		{"DELETE", widget + "/scale", "", "", 405, "MethodNotAllowed", notAllowed},
		{"POST", widget + "/restart", "application/json", `{"reason":1}`, 400, "BadRequest", ""},
		{"POST", widget + "/restart", "application/json", ``, 400, "BadRequest", `WidgetRestart in version "v1" cannot be handled as a WidgetRestart: the request body is empty`},
		{"POST", widget + "/restart", "application/json", `{"kind":"Widget"}`, 400, "BadRequest", "the kind in the data (Widget) does not match the expected kind (WidgetRestart)"},
		{"POST", widget + "/restart?fieldValidation=Strict", "application/json", `{"bogus":1}`, 400, "BadRequest", `WidgetRestart in version "v1" cannot be handled as a WidgetRestart: strict decoding error: unknown field "bogus"`},
		{"POST", widget + "/restart", "text/plain", `x`, 415, "UnsupportedMediaType", ""},
		{"POST", widget + "/restart", "application/vnd.kubernetes.protobuf", "k8s\x00", 415, "UnsupportedMediaType", ""},
		{"POST", widget + "/restart?dryRun=Some", "application/json", `{}`, 400, "BadRequest", `Invalid dryRun value "Some": only "All" is supported`},
		{"POST", ns + "/widgets/a%2Fb/restart", "application/json", `{}`, 400, "BadRequest", ""},
	} {
		c.want(c.do(tc.method, tc.path, tc.contentType, tc.body), tc.code, tc.reason, tc.message)
	}
	r = c.do("POST", widget+"/restart", "application/json", `{"bogus":1}`)
	c.want(r, 201, "", "")
	if w := r.header.Get("Warning"); w != `299 - "unknown field \"bogus\""` {
		t.Errorf("Warning %q", w)
	}
	c.want(c.do("POST", widget+"/restart", "application/json", `{}`, "Accept", "application/vnd.kubernetes.protobuf"), 406, "NotAcceptable", "")
}

// TestFollow reads a log followed: each line is sent as it is written,
// and the request outlives no client.
func TestFollow(t *testing.T) {
	c := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.srv.URL+widget+"/log?follow=true", nil)
	resp, err := c.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)
	for _, reason := range []string{"one", "two"} {
		c.want(c.do("POST", widget+"/restart", "application/json", `{"reason":"`+reason+`"}`), 201, "", "")
		line, err := lines.ReadString('\n')
		if err != nil || !strings.HasSuffix(line, ": "+reason+"\n") {
			t.Fatalf("line %q, %v", line, err)
		}
	}
}

// TestReview drives widgetreviews: answered, never stored; only create.
func TestReview(t *testing.T) {
	c := newClient(t, apiserver.WithNamespaces())
	for _, tc := range []struct{ contentType, body string }{
		{"application/json", `{"apiVersion":"example.com/v1","kind":"WidgetReview","spec":{"color":"Red","replicas":11}}`},
		{"application/yaml", "apiVersion: example.com/v1\nkind: WidgetReview\nspec:\n  color: Red\n  replicas: 11\n"},
	} {
		r := c.do("POST", reviews, tc.contentType, tc.body)
		c.want(r, 201, "", "")
		var out widgetapi.WidgetReview
		if err := json.Unmarshal([]byte(r.body), &out); err != nil || out.Kind != "WidgetReview" || out.Namespace != "default" || out.Status.Allowed ||
			out.Status.Reason != "a widget has at most 10 replicas" {
			t.Errorf("%s: %s", tc.contentType, r.body)
		}
	}
	for _, tc := range []struct {
		method, path, contentType, body string
		code                            int
		reason, message                 string
	}{
		{"GET", reviews, "", "", 405, "MethodNotAllowed", notAllowed},
		{"GET", reviews + "?watch=true", "", "", 405, "MethodNotAllowed", notAllowed},
		{"GET", "/apis/example.com/v1/widgetreviews", "", "", 404, "NotFound", notFound},
		{"DELETE", reviews, "", "", 405, "MethodNotAllowed", notAllowed},
		{"PUT", reviews, "application/json", `{}`, 405, "MethodNotAllowed", notAllowed},
		{"GET", reviews + "/r1", "", "", 404, "NotFound", notFound},
		{"DELETE", reviews + "/r1", "", "", 404, "NotFound", notFound},
		{"POST", "/apis/example.com/v1/widgetreviews", "application/json", `{}`, 404, "NotFound", notFound},
		{"POST", reviews, "application/json", `{"apiVersion":"example.com/v2"}`, 400, "BadRequest", "the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)"},
		{"POST", reviews, "application/json", `{"metadata":{"namespace":"other"}}`, 400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"},
		{"POST", "/apis/example.com/v1/namespaces/nowhere/widgetreviews", "application/json", `{}`, 404, "NotFound", `namespaces "nowhere" not found`},
		{"POST", reviews + "?fieldValidation=Strict", "application/json", `{"spec":{"bogus":1}}`, 400, "BadRequest", `WidgetReview in version "v1" cannot be handled as a WidgetReview: strict decoding error: unknown field "spec.bogus"`},
	} {
		c.want(c.do(tc.method, tc.path, tc.contentType, tc.body), tc.code, tc.reason, tc.message)
	}
}

// TestRequestPath: authorization sees the subresource and the verb,
// admission the body, observers the request, as for every request.
func TestRequestPath(t *testing.T) {
	var mu sync.Mutex
	var authorized, admitted, observed []string
	authorize := apiserver.AuthorizerFunc(func(_ context.Context, a apiserver.Attributes) (apiserver.Decision, string, error) {
		mu.Lock()
		defer mu.Unlock()
		if a.ResourceRequest && a.Resource != "namespaces" {
			authorized = append(authorized, a.Verb+" "+a.Resource+"/"+a.Subresource+" "+a.Name)
		}
		if a.Subresource == "log" && a.User.Name == "nobody" {
			return apiserver.DecisionDeny, "", nil
		}
		return apiserver.DecisionAllow, "", nil
	})
	admit := func(_ context.Context, req *apiserver.AdmissionRequest) error {
		mu.Lock()
		defer mu.Unlock()
		admitted = append(admitted, string(req.Operation)+" "+req.Resource+"/"+req.Subresource+" "+req.Kind+" "+req.Name)
		if r, ok := req.Object.(*widgetapi.WidgetRestart); ok && r.Reason == "forbidden" {
			return apiserver.NewStatusError(http.StatusForbidden, kapi.StatusReasonForbidden, "no restarts for that reason")
		}
		return nil
	}
	alice, nobody := []string{"Authorization", "Bearer t"}, []string{"Authorization", "Bearer n"}
	c := newClientAs(t, alice, apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"t": {Name: "alice"}, "n": {Name: "nobody"}})),
		apiserver.WithAuthorization(authorize), apiserver.WithValidatingAdmission(admit),
		apiserver.WithObserver(observerFunc(func(rec *observe.RequestRecord) {
			mu.Lock()
			defer mu.Unlock()
			if a := rec.Attributes; a.Subresource != "" || a.Resource == "widgetreviews" {
				observed = append(observed, rec.MetricsVerb+" "+a.Resource+"/"+a.Subresource+" "+a.User.Name)
			}
		})))
	c.want(c.do("POST", widget+"/restart", "application/json", `{"reason":"x"}`, alice...), 201, "", "")
	c.want(c.do("POST", widget+"/restart", "application/json", `{"reason":"forbidden"}`, alice...), 403, "Forbidden", "no restarts for that reason")
	c.want(c.do("GET", widget+"/log", "", "", alice...), 200, "", "")
	c.want(c.do("GET", widget+"/log", "", "", nobody...), 403, "Forbidden",
		`widgets.example.com "w1" is forbidden: User "nobody" cannot get resource "widgets/log" in API group "example.com" in the namespace "default"`)
	c.want(c.do("POST", reviews, "application/json", `{"metadata":{"name":"r"},"spec":{"color":"Red"}}`, alice...), 201, "", "")
	c.want(c.do("GET", reviews, "", "", alice...), 405, "MethodNotAllowed", notAllowed)
	mu.Lock()
	defer mu.Unlock()
	wantAuthorized := []string{"create widgets/ " + "", "create widgets/restart w1", "create widgets/restart w1", "get widgets/log w1", "get widgets/log w1", "create widgetreviews/ ", "list widgetreviews/ "}
	if !slices.Equal(authorized, wantAuthorized) {
		t.Errorf("authorized %q, want %q", authorized, wantAuthorized)
	}
	wantAdmitted := []string{"CREATE widgets/ Widget w1", "CREATE widgets/restart WidgetRestart w1", "CREATE widgets/restart WidgetRestart w1", "CREATE widgetreviews/ WidgetReview r"}
	if !slices.Equal(admitted, wantAdmitted) {
		t.Errorf("admitted %q, want %q", admitted, wantAdmitted)
	}
	wantObserved := []string{"POST widgets/restart alice", "POST widgets/restart alice", "GET widgets/log alice", "GET widgets/log nobody", "POST widgetreviews/ alice", "LIST widgetreviews/ alice"}
	if !slices.Equal(observed, wantObserved) {
		t.Errorf("observed %q, want %q", observed, wantObserved)
	}
}

type observerFunc func(rec *observe.RequestRecord)

func (f observerFunc) RequestStarted(ctx context.Context, _ *observe.RequestRecord) context.Context {
	return ctx
}
func (f observerFunc) ResponseStarted(context.Context, *observe.RequestRecord)    {}
func (f observerFunc) RequestEnded(_ context.Context, rec *observe.RequestRecord) { f(rec) }
