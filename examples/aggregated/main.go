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
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/delegation"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/serve"
)

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	addr := flag.String("addr", ":8443", "address to serve HTTPS on")
	cert := flag.String("tls-cert", "", "the serving certificate, PEM (default: a self-signed one, made up)")
	key := flag.String("tls-key", "", "the key of -tls-cert, PEM")
	flag.Parse()
	if err := run(*addr, *cert, *key); err != nil {
		log.Fatal(err)
	}
}

func run(addr, certFile, keyFile string) error {
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
	api, err := apiserver.New(append(delegated, apiserver.WithValidatingAdmission(lifecycle))...)
	if err != nil {
		return err
	}
	if err := widgetapi.Register(api); err != nil {
		return err
	}

	var serving tls.Certificate
	if certFile != "" || keyFile != "" {
		serving, err = tls.LoadX509KeyPair(certFile, keyFile)
	} else {
		serving, err = serve.SelfSigned("kapi-widgets.kapi-system.svc", "kapi-widgets.kapi-system.svc", "localhost")
	}
	if err != nil {
		return err
	}
	server := &http.Server{
		Addr: addr, Handler: api, ReadHeaderTimeout: 10 * time.Second,
		// Client certificates are asked for, not verified here: the
		// authenticators verify each against its own CA pool (the front
		// proxy's, the clients'), which the ConfigMap may change.
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{serving}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12},
	}
	log.Printf("serving widgets.example.com/v1 on https://%s for the cluster at %s", addr, cluster.Host)
	return serve.Run(ctx, server, api, func() error { return server.ListenAndServeTLS("", "") })
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
