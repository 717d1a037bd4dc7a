package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/internal/requestinfo"
	"github.com/kapi-dev/kapi/storage"
)

// Limits are the settings of the guard.
type Limits struct {
	ReadOnly, Mutating, Watches int64 // requests in flight of each class; 0: no limit
	RequestTimeout              time.Duration
	// Fair says that a fairness controller after the guard shares the
	// server among its clients in place of the ReadOnly and Mutating caps
	// (watches keep theirs).
	Fair bool
}

// DefaultLimits are kube-apiserver's: --max-requests-inflight 400,
// --max-mutating-requests-inflight 200, --request-timeout one minute; and
// 1000 watches.
func DefaultLimits() Limits {
	return Limits{ReadOnly: 400, Mutating: 200, Watches: 1000, RequestTimeout: time.Minute}
}

// Check says what is wrong with l.
func (l Limits) Check() []error {
	var errs []error
	for _, n := range []struct {
		what  string
		value int64
	}{{"max requests in flight", l.ReadOnly}, {"max mutating requests in flight", l.Mutating}, {"max watches", l.Watches}} {
		if n.value < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, not %d", n.what, n.value))
		}
	}
	if l.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("request timeout must be positive, not %v", l.RequestTimeout))
	}
	return errs
}

// Config is what the guard needs of the server it guards.
type Config struct {
	Limits Limits
	Logger *slog.Logger
	// Reply writes a Status as the response, in JSON, with its code.
	Reply func(w http.ResponseWriter, r *http.Request, st kapi.Status)
	// StatusOf is the Status of an error: the server's one mapping, for
	// the 504 of a deadline passed (context.DeadlineExceeded, wrapping
	// storage.ErrOutcomeUnknown for a write).
	StatusOf func(error) kapi.Status
	// Panicked, if not nil, is told of a handler's panic before it is
	// logged and answered.
	Panicked func(r *http.Request, p any)
	// Observed says that observers of the server's own wrap the guard
	// and must see a request end when its client is answered, a 504
	// included: every request with a deadline is then served in a runner
	// (serveWithin), whose ServeHTTP returns at the deadline, not when a
	// stuck handler does (serveInline).
	Observed bool
}

// Flow is the state of the guard: what is in flight, and whether the
// server is draining.
type Flow struct {
	config Config

	readOnly, mutating, watches atomic.Int64 // requests holding a slot of each cap

	// inFlight counts the requests past the gate, timed-out handlers that
	// have not returned yet included; Shutdown waits for it to reach 0.
	inFlight atomic.Int64
	draining atomic.Bool
	idle     chan struct{} // signalled when draining and inFlight falls to 0

	runners *runners // serve the requests with a deadline

	// endWatches is cancelled when watches must end: by Shutdown, or with
	// the server's context by Close.
	endWatches  context.Context
	stopWatches context.CancelFunc

	// streams are the server's own long-running GETs (HoldStreams), by
	// subresource name.
	streams map[string][]auth.Attributes
}

// New is the guard of a server whose context is ctx: its runners end with
// ctx, and so do its watches (see WatchesEnd).
func New(ctx context.Context, c Config) *Flow {
	f := &Flow{config: c, idle: make(chan struct{}, 1), runners: newRunners(ctx.Done())}
	f.endWatches, f.stopWatches = context.WithCancel(ctx)
	return f
}

// WatchesEnd is done when watches must end: when Drain begins, or when
// the server's context is.
func (f *Flow) WatchesEnd() context.Context { return f.endWatches }

// enter admits a request unless the server is draining.
func (f *Flow) enter() bool {
	f.inFlight.Add(1)
	if f.draining.Load() {
		f.leave()
		return false
	}
	return true
}

func (f *Flow) leave() {
	if f.inFlight.Add(-1) == 0 && f.draining.Load() {
		select {
		case f.idle <- struct{}{}:
		default: // already signalled: Shutdown looks at the count again
		}
	}
}

