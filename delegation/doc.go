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
// # Admission webhooks
//
// [MutatingWebhooks] and [ValidatingWebhooks] call the cluster's
// MutatingWebhookConfigurations and ValidatingWebhookConfigurations
// (admissionregistration.k8s.io/v1) for the server's writes, as
// kube-apiserver's webhook admission plugins do for its own: the
// configurations are listed again when older than the refresh
// (WithWebhookRefresh, 10s), ordered by name; a webhook is called when one
// of its rules matches the operation, group, version, resource (with "*"
// and "resource/subresource") and scope, and its objectSelector and
// namespaceSelector (the namespace's labels are read from the cluster)
// match. It gets an admission.k8s.io/v1 AdmissionReview at its url or at
// https://NAME.NAMESPACE.svc:PORT/PATH, trusting its caBundle, within its
// timeoutSeconds (10). A denial is kube's error (admission webhook "NAME"
// denied the request: MESSAGE, with the webhook's code, at least 400); a
// failure to call is a 500 under failurePolicy Fail and is passed over
// under Ignore; a dry run is refused by a webhook whose sideEffects are
// not None or NoneOnDryRun. A mutating webhook's JSONPatch is applied to
// the object. The server's service account needs list on both
// configurations (and get on namespaces for namespaceSelector): until a
// first listing succeeds, every write is a 500; a later failure keeps the
// last list. Not done: matchConditions (CEL) and matchPolicy Equivalent
// (rules match the request's own group and version), reinvocationPolicy,
// AdmissionReview v1beta1 (a webhook must accept v1), warnings, and
// calling validating webhooks at once rather than one after the other.
//
// # All at once
//
// [Delegate] gives a server all of it in one call, as k8s.io/apiserver's
// RecommendedOptions do: [LoadAuthentication] reads the cluster's
// kube-system/extension-apiserver-authentication ConfigMap (client CA,
// front-proxy CA, allowed names, headers) and reloads it, its
// [Authentication.Authenticator] joins the front proxy, client
// certificates and TokenReview, and [NewSubjectAccessReview] authorizes;
// [WithNamespaceLifecycle] and [WithWebhooks] add the cluster's admission.
//
// # Cluster
//
// A [Cluster] says how to reach kube-apiserver: its address, an
// *http.Client that trusts its CA, and the server's own bearer token (its
// service account's). Its calls share a [RateLimiter] per host, 200 QPS
// with a burst of 400 as kube's delegated clients allow, so as never to
// throttle the server but to bound a loop; set Cluster.RateLimiter to
// change it (NewRateLimiter(0, 1) never limits). The caches keep the
// number of calls down. Calls to admission webhooks are not limited.
package delegation
