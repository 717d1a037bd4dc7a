package apiserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi/cors"
	"github.com/kapi-dev/kapi/fairness"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/validation"
)

// This file holds every option of New, so that what a server can be told
// is read in one place. An option only records a setting in config;
// newConfig sets the defaults first and checks the settings after, so that
// a bad one is an error from New and never a panic later.

// Option configures a Server; the With functions below make them.
type Option func(*config)

// config is what the options set. The comment beside a field names the
// file that reads it, where that is not server.go.
type config struct {
	store             storage.Interface
	keyPrefix         string
	maxBodyBytes      int64
	bookmarkInterval  time.Duration
	minWatchTimeout   time.Duration
	historyWindow     time.Duration // read.go
	version           VersionInfo
	logger            *slog.Logger
	mutating          []AdmissionFunc // admission.go
	validating        []AdmissionFunc
	auth              authConfig            // auth.go
	limits            limits                // limits.go
	ruleEngine        validation.RuleEngine // declared.go
	strictConventions bool                  // conventions.go
	namespaces        bool                  // namespaces.go
	leases, events    bool                  // events.go
	eventTTL          time.Duration
	observers         []Observer // observe.go
	observerErr       error
	metrics           http.Handler // GET /metrics
	corsOrigins       []string     // compiled into cors by newConfig
	cors              *cors.Policy // routes wraps authentication in it
}

// newConfig applies opts over the defaults and checks the result, every
// mistake at once.
func newConfig(opts []Option) (config, error) {
	c := config{
		keyPrefix:        "/",
		maxBodyBytes:     3 << 20,
		bookmarkInterval: time.Minute,
		minWatchTimeout:  30 * time.Minute,
		historyWindow:    5 * time.Minute,
		version:          defaultVersion(),
		limits:           defaultLimits(),
		eventTTL:         time.Hour,
	}
	for _, o := range opts {
		o(&c)
	}
	var errs []error
	if c.maxBodyBytes <= 0 {
		errs = append(errs, fmt.Errorf("max request body bytes must be positive, not %d", c.maxBodyBytes))
	}
	if c.minWatchTimeout <= 0 {
		errs = append(errs, fmt.Errorf("minimum watch timeout must be positive, not %v", c.minWatchTimeout))
	}
	if c.historyWindow <= 0 {
		errs = append(errs, fmt.Errorf("history window must be positive, not %v", c.historyWindow))
	}
	if c.eventTTL <= 0 {
		errs = append(errs, fmt.Errorf("event time to live must be positive, not %v", c.eventTTL))
	}
	if c.bookmarkInterval <= 0 {
		errs = append(errs, fmt.Errorf("bookmark interval must be positive, not %v", c.bookmarkInterval))
	}
	if c.keyPrefix == "" || c.keyPrefix[0] != '/' || c.keyPrefix[len(c.keyPrefix)-1] != '/' {
		errs = append(errs, fmt.Errorf("key prefix %q must start and end with '/'", c.keyPrefix))
	}
	if c.corsOrigins != nil {
		p, err := cors.New(c.corsOrigins)
		errs = append(errs, err)
		c.cors = p
	}
	if c.observerErr != nil {
		errs = append(errs, c.observerErr)
	}
	if err := c.auth.check(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.limits.check()...)
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("apiserver: %w", err)
	}
	return c, nil
}

// Where objects are stored.

// WithStorage stores objects in store instead of a new in-memory store.
func WithStorage(store storage.Interface) Option { return func(c *config) { c.store = store } }

// WithKeyPrefix puts every key the server writes under prefix (default "/"),
// so one store can be shared with other data.
func WithKeyPrefix(prefix string) Option { return func(c *config) { c.keyPrefix = prefix } }

// How large requests may be and how long watches last.

// WithMaxRequestBodyBytes limits request bodies (default 3 MiB, as
// kube-apiserver); larger bodies are refused with 413.
func WithMaxRequestBodyBytes(n int64) Option { return func(c *config) { c.maxBodyBytes = n } }

