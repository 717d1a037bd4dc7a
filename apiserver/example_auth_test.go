package apiserver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

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

func ExampleStaticTokens() {
	auth := apiserver.StaticTokens(map[string]apiserver.User{
		"s3cret": {Name: "alice", UID: "1", Groups: []string{"admins"}},
	})
	req := httptest.NewRequest("GET", "/apis", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	user, ok, err := auth.Authenticate(req)
	fmt.Println(user.Name, user.Groups, ok, err)
	// Output: alice [admins] true <nil>
}

func ExampleReadTokenFile() {
	// The format of kube-apiserver's --token-auth-file.
	tokens, err := apiserver.ReadTokenFile(strings.NewReader(`s3cret,alice,1,"admins,devs"
v13wer,victor,2,viewers
`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", tokens["v13wer"])
	srv := noteServer(apiserver.WithAuthentication(apiserver.StaticTokens(tokens)))
	defer srv.Close()
	fmt.Println(send(srv, "GET", "/apis", "s3cret"))
	// Output:
	// {Name:victor UID:2 Groups:[viewers] Extra:map[]}
	// 200
}

func ExampleClientCertificates() {
	clientCAs := x509.NewCertPool() // with the CAs that sign client certificates
	certs, err := apiserver.ClientCertificates(clientCAs)
	if err != nil {
		log.Fatal(err)
	}
	srv := noteServer(apiserver.WithAuthentication(
		certs, // CN=alice,O=admins is user alice in group admins
	))
	defer srv.Close()

	// The host's server asks for client certificates; kapi verifies them
	// against clientCAs alone, whatever else the TLS pool trusts.
	server := &http.Server{
		Addr:      ":6443",
		Handler:   srv,
		TLSConfig: &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: clientCAs},
	}
	_ = server // server.ListenAndServeTLS("server.crt", "server.key")
}

func ExampleUnionAuthenticator() {
	// A token, or else a client certificate.
	certs, err := apiserver.ClientCertificates(x509.NewCertPool())
	if err != nil {
		log.Fatal(err)
	}
	auth := apiserver.UnionAuthenticator(
		apiserver.StaticTokens(map[string]apiserver.User{"s3cret": {Name: "alice"}}),
		certs,
	)
	req := httptest.NewRequest("GET", "/apis", nil)
	_, ok, err := auth.Authenticate(req)
	fmt.Println("no credentials:", ok, err)
	req.Header.Set("Authorization", "Bearer guess")
	_, ok, err = auth.Authenticate(req)
	fmt.Println("a wrong token:", ok, err)
	// Output:
	// no credentials: false <nil>
	// a wrong token: false invalid bearer token
}

func ExampleRulesAuthorizer() {
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

func ExampleAuthenticatorFunc() {
	// A header set by a trusted proxy in front of the service.
	proxied := apiserver.AuthenticatorFunc(func(r *http.Request) (apiserver.User, bool, error) {
		name := r.Header.Get("X-Remote-User")
		if name == "" {
			return apiserver.User{}, false, nil
		}
		return apiserver.User{Name: name, Groups: r.Header.Values("X-Remote-Group")}, true, nil
	})
	srv := noteServer(apiserver.WithAuthentication(proxied))
	defer srv.Close()

	req := httptest.NewRequest("GET", "/apis", nil)
	req.Header.Set("X-Remote-User", "alice")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	// Output: 200
}

func ExampleAuthorizerFunc() {
	ownNamespace := apiserver.AuthorizerFunc(func(_ context.Context, a apiserver.Attributes) (apiserver.Decision, string, error) {
		if !a.ResourceRequest || a.Namespace == a.User.Name {
			return apiserver.DecisionAllow, "", nil
		}
		return apiserver.DecisionNoOpinion, "users may only touch their own namespace", nil
	})
	srv := noteServer(
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"t": {Name: "bob"}})),
		apiserver.WithAuthorization(ownNamespace),
	)
	defer srv.Close()

	fmt.Println(send(srv, "GET", "/apis/notes.example.com/v1/namespaces/bob/notes", "t"))
	fmt.Println(send(srv, "GET", "/apis/notes.example.com/v1/namespaces/alice/notes", "t"))
	// Output:
	// 200
	// 403 notes.notes.example.com is forbidden: User "bob" cannot list resource "notes" in API group "notes.example.com" in the namespace "alice": users may only touch their own namespace
}
