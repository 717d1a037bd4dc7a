package healthz

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
)

// Check is one named check of a probe.
type Check struct {
	Name  string
	Check func(ctx context.Context) error
}

// Handler answers a probe as kube-apiserver's healthz package does:
// "ok", or with ?verbose one "[+]name ok" line per check and "<probe> check
// passed"; on a failure 503 with every line, the failed ones as "[-]name
// failed: reason withheld" (the reason is logged at Debug, and told at
// /<probe>/<name>, CheckHandler), then "<probe> check failed".
// kube-apiserver answers a failed probe 500; 503 is what load balancers
// take for "not now".
func Handler(probe string, checks []Check, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var out strings.Builder
		failed := false
		for _, c := range checks {
			if err := c.Check(r.Context()); err != nil {
				failed = true
				fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.Name)
				logger.Debug("kapi: "+probe+" check failed", "check", c.Name, "err", err)
				continue
			}
			fmt.Fprintf(&out, "[+]%s ok\n", c.Name)
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

// CheckHandler answers /<probe>/<name>, name read by checkName: one
// check, with its reason when it fails; a name no check has is notFound's.
func CheckHandler(checks []Check, checkName func(*http.Request) string, notFound http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := checkName(r)
		for _, c := range checks {
			if c.Name != name {
				continue
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			if err := c.Check(r.Context()); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = fmt.Fprintf(w, "%s failed: %v\n", name, err)
				return
			}
			_, _ = w.Write([]byte("ok"))
			return
		}
		notFound.ServeHTTP(w, r)
	}
}
