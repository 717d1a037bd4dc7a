package aggregation

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/delegation"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// The extension server runs as this test binary re-executed inside the
// test's network namespace (ip netns exec), with serveEnv set. It is
// examples/aggregated's server, with the cluster given by the environment
// and short reload and cache times so the test sees changes quickly.
const serveEnv = "KAPI_AGGREGATION_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		if err := serveExtension(); err != nil {
			println("extension server:", err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serveExtension() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	token, err := os.ReadFile(os.Getenv("KAPI_TOKEN_FILE"))
	if err != nil {
		return err
	}
	caPEM, err := os.ReadFile(os.Getenv("KAPI_CLUSTER_CA"))
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return errors.New("no CA in KAPI_CLUSTER_CA")
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	cluster := delegation.Cluster{Host: os.Getenv("KAPI_CLUSTER"), Client: &http.Client{Transport: transport}, BearerToken: string(token)}

	delegated, err := delegation.Delegate(ctx, cluster, 500*time.Millisecond, delegation.WithCacheTTL(time.Second, time.Second))
	if err != nil {
		return err
	}
	lifecycle, err := delegation.NamespaceLifecycle(cluster)
	if err != nil {
		return err
	}
	api, err := apiserver.New(append(delegated, apiserver.WithValidatingAdmission(lifecycle))...)
	if err != nil {
		return err
	}
	if err := widgetapi.Register(api); err != nil {
		return err
	}
	serving, err := tls.LoadX509KeyPair(os.Getenv("KAPI_TLS_CERT"), os.Getenv("KAPI_TLS_KEY"))
	if err != nil {
		return err
	}
	server := &http.Server{
		Addr: os.Getenv("KAPI_ADDR"), Handler: api, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{serving}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12},
	}
	go func() { <-ctx.Done(); server.Close() }()
	if err := server.ListenAndServeTLS("", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
