// Package apiserver serves Go types over the Kubernetes API, as an
// http.Handler that kubectl, client-go and every other Kubernetes client can
// use unmodified.
//
// # Registering a resource
//
// A resource type is a struct that embeds kapi.TypeMeta and kapi.ObjectMeta.
// Register describes it — group, version, kind, plural, scope, subresources,
// and the hooks that default and validate it:
//
//	srv, err := apiserver.New() // in memory; apiserver.WithStorage(...) for another backend
//	err = apiserver.Register(srv, apiserver.Resource[Widget]{
//		Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
//		Namespaced: true, ShortNames: []string{"wd"}, Status: true,
//		Validate: validateWidget,
//	})
//	mux.Handle("/", srv)
//
// The common constraints can be declared on the type's fields instead, in
// struct tags (validate:"required,enum=Red;Green;Blue", default:"1",
// pattern:"^[a-z]+$"; see package validation): they are defaulted and
// checked on every write before Default and Validate run, and written into
// the OpenAPI schema. Rule tags (CEL, as a CRD's x-kubernetes-validations)
// need WithRuleEngine.
//
// A mistake in the description or in a tag is an error from Register,
// never a panic later. Register also advises on the API conventions the
// type breaks (a float in spec, an unsigned or platform int, a map of
// objects, an enum value not CamelCase): warnings logged once, or errors
// under WithStrictConventions. Registration ends with Complete, or when the server
// first serves a request.
//
// # Versions
//
// A kind served in several versions is registered once per version, each
// with its own Go type: one is the Storage version, and every version
// whose type is not the hub converts to and from it (ConvertVia). Register
// refuses a version that disagrees with the others on names, scope or
// subresources; Complete refuses a kind without exactly one storage
// version or with a version that cannot reach the hub. Discovery lists the
// served versions by Kubernetes' priority (v1 before v1beta1), each with
// its OpenAPI document; a NotServed version is nowhere; a Deprecated one
// warns every request. Objects are stored and cached in the storage
// version; a request in another version is decoded and defaulted there,
// converted, validated and admitted in the storage version, and answered
// converted back, each cached object version converted once and encoded
// once per media type for every reader. managedFields keep the version
// their manager wrote, and apply conflicts are found in it. The stored
// bytes say their version, so objects written under an older storage
// version still read; MigrateStorage rewrites them (package versions).
//
// # What is served
//
// Under /apis/{group}/{version} (or /api/v1 for the core group): get, list,
// watch, create, update, patch, delete and deletecollection, namespaced or
// cluster-scoped, and the status subresource; discovery (/api, /apis, and the
// aggregated form), /version, /healthz, /livez, /readyz, and OpenAPI v3
// derived from the Go types.
//
// # Writes
//
// The server sets uid, creationTimestamp, resourceVersion and generation
// (which moves only when the spec changes) and generates names from
// generateName. An update names the version it changes through
// metadata.resourceVersion (409 Conflict when stale); an update that changes
// nothing writes nothing. Objects with finalizers are marked for deletion and
// removed when the last finalizer goes. A PUT to a missing object creates
// it (201) where the resource allows it (CreateOnUpdate, as for Leases and
// Events), after asking the authorizer for create too.
//
// # Lifecycle
//
// The server runs Kubernetes' garbage collector (package gc): a DELETE's
// propagationPolicy becomes the owner's finalizer, and the collector deletes
// or orphans the dependents its ownerReferences name. A stored object that
// no longer decodes is answered as Kubernetes answers a corrupt one, and
// removed by a DELETE with ignoreStoreReadErrorWithClusterBreakingPotential
// from a caller also authorized for unsafe-delete-ignore-read-errors.
//
// WithNamespaces serves core/v1 namespaces with kube's lifecycle: objects
// go only into namespaces that exist and are not terminating, and a
// deleted namespace is emptied and removed by the server itself (package
// lifecycle). WithLeases serves coordination.k8s.io/v1 leases for leader
// election, WithEvents core/v1 and events.k8s.io/v1 events (one storage:
// the latter is a version of the core kind served in its own group, as in
// kube-apiserver), deleted an hour (WithEventTTL) after their last write.
// Package builtin holds their Go types.
//
// A package with a controller of its own runs it inside the server with
// RunController (package crd's accepts CustomResourceDefinitions and serves
// their kinds); /readyz waits for it to say it has synced. Resource.OnDelete
// lets a kind change an object a DELETE marks, as a definition gets its
// cleanup finalizer.
//
// # Authentication and authorization
//
// A server serves everyone until told otherwise. WithAuthentication names
// the user of each request (StaticTokens and ReadTokenFile for bearer
// tokens, ClientCertificates for TLS client certificates,
// UnionAuthenticator to accept several kinds, or an AuthenticatorFunc);
// a request no authenticator accepts is 401 Unauthorized, unless
// WithAnonymous lets requests without credentials in as system:anonymous.
// Handlers and hooks read the user with UserFrom.
//
// WithAuthorization then decides on every request — reads, watches,
// writes, subresources, discovery, OpenAPI, /version — from its
// Attributes: user, verb, API group and version, resource, subresource,
// namespace and name, or the path of a non-resource request, read from
// the URL as kube-apiserver reads them. RulesAuthorizer takes rules shaped
// like RBAC's; an AuthorizerFunc can decide anything else. A denial is 403
// Forbidden with Kubernetes' message, which kubectl and client-go show as
// they would for kube-apiserver. The health checks are served without
// either step (WithAlwaysAllowPaths changes which paths are).
//
// A server that authenticates lets a user act as another with kube's
// Impersonate-User, -Group, -Uid and -Extra-* headers (kubectl --as),
// when its authorizers allow the impersonate verb on each part, and
// answers the reviews kubectl auth whoami, auth can-i and auth can-i
// --list send (SelfSubjectReview, SelfSubjectAccessReview,
// SelfSubjectRulesReview; an authorizer that is a RuleResolver lists its
// rules). Package delegation leaves both steps to a Kubernetes cluster.
//
// The interfaces plugins implement live in packages of their own, so that a
// plugin need not import this package: package auth (users, authenticators,
// authorizers, rules), package admission (admission hooks) and package
// observe (observers of every request). The names here (User, Authorizer,
// AdmissionFunc, Observer and the rest) are aliases of theirs.
//
// # Errors
//
// Every failure is a kapi.Status with the code and reason of the Kubernetes
// API Conventions. Validation hooks return FieldErrors (built with Required,
// Invalid, NotSupported, Forbidden, Duplicate): the client gets 422 Invalid
// with one cause per field. Any hook may return a *StatusError to choose its
// own response.
//
// # Reads and watches
//
// Reads are served from a cache fed by the store's watch (package watch):
// each object version is encoded once per media type and its bytes shared by
// every GET, LIST and watcher. A read without resourceVersion is consistent:
// it waits until the cache has caught up with the store. What clients may
// come back to expires by time (WithHistoryWindow, 5 minutes, as
// kube-apiserver compacts its storage) as well as by count: a continue
// token of an older list, a watch from an older event, are 410 Gone.
//
// # Load, limits and faults
//
// Requests in flight are capped (400 read-only, 200 mutating, 1000 watches:
// WithMaxRequestsInFlight, WithMaxMutatingRequestsInFlight, WithMaxWatches);
// the excess is answered 429 with Retry-After, which Kubernetes clients wait
// for and retry. WithFairness shares the server among its clients instead,
// as kube-apiserver's API Priority and Fairness (package fairness): requests
// queued per user in priority levels and served in turn, so that one
// client's flood does not refuse the others. A request other than a watch is answered 504 after 60 s
// (WithRequestTimeout), or the client's shorter timeout=. Bodies are limited
// to 3 MiB (WithMaxRequestBodyBytes) and nested at most 10000 deep, and
// metadata is validated as Kubernetes validates it (labels, annotations of at
// most 256 KiB, owner references, finalizers). A panic in a hook is a 500
// for that request only, logged. Shutdown stops a server gracefully: new
// requests 503, watches ended so that clients re-watch, requests in flight
// finished.
//
// While /readyz's storage check finds the store unreachable (checked when a
// call to it fails or is slow, then every 250 ms until it answers), writes
// and consistent reads are answered 503 with Retry-After at once, a write's
// outcome known (not applied), instead of waiting out the request timeout;
// the reads the cache serves (resourceVersion=0), watches and /version go on.
package apiserver
