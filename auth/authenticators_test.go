package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/auth"
)

func TestStaticTokens(t *testing.T) {
	tokens := map[string]auth.User{"t1": {Name: "alice", UID: "1", Groups: []string{"admins"}}, "t2": {Name: "bob"}}
	a := auth.StaticTokens(tokens)
	tokens["t3"] = auth.User{Name: "eve"} // the map was copied
	cases := []struct {
		header string
		user   string
		ok     bool
		err    bool
	}{
		{"", "", false, false},
		{"Bearer t1", "alice", true, false},
		{"bearer t2", "bob", true, false},
		{"BEARER t1 trailing words", "alice", true, false},
		{"  Bearer t1  ", "alice", true, false},
		{"Bearer t3", "", false, true},
		{"Bearer T1", "", false, true},
		{"Bearer", "", false, false},
		{"Bearer ", "", false, false},
		{"Bearer  t1", "", false, false}, // an empty token, then a space: kube-apiserver ignores it too
		{"Basic dDE6", "", false, false},
		{"t1", "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.header, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			u, ok, err := a.Authenticate(r)
			if ok != tc.ok || (err != nil) != tc.err || u.Name != tc.user {
				t.Errorf("got %+v, %v, %v; want user %q, ok %v, error %v", u, ok, err, tc.user, tc.ok, tc.err)
			}
		})
	}
}

