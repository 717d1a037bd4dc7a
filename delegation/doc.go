// Package delegation lets a kapi server leave authentication and
// authorization to the Kubernetes cluster it serves as an aggregated API
// (an APIService), as k8s.io/apiserver's delegated options do, without
// client-go: each check is one small JSON call.
//
// # Front proxy
//
// [NewRequestHeader] authenticates the requests kube-apiserver proxies: it
// verifies the client certificate against the front proxy's CA pool (the
// requestheader-client-ca-file), checks the certificate's name against the
// allowed names, and takes the user from the X-Remote-User,
// X-Remote-Group, X-Remote-Uid and X-Remote-Extra-* headers (names
// configurable), which it then removes from the request.
//
// # Tokens
//
// [NewTokenReview] authenticates bearer tokens with a TokenReview
// (authentication.k8s.io/v1) to kube-apiserver, remembering answers for a
// while: accepted tokens for the success TTL, refused ones for the failure
// TTL.
//
// # Authorization
//
// [NewSubjectAccessReview] asks kube-apiserver with a SubjectAccessReview
// (authorization.k8s.io/v1) whether a user may do what a request asks,
// with the request's label and field selectors, and caches allowed and
// denied answers apart. Users in the always-allowed groups (system:masters
// by default) and the always-allowed paths (the health checks) are allowed
// without asking.
//
// # Namespaces
//
// [NamespaceLifecycle] is kube's NamespaceLifecycle admission against the
// cluster's namespaces, for a server that serves none itself: no object is
// created in a namespace the cluster lacks or is deleting.
//
// # All at once
//
// [Delegate] gives a server all of it in one call, as k8s.io/apiserver's
// RecommendedOptions do: [LoadAuthentication] reads the cluster's
// kube-system/extension-apiserver-authentication ConfigMap (client CA,
// front-proxy CA, allowed names, headers) and reloads it, its
// [Authentication.Authenticator] joins the front proxy, client
// certificates and TokenReview, and [NewSubjectAccessReview] authorizes.
//
// # Cluster
//
// A [Cluster] says how to reach kube-apiserver: its address, an
// *http.Client that trusts its CA, and the server's own bearer token (its
// service account's). Nothing rate-limits the calls (kube's delegated
// clients allow 200 QPS with a burst of 400 so as not to throttle the
// server); the caches keep their number down.
package delegation
