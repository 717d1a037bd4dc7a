package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/delegation"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	addr := flag.String("addr", ":8443", "address to serve HTTPS on")
	cert := flag.String("tls-cert-file", "", "the serving certificate, PEM (required; reread when the file changes, as a mounted Secret does)")
	key := flag.String("tls-private-key-file", "", "the key of -tls-cert-file, PEM (required)")
	flag.Parse()
	if err := run(*addr, *cert, *key); err != nil {
		log.Fatal(err)
	}
}

func run(addr, certFile, keyFile string) error {
	if certFile == "" || keyFile == "" {
		return errors.New("-tls-cert-file and -tls-private-key-file are required: kube-apiserver reaches an APIService over TLS")
	}
	serving, err := newCertificateFiles(certFile, keyFile)
	if err != nil {
		return err
	}
	// SIGTERM is how the kubelet stops the pod: kapi then ends its watches
	// and finishes its requests before the process exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cluster, err := inCluster()
	if err != nil {
		return err
	}
	// Who sends a request and what they may do: the cluster's to say.
	delegated, err := delegation.Delegate(ctx, cluster, time.Minute)
	if err != nil {
		return err
	}
	// Objects go only into namespaces the cluster has and is not deleting.
	lifecycle, err := delegation.NamespaceLifecycle(cluster)
	if err != nil {
		return err
	}
	// Requests in flight get at most 20 s to finish at shutdown, within
	// the pod's default terminationGracePeriodSeconds of 30.
	api, err := apiserver.New(append(delegated, apiserver.WithValidatingAdmission(lifecycle), apiserver.WithRequestTimeout(20*time.Second))...)
	if err != nil {
		return err
	}
	if err := widgetapi.Register(api); err != nil {
		return err
	}
	server := &http.Server{
		Addr: addr, Handler: api, ReadHeaderTimeout: 10 * time.Second,
		// Client certificates are asked for, not verified here: the
		// authenticators verify each against its own CA pool (the front
		// proxy's, the clients'), which the ConfigMap may change.
		TLSConfig: &tls.Config{GetCertificate: serving.get, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12},
	}
	log.Printf("serving widgets.example.com/v1 on https://%s for the cluster at %s", addr, cluster.Host)
	return api.Run(ctx, server, func() error { return server.ListenAndServeTLS("", "") })
}

// certificateFiles is the serving certificate, read again when its files
// change: a Secret mounted in the pod is updated in place when it is
// renewed (by cert-manager, say), and the server then serves the new one
// without a restart.
type certificateFiles struct {
	certFile, keyFile string
	mu                sync.Mutex
	modified          time.Time
	cert              *tls.Certificate
}

func newCertificateFiles(certFile, keyFile string) (*certificateFiles, error) {
	c := &certificateFiles{certFile: certFile, keyFile: keyFile}
	if _, err := c.get(nil); err != nil {
		return nil, err
	}
	return c, nil
}

// get is tls.Config.GetCertificate: the files' certificate, reloaded if
// the certificate file changed since it was read. A broken update keeps
// the certificate served before it.
func (c *certificateFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, err := os.Stat(c.certFile)
	if err == nil && c.cert != nil && info.ModTime().Equal(c.modified) {
		return c.cert, nil
	}
	if err == nil {
		var cert tls.Certificate
		if cert, err = tls.LoadX509KeyPair(c.certFile, c.keyFile); err == nil {
			c.cert, c.modified = &cert, info.ModTime()
			return c.cert, nil
		}
	}
	if c.cert != nil {
		log.Printf("serving certificate not reloaded, serving the one before: %v", err)
		return c.cert, nil
	}
	return nil, err
}

// inCluster is the cluster the pod runs in, reached with its service
// account.
func inCluster() (delegation.Cluster, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return delegation.Cluster{}, errors.New("not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	token, err := os.ReadFile(serviceAccountDir + "/token")
	if err != nil {
		return delegation.Cluster{}, err
	}
	caPEM, err := os.ReadFile(serviceAccountDir + "/ca.crt")
	if err != nil {
		return delegation.Cluster{}, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return delegation.Cluster{}, errors.New("the service account's ca.crt holds no certificate")
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return delegation.Cluster{
		Host:        "https://" + net.JoinHostPort(host, port),
		Client:      &http.Client{Transport: transport},
		BearerToken: string(token),
	}, nil
}
