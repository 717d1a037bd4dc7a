package delegation_test

import (
	"context"
	"crypto/x509"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/delegation"
)

// A kapi server behind kube-apiserver as an APIService: who sends a
// request and what they may do is the cluster's to say.
func Example() {
	ctx := context.Background()
	// In a pod: the service account's token and the cluster's CA.
	token, _ := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/token")
	caPEM, _ := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig.RootCAs = roots
	cluster := delegation.Cluster{
		Host:        "https://kubernetes.default.svc",
		Client:      &http.Client{Transport: transport},
		BearerToken: string(token),
	}

	auth, err := delegation.LoadAuthentication(ctx, cluster)
	if err != nil {
		log.Fatal(err)
	}
	go auth.Run(ctx, time.Minute, func(err error) { log.Print(err) }) // CA rotations
	authn, err := auth.Authenticator()
	if err != nil {
		log.Fatal(err)
	}
	authz, err := delegation.NewSubjectAccessReview(cluster)
	if err != nil {
		log.Fatal(err)
	}
	api, err := apiserver.New(apiserver.WithAuthentication(authn), apiserver.WithAuthorization(authz))
	if err != nil {
		log.Fatal(err)
	}
	_ = api // register resources, then serve it over TLS asking for client certificates
}

func ExampleNewRequestHeader() {
	proxyCAs := x509.NewCertPool() // the cluster's requestheader-client-ca-file
	authn, err := delegation.NewRequestHeader(func() *x509.CertPool { return proxyCAs },
		delegation.WithAllowedNames("front-proxy-client"))
	if err != nil {
		log.Fatal(err)
	}
	_, _ = apiserver.New(apiserver.WithAuthentication(authn))
}

func ExampleNewTokenReview() {
	cluster := delegation.Cluster{Host: "https://kubernetes.default.svc"}
	authn, err := delegation.NewTokenReview(cluster, delegation.WithCacheTTL(10*time.Second, 10*time.Second), delegation.WithAudiences("https://kubernetes.default.svc"))
	if err != nil {
		log.Fatal(err)
	}
	_, _ = apiserver.New(apiserver.WithAuthentication(authn))
}

func ExampleNewSubjectAccessReview() {
	cluster := delegation.Cluster{Host: "https://kubernetes.default.svc"}
	authz, err := delegation.NewSubjectAccessReview(cluster, delegation.WithTimeout(5*time.Second), delegation.WithAlwaysAllowGroups("system:masters"))
	if err != nil {
		log.Fatal(err)
	}
	_, _ = apiserver.New(apiserver.WithAuthorization(authz))
}

func ExampleNamespaceLifecycle() {
	cluster := delegation.Cluster{Host: "https://kubernetes.default.svc"}
	lifecycle, err := delegation.NamespaceLifecycle(cluster)
	if err != nil {
		log.Fatal(err)
	}
	_, _ = apiserver.New(apiserver.WithValidatingAdmission(lifecycle))
}

func ExampleMutatingWebhooks() {
	cluster := delegation.Cluster{Host: "https://kubernetes.default.svc"}
	mutating, err := delegation.MutatingWebhooks(cluster)
	if err != nil {
		log.Fatal(err)
	}
	validating, err := delegation.ValidatingWebhooks(cluster, delegation.WithWebhookRefresh(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	_, _ = apiserver.New(apiserver.WithMutatingAdmission(mutating), apiserver.WithValidatingAdmission(validating))
}
