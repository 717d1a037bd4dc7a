package apiserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/healthz"
)

// healthCheck is one named check of /readyz or /livez.
type healthCheck = healthz.Check

// readyChecks are /readyz's checks: kube-apiserver's ping and etcd (here
// the store, whichever it is), and the watch cache's first sync, which is
// what kube-apiserver's informer-sync is to it.
func (s *Server) readyChecks() []healthCheck {
	return append([]healthCheck{
		{Name: "ping", Check: func(context.Context) error { return nil }},
		{Name: "storage", Check: s.health.ReadyCheck},
		{Name: "watch-cache", Check: func(context.Context) error {
			if !s.hub.Reached(0) {
				return errors.New("the watch cache has not synced yet")
			}
			return nil
		}},
	}, s.controllerChecks()...)
}

// liveChecks are /livez's and /healthz's: the process serves. The store is
// not among them: restarting a server whose store is away does not bring
// the store back.
func liveChecks() []healthCheck {
	return []healthCheck{{Name: "ping", Check: func(context.Context) error { return nil }}}
}

// serveHealth answers a probe as kube-apiserver's healthz package does
// (internal/healthz).
func (s *Server) serveHealth(probe string, checks []healthCheck) http.HandlerFunc {
	return healthz.Handler(probe, checks, s.config.logger)
}

// serveHealthCheck answers /<probe>/<name>: one check, with its reason
// when it fails.
func serveHealthCheck(checks []healthCheck) http.HandlerFunc {
	return healthz.CheckHandler(checks, func(r *http.Request) string { return chi.URLParam(r, "check") },
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeStatus(w, r, nil, NewStatusError(http.StatusNotFound, kapi.StatusReasonNotFound, "the server could not find the requested resource").Status)
		}))
}
