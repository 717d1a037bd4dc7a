package apiserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// accessUsers are the users of the access tests, by bearer token.
var accessUsers = map[string]apiserver.User{
	"admin":  {Name: "admin", Groups: []string{"admins"}},
	"viewer": {Name: "viewer", UID: "2", Groups: []string{"viewers"}},
}

// accessRules: admins may do everything, impersonate included; viewers
// may read widgets in team-a and impersonate user alice and group
// viewers; everyone may ask who they are and what they may do.
func accessRules(t testing.TB) apiserver.Authorizer {
	t.Helper()
	az, err := apiserver.RulesAuthorizer(
		apiserver.Binding{Groups: []string{apiserver.GroupAuthenticated, apiserver.GroupUnauthenticated}, Rules: []apiserver.Rule{
			{Verbs: []string{"create"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}},
			{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis", "/apis/*"}},
		}},
		apiserver.Binding{Groups: []string{"admins"}, Rules: []apiserver.Rule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}},
		apiserver.Binding{Groups: []string{"viewers"}, Rules: []apiserver.Rule{
			{Verbs: []string{"get", "list"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Namespaces: []string{"team-a"}},
			{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"alice"}},
			{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"groups"}, ResourceNames: []string{"viewers"}},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return az
}

func accessClient(t *testing.T, authorizers ...apiserver.Authorizer) *apiClient {
	t.Helper()
	opts := []apiserver.Option{apiserver.WithAuthentication(apiserver.StaticTokens(accessUsers))}
	if len(authorizers) > 0 {
		opts = append(opts, apiserver.WithAuthorization(authorizers...))
	}
	srv := apiservertest.New(t, widgetapi.Register, opts...)
	return &apiClient{t: t, base: srv.URL, hc: srv.Client()}
}

// whoami is kubectl auth whoami as token, with header pairs.
func whoami(t *testing.T, c *apiClient, token string, header ...string) (apiserver.User, *response) {
	t.Helper()
	req := c.request(t.Context(), http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		`{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{"creationTimestamp":null},"status":{"userInfo":{}}}`,
		"Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1]) // repeated, as kubectl --as-group sends them
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &response{Code: resp.StatusCode, Header: resp.Header, Body: body}
	if r.Code != http.StatusCreated {
		return apiserver.User{}, r
	}
	var review struct {
		kapi.TypeMeta
		Metadata struct{ CreationTimestamp string }
		Status   struct {
			UserInfo struct {
				Username, UID string
				Groups        []string
				Extra         map[string][]string
			}
		}
	}
	r.into(t, &review)
	if review.Kind != "SelfSubjectReview" || review.APIVersion != "authentication.k8s.io/v1" || review.Metadata.CreationTimestamp == "" {
		t.Errorf("review %s", r.Body)
	}
	u := review.Status.UserInfo
	return apiserver.User{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: u.Extra}, r
}

// TestImpersonation acts as other users as kubectl --as, --as-group,
// --as-uid and client-go's extras do, checked by the impersonate verb.
func TestImpersonation(t *testing.T) {
	c := accessClient(t, accessRules(t))
	for _, tc := range []struct {
		name, token string
		header      []string
		want        apiserver.User
		code        int
		message     string
	}{
		{"no impersonation", "viewer", nil, apiserver.User{Name: "viewer", UID: "2", Groups: []string{"viewers", apiserver.GroupAuthenticated}}, 201, ""},
		{"user", "admin", []string{"Impersonate-User", "alice"}, apiserver.User{Name: "alice", Groups: []string{apiserver.GroupAuthenticated}}, 201, ""},
		{"user, groups, uid, extras", "admin", []string{"Impersonate-User", "alice", "Impersonate-Group", "g1", "Impersonate-Group", "g2",
			"Impersonate-Uid", "u-1", "Impersonate-Extra-Scopes", "a", "Impersonate-Extra-Scopes", "b", "Impersonate-Extra-Example.com%2fteam", "x"},
			apiserver.User{Name: "alice", UID: "u-1", Groups: []string{"g1", "g2", apiserver.GroupAuthenticated},
				Extra: map[string][]string{"scopes": {"a", "b"}, "example.com/team": {"x"}}}, 201, ""},
		{"a service account gets its groups", "admin", []string{"Impersonate-User", "system:serviceaccount:ns1:robot"},
			apiserver.User{Name: "system:serviceaccount:ns1:robot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns1", apiserver.GroupAuthenticated}}, 201, ""},
		{"a service account with groups given", "admin", []string{"Impersonate-User", "system:serviceaccount:ns1:robot", "Impersonate-Group", "g"},
			apiserver.User{Name: "system:serviceaccount:ns1:robot", Groups: []string{"g", apiserver.GroupAuthenticated}}, 201, ""},
		{"anonymous", "admin", []string{"Impersonate-User", apiserver.UserAnonymous},
			apiserver.User{Name: apiserver.UserAnonymous, Groups: []string{apiserver.GroupUnauthenticated}}, 201, ""},
		{"system:unauthenticated given", "admin", []string{"Impersonate-User", "alice", "Impersonate-Group", apiserver.GroupUnauthenticated},
			apiserver.User{Name: "alice", Groups: []string{apiserver.GroupUnauthenticated}}, 201, ""},
		{"allowed by name", "viewer", []string{"Impersonate-User", "alice", "Impersonate-Group", "viewers"},
			apiserver.User{Name: "alice", Groups: []string{"viewers", apiserver.GroupAuthenticated}}, 201, ""},
		{"user refused", "viewer", []string{"Impersonate-User", "bob"}, apiserver.User{}, 403,
			`users "bob" is forbidden: User "viewer" cannot impersonate resource "users" in API group "" at the cluster scope`},
		{"group refused", "viewer", []string{"Impersonate-User", "alice", "Impersonate-Group", "admins"}, apiserver.User{}, 403,
			`groups "admins" is forbidden: User "viewer" cannot impersonate resource "groups" in API group "" at the cluster scope`},
		{"service account refused", "viewer", []string{"Impersonate-User", "system:serviceaccount:ns1:robot"}, apiserver.User{}, 403,
			`serviceaccounts "robot" is forbidden: User "viewer" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"`},
		{"uid refused", "viewer", []string{"Impersonate-User", "alice", "Impersonate-Uid", "1"}, apiserver.User{}, 403,
			`uids.authentication.k8s.io "1" is forbidden: User "viewer" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`},
		{"extra refused", "viewer", []string{"Impersonate-User", "alice", "Impersonate-Extra-Scopes", "s"}, apiserver.User{}, 403,
			`userextras.authentication.k8s.io "s" is forbidden: User "viewer" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope`},
		{"group without user", "admin", []string{"Impersonate-Group", "g"}, apiserver.User{}, 400, "requested [group g] without impersonating a user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, r := whoami(t, c, tc.token, tc.header...)
			if tc.code != http.StatusCreated {
				st := r.failure(t, tc.code, map[int]kapi.StatusReason{400: kapi.StatusReasonBadRequest, 403: kapi.StatusReasonForbidden}[tc.code])
				if st.Message != tc.message {
					t.Errorf("message\n got %s\nwant %s", st.Message, tc.message)
				}
				return
			}
			r.mustCode(t, http.StatusCreated)
			if !reflect.DeepEqual(u, tc.want) {
				t.Errorf("user %+v, want %+v", u, tc.want)
			}
		})
	}

	// The impersonated user is who the request is authorized as.
	c.do(http.MethodGet, widgetPath("team-a", ""), nil, "Authorization", "Bearer admin", "Impersonate-User", "alice").
		failure(t, http.StatusForbidden, kapi.StatusReasonForbidden)
	c.do(http.MethodGet, widgetPath("team-a", ""), nil, "Authorization", "Bearer admin", "Impersonate-User", "alice", "Impersonate-Group", "viewers").
		mustCode(t, http.StatusOK)
}

// TestAccessReviews asks SelfSubjectAccessReviews as kubectl auth can-i
// does, and SelfSubjectRulesReviews as can-i --list.
func TestAccessReviews(t *testing.T) {
	rec := &recorder{}
	c := accessClient(t, accessRules(t), rec)
	ssar := func(token, spec string) (status struct {
		Allowed, Denied bool
		Reason          string
		EvaluationError string
	}) {
		t.Helper()
		r := c.do(http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			`{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":{},"spec":`+spec+`}`,
			"Authorization", "Bearer "+token).mustCode(t, http.StatusCreated)
		var review struct {
			Kind, APIVersion string
			Spec             json.RawMessage
			Status           *struct {
				Allowed, Denied bool
				Reason          string
				EvaluationError string
			}
		}
		r.into(t, &review)
		if review.Kind != "SelfSubjectAccessReview" || review.APIVersion != "authorization.k8s.io/v1" || review.Status == nil {
			t.Fatalf("review %s", r.Body)
		}
		var want, got any
		_ = json.Unmarshal([]byte(spec), &want)
		_ = json.Unmarshal(review.Spec, &got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("spec %s, want %s", review.Spec, spec)
		}
		return *review.Status
	}
	if st := ssar("viewer", `{"resourceAttributes":{"namespace":"team-a","verb":"list","group":"example.com","resource":"widgets"}}`); !st.Allowed || st.Denied {
		t.Errorf("viewer lists widgets in team-a: %+v, want allowed", st)
	}
	if st := ssar("viewer", `{"resourceAttributes":{"namespace":"team-a","verb":"create","group":"example.com","resource":"widgets"}}`); st.Allowed || st.Denied {
		t.Errorf("viewer creates widgets in team-a: %+v, want not allowed, not denied", st)
	}
	if st := ssar("viewer", `{"nonResourceAttributes":{"path":"/apis","verb":"get"}}`); !st.Allowed {
		t.Errorf("viewer gets /apis: %+v", st)
	}
	rec.decision, rec.reason = apiserver.DecisionDeny, "no way"
	if st := ssar("viewer", `{"resourceAttributes":{"verb":"delete","group":"example.com","resource":"widgetclasses","name":"c"}}`); st.Allowed || !st.Denied || st.Reason != "no way" {
		t.Errorf("a denial: %+v", st)
	}
	rec.take()
	ssar("viewer", `{"resourceAttributes":{"namespace":"team-a","verb":"list","group":"example.com","version":"v1","resource":"widgets","subresource":"status",`+
		`"labelSelector":{"rawSelector":"app in (a,b)"},"fieldSelector":{"requirements":[{"key":"spec.color","operator":"NotIn","values":["Red"]}]}}}`)
	asked := rec.take()
	want := apiserver.Attributes{User: apiserver.User{Name: "viewer", UID: "2", Groups: []string{"viewers", apiserver.GroupAuthenticated}},
		Verb: "list", ResourceRequest: true, APIGroup: "example.com", APIVersion: "v1", Namespace: "team-a", Resource: "widgets", Subresource: "status",
		LabelSelector: []apiserver.SelectorRequirement{{Key: "app", Operator: "in", Values: []string{"a", "b"}}},
		FieldSelector: []apiserver.SelectorRequirement{{Key: "spec.color", Operator: "notin", Values: []string{"Red"}}}}
	if len(asked) != 1 || !reflect.DeepEqual(asked[0], want) {
		t.Errorf("the authorizer was asked %+v\nwant %+v", asked, want)
	}
	rec.decision = apiserver.DecisionNoOpinion

	for name, spec := range map[string]string{
		"neither": `{}`,
		"both":    `{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"path":"/","verb":"get"}}`,
	} {
		r := c.do(http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", `{"spec":`+spec+`}`, "Authorization", "Bearer viewer")
		st := r.failure(t, http.StatusUnprocessableEntity, kapi.StatusReasonInvalid)
		if !strings.Contains(st.Message, "exactly one of nonResourceAttributes or resourceAttributes must be specified") {
			t.Errorf("%s: %s", name, st.Message)
		}
	}

	rules := func(token, ns string) (status struct {
		ResourceRules []struct {
			Verbs, APIGroups, Resources, ResourceNames []string
		}
		NonResourceRules []struct{ Verbs, NonResourceURLs []string }
		Incomplete       bool
	}) {
		t.Helper()
		r := c.do(http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
			`{"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1","spec":{"namespace":"`+ns+`"}}`, "Authorization", "Bearer "+token)
		r.mustCode(t, http.StatusCreated)
		var review struct{ Status json.RawMessage }
		r.into(t, &review)
		if err := json.Unmarshal(review.Status, &status); err != nil {
			t.Fatal(err)
		}
		return status
	}
	st := rules("viewer", "team-a")
	var resources []string
	for _, r := range st.ResourceRules {
		resources = append(resources, strings.Join(r.Verbs, ",")+" "+strings.Join(r.Resources, ",")+" "+strings.Join(r.ResourceNames, ","))
	}
	wantResources := []string{"create selfsubjectreviews ", "create selfsubjectaccessreviews,selfsubjectrulesreviews ", "get,list widgets ", "impersonate users alice", "impersonate groups viewers"}
	if !slices.Equal(resources, wantResources) || len(st.NonResourceRules) != 1 || !st.Incomplete {
		t.Errorf("viewer's rules in team-a: %v %+v incomplete %v; want %v, one non-resource rule, incomplete (the recorder lists none)", resources, st.NonResourceRules, st.Incomplete, wantResources)
	}
	if st := rules("viewer", "team-b"); len(st.ResourceRules) != 4 {
		t.Errorf("viewer's rules in team-b: %+v, want widgets left out", st.ResourceRules)
	}
	c.do(http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", `{"spec":{}}`, "Authorization", "Bearer viewer").
		failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)

	// Without the recorder, the rules are complete.
	c = accessClient(t, accessRules(t))
	if st := rules("viewer", "team-a"); st.Incomplete {
		t.Errorf("RulesAuthorizer alone: incomplete")
	}
	// Without authorizers, everyone may do everything.
	c = accessClient(t)
	if st := rules("viewer", "team-a"); st.Incomplete || len(st.ResourceRules) != 1 || len(st.NonResourceRules) != 1 || st.ResourceRules[0].Verbs[0] != "*" {
		t.Errorf("no authorizer: %+v", st)
	}
}

// TestAccessReviewDiscovery: the reviews are listed as kube-apiserver lists
// them when the server authenticates, and absent when it does not.
func TestAccessReviewDiscovery(t *testing.T) {
	c := accessClient(t)
	auth := []string{"Authorization", "Bearer viewer"}
	var groups struct{ Groups []struct{ Name string } }
	c.do(http.MethodGet, "/apis", nil, auth...).mustCode(t, http.StatusOK).into(t, &groups)
	var names []string
	for _, g := range groups.Groups {
		names = append(names, g.Name)
	}
	if !slices.Contains(names, "authentication.k8s.io") || !slices.Contains(names, "authorization.k8s.io") || !slices.Contains(names, "example.com") {
		t.Errorf("groups %v", names)
	}
	var list struct {
		GroupVersion string
		Resources    []struct {
			Name, Kind string
			Namespaced bool
			Verbs      []string
		}
	}
	c.do(http.MethodGet, "/apis/authorization.k8s.io/v1", nil, auth...).mustCode(t, http.StatusOK).into(t, &list)
	if list.GroupVersion != "authorization.k8s.io/v1" || len(list.Resources) != 2 || list.Resources[0].Name != "selfsubjectaccessreviews" ||
		list.Resources[0].Kind != "SelfSubjectAccessReview" || list.Resources[0].Namespaced || !slices.Equal(list.Resources[0].Verbs, []string{"create"}) {
		t.Errorf("authorization.k8s.io/v1: %+v", list)
	}
	var group struct{ Name string }
	c.do(http.MethodGet, "/apis/authentication.k8s.io", nil, auth...).mustCode(t, http.StatusOK).into(t, &group)
	if group.Name != "authentication.k8s.io" {
		t.Errorf("group %+v", group)
	}
	r := c.do(http.MethodGet, "/apis", nil, append(auth, "Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")...).mustCode(t, http.StatusOK)
	if !strings.Contains(string(r.Body), `"resource":"selfsubjectreviews","responseKind":{"group":"authentication.k8s.io","version":"v1","kind":"SelfSubjectReview"},"scope":"Cluster"`) {
		t.Errorf("aggregated discovery: %s", r.Body)
	}

	_, open := newTestServer(t)
	open.get("/apis/authorization.k8s.io/v1").mustCode(t, http.StatusNotFound)
	open.do(http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews", `{}`).mustCode(t, http.StatusNotFound)
}

// accessCorpus is bad input to the review endpoints and impersonation.
func accessCorpus() []corpusCase {
	var cases []corpusCase
	add := func(name, method, path string, body []byte, code int, header ...string) {
		token := "admin" // past authorization, to the handlers
		if code == http.StatusForbidden {
			token = "viewer"
		}
		cases = append(cases, corpusCase{name: name, method: method, path: path, body: body, code: code,
			header: append([]string{"Authorization", "Bearer " + token}, header...)})
	}
	for _, p := range []string{"/apis/authentication.k8s.io/v1/selfsubjectreviews", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"} {
		add(p+"/not JSON", http.MethodPost, p, []byte(`{"spec":`), 400, "Content-Type", "application/json")
		add(p+"/a list", http.MethodPost, p, []byte(`[]`), 400)
		add(p+"/wrong kind", http.MethodPost, p, []byte(`{"kind":"Widget","apiVersion":"example.com/v1"}`), 400)
		add(p+"/trailing data", http.MethodPost, p, []byte(`{} {}`), 400)
		add(p+"/deep", http.MethodPost, p, nest(`{"spec":`, `{}`, `}`, 100000), 0)
		add(p+"/bad protobuf", http.MethodPost, p, []byte("k8s\x00\x0a\xff\xff"), 400, "Content-Type", "application/vnd.kubernetes.protobuf")
		add(p+"/no envelope", http.MethodPost, p, []byte("\x0a\x02{}"), 400, "Content-Type", "application/vnd.kubernetes.protobuf")
		add(p+"/bad YAML", http.MethodPost, p, []byte("spec: [\n"), 400, "Content-Type", "application/yaml")
		add(p+"/bad CBOR", http.MethodPost, p, []byte{0xbf}, 400, "Content-Type", "application/cbor")
		add(p+"/unknown media type", http.MethodPost, p, []byte(`{}`), 415, "Content-Type", "text/plain")
		add(p+"/too large", http.MethodPost, p, append(append([]byte(`{"x":"`), strings.Repeat("a", bodyLimit)...), `"}`...), 413)
		add(p+"/not acceptable", http.MethodPost, p, []byte(`{"spec":{"namespace":"x","resourceAttributes":{}}}`), 406, "Accept", "application/vnd.kubernetes.protobuf")
		add(p+"/get", http.MethodGet, p, nil, 405)
		add(p+"/put", http.MethodPut, p, []byte(`{}`), 405)
		add(p+"/item", http.MethodGet, p+"/x", nil, 404)
	}
	ssar := "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	add("ssar/wrong types", http.MethodPost, ssar, []byte(`{"spec":{"resourceAttributes":{"verb":1}}}`), 400)
	add("ssar/neither", http.MethodPost, ssar, []byte(`{"spec":{}}`), 422)
	add("ssar/null spec", http.MethodPost, ssar, []byte(`{"spec":null}`), 422)
	add("ssrr/no namespace", http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", []byte(`{"spec":{}}`), 400)
	add("impersonate/group without user", http.MethodGet, "/apis", nil, 400, "Impersonate-Group", "g")
	add("impersonate/uid without user", http.MethodGet, "/apis", nil, 400, "Impersonate-Uid", "1")
	add("impersonate/extra without user", http.MethodGet, "/apis", nil, 400, "Impersonate-Extra-%zz", "1")
	add("impersonate/not allowed", http.MethodGet, "/apis", nil, 403, "Impersonate-User", "root")
	add("impersonate/bad service account", http.MethodGet, "/apis", nil, 403, "Impersonate-User", "system:serviceaccount::")
	add("impersonate/extra not allowed", http.MethodGet, "/apis", nil, 403, "Impersonate-User", "alice", "Impersonate-Extra-%zz", "1")
	return cases
}

// TestAccessCorpus sends the bad input to a server with users: each is a
// 4xx Status.
func TestAccessCorpus(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithAuthentication(apiserver.StaticTokens(accessUsers)),
		apiserver.WithAuthorization(accessRules(t)), apiserver.WithMaxRequestBodyBytes(bodyLimit))
	for _, tc := range accessCorpus() {
		t.Run(tc.name, func(t *testing.T) {
			r, err := sendCase(t.Context(), srv.Client(), srv.URL, tc)
			if err != nil {
				t.Fatal(err)
			}
			if p := statusProblem(r, tc.code); p != "" {
				t.Errorf("%s %.100s: %s", tc.method, tc.path, p)
			}
		})
	}
}

// FuzzAccessReviews sends any body to the review endpoints and any
// impersonation headers: never a 5xx.
func FuzzAccessReviews(f *testing.F) {
	for _, tc := range accessCorpus() {
		if len(tc.body) < 4<<10 {
			f.Add(tc.path, tc.body, "", "")
		}
	}
	f.Add("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", []byte(`{"spec":{"resourceAttributes":{"labelSelector":{"rawSelector":"a in (b"}}}}`), "", "")
	f.Add("/apis", []byte(nil), "alice", "g")
	api, err := apiserver.New(apiserver.WithAuthentication(apiserver.StaticTokens(accessUsers)), apiserver.WithAuthorization(accessRules(f)))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = api.Close() })
	if err := widgetapi.Register(api); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string, body []byte, user, group string) {
		method := http.MethodPost
		if len(body) == 0 {
			method = http.MethodGet
		}
		if !strings.HasPrefix(path, "/") {
			return
		}
		r, err := http.NewRequest(method, "http://kapi"+path, strings.NewReader(string(body)))
		if err != nil {
			return
		}
		r.Header.Set("Authorization", "Bearer admin")
		if user != "" {
			r.Header["Impersonate-User"] = []string{user}
		}
		if group != "" {
			r.Header["Impersonate-Group"] = []string{group}
			r.Header["Impersonate-Extra-"+group] = []string{user}
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%s %s: HTTP %d: %s", method, path, w.Code, w.Body)
		}
	})
}

// TestImpersonatedWrite: admission sees the impersonated user, and the
// host's request keeps its headers.
func TestImpersonatedWrite(t *testing.T) {
	var admitted []apiserver.User
	api, err := apiserver.New(apiserver.WithAuthentication(apiserver.StaticTokens(accessUsers)), apiserver.WithAuthorization(accessRules(t)),
		apiserver.WithValidatingAdmission(func(_ context.Context, req *apiserver.AdmissionRequest) error {
			admitted = append(admitted, req.User)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	if err := widgetapi.Register(api); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, widgetPath("team-a", ""), strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer admin")
	req.Header.Set("Impersonate-User", "system:serviceaccount:team-a:robot")
	req.Header.Set("Impersonate-Group", "admins") // who may create widgets
	req.Header.Set("Impersonate-Extra-Scopes", "x")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	want := apiserver.User{Name: "system:serviceaccount:team-a:robot", Groups: []string{"admins", apiserver.GroupAuthenticated},
		Extra: map[string][]string{"scopes": {"x"}}}
	if len(admitted) != 1 || !reflect.DeepEqual(admitted[0], want) {
		t.Errorf("admitted as %+v, want %+v", admitted, want)
	}
	if req.Header.Get("Impersonate-User") == "" || req.Header.Get("Impersonate-Extra-Scopes") == "" {
		t.Errorf("the host's request lost its headers: %v", req.Header)
	}
}
