package auth_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/kapi-dev/kapi/auth"
)

func ExampleStaticTokens() {
	tokens := auth.StaticTokens(map[string]auth.User{
		"s3cret": {Name: "alice", UID: "1", Groups: []string{"admins"}},
	})
	req := httptest.NewRequest("GET", "/apis", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	user, ok, err := tokens.Authenticate(req)
	fmt.Println(user.Name, user.Groups, ok, err)
	// Output: alice [admins] true <nil>
}

func ExampleReadTokenFile() {
	// The format of kube-apiserver's --token-auth-file.
	tokens, err := auth.ReadTokenFile(strings.NewReader(`s3cret,alice,1,"admins,devs"
v13wer,victor,2,viewers
`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", tokens["v13wer"])

	req := httptest.NewRequest("GET", "/apis", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	user, ok, err := auth.StaticTokens(tokens).Authenticate(req)
	fmt.Println(user.Name, user.Groups, ok, err)
	// Output:
	// {Name:victor UID:2 Groups:[viewers] Extra:map[]}
	// alice [admins devs] true <nil>
}

func ExampleClientCertificates() {
	clientCAs := x509.NewCertPool() // with the CAs that sign client certificates
	certs, err := auth.ClientCertificates(clientCAs)
	if err != nil {
		log.Fatal(err)
	}
	// A kapi server takes certs in apiserver.WithAuthentication: CN=alice,
	// O=admins is then user alice in group admins.
	whoami := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok, err := certs.Authenticate(r)
		if !ok || err != nil {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		fmt.Fprintln(w, user.Name)
	})

	// The host's server asks for client certificates without verifying
	// them (kube-apiserver's RequestClientCert); the authenticator verifies
	// them against clientCAs alone, and one it refuses leaves the
	// connection to a token.
	server := &http.Server{
		Addr:      "127.0.0.1:6443",
		Handler:   whoami,
		TLSConfig: &tls.Config{ClientAuth: tls.RequestClientCert, ClientCAs: clientCAs},
	}
	_ = server // server.ListenAndServeTLS("server.crt", "server.key")
}

func ExampleClientCertificatesFrom() {
	// The CA bundle a reloader replaces when its file changes; every request
	// is verified against the pool of the moment.
	var clientCAs atomic.Pointer[x509.CertPool]
	clientCAs.Store(x509.NewCertPool())
	certs := auth.ClientCertificatesFrom(clientCAs.Load)

	req := httptest.NewRequest("GET", "/apis", nil) // plain HTTP: no certificate
	_, ok, err := certs.Authenticate(req)
	fmt.Println(ok, err)
	// Output: false <nil>
}

func ExampleUnionAuthenticator() {
	// A token, or else a client certificate.
	certs, err := auth.ClientCertificates(x509.NewCertPool())
	if err != nil {
		log.Fatal(err)
	}
	either := auth.UnionAuthenticator(
		auth.StaticTokens(map[string]auth.User{"s3cret": {Name: "alice"}}),
		certs,
	)
	req := httptest.NewRequest("GET", "/apis", nil)
	_, ok, err := either.Authenticate(req)
	fmt.Println("no credentials:", ok, err)
	req.Header.Set("Authorization", "Bearer guess")
	_, ok, err = either.Authenticate(req)
	fmt.Println("a wrong token:", ok, err)
	// Output:
	// no credentials: false <nil>
	// a wrong token: false invalid bearer token
}

func ExampleAuthenticatorFunc() {
	// A header set by a trusted proxy in front of the service.
	proxied := auth.AuthenticatorFunc(func(r *http.Request) (auth.User, bool, error) {
		name := r.Header.Get("X-Remote-User")
		if name == "" {
			return auth.User{}, false, nil
		}
		return auth.User{Name: name, Groups: r.Header.Values("X-Remote-Group")}, true, nil
	})
	req := httptest.NewRequest("GET", "/apis", nil)
	req.Header.Set("X-Remote-User", "alice")
	req.Header.Add("X-Remote-Group", "admins")
	user, ok, err := proxied.Authenticate(req)
	fmt.Println(user.Name, user.Groups, ok, err)
	// Output: alice [admins] true <nil>
}

func ExampleRulesAuthorizer() {
	rules, err := auth.RulesAuthorizer(
		// What kube's default RBAC lets every user do: read discovery.
		auth.Binding{Groups: []string{auth.GroupAuthenticated}, Rules: []auth.Rule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version"}},
		}},
		auth.Binding{Users: []string{"victor"}, Rules: []auth.Rule{
			{Verbs: []string{"get", "list"}, APIGroups: []string{"notes.example.com"}, Resources: []string{"notes"}, Namespaces: []string{"team-a"}},
		}},
	)
	if err != nil {
		log.Fatal(err)
	}
	victor := auth.User{Name: "victor", Groups: []string{auth.GroupAuthenticated}}
	notes := func(verb, namespace string) auth.Attributes {
		return auth.Attributes{User: victor, Verb: verb, ResourceRequest: true,
			APIGroup: "notes.example.com", APIVersion: "v1", Namespace: namespace, Resource: "notes"}
	}
	for _, a := range []auth.Attributes{
		{User: victor, Verb: "get", Path: "/apis"},
		notes("list", "team-a"),
		notes("watch", "team-a"),
		notes("list", "team-b"),
	} {
		d, _, err := rules.Authorize(context.Background(), a)
		fmt.Println(a.Verb, a.Path+a.Namespace, d, err)
	}
	// Output:
	// get /apis Allow <nil>
	// list team-a Allow <nil>
	// watch team-a NoOpinion <nil>
	// list team-b NoOpinion <nil>
}

func ExampleAuthorizerFunc() {
	ownNamespace := auth.AuthorizerFunc(func(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
		if !a.ResourceRequest || a.Namespace == a.User.Name {
			return auth.DecisionAllow, "", nil
		}
		return auth.DecisionNoOpinion, "users may only touch their own namespace", nil
	})
	bob := auth.User{Name: "bob"}
	for _, ns := range []string{"bob", "alice"} {
		d, reason, _ := ownNamespace.Authorize(context.Background(), auth.Attributes{User: bob, Verb: "list", ResourceRequest: true, Namespace: ns, Resource: "notes"})
		fmt.Printf("%s: %s %q\n", ns, d, reason)
	}
	// Output:
	// bob: Allow ""
	// alice: NoOpinion "users may only touch their own namespace"
}

func ExampleUserFrom() {
	ctx := auth.WithUser(context.Background(), auth.User{Name: "alice"})
	user, ok := auth.UserFrom(ctx)
	fmt.Println(user.Name, ok)
	_, ok = auth.UserFrom(context.Background())
	fmt.Println(ok)
	// Output:
	// alice true
	// false
}
