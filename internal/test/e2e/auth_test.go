package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// The users of the secured example in these tests: its token file and
// one client certificate.
const (
	adminToken   = "admin-token"
	viewerToken  = "viewer-token"
	watcherToken = "watcher-token"
	viewerNS     = "team-a" // where viewers may read widgets
	otherNS      = "team-b"
)

const tokenFile = `admin-token,admin,1,admins
viewer-token,viewer,2,viewers
watcher-token,watcher,3,"viewers,watchers"
`

// securedServer is examples/secured running with TLS, the token file and
// a client CA.
type securedServer struct {
	*server
	dir    string // ca.crt, carol.crt, carol.key
	caPEM  []byte
	client tls.Certificate // carol, in group viewers
}

// startSecured starts examples/secured on a certificate of a CA made up
// for the test, which also signs the client certificate of carol (group
// viewers); an admin creates widget a in team-a, b in team-b and the
// widget class c.
func startSecured(t *testing.T) *securedServer {
	t.Helper()
	dir := t.TempDir()
	caKey, ca := newCert(t, pkix.Name{CommonName: "e2e CA"}, nil, nil)
	serverKey, serverCert := newCert(t, pkix.Name{CommonName: "127.0.0.1"}, ca, caKey)
	carolKey, carolCert := newCert(t, pkix.Name{CommonName: "carol", Organization: []string{"viewers"}}, ca, caKey)
	s := &securedServer{dir: dir, caPEM: pemCert(ca)}
	putFile(t, dir, "ca.crt", s.caPEM)
	putFile(t, dir, "server.crt", pemCert(serverCert))
	putFile(t, dir, "server.key", pemKey(t, serverKey))
	putFile(t, dir, "carol.crt", pemCert(carolCert))
	putFile(t, dir, "carol.key", pemKey(t, carolKey))
	putFile(t, dir, "tokens.csv", []byte(tokenFile))
	s.client = tls.Certificate{Certificate: [][]byte{carolCert.Raw}, PrivateKey: carolKey}

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	s.server = startProgram(t, program{
		name: "examples/secured", bin: securedBin, buildErr: securedBuildErr,
		args: []string{"-tokens", filepath.Join(dir, "tokens.csv"), "-namespace", viewerNS,
			"-tls-cert", filepath.Join(dir, "server.crt"), "-tls-key", filepath.Join(dir, "server.key"),
			"-client-ca", filepath.Join(dir, "ca.crt")},
		tls: &tls.Config{RootCAs: pool},
	})

	admin := s.dynamic(t, adminToken)
	ctx := ctxFor(t, 30*time.Second)
	for ns, name := range map[string]string{viewerNS: "a", otherNS: "b"} {
		if _, err := admin.Resource(widgetsGVR).Namespace(ns).Create(ctx, newWidget(name, map[string]any{"color": "Red"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("admin creates widget %s/%s: %v", ns, name, err)
		}
	}
	if _, err := admin.Resource(widgetClassesGVR).Create(ctx, newWidgetClass("c", map[string]any{}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("admin creates widget class c: %v", err)
	}
	return s
}

// config is a client-go config for the server that trusts its CA and
// sends token (if any).
func (s *securedServer) config(token string) *rest.Config {
	cfg := restConfig(s.server, nil)
	cfg.TLSClientConfig.CAData = s.caPEM
	cfg.BearerToken = token
	return cfg
}

func (s *securedServer) dynamic(t *testing.T, token string) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(s.config(token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// forbiddenMessage is the message kube-apiserver gives when user may not verb
// widgets ("" name for collections) in ns ("" for the cluster scope).
func forbiddenMessage(user, verb, resource, ns, name string) string {
	plural, _, _ := strings.Cut(resource, "/")
	msg := plural + ".example.com"
	if name != "" {
		msg += ` "` + name + `"`
	}
	msg += ` is forbidden: User "` + user + `" cannot ` + verb + ` resource "` + resource + `" in API group "example.com" `
	if ns == "" {
		return msg + "at the cluster scope"
	}
	return msg + `in the namespace "` + ns + `"`
}

// wantForbidden checks that err is kube-apiserver's 403 for the request.
func wantForbidden(t *testing.T, err error, user, verb, resource, ns, name string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("%s %s %s/%s: %v, want Forbidden", user, verb, ns, name, err)
	}
	st := statusOfErr(t, err)
	plural, _, _ := strings.Cut(resource, "/")
	if want := forbiddenMessage(user, verb, resource, ns, name); st.Message != want {
		t.Errorf("message\n got %s\nwant %s", st.Message, want)
	}
	if st.Details == nil || st.Details.Group != "example.com" || st.Details.Kind != plural || st.Details.Name != name {
		t.Errorf("details %+v, want group example.com, kind %s, name %q", st.Details, plural, name)
	}
}

// TestAuthClientGo: with client-go, no credentials and wrong ones are
// 401; a viewer may get and list widgets in one namespace and nothing
// else; a watcher may also watch; a client certificate names its user.
func TestAuthClientGo(t *testing.T) {
	s := startSecured(t)
	ctx := ctxFor(t, time.Minute)

	for _, token := range []string{"", "wrong"} {
		c := s.dynamic(t, token)
		_, err := c.Resource(widgetsGVR).Namespace(viewerNS).List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("token %q: list: %v, want Unauthorized", token, err)
		} else if st := statusOfErr(t, err); st.Message != "Unauthorized" || st.Code != http.StatusUnauthorized {
			t.Errorf("token %q: %+v", token, st)
		}
		dc, err := discovery.NewDiscoveryClientForConfig(s.config(token))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dc.ServerGroups(); !apierrors.IsUnauthorized(err) {
			t.Errorf("token %q: discovery: %v, want Unauthorized", token, err)
		}
	}

	viewer := s.dynamic(t, viewerToken)
	widgets := viewer.Resource(widgetsGVR)
	if w, err := widgets.Namespace(viewerNS).Get(ctx, "a", metav1.GetOptions{}); err != nil || w.GetName() != "a" {
		t.Fatalf("viewer gets a: %v", err)
	}
	l, err := widgets.Namespace(viewerNS).List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].GetName() != "a" {
		t.Fatalf("viewer lists %s: %v %v", viewerNS, l, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(s.config(viewerToken))
	if err != nil {
		t.Fatal(err)
	}
	if _, resources, err := dc.ServerGroupsAndResources(); err != nil || len(resources) == 0 {
		t.Errorf("viewer reads discovery: %v", err)
	}

	_, err = widgets.Namespace(viewerNS).Watch(ctx, metav1.ListOptions{})
	wantForbidden(t, err, "viewer", "watch", "widgets", viewerNS, "")
	_, err = widgets.Namespace(viewerNS).Create(ctx, newWidget("new", map[string]any{"color": "Red"}), metav1.CreateOptions{})
	wantForbidden(t, err, "viewer", "create", "widgets", viewerNS, "")
	err = widgets.Namespace(viewerNS).Delete(ctx, "a", metav1.DeleteOptions{})
	wantForbidden(t, err, "viewer", "delete", "widgets", viewerNS, "a")
	err = widgets.Namespace(viewerNS).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	wantForbidden(t, err, "viewer", "deletecollection", "widgets", viewerNS, "")
	_, err = widgets.Namespace(viewerNS).Patch(ctx, "a", "application/merge-patch+json", []byte(`{"spec":{"color":"Blue"}}`), metav1.PatchOptions{})
	wantForbidden(t, err, "viewer", "patch", "widgets", viewerNS, "a")
	_, err = widgets.Namespace(viewerNS).Get(ctx, "a", metav1.GetOptions{}, "status")
	wantForbidden(t, err, "viewer", "get", "widgets/status", viewerNS, "a")
	_, err = widgets.Namespace(otherNS).Get(ctx, "b", metav1.GetOptions{})
	wantForbidden(t, err, "viewer", "get", "widgets", otherNS, "b")
	_, err = widgets.Namespace(otherNS).List(ctx, metav1.ListOptions{})
	wantForbidden(t, err, "viewer", "list", "widgets", otherNS, "")
	_, err = widgets.List(ctx, metav1.ListOptions{})
	wantForbidden(t, err, "viewer", "list", "widgets", "", "")
	_, err = viewer.Resource(widgetClassesGVR).Get(ctx, "c", metav1.GetOptions{})
	wantForbidden(t, err, "viewer", "get", "widgetclasses", "", "c")

	// Nothing the viewer tried changed anything.
	admin := s.dynamic(t, adminToken)
	if l, err := admin.Resource(widgetsGVR).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 2 {
		t.Errorf("admin lists widgets: %v %v", l, err)
	}
	if a, err := admin.Resource(widgetsGVR).Namespace(viewerNS).Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Errorf("admin gets a: %v", err)
	} else if color, _, _ := unstructured.NestedString(a.Object, "spec", "color"); color != "Red" || a.GetGeneration() != 1 {
		t.Errorf("widget a was changed: %v", a.Object)
	}

	t.Run("watcher", func(t *testing.T) {
		w, err := s.dynamic(t, watcherToken).Resource(widgetsGVR).Namespace(viewerNS).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("watcher watches %s: %v", viewerNS, err)
		}
		defer w.Stop()
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Added {
				t.Fatalf("first event %v, want ADDED", ev.Type)
			}
		case <-ctx.Done():
			t.Fatal("no event before the deadline")
		}
		_, err = s.dynamic(t, watcherToken).Resource(widgetsGVR).Namespace(otherNS).Watch(ctx, metav1.ListOptions{})
		wantForbidden(t, err, "watcher", "watch", "widgets", otherNS, "")
	})

	t.Run("client certificate", func(t *testing.T) {
		cfg := s.config("")
		cfg.TLSClientConfig.CertData = pemCert(mustParse(t, s.client.Certificate[0]))
		cfg.TLSClientConfig.KeyData = pemKey(t, s.client.PrivateKey.(*ecdsa.PrivateKey))
		carol, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := carol.Resource(widgetsGVR).Namespace(viewerNS).Get(ctx, "a", metav1.GetOptions{}); err != nil {
			t.Fatalf("carol gets a: %v", err)
		}
		_, err = carol.Resource(widgetsGVR).Namespace(viewerNS).Create(ctx, newWidget("new", map[string]any{"color": "Red"}), metav1.CreateOptions{})
		wantForbidden(t, err, "carol", "create", "widgets", viewerNS, "")
	})

	t.Run("the host's own routes", func(t *testing.T) {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certPool(t, s.caPEM)}}}
		defer hc.CloseIdleConnections()
		for token, want := range map[string]string{"": "hello, stranger\n", viewerToken: "hello, viewer\n"} {
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/hello", nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != want {
				t.Errorf("/hello with token %q: %q, want %q", token, body, want)
			}
		}
		resp, err := hc.Get(s.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("/healthz without a token: HTTP %d", resp.StatusCode)
		}
	})
}