// WithBookmarkInterval sets how often an idle watch that allows bookmarks
// gets one (default one minute).
func WithBookmarkInterval(d time.Duration) Option { return func(c *config) { c.bookmarkInterval = d } }

// WithStrictConventions makes Register refuse a type that breaks a
// Kubernetes API convention (a float in spec, an unsigned integer, Go's
// int, a map of objects where a list of named objects belongs, an enum
// value that is not CamelCase), with an error wrapping ErrConventions that
// lists them. Without it the server logs each as a warning, once, at
// registration: advice while the API can still change.
func WithStrictConventions() Option { return func(c *config) { c.strictConventions = true } }

// WithHistoryWindow sets how long clients may come back to what they
// read: a watch from a resourceVersion whose events are older is 410
// Gone, and so is a continue token of a list read longer ago, as
// kube-apiserver's storage is compacted every 5 minutes (the default).
// The window also holds at most 10,000 events of a resource, so that a
// busy server bounds its memory.
func WithHistoryWindow(d time.Duration) Option { return func(c *config) { c.historyWindow = d } }

// historyEvents is how many events of a resource the window holds at most.
const historyEvents = 10000

// WithMinWatchTimeout sets how long a watch without timeoutSeconds lasts: a
// random time between d and 2d (default 30 minutes), so that many clients
// do not reconnect at once.
func WithMinWatchTimeout(d time.Duration) Option { return func(c *config) { c.minWatchTimeout = d } }

// How much the server serves at once, and for how long (limits.go and
// internal/guard apply these).

// WithMaxRequestsInFlight caps the read-only requests (get, list, discovery,
// OpenAPI) being served at once; more are answered 429 TooManyRequests with
// Retry-After: 1, which client-go and kubectl wait for and retry. The
// default is 400, as kube-apiserver's --max-requests-inflight; 0 removes the
// cap. Watches are not counted: they last minutes, and have their own cap
// (WithMaxWatches).
func WithMaxRequestsInFlight(n int) Option {
	return func(c *config) { c.limits.readOnly = int64(n) }
}

// WithMaxMutatingRequestsInFlight caps the writes (create, update, patch,
// delete) being served at once, apart from reads so that a flood of one
// cannot starve the other. The default is 200, as kube-apiserver's
// --max-mutating-requests-inflight; 0 removes the cap.
func WithMaxMutatingRequestsInFlight(n int) Option {
	return func(c *config) { c.limits.mutating = int64(n) }
}

// WithMaxWatches caps the watches open at once; more are answered 429 like
// other requests over their cap. Each watch holds a goroutine and a buffer
// for as long as it lasts. The default, 1000, is far above what one
// service's clients open (one per informer and resource) and low enough
// that a client leaking watches is refused before memory runs out; 0 lifts it.
func WithMaxWatches(n int) Option {
	return func(c *config) { c.limits.watches = int64(n) }
}

// WithRequestTimeout bounds how long a request other than a watch may take
// (default one minute, as kube-apiserver's --request-timeout); a client may
// ask for less with timeout= (a Go duration, timeout=10s; more or 0 gets
// this). When the time is up the client gets 504 Timeout and the handler's
// context is cancelled; a handler that ignores it may hold its HTTP/1
// connection (the 504 then closes it), and middleware around the server see
// the request end, only when it returns. Watches end at timeoutSeconds.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *config) { c.limits.requestTimeout = d }
}

// WithFairness shares the server among its clients as kube-apiserver's API
// Priority and Fairness does, in place of the global caps of
// WithMaxRequestsInFlight and WithMaxMutatingRequestsInFlight: after
// authentication (it needs the user), each request is classified by c's
// flow schemas into a priority level and a flow (its user, or user and
// namespace), waits in its flow's bounded queue for one of the level's
// seats, and is served in turn with the other flows, so that one client's
// flood does not make everyone wait; the excess is answered 429 with
// Retry-After. Every classified response carries the
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID
// headers, as kube-apiserver's. fairness.Default(600) is kube-apiserver's
// classification with its 600 seats. Watches keep their own cap
// (WithMaxWatches). A bad c is an error from New.
func WithFairness(c fairness.Config) Option {
	return func(cfg *config) { cfg.limits.fairness = &c }
}

