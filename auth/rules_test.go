package auth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/auth"
)

// TestRulesAuthorizer matches requests as Kubernetes' RBAC does.
func TestRulesAuthorizer(t *testing.T) {
	widgetsReq := func(verb, ns, name string) auth.Attributes {
		return auth.Attributes{Verb: verb, ResourceRequest: true, APIGroup: "example.com", APIVersion: "v1", Namespace: ns, Resource: "widgets", Name: name}
	}
	sub := func(a auth.Attributes, s string) auth.Attributes { a.Subresource = s; return a }
	group := func(a auth.Attributes, g string) auth.Attributes { a.APIGroup = g; return a }
	path := func(verb, p string) auth.Attributes { return auth.Attributes{Verb: verb, Path: p} }
	viewer := auth.Rule{Verbs: []string{"get", "list"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Namespaces: []string{"team-a"}}

	cases := []struct {
		name  string
		rule  auth.Rule
		req   auth.Attributes
		allow bool
	}{
		{"verb and resource", viewer, widgetsReq("get", "team-a", "x"), true},
		{"list", viewer, widgetsReq("list", "team-a", ""), true},
		{"other verb", viewer, widgetsReq("watch", "team-a", ""), false},
		{"other namespace", viewer, widgetsReq("get", "team-b", "x"), false},
		{"across namespaces", viewer, widgetsReq("list", "", ""), false},
		{"other group", viewer, group(widgetsReq("get", "team-a", "x"), "other.com"), false},
		{"core group", auth.Rule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"widgets"}}, group(widgetsReq("get", "a", "x"), ""), true},
		{"a subresource is not the resource", viewer, sub(widgetsReq("get", "team-a", "x"), "status"), false},
		{"resource/subresource", auth.Rule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"widgets/status"}}, sub(widgetsReq("get", "a", "x"), "status"), true},
		{"resource/subresource is not the resource", auth.Rule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"widgets/status"}}, widgetsReq("get", "a", "x"), false},
		{"*/subresource", auth.Rule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/status"}}, sub(widgetsReq("get", "a", "x"), "status"), true},
		{"*/subresource, other subresource", auth.Rule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/status"}}, sub(widgetsReq("get", "a", "x"), "scale"), false},
		{"*/subresource is not a resource", auth.Rule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/status"}}, widgetsReq("get", "a", "status"), false},
		{"* covers subresources", auth.Rule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, sub(widgetsReq("update", "a", "x"), "status"), true},
		{"* everywhere", auth.Rule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, widgetsReq("deletecollection", "", ""), true},
		{"namespaces *", auth.Rule{Verbs: []string{"list"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}}, widgetsReq("list", "", ""), true},
		{"resource names", auth.Rule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"widgets"}, ResourceNames: []string{"x"}}, widgetsReq("get", "a", "x"), true},
		{"other name", auth.Rule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"widgets"}, ResourceNames: []string{"x"}}, widgetsReq("get", "a", "y"), false},
		{"resource names, no name", auth.Rule{Verbs: []string{"list"}, APIGroups: []string{"*"}, Resources: []string{"widgets"}, ResourceNames: []string{"x"}}, widgetsReq("list", "a", ""), false},
		{"resource names, a watch of one", auth.Rule{Verbs: []string{"watch"}, APIGroups: []string{"*"}, Resources: []string{"widgets"}, ResourceNames: []string{"x"}}, widgetsReq("watch", "a", "x"), true},
		{"a resource rule is not a path rule", auth.Rule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, path("get", "/apis"), false},
		{"path", auth.Rule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis"}}, path("get", "/apis"), true},
		{"path, other verb", auth.Rule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis"}}, path("post", "/apis"), false},
		{"path prefix", auth.Rule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, path("get", "/apis/example.com/v1"), true},
		{"path prefix is not the path", auth.Rule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, path("get", "/apis"), false},
		{"path *", auth.Rule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, path("delete", "/x"), true},
		{"a path rule is not a resource rule", auth.Rule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, widgetsReq("get", "a", "x"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, b := range []auth.Binding{{Users: []string{"bob"}}, {Groups: []string{"devs"}}} {
				b.Rules = []auth.Rule{tc.rule}
				az, err := auth.RulesAuthorizer(b)
				if err != nil {
					t.Fatal(err)
				}
				req := tc.req
				req.User = auth.User{Name: "bob", Groups: []string{"devs"}}
				d, _, err := az.Authorize(context.Background(), req)
				if err != nil || (d == auth.DecisionAllow) != tc.allow {
					t.Errorf("binding %v: %v, %v; want allowed: %v", b, d, err, tc.allow)
				}
				if d == auth.DecisionDeny {
					t.Error("the rules authorizer denied: it only allows or has no opinion")
				}
				req.User = auth.User{Name: "eve", Groups: []string{"others"}}
				if d, _, _ := az.Authorize(context.Background(), req); d != auth.DecisionNoOpinion {
					t.Errorf("a user the binding does not name: %v", d)
				}
			}
		})
	}
}

func TestRulesAuthorizerErrors(t *testing.T) {
	ok := auth.Rule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	cases := []struct {
		name string
		b    auth.Binding
		want string
	}{
		{"no subject", auth.Binding{Rules: []auth.Rule{ok}}, "binding 0 names no user or group"},
		{"no verbs", auth.Binding{Users: []string{"a"}, Rules: []auth.Rule{ok, {APIGroups: []string{""}, Resources: []string{"pods"}}}}, "binding 0, rule 1: no verbs"},
		{"no groups", auth.Binding{Users: []string{"a"}, Rules: []auth.Rule{{Verbs: []string{"get"}, Resources: []string{"pods"}}}}, "no API groups"},
		{"no resources", auth.Binding{Users: []string{"a"}, Rules: []auth.Rule{{Verbs: []string{"get"}, APIGroups: []string{""}}}}, "no resources"},
		{"both", auth.Binding{Users: []string{"a"}, Rules: []auth.Rule{{Verbs: []string{"get"}, APIGroups: []string{""}, NonResourceURLs: []string{"/x"}}}}, "both regular resources and non-resource URLs"},
		{"namespaced path", auth.Binding{Users: []string{"a"}, Rules: []auth.Rule{{Verbs: []string{"get"}, Namespaces: []string{"a"}, NonResourceURLs: []string{"/x"}}}}, "both regular resources and non-resource URLs"},
		{"inner star", auth.Binding{Users: []string{"a"}, Rules: []auth.Rule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/x/*/y"}}}}, "only allowed at the end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := auth.RulesAuthorizer(tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RulesAuthorizer: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestRulesAuthorizerCopies: changing the bindings afterwards changes
// nothing.
func TestRulesAuthorizerCopies(t *testing.T) {
	bindings := []auth.Binding{{Users: []string{"bob"}, Rules: []auth.Rule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis"}}}}}
	az, err := auth.RulesAuthorizer(bindings...)
	if err != nil {
		t.Fatal(err)
	}
	bindings[0].Users[0] = "eve"
	bindings[0].Rules[0].Verbs[0] = "delete"
	if d, _, _ := az.Authorize(context.Background(), auth.Attributes{User: auth.User{Name: "bob"}, Verb: "get", Path: "/apis"}); d != auth.DecisionAllow {
		t.Errorf("bob: %v", d)
	}
}
