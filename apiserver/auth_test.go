package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

var bob = apiserver.User{Name: "bob", UID: "42", Groups: []string{"dev"}}

// bobOnly authenticates every request as bob.
var bobOnly = apiserver.AuthenticatorFunc(func(*http.Request) (apiserver.User, bool, error) { return bob, true, nil })

// recorder is an authorizer that remembers what it was asked and answers
// with a fixed decision.
type recorder struct {
	mu       sync.Mutex
	asked    []apiserver.Attributes
	decision apiserver.Decision
	reason   string
	err      error
}

func (r *recorder) Authorize(_ context.Context, a apiserver.Attributes) (apiserver.Decision, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, a)
	return r.decision, r.reason, r.err
}

func (r *recorder) take() []apiserver.Attributes {
	r.mu.Lock()
	defer r.mu.Unlock()
	asked := r.asked
	r.asked = nil
	return asked
}

// registerWithCore adds the example's widgets and a core-group resource.
func registerWithCore(s *apiserver.Server) error {
	return errors.Join(widgetapi.Register(s),
		apiserver.Register(s, apiserver.Resource[gadget]{Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true}))
}

// TestAuthorizationAttributes sends one request of every shape through a
// server whose authorizer has no opinion, and checks what the authorizer
// was asked and the 403 the client got: Kubernetes' message and details.
func TestAuthorizationAttributes(t *testing.T) {
	rec := &recorder{}
	srv := apiservertest.New(t, registerWithCore, apiserver.WithAuthentication(bobOnly), apiserver.WithAuthorization(rec))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	rec.take() // apiservertest's /readyz, which is never authorized

	const ex = "/apis/example.com/v1"
	res := func(verb, ns, resource, sub, name string) apiserver.Attributes {
		return apiserver.Attributes{Verb: verb, ResourceRequest: true, APIGroup: "example.com", APIVersion: "v1",
			Namespace: ns, Resource: resource, Subresource: sub, Name: name}
	}
	core := func(verb, ns, resource, sub, name string) apiserver.Attributes {
		a := res(verb, ns, resource, sub, name)
		a.APIGroup = ""
		return a
	}
	path := func(verb, p string) apiserver.Attributes { return apiserver.Attributes{Verb: verb, Path: p} }
	sel := func(a apiserver.Attributes, labels, fields []apiserver.SelectorRequirement) apiserver.Attributes {
		a.LabelSelector, a.FieldSelector = labels, fields
		return a
	}
	type rq = apiserver.SelectorRequirement
	badSelector := res("list", "default", "widgets", "", "")
	badSelector.SelectorError = errors.New(`invalid label key "a b"`) // and why
	const inDefault = `in API group "example.com" in the namespace "default"`
	cases := []struct {
		name, method, url string
		want              apiserver.Attributes // Path is filled in from url
		message           string
	}{
		{"get", "GET", ex + "/namespaces/default/widgets/a", res("get", "default", "widgets", "", "a"),
			`widgets.example.com "a" is forbidden: User "bob" cannot get resource "widgets" ` + inDefault},
		{"head", "HEAD", ex + "/namespaces/default/widgets/a", res("get", "default", "widgets", "", "a"), ""},
		{"list", "GET", ex + "/namespaces/default/widgets?limit=500", res("list", "default", "widgets", "", ""),
			`widgets.example.com is forbidden: User "bob" cannot list resource "widgets" ` + inDefault},
		{"list all namespaces", "GET", ex + "/widgets", res("list", "", "widgets", "", ""),
			`widgets.example.com is forbidden: User "bob" cannot list resource "widgets" in API group "example.com" at the cluster scope`},
		{"list watch=false", "GET", ex + "/namespaces/default/widgets?watch=false", res("list", "default", "widgets", "", ""), ""},
		{"list watch=0", "GET", ex + "/namespaces/default/widgets?watch=0", res("list", "default", "widgets", "", ""), ""},
		{"watch", "GET", ex + "/namespaces/default/widgets?watch=true&resourceVersion=0", res("watch", "default", "widgets", "", ""),
			`widgets.example.com is forbidden: User "bob" cannot watch resource "widgets" ` + inDefault},
		{"watch=1", "GET", ex + "/namespaces/default/widgets?watch=1", res("watch", "default", "widgets", "", ""), ""},
		{"watch=True (Python client)", "GET", ex + "/namespaces/default/widgets?watch=True", res("watch", "default", "widgets", "", ""), ""},
		{"watch all namespaces", "GET", ex + "/widgets?watch=true", res("watch", "", "widgets", "", ""),
			`widgets.example.com is forbidden: User "bob" cannot watch resource "widgets" in API group "example.com" at the cluster scope`},
		{"watch one by field selector", "GET", ex + "/namespaces/default/widgets?watch=true&fieldSelector=metadata.name%3Da", sel(res("watch", "default", "widgets", "", "a"), nil, []rq{{Key: "metadata.name", Operator: "=", Values: []string{"a"}}}),
			`widgets.example.com "a" is forbidden: User "bob" cannot watch resource "widgets" ` + inDefault},
		{"list one by field selector ==", "GET", ex + "/namespaces/default/widgets?fieldSelector=spec.color%3DRed,metadata.name%3D%3Da",
			sel(res("list", "default", "widgets", "", "a"), nil, []rq{{Key: "spec.color", Operator: "=", Values: []string{"Red"}}, {Key: "metadata.name", Operator: "=", Values: []string{"a"}}}), ""},
		{"list by other field selector", "GET", ex + "/namespaces/default/widgets?fieldSelector=metadata.name!%3Da",
			sel(res("list", "default", "widgets", "", ""), nil, []rq{{Key: "metadata.name", Operator: "!=", Values: []string{"a"}}}), ""},
		{"list by label selector", "GET", ex + "/namespaces/default/widgets?labelSelector=app%20in%20(a,b),!x,tier%3D%3Dweb,n%3E3",
			sel(res("list", "default", "widgets", "", ""), []rq{{Key: "app", Operator: "in", Values: []string{"a", "b"}}, {Key: "x", Operator: "!"},
				{Key: "tier", Operator: "=", Values: []string{"web"}}, {Key: "n", Operator: "gt", Values: []string{"3"}}}, nil), ""},
		{"list by a bad label selector", "GET", ex + "/namespaces/default/widgets?labelSelector=a%20b", badSelector, ""},
		{"get ignores selectors", "GET", ex + "/namespaces/default/widgets/a?labelSelector=x", res("get", "default", "widgets", "", "a"), ""},
		{"create", "POST", ex + "/namespaces/default/widgets", res("create", "default", "widgets", "", ""),
			`widgets.example.com is forbidden: User "bob" cannot create resource "widgets" ` + inDefault},
		{"update", "PUT", ex + "/namespaces/default/widgets/a", res("update", "default", "widgets", "", "a"),
			`widgets.example.com "a" is forbidden: User "bob" cannot update resource "widgets" ` + inDefault},
		{"patch", "PATCH", ex + "/namespaces/default/widgets/a", res("patch", "default", "widgets", "", "a"),
			`widgets.example.com "a" is forbidden: User "bob" cannot patch resource "widgets" ` + inDefault},
		{"delete", "DELETE", ex + "/namespaces/default/widgets/a", res("delete", "default", "widgets", "", "a"),
			`widgets.example.com "a" is forbidden: User "bob" cannot delete resource "widgets" ` + inDefault},
		{"deletecollection", "DELETE", ex + "/namespaces/default/widgets?labelSelector=x",
			sel(res("deletecollection", "default", "widgets", "", ""), []rq{{Key: "x", Operator: "exists"}}, nil),
			`widgets.example.com is forbidden: User "bob" cannot deletecollection resource "widgets" ` + inDefault},
		{"get status", "GET", ex + "/namespaces/default/widgets/a/status", res("get", "default", "widgets", "status", "a"),
			`widgets.example.com "a" is forbidden: User "bob" cannot get resource "widgets/status" ` + inDefault},
		{"update status", "PUT", ex + "/namespaces/default/widgets/a/status", res("update", "default", "widgets", "status", "a"),
			`widgets.example.com "a" is forbidden: User "bob" cannot update resource "widgets/status" ` + inDefault},
		{"patch scale", "PATCH", ex + "/namespaces/default/widgets/a/scale", res("patch", "default", "widgets", "scale", "a"),
			`widgets.example.com "a" is forbidden: User "bob" cannot patch resource "widgets/scale" ` + inDefault},
		{"cluster-scoped get", "GET", ex + "/widgetclasses/c", res("get", "", "widgetclasses", "", "c"),
			`widgetclasses.example.com "c" is forbidden: User "bob" cannot get resource "widgetclasses" in API group "example.com" at the cluster scope`},
		{"cluster-scoped create", "POST", ex + "/widgetclasses", res("create", "", "widgetclasses", "", ""),
			`widgetclasses.example.com is forbidden: User "bob" cannot create resource "widgetclasses" in API group "example.com" at the cluster scope`},
		{"unknown resource", "GET", ex + "/namespaces/default/sprockets", res("list", "default", "sprockets", "", ""),
			`sprockets.example.com is forbidden: User "bob" cannot list resource "sprockets" ` + inDefault},
		{"unknown method", "OPTIONS", ex + "/namespaces/default/widgets", res("", "default", "widgets", "", ""),
			`widgets.example.com is forbidden: User "bob" cannot  resource "widgets" ` + inDefault},
		{"escaped slash stays in the name", "GET", ex + "/namespaces/default/widgets/a%2Fb", res("get", "default", "widgets", "", "a/b"), ""},
		{"trailing slash", "GET", ex + "/namespaces/default/widgets/", res("list", "default", "widgets", "", ""), ""},
		{"core get", "GET", "/api/v1/namespaces/default/gadgets/g", core("get", "default", "gadgets", "", "g"),
			`gadgets "g" is forbidden: User "bob" cannot get resource "gadgets" in API group "" in the namespace "default"`},
		{"core list", "GET", "/api/v1/gadgets", core("list", "", "gadgets", "", ""),
			`gadgets is forbidden: User "bob" cannot list resource "gadgets" in API group "" at the cluster scope`},
		{"a namespace", "GET", "/api/v1/namespaces/default", core("get", "default", "namespaces", "", "default"),
			`namespaces "default" is forbidden: User "bob" cannot get resource "namespaces" in API group "" in the namespace "default"`},
		{"namespaces", "GET", "/api/v1/namespaces", core("list", "", "namespaces", "", ""), ""},
		{"a namespace's status", "PUT", "/api/v1/namespaces/default/status", core("update", "default", "namespaces", "status", "default"), ""},
		{"a namespace's finalize", "PUT", "/api/v1/namespaces/default/finalize", core("update", "default", "namespaces", "finalize", "default"), ""},
		{"core versions", "GET", "/api", path("get", "/api"), `forbidden: User "bob" cannot get path "/api"`},
		{"core discovery", "GET", "/api/v1", path("get", "/api/v1"), `forbidden: User "bob" cannot get path "/api/v1"`},
		{"groups", "GET", "/apis", path("get", "/apis"), `forbidden: User "bob" cannot get path "/apis"`},
		{"group", "GET", "/apis/example.com", path("get", "/apis/example.com"), `forbidden: User "bob" cannot get path "/apis/example.com"`},
		{"group version", "GET", ex, path("get", ex), `forbidden: User "bob" cannot get path "/apis/example.com/v1"`},
		{"group version, slash", "GET", ex + "/", path("get", ex+"/"), ""},
		{"openapi v3", "GET", "/openapi/v3", path("get", "/openapi/v3"), `forbidden: User "bob" cannot get path "/openapi/v3"`},
		{"openapi v3 group version", "GET", "/openapi/v3/apis/example.com/v1?hash=x", path("get", "/openapi/v3/apis/example.com/v1"), ""},
		{"openapi v2", "GET", "/openapi/v2", path("get", "/openapi/v2"), ""},
		{"version", "GET", "/version?timeout=5s", path("get", "/version"), `forbidden: User "bob" cannot get path "/version"`},
		{"post to a path", "POST", "/apis", path("post", "/apis"), `forbidden: User "bob" cannot post path "/apis"`},
		{"unknown path", "GET", "/metrics", path("get", "/metrics"), ""},
		{"html in a path", "GET", "/<b>&", path("get", "/<b>&"), `forbidden: User "bob" cannot get path "/&lt;b&gt;&amp;"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(tc.method, tc.url, nil)
			asked := rec.take()
			if len(asked) != 1 {
				t.Fatalf("the authorizer was asked %d times: %+v", len(asked), asked)
			}
			want := tc.want
			want.User = apiserver.User{Name: "bob", UID: "42", Groups: []string{"dev", apiserver.GroupAuthenticated}}
			if want.Path == "" {
				p, _, _ := strings.Cut(tc.url, "?")
				want.Path = strings.ReplaceAll(p, "%2F", "/")
			}
			got := asked[0]
			if (got.SelectorError == nil) != (want.SelectorError == nil) || got.SelectorError != nil && !strings.HasPrefix(got.SelectorError.Error(), want.SelectorError.Error()) {
				t.Errorf("selector error %v, want %v", got.SelectorError, want.SelectorError)
			}
			got.SelectorError, want.SelectorError = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("attributes\n got %+v\nwant %+v", got, want)
			}
			if tc.method == "HEAD" {
				if r.Code != http.StatusForbidden {
					t.Errorf("HEAD: HTTP %d, want 403", r.Code)
				}
				return
			}
			st := r.failure(t, http.StatusForbidden, kapi.StatusReasonForbidden)
			if tc.message != "" && st.Message != tc.message {
				t.Errorf("message\n got %s\nwant %s", st.Message, tc.message)
			}
			wantDetails := kapi.StatusDetails{Group: want.APIGroup, Kind: want.Resource, Name: want.Name}
			if st.Details == nil || !reflect.DeepEqual(*st.Details, wantDetails) {
				t.Errorf("details %+v, want %+v", st.Details, wantDetails)
			}
		})
	}
}

// TestForbiddenReason appends the authorizer's reason, as kube-apiserver
// does, whether it denied or had no opinion.
func TestForbiddenReason(t *testing.T) {
	for _, d := range []apiserver.Decision{apiserver.DecisionDeny, apiserver.DecisionNoOpinion} {
		t.Run(d.String(), func(t *testing.T) {
			rec := &recorder{decision: d, reason: "widgets are off limits"}
			c := authClient(t, apiserver.WithAuthentication(bobOnly), apiserver.WithAuthorization(rec))
			st := c.get(widgetPath("default", "a")).failure(t, http.StatusForbidden, kapi.StatusReasonForbidden)
			want := `widgets.example.com "a" is forbidden: User "bob" cannot get resource "widgets" in API group "example.com" in the namespace "default": widgets are off limits`
			if st.Message != want {
				t.Errorf("message\n got %s\nwant %s", st.Message, want)
			}
		})
	}
}

// authClient serves the example resources with opts.
func authClient(t *testing.T, opts ...apiserver.Option) *apiClient {
	srv := apiservertest.New(t, registerWithCore, opts...)
	return &apiClient{t: t, base: srv.URL, hc: srv.Client()}
}

// TestAuthorizerChain: the first Allow or Deny decides; no opinion from
// all is a denial; an error without an Allow is a 500.
func TestAuthorizerChain(t *testing.T) {
	allow, deny, none := apiserver.DecisionAllow, apiserver.DecisionDeny, apiserver.DecisionNoOpinion
	boom := errors.New("policy store unreachable")
	cases := []struct {
		name      string
		chain     []*recorder
		code      int
		askedLast bool
	}{
		{"allow", []*recorder{{decision: allow}}, http.StatusOK, true},
		{"deny", []*recorder{{decision: deny}}, http.StatusForbidden, true},
		{"no opinion", []*recorder{{decision: none}}, http.StatusForbidden, true},
		{"no opinion, then allow", []*recorder{{decision: none}, {decision: allow}}, http.StatusOK, true},
		{"deny before allow", []*recorder{{decision: deny}, {decision: allow}}, http.StatusForbidden, false},
		{"allow before deny", []*recorder{{decision: allow}, {decision: deny}}, http.StatusOK, false},
		{"error", []*recorder{{decision: none, err: boom}}, http.StatusInternalServerError, true},
		{"error, then allow", []*recorder{{decision: none, err: boom}, {decision: allow}}, http.StatusOK, true},
		{"allow with an error", []*recorder{{decision: allow, err: boom}}, http.StatusOK, true},
		{"unknown decision", []*recorder{{decision: apiserver.Decision(7)}}, http.StatusForbidden, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []apiserver.Option
			for _, r := range tc.chain {
				opts = append(opts, apiserver.WithAuthorization(r))
			}
			c := authClient(t, append(opts, apiserver.WithAuthentication(bobOnly))...)
			r := c.get(widgetsIn("default"))
			if r.Code != tc.code {
				t.Fatalf("HTTP %d, want %d; body %s", r.Code, tc.code, r.Body)
			}
			if tc.code != http.StatusOK {
				st := r.failure(t, tc.code, "")
				if tc.code == http.StatusInternalServerError && !strings.Contains(st.Message, boom.Error()) {
					t.Errorf("500 message %q does not say why", st.Message)
				}
			}
			if asked := len(tc.chain[len(tc.chain)-1].take()); (asked > 0) != tc.askedLast {
				t.Errorf("the last authorizer was asked %d times, want asked: %v", asked, tc.askedLast)
			}
		})
	}
}

// TestAuthentication: 401 for every kind of request without accepted
// credentials, the health checks open, and the user in the request's
// context for the hooks.
func TestAuthentication(t *testing.T) {
	var mu sync.Mutex
	var validatedAs []apiserver.User
	register := func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[gadget]{Group: "toys.example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
			Validate: func(ctx context.Context, _, _ *gadget) apiserver.FieldErrors {
				u, _ := apiserver.UserFrom(ctx)
				mu.Lock()
				validatedAs = append(validatedAs, u)
				mu.Unlock()
				return nil
			}})
	}
	tokens := apiserver.StaticTokens(map[string]apiserver.User{"s3cret": {Name: "alice", Groups: []string{"admins"}}})
	srv := apiservertest.New(t, register, apiserver.WithAuthentication(tokens))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	const gadgets = "/apis/toys.example.com/v1/namespaces/default/gadgets"
	body := `{"apiVersion":"toys.example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":1}}`

	for _, credentials := range []string{"", "Bearer wrong", "Bearer ", "Basic czNjcmV0", "Bearer s3cret2"} {
		for _, req := range []struct{ method, path string }{
			{"GET", gadgets + "/g"}, {"GET", gadgets}, {"GET", gadgets + "?watch=true"}, {"POST", gadgets},
			{"PUT", gadgets + "/g"}, {"PATCH", gadgets + "/g"}, {"DELETE", gadgets + "/g"}, {"DELETE", gadgets},
			{"GET", gadgets + "/g/status"}, {"GET", "/api"}, {"GET", "/apis"}, {"GET", "/apis/toys.example.com"},
			{"GET", "/apis/toys.example.com/v1"}, {"GET", "/openapi/v3"}, {"GET", "/openapi/v3/apis/toys.example.com/v1"},
			{"GET", "/openapi/v2"}, {"GET", "/version"}, {"GET", "/nowhere"},
		} {
			t.Run(credentials+" "+req.method+" "+req.path, func(t *testing.T) {
				var header []string
				if credentials != "" {
					header = []string{"Authorization", credentials}
				}
				st := c.do(req.method, req.path, nil, header...).failure(t, http.StatusUnauthorized, kapi.StatusReasonUnauthorized)
				if st.Message != "Unauthorized" || st.Details != nil {
					t.Errorf("Status %+v, want kube-apiserver's: message Unauthorized, no details", st)
				}
			})
		}
	}
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		c.get(p).mustCode(t, http.StatusOK)
	}

	auth := []string{"Authorization", "bearer s3cret"} // the scheme in any case
	c.do("POST", gadgets, body, auth...).mustCode(t, http.StatusCreated)
	c.do("GET", gadgets+"/g", nil, auth...).mustCode(t, http.StatusOK)
	c.do("GET", "/apis", nil, auth...).mustCode(t, http.StatusOK)
	mu.Lock()
	defer mu.Unlock()
	want := apiserver.User{Name: "alice", Groups: []string{"admins", apiserver.GroupAuthenticated}}
	if len(validatedAs) != 1 || !reflect.DeepEqual(validatedAs[0], want) {
		t.Errorf("the validation hook saw users %+v, want [%+v]", validatedAs, want)
	}
}

// TestAnonymous: requests without credentials run as system:anonymous;
// refused credentials are still 401.
func TestAnonymous(t *testing.T) {
	rec := &recorder{decision: apiserver.DecisionAllow}
	tokens := apiserver.StaticTokens(map[string]apiserver.User{"s3cret": {Name: "alice"}})
	c := authClient(t, apiserver.WithAuthentication(tokens), apiserver.WithAnonymous(), apiserver.WithAuthorization(rec))
	rec.take()

	c.get(widgetsIn("default")).mustCode(t, http.StatusOK)
	c.do("GET", widgetsIn("default"), nil, "Authorization", "Bearer s3cret").mustCode(t, http.StatusOK)
	c.do("GET", widgetsIn("default"), nil, "Authorization", "Bearer wrong").failure(t, http.StatusUnauthorized, kapi.StatusReasonUnauthorized)
	var users []apiserver.User
	for _, a := range rec.take() {
		users = append(users, a.User)
	}
	want := []apiserver.User{
		{Name: apiserver.UserAnonymous, Groups: []string{apiserver.GroupUnauthenticated}},
		{Name: "alice", Groups: []string{apiserver.GroupAuthenticated}},
	}
	if !reflect.DeepEqual(users, want) {
		t.Errorf("authorized users %+v, want %+v", users, want)
	}

	// Denied, the anonymous user gets 403, not 401, as from kube-apiserver.
	rec.decision = apiserver.DecisionNoOpinion
	st := c.get("/apis").failure(t, http.StatusForbidden, kapi.StatusReasonForbidden)
	if want := `forbidden: User "system:anonymous" cannot get path "/apis"`; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
}

// TestAlwaysAllowPaths: the default exempts the health checks only; the
// option replaces the list, with prefixes.
func TestAlwaysAllowPaths(t *testing.T) {
	deny := apiserver.AuthenticatorFunc(func(*http.Request) (apiserver.User, bool, error) { return apiserver.User{}, false, nil })
	cases := []struct {
		name      string
		opts      []apiserver.Option
		open, not []string
	}{
		{"default", nil, []string{"/healthz", "/livez", "/readyz"}, []string{"/version", "/apis", "/healthz/x", "/openapi/v3"}},
		{"none", []apiserver.Option{apiserver.WithAlwaysAllowPaths()}, nil, []string{"/healthz", "/livez", "/readyz", "/version"}},
		{"prefix", []apiserver.Option{apiserver.WithAlwaysAllowPaths("/version", "/openapi/*")},
			[]string{"/version", "/openapi/v3", "/openapi/v3/apis/example.com/v1"}, []string{"/healthz", "/openapi", "/version/", "/apis"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api, err := apiserver.New(append(tc.opts, apiserver.WithAuthentication(deny))...)
			if err != nil {
				t.Fatal(err)
			}
			if err := widgetapi.Register(api); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = api.Close() })
			for _, p := range tc.open {
				rec := httptest.NewRecorder()
				api.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
				if rec.Code == http.StatusUnauthorized {
					t.Errorf("GET %s: 401, want it served without credentials", p)
				}
			}
			for _, p := range tc.not {
				rec := httptest.NewRecorder()
				api.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
				if rec.Code != http.StatusUnauthorized {
					t.Errorf("GET %s: %d, want 401", p, rec.Code)
				}
			}
		})
	}
}

// TestAuthenticatorError: an authenticator's error is a 401, as a refusal.
func TestAuthenticatorError(t *testing.T) {
	broken := apiserver.AuthenticatorFunc(func(*http.Request) (apiserver.User, bool, error) {
		return apiserver.User{}, false, errors.New("token review unreachable")
	})
	c := authClient(t, apiserver.WithAuthentication(broken))
	st := c.get(widgetsIn("default")).failure(t, http.StatusUnauthorized, kapi.StatusReasonUnauthorized)
	if st.Message != "Unauthorized" {
		t.Errorf("message %q: the client learns nothing of why", st.Message)
	}
}

// TestAuthorizationWithoutAuthentication: the authorizer sees the zero
// user, and the hooks see none.
func TestAuthorizationWithoutAuthentication(t *testing.T) {
	rec := &recorder{decision: apiserver.DecisionNoOpinion}
	c := authClient(t, apiserver.WithAuthorization(rec))
	st := c.get(widgetsIn("default")).failure(t, http.StatusForbidden, kapi.StatusReasonForbidden)
	if want := `widgets.example.com is forbidden: User "" cannot list resource "widgets" in API group "example.com" in the namespace "default"`; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
}

func TestAuthOptionErrors(t *testing.T) {
	cases := []struct {
		name string
		opt  apiserver.Option
		want string
	}{
		{"nil authenticator", apiserver.WithAuthentication(nil), "authenticator 0 is nil"},
		{"nil authorizer", apiserver.WithAuthorization(bobAuthz(), nil), "authorizer 1 is nil"},
		{"relative path", apiserver.WithAlwaysAllowPaths("healthz"), `"healthz" must start with '/'`},
		{"inner star", apiserver.WithAlwaysAllowPaths("/api/*/x"), `"/api/*/x": '*' is only allowed at the end`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := apiserver.New(tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func bobAuthz() apiserver.Authorizer {
	return apiserver.AuthorizerFunc(func(_ context.Context, a apiserver.Attributes) (apiserver.Decision, string, error) {
		if a.User.Name == "bob" {
			return apiserver.DecisionAllow, "", nil
		}
		return apiserver.DecisionNoOpinion, "", nil
	})
}

// TestAuthenticatedGroup is added once, and not to who is already in
// system:authenticated or system:unauthenticated.
func TestAuthenticatedGroup(t *testing.T) {
	for _, groups := range [][]string{nil, {"a"}, {apiserver.GroupAuthenticated, "a"}, {apiserver.GroupUnauthenticated}} {
		rec := &recorder{decision: apiserver.DecisionAllow}
		u := apiserver.User{Name: "x", Groups: slices.Clone(groups)}
		c := authClient(t, apiserver.WithAuthorization(rec), apiserver.WithAuthentication(apiserver.AuthenticatorFunc(func(*http.Request) (apiserver.User, bool, error) {
			return u, true, nil
		})))
		rec.take()
		c.get("/apis").mustCode(t, http.StatusOK)
		want := slices.Clone(groups)
		if !slices.Contains(groups, apiserver.GroupAuthenticated) && !slices.Contains(groups, apiserver.GroupUnauthenticated) {
			want = append(want, apiserver.GroupAuthenticated)
		}
		if got := rec.take()[0].User.Groups; !slices.Equal(got, want) {
			t.Errorf("groups %v became %v, want %v", groups, got, want)
		}
		if !slices.Equal(u.Groups, groups) {
			t.Errorf("the authenticator's user was changed: %v", u.Groups)
		}
	}
}

// FuzzAuthorizedRequests checks that a request is authorized for exactly
// what the server then does: a user allowed only to get widget a/w sends
// any method to any path, and every success must be that widget.
func FuzzAuthorizedRequests(f *testing.F) {
	for _, seed := range []struct{ method, target string }{
		{"GET", "/apis/example.com/v1/namespaces/a/widgets/w"},
		{"GET", "/apis/example.com/v1/namespaces/a/widgets/w/status"},
		{"GET", "/apis/example.com/v1/namespaces/a/widgets?fieldSelector=metadata.name%3Dw"},
		{"GET", "/apis/example.com/v1/namespaces/a/widgets?watch=1&fieldSelector=metadata.name%3Dw"},
		{"GET", "/apis/example.com/v1/namespaces/a/widgets/w%2Fx"},
		{"GET", "/apis/example.com/v1/namespaces/b/../a/widgets/w"},
		{"GET", "/apis/example.com/v1//namespaces/a/widgets/w"},
		{"GET", "/apis/example.com/v1/namespaces//widgets"},
		{"HEAD", "/apis/example.com/v1/namespaces/a/widgets/w"},
		{"PUT", "/apis/example.com/v1/namespaces/a/widgets/w"},
		{"DELETE", "/apis/example.com/v1/namespaces/a/widgets"},
		{"GET", "/apis/example.com/v1/widgets"},
		{"GET", "/api/v1/namespaces/a/widgets/w"},
		{"GET", "/apis"},
	} {
		f.Add(seed.method, seed.target)
	}
	onlyW := apiserver.AuthorizerFunc(func(_ context.Context, a apiserver.Attributes) (apiserver.Decision, string, error) {
		if a.User.Name == "admin" || a.Verb == "get" && a.ResourceRequest && a.APIGroup == "example.com" &&
			a.Namespace == "a" && a.Resource == "widgets" && a.Name == "w" && a.Subresource == "" {
			return apiserver.DecisionAllow, "", nil
		}
		return apiserver.DecisionNoOpinion, "", nil
	})
	tokens := apiserver.StaticTokens(map[string]apiserver.User{"admin": {Name: "admin"}, "fuzz": {Name: "fuzz"}})
	srv := apiservertest.New(f, widgetapi.Register, apiserver.WithAuthentication(tokens), apiserver.WithAuthorization(onlyW))
	admin := &apiClient{t: f, base: srv.URL, hc: srv.Client()}
	for _, w := range []*widgetapi.Widget{newWidget("a", "w"), newWidget("a", "x"), newWidget("b", "w")} {
		admin.do("POST", widgetsIn(w.Namespace), w, "Authorization", "Bearer admin").mustCode(f, http.StatusCreated)
	}

	f.Fuzz(func(t *testing.T, method, target string) {
		req, err := http.NewRequest(method, "http://kapi"+target, nil)
		if err != nil || req.URL.Host != "kapi" {
			return
		}
		req.Header.Set("Authorization", "Bearer fuzz")
		rec := httptest.NewRecorder()
		srv.API.ServeHTTP(rec, req)
		if rec.Code < 200 || rec.Code > 299 || method == "HEAD" {
			return
		}
		var got widgetapi.Widget
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Kind != "Widget" || got.Namespace != "a" || got.Name != "w" {
			t.Fatalf("%s %s: HTTP %d, allowed only to get widget a/w; body %.300s", method, target, rec.Code, rec.Body.Bytes())
		}
	})
}

// TestUnauthenticatedHTTP2 closes the connection of an HTTP/2 client
// without credentials after one request, as kube-apiserver does, so that
// it cannot hold streams open; authenticated clients keep theirs.
func TestUnauthenticatedHTTP2(t *testing.T) {
	api, err := apiserver.New(apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"t": {Name: "bob"}})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	var mu sync.Mutex
	conns := 0
	srv := httptest.NewUnstartedServer(api)
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		token string
		code  int
		conns int
	}{{"t", http.StatusOK, 1}, {"", http.StatusUnauthorized, 2}, {"wrong", http.StatusUnauthorized, 2}} {
		hc := srv.Client()
		mu.Lock()
		conns = 0
		mu.Unlock()
		for range 2 {
			req, _ := http.NewRequest("GET", srv.URL+"/apis", nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != 2 || resp.StatusCode != tc.code {
				t.Fatalf("token %q: HTTP/%d %d, want HTTP/2 %d", tc.token, resp.ProtoMajor, resp.StatusCode, tc.code)
			}
		}
		hc.CloseIdleConnections()
		mu.Lock()
		if conns != tc.conns {
			t.Errorf("token %q: two requests took %d connections, want %d", tc.token, conns, tc.conns)
		}
		mu.Unlock()
	}
}

// TestAuthorizationUnderChi: mounted in a host's chi router, below a
// prefix, requests are authorized on the path kapi routes.
func TestAuthorizationUnderChi(t *testing.T) {
	rec := &recorder{decision: apiserver.DecisionAllow}
	api, err := apiserver.New(apiserver.WithAuthentication(bobOnly), apiserver.WithAuthorization(rec))
	if err != nil {
		t.Fatal(err)
	}
	if err := widgetapi.Register(api); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	host := chi.NewRouter()
	host.Mount("/k8s", api)

	for _, tc := range []struct {
		target string
		want   apiserver.Attributes
	}{
		{"/k8s/apis/example.com/v1/namespaces/default/widgets/a%2Fb", apiserver.Attributes{Verb: "get", ResourceRequest: true, APIGroup: "example.com", APIVersion: "v1",
			Namespace: "default", Resource: "widgets", Name: "a/b", Path: "/apis/example.com/v1/namespaces/default/widgets/a/b"}},
		{"/k8s/apis/example.com/v1/widgetclasses", apiserver.Attributes{Verb: "list", ResourceRequest: true, APIGroup: "example.com", APIVersion: "v1",
			Resource: "widgetclasses", Path: "/apis/example.com/v1/widgetclasses"}},
		{"/k8s/apis", apiserver.Attributes{Verb: "get", Path: "/apis"}},
	} {
		rr := httptest.NewRecorder()
		host.ServeHTTP(rr, httptest.NewRequest("GET", tc.target, nil))
		asked := rec.take()
		if len(asked) != 1 {
			t.Fatalf("%s: HTTP %d; the authorizer was asked %d times", tc.target, rr.Code, len(asked))
		}
		got := asked[0]
		got.User = apiserver.User{}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.target, got, tc.want)
		}
	}
}

// BenchmarkAuthGet is the cost of authentication (a static token) and
// authorization (rules like the secured example's) on a GET of one widget,
// beside the same GET with neither.
func BenchmarkAuthGet(b *testing.B) {
	rules, err := apiserver.RulesAuthorizer(
		apiserver.Binding{Groups: []string{apiserver.GroupAuthenticated}, Rules: []apiserver.Rule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*"}}}},
		apiserver.Binding{Groups: []string{"admins"}, Rules: []apiserver.Rule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}},
		apiserver.Binding{Groups: []string{"viewers"}, Rules: []apiserver.Rule{{Verbs: []string{"get", "list"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Namespaces: []string{"default"}}}},
	)
	if err != nil {
		b.Fatal(err)
	}
	tokens := apiserver.StaticTokens(map[string]apiserver.User{"admin": {Name: "admin", Groups: []string{"admins"}}, "viewer": {Name: "viewer", Groups: []string{"viewers"}}})
	for _, bc := range []struct {
		name string
		opts []apiserver.Option
	}{
		{"none", nil},
		{"token and rules", []apiserver.Option{apiserver.WithAuthentication(tokens), apiserver.WithAuthorization(rules)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := newWidgetHandler(b, bc.opts...)
			send := func(method, path, body string, want int) {
				var r io.Reader
				if body != "" {
					r = strings.NewReader(body)
				}
				req := httptest.NewRequest(method, path, r)
				req.Header.Set("Authorization", "Bearer admin")
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != want {
					b.Fatalf("%s %s: HTTP %d, want %d: %s", method, path, rec.Code, want, rec.Body.Bytes())
				}
			}
			send("POST", widgetsIn("default"), `{"metadata":{"name":"a"},"spec":{"color":"Red"}}`, http.StatusCreated)
			path := widgetPath("default", "a")
			b.ReportAllocs()
			for b.Loop() {
				send("GET", path, "", http.StatusOK)
			}
		})
	}
}

// TestHostRequestUnchanged: kapi keeps the credentials from its own
// handlers, not from the host's middleware, which may still read them.
func TestHostRequestUnchanged(t *testing.T) {
	api, err := apiserver.New(apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"t": {Name: "bob"}})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	req := httptest.NewRequest("GET", "/apis", nil)
	req.Header.Set("Authorization", "Bearer t")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || req.Header.Get("Authorization") != "Bearer t" {
		t.Errorf("HTTP %d; the host's request has Authorization %q afterwards", rec.Code, req.Header.Get("Authorization"))
	}
}