// Drain refuses new requests, ends the watches, and waits until the
// requests in flight have returned or ctx is done.
func (f *Flow) Drain(ctx context.Context) error {
	f.draining.Store(true)
	f.stopWatches()
	for f.inFlight.Load() != 0 {
		select {
		case <-f.idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Class is what a request counts against.
type Class int

const (
	ReadOnly Class = iota
	Mutating
	Watch
	Probe // health checks: never capped, never timed out
)

// Classify sorts a request as kube-apiserver's request info does, from its
// method and path alone (it runs before routing).
func (f *Flow) Classify(r *http.Request) Class {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	default:
		return Mutating
	}
	switch r.URL.Path {
	case "/healthz", "/livez", "/readyz":
		// A probe refused under load would get a busy but healthy
		// server restarted, which makes the load worse.
		return Probe
	}
	if strings.Contains(r.URL.RawQuery, "watch") && isWatch(r.URL) || longRunningSubresource(r.URL.Path) || f.isStream(r) {
		return Watch
	}
	return ReadOnly
}

// HoldStreams holds GETs of the subresources named by attrs (group,
// version, resource, subresource) long-running whatever their names: the
// streams the server answers (package actions' Stream), which
// kube-apiserver's list of names does not hold. Call it before serving.
func (f *Flow) HoldStreams(attrs ...auth.Attributes) {
	if f.streams == nil {
		f.streams = map[string][]auth.Attributes{}
	}
	for _, a := range attrs {
		f.streams[a.Subresource] = append(f.streams[a.Subresource], a)
	}
}

// isStream says whether r is a GET of one of the streams held
// long-running; a path whose last segment names none costs a map look-up.
func (f *Flow) isStream(r *http.Request) bool {
	if len(f.streams) == 0 {
		return false
	}
	p := strings.TrimRight(r.URL.Path, "/")
	held := f.streams[p[strings.LastIndexByte(p, '/')+1:]]
	if len(held) == 0 {
		return false
	}
	a := requestinfo.Of(r)
	for _, h := range held {
		if a.APIGroup == h.APIGroup && a.APIVersion == h.APIVersion && a.Resource == h.Resource && a.Subresource == h.Subresource {
			return true
		}
	}
	return false
}

// longRunningSubresource says whether a path names a subresource that
// kube-apiserver serves as long-running, whatever its resource (its
// BasicLongRunningRequestCheck's list): a log followed may last for ever.
func longRunningSubresource(path string) bool {
	for _, sub := range [...]string{"/log", "/exec", "/attach", "/portforward", "/proxy"} {
		if strings.HasSuffix(path, sub) {
			rest := resourceSegments(path)
			n := len(rest)
			return n == 3 || n == 5 && rest[0] == "namespaces"
		}
	}
	return false
}

// resourceSegments are the segments of a path after its group version,
// nil if it has none.
func resourceSegments(p string) []string {
	var rest string
	switch {
	case strings.HasPrefix(p, "/api/"):
		_, rest, _ = strings.Cut(p[len("/api/"):], "/") // after the version
	case strings.HasPrefix(p, "/apis/"):
		parts := strings.SplitN(p[len("/apis/"):], "/", 3) // group, version, rest
		if len(parts) < 3 {
			return nil
		}
		rest = parts[2]
	default:
		return nil
	}
	return strings.Split(strings.Trim(rest, "/"), "/")
}

// isWatch says whether the request is a watch as the handlers will serve it:
// watch set to anything but false or 0 (how the handlers read booleans) on
// a collection.
func isWatch(u *url.URL) bool {
	values, ok := u.Query()["watch"]
	if !ok || len(values) == 0 {
		return false
	}
	if v := strings.ToLower(values[0]); v == "false" || v == "0" {
		return false
	}
	segments := resourceSegments(u.Path)
	switch len(segments) {
	case 1:
		return segments[0] != ""
	case 3:
		return segments[0] == "namespaces"
	}
	return false
}

// acquire takes a slot of the request's cap; false if the cap is reached.
// The slot is the counter returned (nil when there is no cap), which
// release gives back.
func (f *Flow) acquire(c Class) (slot *atomic.Int64, ok bool) {
	var n *atomic.Int64
	var max int64
	switch c {
	case ReadOnly:
		n, max = &f.readOnly, f.config.Limits.ReadOnly
	case Mutating:
		n, max = &f.mutating, f.config.Limits.Mutating
	case Watch:
		n, max = &f.watches, f.config.Limits.Watches
	}
	if n == nil || max == 0 || (c != Watch && f.config.Limits.Fair) {
		return nil, true
	}
	if n.Add(1) > max {
		n.Add(-1)
		return nil, false
	}
	return n, true
}

// release gives back the slot of a request that has returned, and its place
// in the drain.
func (f *Flow) release(slot *atomic.Int64) {
	freeSlot(slot)
	f.leave()
}

func freeSlot(slot *atomic.Int64) {
	if slot != nil {
		slot.Add(-1)
	}
}

// guard is the handler every request passes first.
type guard struct {
	flow   *Flow
	next   http.Handler
	router *chi.Mux // in next: see routeContext
}

// Handler is the guard in front of next, the routes of the server, whose
// router is router (nil if it has none of chi's).
func (f *Flow) Handler(next http.Handler, router *chi.Mux) http.Handler {
	return &guard{flow: f, next: next, router: router}
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := g.flow
	if !f.enter() {
		f.ShuttingDown(w, r)
		return
	}
	c := f.Classify(r)
	var timeout time.Duration
	if c == ReadOnly || c == Mutating {
		var err error
		if timeout, err = f.timeout(r); err != nil {
			f.leave()
			f.config.Reply(w, r, status(http.StatusBadRequest, kapi.StatusReasonBadRequest, err.Error()))
			return
		}
	}
	slot, ok := f.acquire(c)
	if !ok {
		f.leave()
		f.TooManyRequests(w, r)
		return
	}
	switch {
	case timeout == 0:
		defer f.release(slot)
		g.serve(w, r)
	case !f.config.Observed && inline(w, r):
		g.serveInline(w, r, timeout, slot)
	default:
		g.serveWithin(w, r, timeout, slot)
	}
}

// timeout is the request's deadline from now: the server's, or less if the
// client asks for less with timeout=, as kube-apiserver allows.
func (f *Flow) timeout(r *http.Request) (time.Duration, error) {
	d := f.config.Limits.RequestTimeout
	if !strings.Contains(r.URL.RawQuery, "timeout") {
		return d, nil
	}
	s := r.URL.Query().Get("timeout")
	if s == "" {
		return d, nil
	}
	asked, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid timeout specified in the request URL - %v", err)
	}
	if asked > 0 && asked < d { // 0, negative or more: the server's, as kube-apiserver
		d = asked
	}
	return d, nil
}

// serve runs the handler in this goroutine, answering a panic with 500.
// Watches and probes are served so: they have no deadline.
func (g *guard) serve(w http.ResponseWriter, r *http.Request) {
	sw := &startedWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if g.recovered(sw, r, p, sw.started) {
				panic(http.ErrAbortHandler)
			}
		}
	}()
	g.next.ServeHTTP(sw, r)
}

