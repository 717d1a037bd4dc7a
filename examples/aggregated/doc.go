// Command aggregated serves the widgets API behind a Kubernetes cluster's
// kube-apiserver as an APIService (v1.example.com): the cluster's front
// proxy, client CA and bearer tokens say who sends a request (package
// delegation, from the kube-system/extension-apiserver-authentication
// ConfigMap, reloaded every minute, and TokenReview), and the cluster's
// RBAC what they may do (SubjectAccessReview); objects are created only in
// the cluster's live namespaces.
//
// # Install
//
// Build the image (examples/aggregated/Dockerfile: a static binary on a
// distroless base, run as a non-root user) and push it where the cluster
// pulls from; set it in deploy.yaml. Then install the manifests and give
// the server its serving certificate, for the name kube-apiserver dials
// (kapi-widgets.kapi-system.svc), as a Secret of type kubernetes.io/tls:
//
//	docker build -f examples/aggregated/Dockerfile -t example.com/kapi-aggregated:latest .
//	kubectl apply -f examples/aggregated/deploy.yaml
//	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 \
//	  -subj /CN=kapi-widgets.kapi-system.svc -addext subjectAltName=DNS:kapi-widgets.kapi-system.svc \
//	  -keyout tls.key -out tls.crt
//	kubectl -n kapi-system create secret tls kapi-widgets-serving --cert tls.crt --key tls.key
//	kubectl get apiservice v1.example.com   # Available: True
//	kubectl create -f widget.yaml            # as any user RBAC lets create widgets
//
// deploy.yaml holds the namespace, the service account and its two
// bindings every aggregated server needs (system:auth-delegator, to ask
// TokenReviews and SubjectAccessReviews, and
// extension-apiserver-authentication-reader in kube-system, to read the
// ConfigMap), a role to look up the cluster's namespaces (NamespaceLifecycle
// admission), the Deployment, the Service, the APIService, and a
// ClusterRole for users of widgets. Its APIService skips TLS verification;
// in production set its caBundle to the CA of the serving certificate
// (cert-manager can issue and renew the certificate; the server reads a
// renewed one without a restart).
//
// # Metrics and traces
//
// The server serves kube-apiserver's request metrics at /metrics
// (package observe/prometheus), behind the cluster's authentication and
// RBAC like every path: a Prometheus server whose ClusterRole allows get
// on the nonResourceURL /metrics scrapes it, and kubectl reads it with the
// kubeconfig's credentials (a client certificate of the cluster's CA, or a
// token):
//
//	kubectl -n kapi-system port-forward svc/kapi-widgets 8443:443 &
//	kubectl --server https://127.0.0.1:8443 --insecure-skip-tls-verify get --raw /metrics
//
// With OTEL_EXPORTER_OTLP_ENDPOINT set (and OTEL_SERVICE_NAME, say
// kapi-widgets), it sends a span per request, with the storage calls
// under it, to that OpenTelemetry collector over OTLP/HTTP (package
// observe/otel); requests kube-apiserver proxies continue its traces.
//
// The example is a module of its own (the exporters' dependencies stay out
// of kapi's root module); the repository's go.work builds it from the
// root: go build ./examples/aggregated.
//
// # Shutting down
//
// On SIGTERM the server stops as apiserver.Server.Run does: new requests
// are answered 503 with Retry-After (client-go retries them), watches end so their
// clients watch again, requests in flight get up to the request timeout
// (20 s here, within the pod's 30 s of grace), then the process exits.
package main
