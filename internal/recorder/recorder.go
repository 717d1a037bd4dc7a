package recorder

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/internal/guard"
	"github.com/kapi-dev/kapi/observe"
)

// Recording is a request's observe.RequestRecord with what only the
// server uses: the lock that guards the fields set while the handler runs,
// and the observers to call. It lives here rather than in package observe
// so that the record observers see has no unexported state.
type Recording struct {
	observe.RequestRecord

	mu        sync.Mutex // the fields set from inside: User, Status, Panic
	ended     bool       // a handler past its deadline sets nothing
	observers []observe.Observer
	started   bool // ResponseStarted was called
}

type recordKey struct{}

// From returns the request's recording, or nil when nothing observes.
func From(ctx context.Context) *Recording {
	rec, _ := ctx.Value(recordKey{}).(*Recording)
	return rec
}

// NoteUser records who the request runs as (apiserver.WithUser calls it).
func (rec *Recording) NoteUser(u auth.User) {
	rec.mu.Lock()
	if !rec.ended {
		rec.Attributes.User, rec.UserKnown = u, true
	}
	rec.mu.Unlock()
}

// NoteRequestor records who authenticated a request that impersonates.
func (rec *Recording) NoteRequestor(u auth.User) {
	rec.mu.Lock()
	if !rec.ended {
		rec.Requestor = &u
	}
	rec.mu.Unlock()
}

// NoteStatus records the Status the request is answered with.
func (rec *Recording) NoteStatus(st kapi.Status) {
	rec.mu.Lock()
	if !rec.ended {
		rec.Status = &st
	}
	rec.mu.Unlock()
}

// NotePanic records what the handler panicked with.
func (rec *Recording) NotePanic(p any) {
	rec.mu.Lock()
	if !rec.ended {
		rec.Panic = p
	}
	rec.mu.Unlock()
}

// WatchEvent counts one event a watch sent, for the observers that count.
func (rec *Recording) WatchEvent(eventType string, size int) {
	rec.WatchEvents++
	for _, o := range rec.observers {
		if wo, ok := o.(observe.WatchEventObserver); ok {
			wo.WatchEventSent(&rec.RequestRecord, eventType, size)
		}
	}
}

// Step tells the step observers that a step of the request starts, and
// returns what ends it, or nil when none observes steps (or rec is nil).
func (rec *Recording) Step(ctx context.Context, name string) func() {
	if rec == nil {
		return nil
	}
	var ends []func()
	for _, o := range rec.observers {
		if so, ok := o.(observe.StepObserver); ok {
			if end := so.StepStarted(ctx, &rec.RequestRecord, name); end != nil {
				ends = append(ends, end)
			}
		}
	}
	if len(ends) == 0 {
		return nil
	}
	return func() {
		for i := len(ends) - 1; i >= 0; i-- {
			ends[i]()
		}
	}
}

// Handler wraps a whole server in its observers; without any it is next
// itself. attributes reads what a request asks for, as the authorizers
// see it; classify is the guard's (a log followed is long-running too);
// newID makes an audit ID for a request without one.
func Handler(observers []observe.Observer, attributes func(*http.Request) auth.Attributes, classify func(*http.Request) guard.Class, newID func() string, next http.Handler) http.Handler {
	if len(observers) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := newRecord(r, attributes(r), classify, newID, observers)
		ctx := context.WithValue(r.Context(), recordKey{}, rec)
		for _, o := range observers {
			ctx = o.RequestStarted(ctx, &rec.RequestRecord)
		}
		w.Header().Set("Audit-Id", rec.AuditID)
		ow := &observedWriter{ResponseWriter: w, rec: rec, ctx: ctx, capture: !rec.LongRunning && rec.CaptureBytes > 0}
		if rec.CaptureBytes > 0 && r.Body != nil && r.Body != http.NoBody {
			r.Body = &capturedBody{body: r.Body, rec: rec}
		}
		defer func() {
			p := recover()
			rec.mu.Lock()
			rec.ended = true
			if p != nil && rec.Panic == nil && p != http.ErrAbortHandler {
				rec.Panic = p
			}
			rec.mu.Unlock()
			if rec.Code == 0 {
				rec.Code = http.StatusOK
				if rec.Panic != nil {
					rec.Code = http.StatusInternalServerError
				}
			}
			if !ow.capture || rec.BodiesTruncated {
				rec.ResponseBody = nil
			}
			for _, o := range observers {
				o.RequestEnded(ctx, &rec.RequestRecord)
			}
			if p != nil {
				panic(p)
			}
		}()
		next.ServeHTTP(ow, r.WithContext(ctx))
	})
}