// serveWithin runs the handler with a deadline. The handler runs in a
// goroutine of its own (a runner's, see runners) so that the client is
// answered 504 when the deadline passes even if the handler does not
// return: it goes on, with its context cancelled, writing into a writer
// that discards everything; its slot of the cap and its place in the drain
// are held until it returns: it is still working.
//
// The deadline's context is the request's context's child: it ends with
// it (the client gone: Canceled, with its cause) and with the deadline
// (DeadlineExceeded), the request's own if sooner (an embedding
// middleware's). Registering with the request's context costs a map of
// children; a context of the guard's own that the request's end was
// forwarded to, to spare that, cost the same map and four allocations
// more (BenchmarkGuard).
func (g *guard) serveWithin(w http.ResponseWriter, r *http.Request, timeout time.Duration, slot *atomic.Int64) {
	d, cancel := g.within(w, r, timeout, slot)
	defer cancel()
	r = d.r
	ctx := r.Context()
	g.flow.runners.run(d)
	result := d.result
	select {
	case p := <-result:
		d.recycle()
		if p != nil {
			panic(p)
		}
		return
	case <-ctx.Done():
	}
	// From here d is not recycled: the handler may still be using it.
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The client went away, or only closed its side: the handler sees
		// its context end and answers what it can. Waiting for it keeps
		// net/http from finishing the response with an empty 200 of its own.
		if p := <-result; p != nil {
			panic(p)
		}
		return
	}
	select {
	case p := <-result: // it returned as the deadline passed
		if p != nil {
			panic(p)
		}
		return
	default:
	}
	if !d.tw.timeout(r, g.flow.config.StatusOf(g.flow.timeoutError(r)), g.flow.config.Reply) {
		// The handler had begun its answer: the work is done and being
		// sent. Cutting it would turn a success into a broken connection.
		if p := <-result; p != nil {
			panic(p)
		}
	}
}

// timeoutError is the error of a request whose deadline has passed.
func (f *Flow) timeoutError(r *http.Request) error {
	err := error(context.DeadlineExceeded)
	if f.Classify(r) == Mutating {
		// The handler may be writing as the deadline passes.
		err = fmt.Errorf("%w (%w)", err, storage.ErrOutcomeUnknown)
	}
	return err
}

// within readies a request with a deadline for its handler: its context
// (see serveWithin) with the routing context, and a writer, in d.
func (g *guard) within(w http.ResponseWriter, r *http.Request, timeout time.Duration, slot *atomic.Int64) (*deadlinedRequest, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	rctx := g.routeContext(ctx)
	if rctx != nil {
		ctx = context.WithValue(ctx, chi.RouteCtxKey, rctx)
	}
	d := deadlined.Get().(*deadlinedRequest)
	d.g, d.r, d.slot, d.rctx = g, r.WithContext(ctx), slot, rctx
	d.tw.reset(w)
	return d, cancel
}