// TestAuthUnverifiableCertificate: a client certificate that does not chain
// to the client CAs authenticates nobody, but the connection stands and a
// bearer token on it is tried, as kube-apiserver: it asks for client
// certificates without requiring or verifying them in the handshake
// (k8s.io/apiserver pkg/server/secure_serving.go: tls.RequestClientCert
// once a client CA is set) and verifies them in its x509 authenticator,
// whose error the union of authenticators passes over for the token's
// user. Before, the handshake failed and the token was never seen.
func TestAuthUnverifiableCertificate(t *testing.T) {
	s := startSecured(t)
	ctx := ctxFor(t, 30*time.Second)
	strangerKey, strangerCA := newCert(t, pkix.Name{CommonName: "stranger CA"}, nil, nil)
	malloryKey, mallory := newCert(t, pkix.Name{CommonName: "mallory", Organization: []string{"admins"}}, strangerCA, strangerKey)
	unknown := &tls.Certificate{Certificate: [][]byte{mallory.Raw, strangerCA.Raw}, PrivateKey: malloryKey}

	for _, tc := range []struct {
		name  string
		cert  *tls.Certificate
		token string
		code  int    // of a POST of a SelfSubjectReview
		user  string // it names, if created
	}{
		{"unknown CA and a valid token", unknown, adminToken, http.StatusCreated, "admin"},
		{"unknown CA alone", unknown, "", http.StatusUnauthorized, ""},
		{"unknown CA and a wrong token", unknown, "nobody", http.StatusUnauthorized, ""},
		{"client CA", &s.client, "", http.StatusCreated, "carol"},
		{"token alone", nil, viewerToken, http.StatusCreated, "viewer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &tls.Config{RootCAs: certPool(t, s.caPEM)}
			if tc.cert != nil {
				// Sent whatever CAs the server names, as client-go and
				// curl send theirs (crypto/tls would leave out one the
				// server's CA list does not name).
				cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return tc.cert, nil }
			}
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
			defer hc.CloseIdleConnections()
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
				strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
			req.Header.Set("Content-Type", "application/json")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("the request failed: %v", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.code)
			}
			if tc.code != http.StatusCreated {
				return
			}
			var review struct {
				Status struct {
					UserInfo struct{ Username string } `json:"userInfo"`
				} `json:"status"`
			}
			if err := json.Unmarshal(body, &review); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			if review.Status.UserInfo.Username != tc.user {
				t.Fatalf("user %q, want %q: %s", review.Status.UserInfo.Username, tc.user, body)
			}
		})
	}
}