func TestReadTokenFile(t *testing.T) {
	got, err := auth.ReadTokenFile(strings.NewReader(`t1,alice,1,"admins,devs"
t2,bob,2
t3,carol,3,,extra
t4,dave,4,"viewers"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]auth.User{
		"t1": {Name: "alice", UID: "1", Groups: []string{"admins", "devs"}},
		"t2": {Name: "bob", UID: "2"},
		"t3": {Name: "carol", UID: "3"},
		"t4": {Name: "dave", UID: "4", Groups: []string{"viewers"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}

	for _, tc := range []struct{ file, want string }{
		{"t1,alice\n", "line 1: want at least 3 columns (token, user name, user uid), found 2"},
		{"t1,alice,1\n,bob,2\n", "line 2: empty token"},
		{"t1,alice,1\nt1,bob,2\n", `line 2: the token of user "bob" is used before`},
		{"t1,\"alice,1\n", "token file"},
	} {
		if _, err := auth.ReadTokenFile(strings.NewReader(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.file, err, tc.want)
		}
	}
}

func TestClientCertificates(t *testing.T) {
	cert := selfSigned(t, pkix.Name{CommonName: "alice", Organization: []string{"admins", "devs"}})
	other := selfSigned(t, pkix.Name{CommonName: "intruder", Organization: []string{"admins"}})
	noCN := selfSigned(t, pkix.Name{Organization: []string{"admins"}})
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	roots.AddCert(noCN)
	a, err := auth.ClientCertificates(roots)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256(cert.Raw)

	r := httptest.NewRequest("GET", "/", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
	u, ok, err := a.Authenticate(r)
	// Groups in the order the parsed certificate has them, as kube-auth.
	if !slices.Equal(slices.Sorted(slices.Values(cert.Subject.Organization)), []string{"admins", "devs"}) {
		t.Fatalf("the certificate's organizations are %v", cert.Subject.Organization)
	}
	want := auth.User{Name: "alice", Groups: cert.Subject.Organization,
		Extra: map[string][]string{"authentication.kubernetes.io/credential-id": {"X509SHA256=" + hex.EncodeToString(digest[:])}}}
	if !ok || err != nil || !reflect.DeepEqual(u, want) {
		t.Errorf("verified certificate: %+v, %v, %v; want %+v", u, ok, err, want)
	}

	for name, state := range map[string]*tls.ConnectionState{
		"plain HTTP":     nil,
		"no certificate": {},
		"no common name": {PeerCertificates: []*x509.Certificate{noCN}},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.TLS = state
		if u, ok, err := a.Authenticate(r); ok || err != nil {
			t.Errorf("%s: %+v, %v, %v; want not authenticated, no error", name, u, ok, err)
		}
	}
	// A chain the host's TLS verified against another CA of its pool is
	// still no user of this one.
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{other}, VerifiedChains: [][]*x509.Certificate{{other}}}
	if u, ok, err := a.Authenticate(r); ok || err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("certificate of another CA: %+v, %v, %v; want an error", u, ok, err)
	}
	if _, err := auth.ClientCertificates(nil); err == nil {
		t.Error("ClientCertificates(nil): no error")
	}
}

// TestClientCertificatesOverTLS: behind a TLS server that asks for client
// certificates, the authenticator names the user after a certificate of
// its own CA, and refuses one that the server's pool accepted through
// another CA. (apiserver's tests check what a server does with the user.)
func TestClientCertificatesOverTLS(t *testing.T) {
	key := newKey(t)
	ca := selfSignedWithKey(t, pkix.Name{CommonName: "test CA"}, key, nil, nil)
	clientKey := newKey(t)
	client := selfSignedWithKey(t, pkix.Name{CommonName: "alice", Organization: []string{"admins"}}, clientKey, ca, key)

	// The TLS pool also trusts a front proxy's CA, whose certificates are
	// no users.
	proxyKey := newKey(t)
	proxyCA := selfSignedWithKey(t, pkix.Name{CommonName: "front-proxy CA"}, proxyKey, nil, nil)
	intruderKey := newKey(t)
	intruder := selfSignedWithKey(t, pkix.Name{CommonName: "intruder", Organization: []string{"admins"}}, intruderKey, proxyCA, proxyKey)

	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(ca)
	certs, err := auth.ClientCertificates(clientCAs)
	if err != nil {
		t.Fatal(err)
	}
	// The handler answers the user's name and groups, or 401.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, err := certs.Authenticate(r)
		if !ok || err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, u.Name, u.Groups)
	}))
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	pool.AddCert(proxyCA)
	srv.TLS = &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	hc := srv.Client()
	transport := hc.Transport.(*http.Transport)
	get := func() (int, string) {
		t.Helper()
		transport.CloseIdleConnections()
		resp, err := hc.Get(srv.URL + "/apis")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}
	cases := []struct {
		name string
		cert []tls.Certificate
		code int
		body string
	}{
		{"a certificate of the CA", []tls.Certificate{{Certificate: [][]byte{client.Raw}, PrivateKey: clientKey}}, http.StatusOK, "alice[admins]"},
		{"a certificate of the front proxy's CA", []tls.Certificate{{Certificate: [][]byte{intruder.Raw}, PrivateKey: intruderKey}}, http.StatusUnauthorized, ""},
		{"no certificate", nil, http.StatusUnauthorized, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			transport.TLSClientConfig.Certificates = tc.cert
			if code, body := get(); code != tc.code || body != tc.body {
				t.Errorf("HTTP %d %q, want %d %q", code, body, tc.code, tc.body)
			}
		})
	}
}

func selfSigned(t *testing.T, subject pkix.Name) *x509.Certificate {
	return selfSignedWithKey(t, subject, newKey(t), nil, nil)
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// selfSignedWithKey makes a certificate for key, signed by parent (with
// parentKey), or by itself as a CA when parent is nil.
func selfSignedWithKey(t *testing.T, subject pkix.Name, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	} else {
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestUnionAuthenticator(t *testing.T) {
	none := auth.AuthenticatorFunc(func(*http.Request) (auth.User, bool, error) { return auth.User{}, false, nil })
	refuse := func(msg string) auth.Authenticator {
		return auth.AuthenticatorFunc(func(*http.Request) (auth.User, bool, error) { return auth.User{}, false, errors.New(msg) })
	}
	accept := func(name string) auth.Authenticator {
		return auth.AuthenticatorFunc(func(*http.Request) (auth.User, bool, error) { return auth.User{Name: name}, true, nil })
	}
	cases := []struct {
		name  string
		chain []auth.Authenticator
		user  string
		err   string
	}{
		{"empty", nil, "", ""},
		{"none", []auth.Authenticator{none, none}, "", ""},
		{"first accepts", []auth.Authenticator{accept("a"), accept("b")}, "a", ""},
		{"after none", []auth.Authenticator{none, accept("b")}, "b", ""},
		{"after a refusal", []auth.Authenticator{refuse("bad token"), accept("b")}, "b", ""},
		{"refusals", []auth.Authenticator{refuse("bad token"), none, refuse("bad cert")}, "", "bad token\nbad cert"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, ok, err := auth.UnionAuthenticator(tc.chain...).Authenticate(httptest.NewRequest("GET", "/", nil))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if u.Name != tc.user || ok != (tc.user != "") || gotErr != tc.err {
				t.Errorf("got %+v, %v, %q; want user %q, error %q", u, ok, gotErr, tc.user, tc.err)
			}
		})
	}
}
