package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/kapi-dev/kapi"
)

// healthCheck is one named check of /readyz or /livez.
type healthCheck struct {
	name  string
	check func(ctx context.Context) error
}

// readyChecks are /readyz's checks: kube-apiserver's ping and etcd (here
// the store, whichever it is), and the watch cache's first sync, which is
// what kube-apiserver's informer-sync is to it.
func (s *Server) readyChecks() []healthCheck {
	return []healthCheck{
		{"ping", func(context.Context) error { return nil }},
		{"storage", s.health.ReadyCheck},
		{"watch-cache", func(context.Context) error {
			if !s.hub.Reached(0) {
				return errors.New("the watch cache has not synced yet")
			}
			return nil
		}},
	}
}

// liveChecks are /livez's and /healthz's: the process serves. The store is
// not among them: restarting a server whose store is away does not bring
// the store back.
func liveChecks() []healthCheck {
	return []healthCheck{{"ping", func(context.Context) error { return nil }}}
}

// serveHealth answers a probe as kube-apiserver's healthz package does:
// "ok", or with ?verbose one "[+]name ok" line per check and "<probe> check
// passed"; on a failure 503 with every line, the failed ones as "[-]name
// failed: reason withheld" (the reason is logged at Debug, and told at
// /<probe>/<name>), then "<probe> check failed". kube-apiserver answers a
// failed probe 500; 503 is what load balancers take for "not now".
func (s *Server) serveHealth(probe string, checks []healthCheck) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var out strings.Builder
		failed := false
		for _, c := range checks {
			if err := c.check(r.Context()); err != nil {
				failed = true
				fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.name)
				s.config.logger.Debug("kapi: "+probe+" check failed", "check", c.name, "err", err)
				continue
			}
			fmt.Fprintf(&out, "[+]%s ok\n", c.name)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		switch {
		case failed:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(&out, "%s check failed\n", probe)
		case r.URL.Query().Has("verbose"):
			fmt.Fprintf(&out, "%s check passed\n", probe)
		default:
			out.Reset()
			out.WriteString("ok")
		}
		_, _ = w.Write([]byte(out.String()))
	}
}

// serveHealthCheck answers /<probe>/<name>: one check, with its reason
// when it fails.
func serveHealthCheck(checks []healthCheck) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := chi.URLParam(r, "check")
		for _, c := range checks {
			if c.name != name {
				continue
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			if err := c.check(r.Context()); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = fmt.Fprintf(w, "%s failed: %v\n", name, err)
				return
			}
			_, _ = w.Write([]byte("ok"))
			return
		}
		writeStatus(w, r, nil, NewStatusError(http.StatusNotFound, kapi.StatusReasonNotFound, "the server could not find the requested resource").Status)
	}
}