// TestAuthKubectl: kubectl with a wrong token is told to log in; a viewer
// gets and lists widgets in one namespace, and everything else is 403
// with Kubernetes' message; a watcher may also watch; a client
// certificate names its user. With every kubectl installed.
func TestAuthKubectl(t *testing.T) {
	s := startSecured(t)
	t.Run("dispatcher", func(t *testing.T) { kubectlAuth(t, s, dispatcherKubectl) })
	for _, bin := range pinnedKubectls() {
		t.Run(strings.TrimPrefix(filepath.Base(bin), "kubectl."), func(t *testing.T) { kubectlAuth(t, s, bin) })
	}
}

func kubectlAuth(t *testing.T, s *securedServer, bin string) {
	ca := filepath.Join(s.dir, "ca.crt")
	as := func(token string) (*kubectl, []string) {
		return newKubectl(t, bin, s.server), []string{"--certificate-authority", ca, "--token", token}
	}
	run := func(k *kubectl, flags []string, args ...string) result {
		return k.run(t, append(slices.Clone(flags), args...)...)
	}

	// What kubectl says when kube-apiserver refuses its credentials:
	// discovery fails first. (Without any credentials, kubectl would not
	// send a request over TLS: it asks for a user name on its stdin.)
	const loginPlease = "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
	wrong, wrongFlags := as("wrong")
	r := run(wrong, wrongFlags, "get", "widgets", "-n", viewerNS)
	if r.err == nil || !strings.Contains(r.stderr, loginPlease) {
		t.Errorf("a wrong token: %s", r)
	}
	basic := newKubectl(t, bin, s.server)
	r = basic.run(t, "--certificate-authority", ca, "--username", "viewer", "--password", viewerToken, "get", "widgets", "-n", viewerNS)
	if r.err == nil || !strings.Contains(r.stderr, loginPlease) {
		t.Errorf("basic authentication, which the server does not know: %s", r)
	}

	viewer, viewerFlags := as(viewerToken)
	if r := run(viewer, viewerFlags, "get", "widgets", "-n", viewerNS); r.err != nil || !strings.Contains(r.stdout, "a ") {
		t.Errorf("viewer lists: %s", r)
	}
	if r := run(viewer, viewerFlags, "get", "widget", "a", "-n", viewerNS, "-o", "json"); r.err != nil || !strings.Contains(r.stdout, `"name": "a"`) {
		t.Errorf("viewer gets a: %s", r)
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "new.yaml")
	putFile(t, dir, "new.yaml", []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: new\n  namespace: "+viewerNS+"\nspec:\n  color: Red\n"))
	denied := []struct {
		args []string
		want string
		old  string // what kubectl 1.31 and older print instead, if not want
	}{
		// kubectl up to 1.31 cannot decode the Status of a failed watch of
		// a Table (kube-apiserver's is the same bytes), so says less.
		{[]string{"get", "widgets", "-n", viewerNS, "--watch"}, forbiddenMessage("viewer", "watch", "widgets", viewerNS, ""), "unknown (get widgets.example.com)"},
		{[]string{"create", "-f", manifest}, `error when creating "` + manifest + `": ` + forbiddenMessage("viewer", "create", "widgets", viewerNS, ""), ""},
		{[]string{"delete", "widget", "a", "-n", viewerNS}, forbiddenMessage("viewer", "delete", "widgets", viewerNS, "a"), ""},
		{[]string{"label", "widget", "a", "-n", viewerNS, "x=y"}, forbiddenMessage("viewer", "patch", "widgets", viewerNS, "a"), ""},
		{[]string{"get", "widget", "b", "-n", otherNS}, forbiddenMessage("viewer", "get", "widgets", otherNS, "b"), ""},
		{[]string{"get", "widgets", "-n", otherNS}, forbiddenMessage("viewer", "list", "widgets", otherNS, ""), ""},
		{[]string{"get", "widgets", "-A"}, forbiddenMessage("viewer", "list", "widgets", "", ""), ""},
		{[]string{"get", "widgetclasses"}, forbiddenMessage("viewer", "list", "widgetclasses", "", ""), ""},
	}
	old := slices.Contains([]string{"1.27", "1.28", "1.29", "1.30", "1.31"}, strings.TrimPrefix(filepath.Base(bin), "kubectl."))
	for _, d := range denied {
		want := d.want
		if old && d.old != "" {
			want = d.old
		}
		r := run(viewer, viewerFlags, d.args...)
		if r.err == nil || !strings.Contains(r.stderr, "Error from server (Forbidden): "+want) {
			t.Errorf("want %q in stderr\n%s\n%s", want, r, viewer.verbose(t, nil, append(slices.Clone(viewerFlags), d.args...)...))
		}
	}

	watcher, watcherFlags := as(watcherToken)
	w := watcher.start(t, append(watcherFlags, "get", "widgets", "-n", viewerNS, "--watch", "--no-headers")...)
	w.waitLine(t, "widget a", 30*time.Second, func(line string) bool { return strings.HasPrefix(line, "a ") })
	w.stop()

	carol := newKubectl(t, bin, s.server)
	r = carol.run(t, "--certificate-authority", ca, "--client-certificate", filepath.Join(s.dir, "carol.crt"), "--client-key", filepath.Join(s.dir, "carol.key"), "get", "widgets", "-n", viewerNS)
	if r.err != nil || !strings.Contains(r.stdout, "a ") {
		t.Errorf("carol, by client certificate, lists: %s", r)
	}
}

// newCert makes a key and a certificate for it, signed by parent, or a CA
// signed by itself when parent is nil. Certificates for 127.0.0.1 serve;
// the others are clients.
func newCert(t *testing.T, subject pkix.Name, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	switch {
	case parent == nil:
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil // a CA's would restrict what it signs
		parent, parentKey = tmpl, key
	case subject.CommonName == "127.0.0.1":
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, mustParse(t, der)
}

func mustParse(t *testing.T, der []byte) *x509.Certificate {
	t.Helper()
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func pemKey(t *testing.T, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

func certPool(t *testing.T, caPEM []byte) *x509.CertPool {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("no CA certificate")
	}
	return pool
}

func putFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
}
