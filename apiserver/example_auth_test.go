package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
)

// send serves one request, without a network, and says what came back:
// the code and, for a failure, the Status message.
func send(h http.Handler, method, path, token string) string {
	req := httptest.NewRequest(method, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var st kapi.Status
	if rec.Code >= 400 && json.Unmarshal(rec.Body.Bytes(), &st) == nil {
		return fmt.Sprintf("%d %s", rec.Code, st.Message)
	}
	return fmt.Sprint(rec.Code)
}

func noteServer(opts ...apiserver.Option) *apiserver.Server {
	srv, err := apiserver.New(opts...)
	if err != nil {
		log.Fatal(err)
	}
	err = apiserver.Register(srv, apiserver.Resource[Note]{
		Group: "notes.example.com", Version: "v1", Kind: "Note", Plural: "notes", Namespaced: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	return srv
}

func ExampleWithAuthentication() {
	srv := noteServer(apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{
		"s3cret": {Name: "alice"},
	})))
	defer srv.Close()

	fmt.Println(send(srv, "GET", "/apis/notes.example.com/v1/namespaces/default/notes", ""))
	fmt.Println(send(srv, "GET", "/apis/notes.example.com/v1/namespaces/default/notes", "wrong"))
	fmt.Println(send(srv, "GET", "/apis/notes.example.com/v1/namespaces/default/notes", "s3cret"))
	fmt.Println(send(srv, "GET", "/healthz", "")) // always allowed, for probes
	// Output:
	// 401 Unauthorized
	// 401 Unauthorized
	// 200
	// 200
}

func ExampleWithAuthorization() {
	readOnly := apiserver.AuthorizerFunc(func(_ context.Context, a apiserver.Attributes) (apiserver.Decision, string, error) {
		switch a.Verb {
		case "get", "list", "watch":
			return apiserver.DecisionAllow, "", nil
		}
		return apiserver.DecisionDeny, "this server is read-only", nil
	})
	srv := noteServer(
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"t": {Name: "bob"}})),
		apiserver.WithAuthorization(readOnly),
	)
	defer srv.Close()

	fmt.Println(send(srv, "GET", "/apis/notes.example.com/v1/namespaces/default/notes", "t"))
	fmt.Println(send(srv, "DELETE", "/apis/notes.example.com/v1/namespaces/default/notes/a", "t"))
	// Output:
	// 200
	// 403 notes.notes.example.com "a" is forbidden: User "bob" cannot delete resource "notes" in API group "notes.example.com" in the namespace "default": this server is read-only
}

func ExampleWithAnonymous() {
	// Anyone may read discovery; everything else needs a token.
	public, err := apiserver.RulesAuthorizer(
		apiserver.Binding{Groups: []string{apiserver.GroupUnauthenticated, apiserver.GroupAuthenticated}, Rules: []apiserver.Rule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*"}},
		}},
		apiserver.Binding{Groups: []string{apiserver.GroupAuthenticated}, Rules: []apiserver.Rule{
			{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
		}},
	)
	if err != nil {
		log.Fatal(err)
	}
	srv := noteServer(
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"t": {Name: "bob"}})),
		apiserver.WithAnonymous(),
		apiserver.WithAuthorization(public),
	)
	defer srv.Close()

	fmt.Println(send(srv, "GET", "/apis", ""))
	fmt.Println(send(srv, "GET", "/apis/notes.example.com/v1/namespaces/default/notes", ""))
	fmt.Println(send(srv, "GET", "/apis/notes.example.com/v1/namespaces/default/notes", "t"))
	fmt.Println(send(srv, "GET", "/apis", "wrong")) // bad credentials are never anonymous
	// Output:
	// 200
	// 403 notes.notes.example.com is forbidden: User "system:anonymous" cannot list resource "notes" in API group "notes.example.com" in the namespace "default"
	// 200
	// 401 Unauthorized
}

func ExampleWithAlwaysAllowPaths() {
	srv := noteServer(
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"t": {Name: "bob"}})),
		// The health checks and /version need no token; this replaces the
		// default, which is the health checks only.
		apiserver.WithAlwaysAllowPaths("/healthz", "/livez", "/readyz", "/version"),
	)
	defer srv.Close()

	fmt.Println(send(srv, "GET", "/version", ""))
	fmt.Println(send(srv, "GET", "/apis", ""))
	// Output:
	// 200
	// 401 Unauthorized
}

// A server with RulesAuthorizer answers what kube-apiserver with RBAC
// answers (package auth's example shows the rules on their own).
func ExampleWithAuthorization_rules() {
	rules, err := apiserver.RulesAuthorizer(
		// What kube's default RBAC lets every user do: read discovery.
		apiserver.Binding{Groups: []string{apiserver.GroupAuthenticated}, Rules: []apiserver.Rule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version"}},
		}},
		apiserver.Binding{Groups: []string{"admins"}, Rules: []apiserver.Rule{
			{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
		}},
		apiserver.Binding{Users: []string{"victor"}, Rules: []apiserver.Rule{
			{Verbs: []string{"get", "list"}, APIGroups: []string{"notes.example.com"}, Resources: []string{"notes"}, Namespaces: []string{"team-a"}},
		}},
	)
	if err != nil {
		log.Fatal(err)
	}
	srv := noteServer(
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{
			"s3cret": {Name: "alice", Groups: []string{"admins"}},
			"v13wer": {Name: "victor"},
		})),
		apiserver.WithAuthorization(rules),
	)
	defer srv.Close()

	const notes = "/apis/notes.example.com/v1/namespaces/"
	fmt.Println(send(srv, "GET", "/apis", "v13wer"))
	fmt.Println(send(srv, "GET", notes+"team-a/notes", "v13wer"))
	fmt.Println(send(srv, "GET", notes+"team-a/notes?watch=true", "v13wer"))
	fmt.Println(send(srv, "GET", notes+"team-b/notes/n", "v13wer"))
	fmt.Println(send(srv, "DELETE", notes+"team-b/notes", "s3cret"))
	// Output:
	// 200
	// 200
	// 403 notes.notes.example.com is forbidden: User "victor" cannot watch resource "notes" in API group "notes.example.com" in the namespace "team-a"
	// 403 notes.notes.example.com "n" is forbidden: User "victor" cannot get resource "notes" in API group "notes.example.com" in the namespace "team-b"
	// 200
}
