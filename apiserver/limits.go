package apiserver

import (
	"context"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/fairness"
	"github.com/kapi-dev/kapi/internal/guard"
)

// Every request passes the server's guard before it is routed. The guard
// answers for the server as a whole, as kube-apiserver's filter chain does:
//
//   - while the server shuts down, new requests are refused with 503;
//   - requests in flight are capped, read-only, mutating and watches each
//     by a limit of their own, and the excess is refused at once with 429
//     and Retry-After, rather than queued until clients time out;
//   - or, with WithFairness, they are queued per flow after authentication
//     and served fairly among clients (see withFairness);
//   - a request other than a watch has a deadline (60 s, or less with
//     timeout=) and is answered 504 when it passes, even if the handler is
//     stuck in a hook that ignores its context;
//   - a panic in a handler (most likely in a user's hook: Default,
//     Validate, a Column's Value, a type's MarshalJSON) is answered 500 and
//     logged; the server goes on serving.

// limits are the settings of the guard.
type limits struct {
	readOnly, mutating, watches int64 // 0: no limit
	requestTimeout              time.Duration

	fairness *fairness.Config     // WithFairness; nil: the global caps
	fair     *fairness.Controller // made from it by check
}

func defaultLimits() limits {
	d := guard.DefaultLimits()
	return limits{readOnly: d.ReadOnly, mutating: d.Mutating, watches: d.Watches, requestTimeout: d.RequestTimeout}
}

// guardLimits are the limits as the guard takes them.
func (l *limits) guardLimits() guard.Limits {
	return guard.Limits{ReadOnly: l.readOnly, Mutating: l.mutating, Watches: l.watches, RequestTimeout: l.requestTimeout, Fair: l.fairness != nil}
}

// newFlow is the server's guard (internal/guard): its answers are the
// server's Statuses, and a handler's panic is noted in the request's
// observed record.
func newFlow(ctx context.Context, c *config) *guard.Flow {
	return guard.New(ctx, guard.Config{
		Limits:   c.limits.guardLimits(),
		Logger:   c.logger,
		Reply:    func(w http.ResponseWriter, r *http.Request, st kapi.Status) { writeStatus(w, r, nil, st) },
		StatusOf: func(err error) kapi.Status { return statusOf(err, target{}) },
		Panicked: func(r *http.Request, p any) {
			if rec := recordFrom(r.Context()); rec != nil {
				rec.notePanic(p)
			}
		},
	})
}

func (l *limits) check() []error {
	var errs []error
	if l.fairness != nil {
		fair, err := fairness.New(*l.fairness)
		if err != nil {
			errs = append(errs, err)
		}
		l.fair = fair
	}
	return append(errs, l.guardLimits().Check()...)
}

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
// service's clients open (one per informer and resource) and low enough that
// a client leaking watches is refused before it exhausts memory; 0 removes
// the cap.
func WithMaxWatches(n int) Option {
	return func(c *config) { c.limits.watches = int64(n) }
}

// WithRequestTimeout bounds how long a request other than a watch may take
// (default one minute, as kube-apiserver's --request-timeout). A client may
// ask for less with the query parameter timeout (a Go duration: timeout=10s);
// asking for more, or for 0, gets this. When the time is up the client gets
// 504 Timeout and the handler's context is cancelled. Watches end when their
// timeoutSeconds says.
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

// withFairness queues requests per flow when the server has WithFairness.
// It runs after authentication and authorization (the routes are what
// withAuth wraps), so that it knows the user; kube-apiserver runs its
// filter between the two, which spares a denied request its authorization
// when the server is busy, at the cost of queuing requests that would be
// denied. Requests before it (and those authentication refuses) are held
// back only by the guard: being refused is cheap.
func (s *Server) withFairness(next http.Handler) http.Handler {
	fair := s.config.limits.fair
	if fair == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if guard.Classify(r) == guard.Watch { // long-running: the watch cap holds them
			next.ServeHTTP(w, r)
			return
		}
		attrs := requestAttributes(r)
		user, ok := UserFrom(r.Context())
		if !ok {
			user = User{Name: UserAnonymous, Groups: []string{GroupUnauthenticated}}
		}
		d, done, err := fair.Admit(r.Context(), fairness.Request{User: user.Name, Groups: user.Groups, Namespace: attrs.Namespace, Path: attrs.Path})
		if d.FlowSchemaUID != "" {
			// As kube-apiserver, the UIDs rather than names: a client is
			// not told how it is thought of.
			w.Header().Set("X-Kubernetes-PF-FlowSchema-UID", d.FlowSchemaUID)
			w.Header().Set("X-Kubernetes-PF-PriorityLevel-UID", d.PriorityLevelUID)
		}
		if err != nil {
			s.flow.TooManyRequests(w, r)
			return
		}
		defer done()
		next.ServeHTTP(w, r)
	})
}
