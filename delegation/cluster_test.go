package delegation_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/delegation"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// TestAggregated serves kapi as kube-apiserver's aggregator reaches it:
// the front proxy's requests, a client certificate and a service
// account's token are authenticated by what the cluster's ConfigMap and
// TokenReview say, and authorized by SubjectAccessReview; a certificate of
// the front proxy's CA is no user; a new client CA counts after a reload.
func TestAggregated(t *testing.T) {
	proxyCA, signProxy := newCA(t, "front-proxy CA")
	clientCA, signClient := newCA(t, "client CA")
	newClientCA, signNewClient := newCA(t, "client CA 2")
	pemOf := func(c *x509.Certificate) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
	}
	var mu sync.Mutex
	cmClientCA := pemOf(clientCA)
	cluster := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case delegation.ConfigMapPath:
			mu.Lock()
			defer mu.Unlock()
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "ConfigMap", "data": map[string]string{
				"client-ca-file":                     cmClientCA,
				"requestheader-client-ca-file":       pemOf(proxyCA),
				"requestheader-allowed-names":        `["front-proxy-client"]`,
				"requestheader-username-headers":     `["X-Remote-User"]`,
				"requestheader-group-headers":        `["X-Remote-Group"]`,
				"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
			}})
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			var review map[string]map[string]any
			_ = json.NewDecoder(r.Body).Decode(&review)
			authenticated := review["spec"]["token"] == "sa-token"
			review["status"] = map[string]any{"authenticated": authenticated, "user": map[string]any{"username": "system:serviceaccount:default:robot"}}
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(review)
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			var review map[string]map[string]any
			_ = json.NewDecoder(r.Body).Decode(&review)
			user := review["spec"]["user"]
			review["status"] = map[string]any{"allowed": user == "alice" || user == "carol" || user == "system:serviceaccount:default:robot"}
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(review)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(cluster.Close)

	c := delegation.Cluster{Host: cluster.URL, Client: cluster.Client()}
	auth, err := delegation.LoadAuthentication(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	authn, err := auth.Authenticator()
	if err != nil {
		t.Fatal(err)
	}
	authz, err := delegation.NewSubjectAccessReview(c)
	if err != nil {
		t.Fatal(err)
	}
	api, err := apiserver.New(apiserver.WithAuthentication(authn), apiserver.WithAuthorization(authz))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	if err := widgetapi.Register(api); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(api)
	tlsPool := x509.NewCertPool() // the server's TLS trusts every CA that may sign a client
	for _, ca := range []*x509.Certificate{proxyCA, clientCA, newClientCA} {
		tlsPool.AddCert(ca)
	}
	srv.TLS = &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: tlsPool}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	get := func(cert *x509.Certificate, key *ecdsa.PrivateKey, header ...string) int {
		t.Helper()
		tr := srv.Client().Transport.(*http.Transport).Clone()
		if cert != nil {
			tr.TLSClientConfig.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key}}
		}
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/apis/example.com/v1/namespaces/default/widgets", nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Add(header[i], header[i+1])
		}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name   string
		cert   func(string) (*x509.Certificate, *ecdsa.PrivateKey)
		cn     string
		header []string
		want   int
	}{
		{"the front proxy for alice", keyed(signProxy), "front-proxy-client", []string{"X-Remote-User", "alice"}, 200},
		{"the front proxy for bob, whom the cluster refuses", keyed(signProxy), "front-proxy-client", []string{"X-Remote-User", "bob"}, 403},
		{"a front proxy not allowed", keyed(signProxy), "other-proxy", []string{"X-Remote-User", "alice"}, 401},
		{"a certificate of the front proxy's CA as a user", keyed(signProxy), "alice", nil, 401},
		{"a client certificate", keyed(signClient), "carol", nil, 200},
		{"a client certificate of a CA not yet in the ConfigMap", keyed(signNewClient), "carol", nil, 401},
		{"a service account's token", nil, "", []string{"Authorization", "Bearer sa-token"}, 200},
		{"a wrong token", nil, "", []string{"Authorization", "Bearer nope"}, 401},
	} {
		var cert *x509.Certificate
		var key *ecdsa.PrivateKey
		if tc.cert != nil {
			cert, key = tc.cert(tc.cn)
		}
		if code := get(cert, key, tc.header...); code != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, code, tc.want)
		}
	}

	// Delegate wires the same in one call.
	opts, err := delegation.Delegate(t.Context(), c, 0)
	if err != nil {
		t.Fatal(err)
	}
	api2, err := apiserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api2.Close() })
	if err := widgetapi.Register(api2); err != nil {
		t.Fatal(err)
	}
	for token, want := range map[string]int{"sa-token": 200, "nope": 401} {
		req := httptest.NewRequest(http.MethodGet, "/apis/example.com/v1/namespaces/default/widgets", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		api2.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Delegate, token %s: HTTP %d, want %d", token, rec.Code, want)
		}
	}

	// Its admission options: NamespaceLifecycle asks for the namespace, the
	// webhooks list their configurations (this cluster has neither).
	for _, tc := range []struct {
		opts []delegation.Option
		code int
		msg  string
	}{
		{nil, http.StatusCreated, ""},
		{[]delegation.Option{delegation.WithNamespaceLifecycle()}, http.StatusNotFound, `namespaces "default" not found`},
		{[]delegation.Option{delegation.WithWebhooks()}, http.StatusInternalServerError, "Internal error occurred: listing admission webhooks: HTTP 404"},
	} {
		opts, err := delegation.Delegate(t.Context(), c, 0, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		api3, err := apiserver.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = api3.Close() })
		if err := widgetapi.Register(api3); err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/apis/example.com/v1/namespaces/default/widgets",
			strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sa-token")
		rec := httptest.NewRecorder()
		api3.ServeHTTP(rec, req)
		var st struct{ Message string }
		_ = json.Unmarshal(rec.Body.Bytes(), &st)
		if rec.Code != tc.code || tc.msg != "" && st.Message != tc.msg {
			t.Errorf("Delegate with %d admission options: HTTP %d %s, want %d %s", len(tc.opts), rec.Code, st.Message, tc.code, tc.msg)
		}
	}

	mu.Lock()
	cmClientCA = pemOf(newClientCA)
	mu.Unlock()
	if err := auth.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if code := get(keyed(signNewClient)("carol")); code != 200 {
		t.Errorf("after the reload, the new CA's client: HTTP %d", code)
	}
	if code := get(keyed(signClient)("carol")); code != 401 {
		t.Errorf("after the reload, the old CA's client: HTTP %d", code)
	}
}

// keyed turns a signer into one that also returns the certificate's key.
func keyed(sign func(string, ...*ecdsa.PrivateKey) *x509.Certificate) func(string) (*x509.Certificate, *ecdsa.PrivateKey) {
	return func(cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		return sign(cn, key), key
	}
}