// What the server logs and says about itself.

// WithLogger receives what the server recovers from without a request to
// answer: a stored object that no longer decodes, a storage watch that
// failed. The default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithVersion sets what /version answers.
func WithVersion(v VersionInfo) Option { return func(c *config) { c.version = v } }

// Who may do what; auth.go applies these.

// WithAuthentication makes every request prove who sent it: the
// authenticators are asked in order and the first that accepts the request
// names its user (with GroupAuthenticated added), which handlers and hooks
// read with UserFrom. A request no authenticator accepts is 401
// Unauthorized, unless it carries no credentials and WithAnonymous is set.
// Paths given to WithAlwaysAllowPaths are exempt.
//
// With authentication but no authorizer, every authenticated user may do
// everything.
func WithAuthentication(authenticators ...Authenticator) Option {
	return func(c *config) { c.auth.authenticators = append(c.auth.authenticators, authenticators...) }
}

// WithAuthorization asks the authorizers, in order, whether each request
// may proceed: the first Allow or Deny decides; when all have no opinion,
// the request is denied. A denied request is 403 Forbidden with
// Kubernetes' message, for example
//
//	widgets.example.com "a" is forbidden: User "bob" cannot get resource "widgets" in API group "example.com" in the namespace "default"
//
// Every request is authorized — reads, watches, writes, subresources,
// discovery, OpenAPI, /version — except those WithAlwaysAllowPaths exempts.
func WithAuthorization(authorizers ...Authorizer) Option {
	return func(c *config) { c.auth.authorizers = append(c.auth.authorizers, authorizers...) }
}

// WithAnonymous lets requests that carry no credentials in: they run as
// UserAnonymous in GroupUnauthenticated, and the authorizers decide what
// that user may do (kube-apiserver's --anonymous-auth). Requests whose
// credentials an authenticator refuses are still 401. Without this option,
// a server with an authenticator answers every request without credentials
// with 401, so nothing is open by accident.
func WithAnonymous() Option { return func(c *config) { c.auth.anonymous = true } }

// WithAlwaysAllowPaths serves the given paths without authentication or
// authorization, replacing the default /healthz, /livez and /readyz (so
// that load balancers and kubelet-style probes need no credentials, as
// Kubernetes' default RBAC lets anyone read them). A path ending in "*"
// matches every path it is a prefix of; no other "*" is allowed. Call it
// with no paths to authorize the health checks too.
func WithAlwaysAllowPaths(paths ...string) Option {
	return func(c *config) {
		c.auth.alwaysAllow = append([]string{}, paths...)
	}
}

// The hooks every write passes; admission.go runs them.

// WithMutatingAdmission adds hooks that may change every object written, in
// order, before the resource's validation.
func WithMutatingAdmission(hooks ...AdmissionFunc) Option {
	return func(c *config) { c.mutating = append(c.mutating, hooks...) }
}

// WithValidatingAdmission adds hooks that accept or reject every write after
// the resource's validation, just before it is stored.
func WithValidatingAdmission(hooks ...AdmissionFunc) Option {
	return func(c *config) { c.validating = append(c.validating, hooks...) }
}

// Who sees every request; observe.go calls them.

// WithObserver adds an observer of every request; see Observer. Without
// any, requests take no detour.
func WithObserver(o Observer) Option {
	return func(c *config) {
		if o == nil {
			c.observerErr = fmt.Errorf("a nil Observer")
			return
		}
		c.observers = append(c.observers, o)
	}
}

// WithRequestLog logs one line per request to l at Info, as
// kube-apiserver's httplog: verb, URI, latency, userAgent, audit-ID, srcIP
// and resp (the status code). Off by default.
func WithRequestLog(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.observerErr = fmt.Errorf("a nil request logger")
			return
		}
		c.observers = append(c.observers, requestLog(l))
	}
}

