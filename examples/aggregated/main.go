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

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/delegation"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	kapiotel "github.com/kapi-dev/kapi/observe/otel"
	"github.com/kapi-dev/kapi/observe/prometheus"
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
	tp, err := tracerProvider(ctx)
	if err != nil {
		return err
	}
	var traces trace.TracerProvider // nil: no traces
	if tp != nil {
		defer tp.Shutdown(context.WithoutCancel(ctx)) // sends the last spans
		traces = tp
	}
	api, err := newAPI(append(delegated, apiserver.WithValidatingAdmission(lifecycle)), traces)
	if err != nil {
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

// newAPI is the example's server: access says who may do what (the
// cluster's delegated authentication and authorization, and its namespaces'
// lifecycle); the server adds its metrics, at /metrics with
// kube-apiserver's names (observe/prometheus), and its traces when tp is
// not nil (observe/otel).
func newAPI(access []apiserver.Option, tp trace.TracerProvider) (*apiserver.Server, error) {
	metrics := prometheus.New()
	// Requests in flight get at most 20 s to finish at shutdown, within
	// the pod's default terminationGracePeriodSeconds of 30.
	opts := append(access, apiserver.WithRequestTimeout(20*time.Second),
		// Behind the server's authentication and authorization, as
		// kube-apiserver's own: the cluster's RBAC says who reads it
		// (the nonResourceURL /metrics, as Prometheus' scrape role has).
		apiserver.WithObserver(metrics), apiserver.WithMetrics(metrics.Handler()))
	if tp != nil {
		// kube-apiserver sends its trace context with each request it
		// proxies: the extension's spans continue its traces. Only it
		// reaches this server (the front proxy's certificate says so).
		opts = append(opts, apiserver.WithObserver(kapiotel.New(tp, kapiotel.WithTrustedParents())))
	}
	api, err := apiserver.New(opts...)
	if err != nil {
		return nil, err
	}
	if err := widgetapi.Register(api); err != nil {
		return nil, err
	}
	metrics.Bind(api) // apiserver_storage_objects counts its widgets
	return api, nil
}

// tracerProvider sends spans to the OpenTelemetry collector the standard
// variables name (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTLP over HTTP; OTEL_SERVICE_NAME
// names the service), or is nil when none is named.
func tracerProvider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter)), nil
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
