package delegation_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/delegation"
)

// fakeCluster is kube-apiserver's TokenReview and SubjectAccessReview
// endpoints: it records the reviews and answers with answer.
type fakeCluster struct {
	*httptest.Server
	mu      sync.Mutex
	reviews []map[string]any
	answer  func(path string, spec map[string]any) (status map[string]any, code int)
	block   bool // hang until the caller gives up
}

func newFakeCluster(t *testing.T, answer func(path string, spec map[string]any) (map[string]any, int)) *fakeCluster {
	f := &fakeCluster{answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer server-token" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, `{"kind":"Status","message":"Unauthorized"}`, http.StatusUnauthorized)
			return
		}
		var review map[string]any
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.reviews = append(f.reviews, review)
		block := f.block
		f.mu.Unlock()
		if block {
			<-r.Context().Done()
			return
		}
		spec, _ := review["spec"].(map[string]any)
		status, code := f.answer(r.URL.Path, spec)
		review["status"] = status
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeCluster) cluster() delegation.Cluster {
	return delegation.Cluster{Host: f.URL, Client: f.Client(), BearerToken: "server-token"}
}

func (f *fakeCluster) take() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.reviews
	f.reviews = nil
	return r
}

func withToken(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/apis", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func TestTokenReview(t *testing.T) {
	f := newFakeCluster(t, func(path string, spec map[string]any) (map[string]any, int) {
		if path != "/apis/authentication.k8s.io/v1/tokenreviews" {
			return nil, http.StatusNotFound
		}
		switch spec["token"] {
		case "good":
			return map[string]any{"authenticated": true, "audiences": []string{"kapi"},
				"user": map[string]any{"username": "alice", "uid": "1", "groups": []string{"devs"}, "extra": map[string][]string{"scopes": {"a"}}}}, http.StatusCreated
		case "other-audience":
			return map[string]any{"authenticated": true, "audiences": []string{"vault"}, "user": map[string]any{"username": "bob"}}, http.StatusCreated
		case "expired":
			return map[string]any{"authenticated": false, "error": "token has expired"}, http.StatusCreated
		case "broken":
			return nil, http.StatusInternalServerError
		}
		return map[string]any{"authenticated": false}, http.StatusCreated
	})
	a, err := delegation.NewTokenReview(f.cluster(), delegation.WithAudiences("kapi"))
	if err != nil {
		t.Fatal(err)
	}
	want := apiserver.User{Name: "alice", UID: "1", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"a"}}}
	for range 3 {
		if u, ok, err := a.Authenticate(withToken("good")); !ok || err != nil || !reflect.DeepEqual(u, want) {
			t.Fatalf("good token: %+v %v %v", u, ok, err)
		}
	}
	reviews := f.take()
	if len(reviews) != 1 {
		t.Fatalf("%d reviews for one token asked three times, want 1 (cached)", len(reviews))
	}
	if r := reviews[0]; r["kind"] != "TokenReview" || r["apiVersion"] != "authentication.k8s.io/v1" ||
		!reflect.DeepEqual(r["spec"], map[string]any{"token": "good", "audiences": []any{"kapi"}}) {
		t.Errorf("review %v", r)
	}
	if _, ok, err := a.Authenticate(withToken("")); ok || err != nil {
		t.Errorf("no token: %v %v, want left to others", ok, err)
	}
	// kube-apiserver reads "Bearer  good" (two spaces) as an empty token
	// followed by something else: no token at all, never reviewed.
	if _, ok, err := a.Authenticate(withToken(" good")); ok || err != nil || len(f.take()) != 0 {
		t.Errorf("a token after two spaces: %v %v, want left to others without a review", ok, err)
	}
	for token, msg := range map[string]string{
		"wrong": "invalid bearer token", "expired": "token has expired",
		"other-audience": "token audiences don't intersect", "broken": "HTTP 500",
	} {
		for range 2 {
			if u, ok, err := a.Authenticate(withToken(token)); ok || err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("%s: %+v %v %v, want an error with %q", token, u, ok, err, msg)
			}
		}
	}
	// Refusals are cached; a failed call is not.
	if n := len(f.take()); n != 5 {
		t.Errorf("%d reviews for four bad tokens asked twice, want 5 (only the broken one again)", n)
	}

	uncached, err := delegation.NewTokenReview(f.cluster(), delegation.WithCacheTTL(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	uncached.Authenticate(withToken("good"))
	uncached.Authenticate(withToken("good"))
	if n := len(f.take()); n != 2 {
		t.Errorf("without a cache: %d reviews, want 2", n)
	}

	f.mu.Lock()
	f.block = true
	f.mu.Unlock()
	slow, err := delegation.NewTokenReview(f.cluster(), delegation.WithTimeout(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := slow.Authenticate(withToken("good")); ok || err == nil {
		t.Errorf("a cluster that does not answer: %v %v, want an error", ok, err)
	}
}

func TestSubjectAccessReview(t *testing.T) {
	f := newFakeCluster(t, func(path string, spec map[string]any) (map[string]any, int) {
		if path != "/apis/authorization.k8s.io/v1/subjectaccessreviews" {
			return nil, http.StatusNotFound
		}
		ra, _ := spec["resourceAttributes"].(map[string]any)
		switch {
		case spec["user"] == "alice" && ra != nil && ra["verb"] == "list":
			return map[string]any{"allowed": true, "reason": "RBAC: allowed by RoleBinding"}, http.StatusCreated
		case spec["user"] == "mallory":
			return map[string]any{"allowed": false, "denied": true, "reason": "banned"}, http.StatusCreated
		case spec["user"] == "broken":
			return nil, http.StatusServiceUnavailable
		}
		return map[string]any{"allowed": false, "reason": "no RBAC policy matched"}, http.StatusCreated
	})
	az, err := delegation.NewSubjectAccessReview(f.cluster())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	alice := apiserver.User{Name: "alice", UID: "1", Groups: []string{"devs", apiserver.GroupAuthenticated}, Extra: map[string][]string{"scopes": {"a"}}}
	list := apiserver.Attributes{User: alice, Verb: "list", ResourceRequest: true, APIGroup: "example.com", APIVersion: "v1", Namespace: "team-a", Resource: "widgets",
		LabelSelector: []apiserver.SelectorRequirement{{Key: "app", Operator: "=", Values: []string{"x"}}, {Key: "n", Operator: "gt", Values: []string{"1"}}, {Key: "t", Operator: "!"}},
		FieldSelector: []apiserver.SelectorRequirement{{Key: "spec.color", Operator: "!=", Values: []string{"Red"}}}}
	for range 2 {
		if d, reason, err := az.Authorize(ctx, list); d != apiserver.DecisionAllow || err != nil || reason == "" {
			t.Fatalf("alice lists: %v %q %v", d, reason, err)
		}
	}
	reviews := f.take()
	if len(reviews) != 1 {
		t.Fatalf("%d reviews, want 1 (the second cached)", len(reviews))
	}
	wantSpec := map[string]any{"user": "alice", "uid": "1", "groups": []any{"devs", "system:authenticated"}, "extra": map[string]any{"scopes": []any{"a"}},
		"resourceAttributes": map[string]any{"namespace": "team-a", "verb": "list", "group": "example.com", "version": "v1", "resource": "widgets",
			"labelSelector": map[string]any{"requirements": []any{
				map[string]any{"key": "app", "operator": "In", "values": []any{"x"}},
				map[string]any{"key": "t", "operator": "DoesNotExist"}}},
			"fieldSelector": map[string]any{"requirements": []any{map[string]any{"key": "spec.color", "operator": "NotIn", "values": []any{"Red"}}}}}}
	if r := reviews[0]; r["kind"] != "SubjectAccessReview" || r["apiVersion"] != "authorization.k8s.io/v1" || !reflect.DeepEqual(r["spec"], wantSpec) {
		t.Errorf("review spec\n got %v\nwant %v", r["spec"], wantSpec)
	}

	create := list
	create.Verb, create.LabelSelector, create.FieldSelector = "create", nil, nil
	if d, reason, err := az.Authorize(ctx, create); d != apiserver.DecisionNoOpinion || reason != "no RBAC policy matched" || err != nil {
		t.Errorf("alice creates: %v %q %v", d, reason, err)
	}
	mallory := create
	mallory.User = apiserver.User{Name: "mallory"}
	if d, reason, _ := az.Authorize(ctx, mallory); d != apiserver.DecisionDeny || reason != "banned" {
		t.Errorf("mallory: %v %q", d, reason)
	}
	broken := create
	broken.User = apiserver.User{Name: "broken"}
	if d, _, err := az.Authorize(ctx, broken); d != apiserver.DecisionNoOpinion || err == nil {
		t.Errorf("a failed call: %v %v, want no opinion and an error", d, err)
	}
	f.take()
	root := create
	root.User = apiserver.User{Name: "root", Groups: []string{"system:masters"}}
	if d, _, _ := az.Authorize(ctx, root); d != apiserver.DecisionAllow {
		t.Errorf("system:masters: %v", d)
	}
	health := apiserver.Attributes{User: apiserver.User{Name: "x"}, Verb: "get", Path: "/livez"}
	if d, _, _ := az.Authorize(ctx, health); d != apiserver.DecisionAllow {
		t.Errorf("/livez: %v", d)
	}
	if n := len(f.take()); n != 0 {
		t.Errorf("%d reviews for always-allowed requests, want 0", n)
	}
	path := apiserver.Attributes{User: alice, Verb: "get", Path: "/apis"}
	az.Authorize(ctx, path)
	if r := f.take(); len(r) != 1 || !reflect.DeepEqual(r[0]["spec"].(map[string]any)["nonResourceAttributes"], map[string]any{"path": "/apis", "verb": "get"}) {
		t.Errorf("non-resource review %v", r)
	}
}

func TestOptionErrors(t *testing.T) {
	good := delegation.Cluster{Host: "https://kubernetes.default.svc"}
	for name, build := range map[string]func() error{
		"no host": func() error { _, err := delegation.NewTokenReview(delegation.Cluster{}); return err },
		"relative host": func() error {
			_, err := delegation.NewSubjectAccessReview(delegation.Cluster{Host: "kubernetes"})
			return err
		},
		"zero timeout": func() error { _, err := delegation.NewTokenReview(good, delegation.WithTimeout(0)); return err },
		"negative TTL": func() error {
			_, err := delegation.NewSubjectAccessReview(good, delegation.WithCacheTTL(-1, 0))
			return err
		},
		"no CA pool": func() error { _, err := delegation.NewRequestHeader(nil); return err },
		"no user header": func() error {
			_, err := delegation.NewRequestHeader(x509.NewCertPool, delegation.WithHeaders(nil, nil, nil, nil))
			return err
		},
	} {
		if build() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// newCA makes a CA and a function to sign client certificates with it,
// for the key given or a new one.
func newCA(t *testing.T, name string) (*x509.Certificate, func(cn string, key ...*ecdsa.PrivateKey) *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(tmpl *x509.Certificate, parent *x509.Certificate, pub any) *x509.Certificate {
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, key)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	serial := int64(1)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	ca := sign(tmpl, tmpl, &key.PublicKey)
	return ca, func(cn string, key ...*ecdsa.PrivateKey) *x509.Certificate {
		serial++
		leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if len(key) > 0 {
			leafKey = key[0]
		}
		return sign(&x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca, &leafKey.PublicKey)
	}
}

func TestRequestHeader(t *testing.T) {
	proxyCA, signProxy := newCA(t, "front-proxy CA")
	_, signOther := newCA(t, "client CA")
	pool := x509.NewCertPool()
	pool.AddCert(proxyCA)
	a, err := delegation.NewRequestHeader(func() *x509.CertPool { return pool }, delegation.WithAllowedNames("front-proxy-client"))
	if err != nil {
		t.Fatal(err)
	}
	request := func(cert *x509.Certificate, header ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/apis", nil)
		if cert != nil {
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
		}
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Add(header[i], header[i+1])
		}
		return r
	}
	proxy := signProxy("front-proxy-client")
	r := request(proxy, "X-Remote-User", "alice", "X-Remote-Group", "devs", "X-Remote-Group", "system:authenticated", "X-Remote-Uid", "42",
		"X-Remote-Extra-Scopes", "a", "X-Remote-Extra-Scopes", "b", "X-Remote-Extra-Example.com%2fteam", "x", "Accept", "application/json")
	u, ok, err := a.Authenticate(r)
	want := apiserver.User{Name: "alice", UID: "42", Groups: []string{"devs", "system:authenticated"}, Extra: map[string][]string{"scopes": {"a", "b"}, "example.com/team": {"x"}}}
	if !ok || err != nil || !reflect.DeepEqual(u, want) {
		t.Errorf("from the proxy: %+v %v %v\nwant %+v", u, ok, err, want)
	}
	if len(r.Header) != 1 || r.Header.Get("Accept") == "" {
		t.Errorf("headers left: %v, want only Accept", r.Header)
	}

	for name, tc := range map[string]struct {
		r     *http.Request
		error string // "" for left to others
	}{
		"no certificate":              {request(nil, "X-Remote-User", "alice"), ""},
		"no user header":              {request(proxy, "X-Remote-Group", "admins"), ""},
		"a certificate of another CA": {request(signOther("front-proxy-client"), "X-Remote-User", "alice"), "unable to verify the front proxy's certificate"},
		"a name not allowed":          {request(signProxy("intruder"), "X-Remote-User", "alice"), "cn=intruder is not in the allowed list"},
	} {
		u, ok, err := a.Authenticate(tc.r)
		switch {
		case ok:
			t.Errorf("%s: authenticated %+v", name, u)
		case tc.error == "" && err != nil:
			t.Errorf("%s: %v, want left to others", name, err)
		case tc.error != "" && (err == nil || !strings.Contains(err.Error(), tc.error)):
			t.Errorf("%s: %v, want an error with %q", name, err, tc.error)
		}
	}

	custom, err := delegation.NewRequestHeader(func() *x509.CertPool { return pool },
		delegation.WithHeaders([]string{"x-user"}, []string{"x-groups"}, []string{"x-uid"}, []string{"x-extra-"}))
	if err != nil {
		t.Fatal(err)
	}
	u, ok, err = custom.Authenticate(request(signProxy("anyone"), "X-User", "bob", "X-Groups", "g", "X-Extra-K", "v", "X-Remote-User", "alice"))
	if !ok || err != nil || !reflect.DeepEqual(u, apiserver.User{Name: "bob", Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}}) {
		t.Errorf("custom headers, any name: %+v %v %v", u, ok, err)
	}
}
