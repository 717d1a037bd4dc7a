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
// Build an image with this command as its entry point, set it in
// deploy.yaml, then:
//
//	kubectl apply -f examples/aggregated/deploy.yaml
//	kubectl get apiservice v1.example.com   # Available: True
//	kubectl create -f widget.yaml            # as any user RBAC lets create widgets
//
// deploy.yaml holds the namespace, the service account and its two
// bindings every aggregated server needs (system:auth-delegator, to ask
// TokenReviews and SubjectAccessReviews, and
// extension-apiserver-authentication-reader in kube-system, to read the
// ConfigMap), a role to look up the cluster's namespaces (NamespaceLifecycle
// admission), the Deployment, the Service, the APIService, and a
// ClusterRole for users of widgets. The server makes up a self-signed
// serving certificate unless given one, so the APIService skips TLS
// verification; give it a certificate and a caBundle in production.
package main
