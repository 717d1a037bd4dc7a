package apiserver

import (
	"context"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/fairness"
	"github.com/kapi-dev/kapi/internal/guard"
	"github.com/kapi-dev/kapi/internal/requestinfo"
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
		Limits: c.limits.guardLimits(),
		Logger: c.logger, Observed: len(c.observers) > 0,
		Reply:    func(w http.ResponseWriter, r *http.Request, st kapi.Status) { writeStatus(w, r, nil, st) },
		StatusOf: func(err error) kapi.Status { return statusOf(err, target{}) },
		Panicked: func(r *http.Request, p any) {
			if rec := recordFrom(r.Context()); rec != nil {
				rec.NotePanic(p)
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
		if s.flow.Classify(r) == guard.Watch { // long-running: the watch cap holds them
			next.ServeHTTP(w, r)
			return
		}
		attrs := requestinfo.Of(r)
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