func newRecord(r *http.Request, a auth.Attributes, classify func(*http.Request) guard.Class, newID func() string, observers []observe.Observer) *Recording {
	rec := &Recording{RequestRecord: observe.RequestRecord{
		Attributes: a, Method: r.Method, RequestURI: r.URL.RequestURI(), UserAgent: r.UserAgent(),
		SourceIPs: sourceIPs(r), Received: time.Now(), AuditID: r.Header.Get("Audit-Id"), Header: r.Header,
		Mutating: r.Method != http.MethodGet && r.Method != http.MethodHead, LongRunning: a.Verb == "watch" || classify(r) == guard.Watch,
	}, observers: observers}
	if rec.AuditID == "" || len(rec.AuditID) > 128 {
		rec.AuditID = newID() // a random UUID, as kube-apiserver's audit IDs
	}
	if strings.Contains(r.URL.RawQuery, "dryRun") { // sorted and once each, as kube's label
		values := slices.Clone(r.URL.Query()["dryRun"])
		slices.Sort(values)
		rec.DryRun = strings.Join(slices.Compact(values), ",")
	}
	rec.MetricsVerb = upperVerb(a.Verb)
	if a.ResourceRequest {
		switch a.Verb {
		case "create":
			rec.MetricsVerb = "POST"
		case "update":
			rec.MetricsVerb = "PUT"
		case "patch":
			if strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") {
				rec.MetricsVerb = "APPLY"
			}
		}
		switch {
		case a.Verb == "create" || a.Name != "": // a list of one name too, as kube's CleanListScope
			rec.Scope = "resource"
		case a.Namespace != "":
			rec.Scope = "namespace"
		default:
			rec.Scope = "cluster"
		}
	}
	return rec
}

// upperVerb is strings.ToUpper without an allocation for the verbs of
// resource requests and the usual methods.
func upperVerb(verb string) string {
	switch verb {
	case "get":
		return "GET"
	case "list":
		return "LIST"
	case "watch":
		return "WATCH"
	case "create":
		return "CREATE"
	case "update":
		return "UPDATE"
	case "patch":
		return "PATCH"
	case "delete":
		return "DELETE"
	case "deletecollection":
		return "DELETECOLLECTION"
	case "head":
		return "HEAD"
	case "post":
		return "POST"
	case "put":
		return "PUT"
	case "options":
		return "OPTIONS"
	}
	return strings.ToUpper(verb)
}

// sourceIPs are X-Forwarded-For's addresses, then X-Real-Ip's, then the
// peer's, each once, as kube-apiserver's audit records them.
func sourceIPs(r *http.Request) []string {
	var ips []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" { // as net.ParseIP, without making its error
			return
		}
		if ip, err := netip.ParseAddr(s); err != nil || ip.Zone() != "" { // net.ParseIP, without its slice
			return
		}
		for _, ip := range ips {
			if ip == s {
				return
			}
		}
		ips = append(ips, s)
	}
	if fwd := r.Header.Get("X-Forwarded-For"); fwd != "" {
		for _, ip := range strings.Split(fwd, ",") {
			add(ip)
		}
	}
	add(r.Header.Get("X-Real-Ip"))
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	add(host)
	return ips
}

// observedWriter records the response's code and size (and body, when an
// observer asked) and tells observers when a watch's response starts.
type observedWriter struct {
	http.ResponseWriter
	rec     *Recording
	ctx     context.Context
	capture bool
}

func (w *observedWriter) WriteHeader(code int) {
	if w.rec.Code == 0 {
		w.rec.Code = code
		w.rec.ContentType = w.Header().Get("Content-Type")
		if w.rec.LongRunning && !w.rec.started {
			w.rec.started = true
			for _, o := range w.rec.observers {
				o.ResponseStarted(w.ctx, &w.rec.RequestRecord)
			}
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *observedWriter) Write(p []byte) (int, error) {
	if w.rec.Code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	w.rec.ResponseBytes += int64(n)
	if w.capture && !w.rec.BodiesTruncated {
		if w.Header().Get("Content-Encoding") != "" || len(w.rec.ResponseBody)+n > w.rec.CaptureBytes {
			w.rec.BodiesTruncated = true
		} else {
			w.rec.ResponseBody = append(w.rec.ResponseBody, p[:n]...)
		}
	}
	return n, err
}

func (w *observedWriter) Flush() {
	if w.rec.Code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher: nothing to tell
}

func (w *observedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// capturedBody keeps what the handler reads of a request body, up to the
// record's CaptureBytes.
type capturedBody struct {
	body interface {
		Read([]byte) (int, error)
		Close() error
	}
	rec *Recording
}

func (b *capturedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	rec := b.rec
	rec.mu.Lock()
	if !rec.ended && !rec.BodiesTruncated {
		if len(rec.RequestBody)+n > rec.CaptureBytes {
			rec.BodiesTruncated, rec.RequestBody = true, nil
		} else {
			rec.RequestBody = append(rec.RequestBody, p[:n]...)
		}
	}
	rec.mu.Unlock()
	return n, err
}

func (b *capturedBody) Close() error { return b.body.Close() }

// RequestLog is the observer of apiserver.WithRequestLog: one line per
// request at its end, with the fields of kube-apiserver's httplog.
func RequestLog(l *slog.Logger) observe.Observer { return requestLog{l} }

type requestLog struct{ l *slog.Logger }

func (requestLog) RequestStarted(ctx context.Context, _ *observe.RequestRecord) context.Context {
	return ctx
}
func (requestLog) ResponseStarted(context.Context, *observe.RequestRecord) {}

func (l requestLog) RequestEnded(ctx context.Context, rec *observe.RequestRecord) {
	srcIP := ""
	if len(rec.SourceIPs) > 0 {
		srcIP = rec.SourceIPs[len(rec.SourceIPs)-1]
	}
	l.l.LogAttrs(ctx, slog.LevelInfo, "HTTP",
		slog.String("verb", rec.MetricsVerb), slog.String("URI", rec.RequestURI),
		slog.Duration("latency", time.Since(rec.Received)), slog.String("userAgent", rec.UserAgent),
		slog.String("audit-ID", rec.AuditID), slog.String("srcIP", srcIP), slog.Int("resp", rec.Code))
}
