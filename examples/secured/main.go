package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

func main() {
	var f flags
	flag.StringVar(&f.addr, "addr", "127.0.0.1:8443", "address to serve HTTPS on")
	flag.StringVar(&f.tokens, "tokens", "", `token file, one user a line: token,user,uid,"group1,group2" (default: make up an admin and a viewer)`)
	flag.StringVar(&f.namespace, "namespace", "default", "the namespace whose widgets viewers may read")
	flag.StringVar(&f.cert, "tls-cert", "", "the server's certificate, PEM (default: a self-signed one, made up)")
	flag.StringVar(&f.key, "tls-key", "", "the key of -tls-cert, PEM")
	flag.StringVar(&f.clientCA, "client-ca", "", "CA certificates, PEM: client certificates they sign authenticate as CN, in groups O")
	flag.Parse()
	if err := run(f); err != nil {
		log.Fatal(err)
	}
}

type flags struct {
	addr, tokens, namespace, cert, key, clientCA string
}

func run(f flags) error {
	tokens, err := readTokens(f.tokens)
	if err != nil {
		return err
	}
	policy, err := rules(f.namespace)
	if err != nil {
		return err
	}
	tlsConfig, err := serverTLS(f.cert, f.key, f.clientCA)
	if err != nil {
		return err
	}
	// kubectl and client-go send credentials only over TLS: a token is
	// never seen in the clear.
	authenticators := []apiserver.Authenticator{apiserver.StaticTokens(tokens)}
	if tlsConfig.ClientCAs != nil {
		// Verified against the client CAs alone, whatever else the TLS
		// pool may come to trust.
		certs, err := apiserver.ClientCertificates(tlsConfig.ClientCAs)
		if err != nil {
			return err
		}
		authenticators = append(authenticators, certs)
	}
	authn := apiserver.UnionAuthenticator(authenticators...)
	api, err := apiserver.New(
		apiserver.WithAuthentication(authn),
		apiserver.WithAuthorization(policy),
	)
	if err != nil {
		return err
	}
	if err := widgetapi.Register(api); err != nil {
		return err
	}

	// The service's own routes, beside the Kubernetes API; its own handlers
	// can use the same authenticator.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		name := "stranger"
		if user, ok, err := authn.Authenticate(r); ok && err == nil {
			name = user.Name
		}
		fmt.Fprintf(w, "hello, %s\n", name)
	})
	mux.Handle("/", api)
	server := &http.Server{Addr: f.addr, Handler: logRequests(mux), TLSConfig: tlsConfig, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	log.Printf("serving widgets.example.com/v1 on https://%s; viewers may read widgets in namespace %q", f.addr, f.namespace)
	return api.Run(ctx, server, func() error { return server.ListenAndServeTLS("", "") })
}

// rules is who may do what.
func rules(namespace string) (apiserver.Authorizer, error) {
	widgets := func(verbs ...string) apiserver.Rule {
		return apiserver.Rule{Verbs: verbs, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Namespaces: []string{namespace}}
	}
	return apiserver.RulesAuthorizer(
		// Kubernetes' default RBAC (system:discovery, system:public-info-viewer):
		// every user may read what kubectl reads before anything else.
		apiserver.Binding{Groups: []string{apiserver.GroupAuthenticated}, Rules: []apiserver.Rule{{
			Verbs:           []string{"get"},
			NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version", "/version/"},
		}}},
		// And system:basic-user: every user may ask who it is and what it
		// may do (kubectl auth whoami, auth can-i).
		apiserver.Binding{Groups: []string{apiserver.GroupAuthenticated}, Rules: []apiserver.Rule{
			{Verbs: []string{"create"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}},
			{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
		}},
		// Admins may do everything, impersonating others too (kubectl --as).
		apiserver.Binding{Groups: []string{"admins"}, Rules: []apiserver.Rule{
			{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
		}},
		apiserver.Binding{Groups: []string{"viewers"}, Rules: []apiserver.Rule{widgets("get", "list")}},
		apiserver.Binding{Groups: []string{"watchers"}, Rules: []apiserver.Rule{widgets("watch")}},
	)
}

// readTokens reads the token file, or makes up one admin and one viewer
// and says their tokens.
func readTokens(path string) (map[string]apiserver.User, error) {
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return apiserver.ReadTokenFile(f)
	}
	admin, viewer := rand.Text(), rand.Text()
	log.Printf("no -tokens: admin token %s, viewer token %s", admin, viewer)
	return map[string]apiserver.User{
		admin:  {Name: "admin", Groups: []string{"admins"}},
		viewer: {Name: "viewer", Groups: []string{"viewers"}},
	}, nil
}

// serverTLS loads the server's certificate, or makes up a self-signed one
// (clients then need --insecure-skip-tls-verify), and the CAs of client
// certificates.
func serverTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if certFile != "" || keyFile != "" {
		cert, err = tls.LoadX509KeyPair(certFile, keyFile)
	} else {
		log.Printf("no -tls-cert: serving a self-signed certificate; kubectl needs --insecure-skip-tls-verify")
		cert, err = selfSigned("kapi secured example", "localhost")
	}
	if err != nil {
		return nil, err
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, err
		}
		c.ClientCAs = x509.NewCertPool()
		if !c.ClientCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", clientCAFile)
		}
		// Asked for, neither required nor verified here: the client
		// certificate authenticator verifies it against the client CAs,
		// and one that does not chain to them authenticates nobody, while
		// a token on the same connection is still tried, as
		// kube-apiserver (tls.RequestClientCert in its secure serving).
		// Verifying in the handshake would refuse the connection, token
		// and all.
		c.ClientAuth = tls.RequestClientCert
	}
	return c, nil
}

// logRequests is the host service's own middleware: it sees every request,
// kapi's included.
func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		log.Printf("%s %s %d %v", r.Method, r.URL.RequestURI(), sw.status, time.Since(start).Round(time.Microsecond))
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach Flush through the wrapper, so
// watch events still go out as they happen.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes on flushes of watch streams.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