// deadlinedRequest is what serveWithin shares with the runner that serves
// the handler. It is reused once both are done with it, which serveWithin
// knows when it has received the handler's result before the deadline: a
// request then allocates no writer, header map or channel of its own.
type deadlinedRequest struct {
	g      *guard
	r      *http.Request
	slot   *atomic.Int64
	rctx   *chi.Context // made by routeContext, or nil
	tw     timeoutWriter
	result chan any    // a panic to re-raise in serveWithin; buffered: the handler never waits for it
	timer  *time.Timer // answerLate's, made once (see serveInline)
}

var deadlined = sync.Pool{New: func() any {
	return &deadlinedRequest{tw: timeoutWriter{header: http.Header{}}, result: make(chan any, 1)}
}}

// serve runs the handler in a runner. Once it has sent its result, d may be
// another request's: nothing after the send reads d.
func (d *deadlinedRequest) serve() {
	g, r, slot, rctx, tw, result := d.g, d.r, d.slot, d.rctx, &d.tw, d.result
	defer g.flow.leave() // after the result: Shutdown waits for the handler itself
	var abort any
	defer func() {
		if p := recover(); p != nil && g.recovered(tw, r, p, tw.began()) {
			abort = http.ErrAbortHandler
		}
		// The slot is free before the result is sent: from then on the
		// response may reach the client, whose next request must find it
		// free. That holds for answers within net/http's buffer; a larger
		// one reaches the socket as the handler writes it, a moment before
		// this, so a client's next request can still find the slot taken.
		freeSlot(slot)
		result <- abort
	}()
	// A goroutine started for the request inherited the profiler labels
	// of the request's; a runner takes those pprof.Do put in the
	// request's context (and drops its last request's).
	pprof.SetGoroutineLabels(r.Context())
	g.next.ServeHTTP(tw, r)
	if rctx != nil { // as the router does with its own once the handler has returned
		routeContexts.Put(rctx)
	}
}

// routeContext is the routing context of the server's router, made here,
// as the router would make it, unless a parent chi router made one: the
// router then takes it from the request's context, as a router mounted in
// another does, and the request is copied once for its deadline and its
// routing where it was copied twice.
func (g *guard) routeContext(ctx context.Context) *chi.Context {
	if g.router == nil || chi.RouteContext(ctx) != nil {
		return nil
	}
	rctx := routeContexts.Get().(*chi.Context)
	rctx.Reset()
	rctx.Routes = g.router
	return rctx
}

var routeContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

func (d *deadlinedRequest) recycle() {
	d.g, d.r, d.slot, d.rctx = nil, nil, nil, nil
	d.tw.w = nil
	clear(d.tw.header)
	deadlined.Put(d)
}

// recovered logs a panic of a handler and answers 500 if the response has
// not begun. It says whether the connection must be aborted instead: the
// panic is http.ErrAbortHandler (a handler asking for exactly that), or the
// response had begun and a client must not take what it got as complete.
func (g *guard) recovered(w http.ResponseWriter, r *http.Request, p any, began bool) (abort bool) {
	if p == http.ErrAbortHandler {
		return true
	}
	if g.flow.config.Panicked != nil {
		g.flow.config.Panicked(r, p)
	}
	g.flow.config.Logger.Error("kapi: a handler panicked; the request is answered 500 and the server goes on",
		"method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
	if began {
		return true
	}
	g.flow.config.Reply(w, r, status(http.StatusInternalServerError, kapi.StatusReasonInternalError,
		"Internal error occurred: the request caused the server to panic; look in the server's log for details"))
	return false
}

// TooManyRequests answers the 429 of a request over its cap. The message
// is kube-apiserver's; the Retry-After header and
// details.retryAfterSeconds make client-go and kubectl wait a second and
// retry.
func (f *Flow) TooManyRequests(w http.ResponseWriter, r *http.Request) {
	st := status(http.StatusTooManyRequests, kapi.StatusReasonTooManyRequests, "Too many requests, please try again later.")
	st.Details = &kapi.StatusDetails{RetryAfterSeconds: 1}
	w.Header().Set("Retry-After", "1")
	f.config.Reply(w, r, st)
}

// ShuttingDown answers the 503 of a request that arrives while the server
// shuts down or after it closed: with Retry-After, as kube-apiserver, since
// another replica may well answer.
func (f *Flow) ShuttingDown(w http.ResponseWriter, r *http.Request) {
	st := status(http.StatusServiceUnavailable, kapi.StatusReasonServiceUnavailable, "the server is shutting down")
	st.Details = &kapi.StatusDetails{RetryAfterSeconds: 1}
	w.Header().Set("Retry-After", "1")
	f.config.Reply(w, r, st)
}

// status is a failure Status the guard answers with.
func status(code int, reason kapi.StatusReason, message string) kapi.Status {
	return kapi.Status{
		TypeMeta: kapi.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   kapi.StatusFailure,
		Code:     int32(code),
		Reason:   reason,
		Message:  message,
	}
}