// WithMetrics serves h (a metrics exporter's handler, as
// observe/prometheus's) at GET /metrics, behind the server's authentication
// and authorization as kube-apiserver serves its own: kubectl get --raw
// /metrics reads it.
func WithMetrics(h http.Handler) Option {
	return func(c *config) {
		if h == nil {
			c.observerErr = fmt.Errorf("a nil metrics handler")
			return
		}
		c.metrics = h
	}
}

// WithCORSAllowedOrigins lets web pages of the origins the patterns match
// call the API, as kube-apiserver's --cors-allowed-origins: regular
// expressions matched against the Origin header, each pinning the start
// and end of the host as kube requires (`^https://console\.example\.com$`,
// `//console\.example\.com(:|$)`; see package cors). Their
// preflights are answered 204 before authentication; see package cors for
// the headers. A pattern that does not compile, or none at all, is an
// error from New. Watches over WebSocket, which browsers open without
// CORS, are served whatever the origin; a page that has a token sends it
// in the subprotocol base64url.bearer.authorization.k8s.io.<token in
// unpadded base64url>, as to kube-apiserver.
func WithCORSAllowedOrigins(patterns ...string) Option {
	return func(c *config) { c.corsOrigins = append([]string{}, patterns...) }
}

// The resources of Kubernetes the server can serve itself (namespaces.go,
// events.go).

// WithNamespaces serves core/v1 namespaces and gives them the lifecycle
// they have in Kubernetes:
//
//   - default, kube-system, kube-public and kube-node-lease exist from the
//     start, as kube-apiserver creates them; the first three cannot be
//     deleted;
//   - a namespaced object can be created only in a namespace that exists
//     (404 NotFound otherwise) and is not terminating (403 Forbidden), as
//     kube's NamespaceLifecycle admission decides;
//   - a deleted namespace turns Terminating; the server deletes its content,
//     then the namespace (package lifecycle), as kube-controller-manager's
//     namespace controller does. Clients finalize a namespace through its
//     finalize subresource.
//
// Without it the server has no namespaces: a namespaced object can be
// created in any namespace, and nothing deletes it but a client.
func WithNamespaces() Option { return func(c *config) { c.namespaces = true } }

// WithLeases serves coordination.k8s.io/v1 leases, on which client-go's
// leader election (and so controller-runtime's managers) elect a leader.
func WithLeases() Option { return func(c *config) { c.leases = true } }

// WithEvents serves core/v1 events and events.k8s.io/v1 events, which
// controllers record and kubectl describe and kubectl events show, with
// the field selectors those use (involvedObject.*, regarding.*, reason,
// type...). An event is deleted an hour after its last write (see
// WithEventTTL), as kube-apiserver's --event-ttl bounds them.
//
// As in kube-apiserver, the two are one storage: events.k8s.io/v1 events
// are core events seen in another form (regarding is involvedObject, note
// is message, deprecatedCount is count...), so an event recorded through
// either API is read, watched and expired through both.
func WithEvents() Option { return func(c *config) { c.events = true } }

// WithEventTTL sets how long after its last write an event is deleted
// (default one hour).
func WithEventTTL(d time.Duration) Option { return func(c *config) { c.eventTTL = d } }

// The constraints declared in struct tags; declared.go compiles them.

// WithRuleEngine evaluates the rule tags of the registered types (their
// x-kubernetes-validations) with e: validation/cel's engine for CEL, as
// CRDs have it. Without one, a type with a rule tag cannot be registered.
func WithRuleEngine(e validation.RuleEngine) Option { return func(c *config) { c.ruleEngine = e } }

// RuleEngine is the engine WithRuleEngine gave the server, nil without
// one. Package kinds compiles the x-kubernetes-validations of kinds
// defined at run time with it when it is also a schema.RuleCompiler, as
// validation/cel's is.
func (s *Server) RuleEngine() validation.RuleEngine { return s.config.ruleEngine }
