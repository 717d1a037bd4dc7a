package apiserver

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/kapi-dev/kapi/internal/names"
	"github.com/kapi-dev/kapi/internal/recorder"
	"github.com/kapi-dev/kapi/internal/requestinfo"
)

// The observers of package observe see each request through its
// recording (internal/recorder), which the request path fills in.

// recording is what observers see of a request, or nil when none does.
type recording = recorder.Recording

// recordFrom returns the request's recording, or nil when nothing observes.
func recordFrom(ctx context.Context) *recording { return recorder.From(ctx) }

// step tells the step observers that a step of the request starts, and
// returns what ends it, or nil when none observes steps.
func (rq *request) step(name string) func() {
	return rq.rec.Step(rq.r.Context(), name)
}

// requestLog is WithRequestLog's observer.
func requestLog(l *slog.Logger) Observer { return recorder.RequestLog(l) }

// observed wraps the whole server in its observers; without any it is
// next itself.
func (s *Server) observed(next http.Handler) http.Handler {
	return recorder.Handler(s.config.observers, requestinfo.Of, s.flow.Classify, names.UID, next)
}

// ObjectCounts is the number of objects stored, by resource as
// kube-apiserver's apiserver_storage_objects labels them (plural.group, or
// the plural for the core group), from the watch cache.
func (s *Server) ObjectCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts := map[string]int{}
	for _, r := range s.resources {
		if r.cache == nil {
			continue
		}
		name := r.Plural
		if r.Group != "" {
			name += "." + r.Group
		}
		counts[name] = r.cache.Len()
	}
	return counts
}
