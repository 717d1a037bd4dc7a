package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
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
	"github.com/kapi-dev/kapi/fairness"
	"github.com/kapi-dev/kapi/storage"
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
	return limits{readOnly: 400, mutating: 200, watches: 1000, requestTimeout: time.Minute}
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
	for _, n := range []struct {
		what  string
		value int64
	}{{"max requests in flight", l.readOnly}, {"max mutating requests in flight", l.mutating}, {"max watches", l.watches}} {
		if n.value < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, not %d", n.what, n.value))
		}
	}
	if l.requestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("request timeout must be positive, not %v", l.requestTimeout))
	}
	return errs
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

// flow is the state of the guard: what is in flight, and whether the
// server is draining.
type flow struct {
	limits limits
	logger *slog.Logger

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
}

func newFlow(ctx context.Context, c *config) *flow {
	f := &flow{limits: c.limits, logger: c.logger, idle: make(chan struct{}, 1), runners: newRunners(ctx.Done())}
	f.endWatches, f.stopWatches = context.WithCancel(ctx)
	return f
}

// enter admits a request unless the server is draining.
func (f *flow) enter() bool {
	f.inFlight.Add(1)
	if f.draining.Load() {
		f.leave()
		return false
	}
	return true
}

func (f *flow) leave() {
	if f.inFlight.Add(-1) == 0 && f.draining.Load() {
		select {
		case f.idle <- struct{}{}:
		default: // already signalled: Shutdown looks at the count again
		}
	}
}

// drain refuses new requests, ends the watches, and waits until the
// requests in flight have returned or ctx is done.
func (f *flow) drain(ctx context.Context) error {
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

// class is what a request counts against.
type class int

const (
	classReadOnly class = iota
	classMutating
	classWatch
	classProbe // health checks: never capped, never timed out
)

// classify sorts a request as kube-apiserver's request info does, from its
// method and path alone (it runs before routing).
func classify(r *http.Request) class {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	default:
		return classMutating
	}
	switch r.URL.Path {
	case "/healthz", "/livez", "/readyz":
		// A probe refused under load would get a busy but healthy
		// server restarted, which makes the load worse.
		return classProbe
	}
	if strings.Contains(r.URL.RawQuery, "watch") && isWatch(r.URL) {
		return classWatch
	}
	return classReadOnly
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
	var rest string
	switch p := u.Path; {
	case strings.HasPrefix(p, "/api/"):
		_, rest, _ = strings.Cut(p[len("/api/"):], "/") // after the version
	case strings.HasPrefix(p, "/apis/"):
		parts := strings.SplitN(p[len("/apis/"):], "/", 3) // group, version, rest
		if len(parts) < 3 {
			return false
		}
		rest = parts[2]
	default:
		return false
	}
	segments := strings.Split(strings.Trim(rest, "/"), "/")
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
func (f *flow) acquire(c class) (slot *atomic.Int64, ok bool) {
	var n *atomic.Int64
	var max int64
	switch c {
	case classReadOnly:
		n, max = &f.readOnly, f.limits.readOnly
	case classMutating:
		n, max = &f.mutating, f.limits.mutating
	case classWatch:
		n, max = &f.watches, f.limits.watches
	}
	if n == nil || max == 0 || (c != classWatch && f.limits.fair != nil) {
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
func (f *flow) release(slot *atomic.Int64) {
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
	flow   *flow
	next   http.Handler
	router *chi.Mux // in next: see routeContext
}

// guard wraps the routes of the server, whose router is router.
func (s *Server) guard(next http.Handler, router *chi.Mux) http.Handler {
	return &guard{flow: s.flow, next: next, router: router}
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := g.flow
	if !f.enter() {
		writeShuttingDown(w, r)
		return
	}
	c := classify(r)
	var timeout time.Duration
	if c == classReadOnly || c == classMutating {
		var err error
		if timeout, err = f.timeout(r); err != nil {
			f.leave()
			writeStatus(w, r, nil, statusOf(err, target{}))
			return
		}
	}
	slot, ok := f.acquire(c)
	if !ok {
		f.leave()
		writeTooManyRequests(w, r)
		return
	}
	if timeout == 0 {
		defer f.release(slot)
		g.serve(w, r)
		return
	}
	g.serveWithin(w, r, timeout, slot)
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
		if classify(r) == classWatch { // long-running: the watch cap holds them
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
			writeTooManyRequests(w, r)
			return
		}
		defer done()
		next.ServeHTTP(w, r)
	})
}

// timeout is the request's deadline from now: the server's, or less if the
// client asks for less with timeout=, as kube-apiserver allows.
func (f *flow) timeout(r *http.Request) (time.Duration, error) {
	d := f.limits.requestTimeout
	if !strings.Contains(r.URL.RawQuery, "timeout") {
		return d, nil
	}
	s := r.URL.Query().Get("timeout")
	if s == "" {
		return d, nil
	}
	asked, err := time.ParseDuration(s)
	if err != nil {
		return 0, badRequest("invalid timeout specified in the request URL - %v", err)
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
func (g *guard) serveWithin(w http.ResponseWriter, r *http.Request, timeout time.Duration, slot *atomic.Int64) {
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	rctx := g.routeContext(ctx)
	if rctx != nil {
		ctx = context.WithValue(ctx, chi.RouteCtxKey, rctx)
	}
	r = r.WithContext(ctx)
	d := deadlined.Get().(*deadlinedRequest)
	d.g, d.r, d.slot, d.rctx = g, r, slot, rctx
	d.tw.reset(w)
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
	err := error(context.DeadlineExceeded)
	if classify(r) == classMutating {
		// The handler may be writing as the deadline passes.
		err = fmt.Errorf("%w (%w)", err, storage.ErrOutcomeUnknown)
	}
	if !d.tw.timeout(r, statusOf(err, target{})) {
		// The handler had begun its answer: the work is done and being
		// sent. Cutting it would turn a success into a broken connection.
		if p := <-result; p != nil {
			panic(p)
		}
	}
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
	result chan any // a panic to re-raise in serveWithin; buffered: the handler never waits for it
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

// runners are the goroutines that serve requests with a deadline, kept for
// the next request when they are done. A new goroutine's stack starts small
// and grows, copied each time, several times over while one request is
// routed and answered; that copying was a fifth of a GET's time. A runner's
// stack has grown already (the GC shrinks an idle one by half at most per
// cycle). Up to maxIdleRunners wait for work, each for one to two
// runnerIdle at most; they end sooner when the server's context does. A
// server without requests holds none.
type runners struct {
	work chan *deadlinedRequest // unbuffered: a send succeeds only when a runner waits
	idle atomic.Int64
	done <-chan struct{}
}

const (
	// maxIdleRunners bounds the runners kept waiting: more than the
	// requests a server of a few cores serves at once, few enough to
	// cost little memory.
	maxIdleRunners = 64
	// runnerIdle is about how long a runner waits for another request
	// (see loop): far longer than between the requests of a busy server.
	runnerIdle = time.Second
)

func newRunners(done <-chan struct{}) *runners {
	return &runners{work: make(chan *deadlinedRequest), done: done}
}

// run serves d in a waiting runner, or else in a new one.
func (p *runners) run(d *deadlinedRequest) {
	select {
	case p.work <- d:
	default:
		go p.loop(d)
	}
}

func (p *runners) loop(d *deadlinedRequest) {
	// The timer ticks every runnerIdle while the runner lives, not reset
	// per request: the runner ends at a tick that finds it idle since the
	// one before, between one and two runnerIdle after its last request.
	var tick *time.Timer
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		d.serve()
		if p.idle.Add(1) > maxIdleRunners {
			p.idle.Add(-1)
			return
		}
		if tick == nil {
			tick = time.NewTimer(runnerIdle)
		}
		served := true // since the last tick
	wait:
		for {
			select {
			case d = <-p.work:
				p.idle.Add(-1)
				break wait
			case <-tick.C:
				if !served {
					p.idle.Add(-1)
					return
				}
				served = false
				tick.Reset(runnerIdle)
			case <-p.done:
				p.idle.Add(-1)
				return
			}
		}
	}
}

// recovered logs a panic of a handler and answers 500 if the response has
// not begun. It says whether the connection must be aborted instead: the
// panic is http.ErrAbortHandler (a handler asking for exactly that), or the
// response had begun and a client must not take what it got as complete.
func (g *guard) recovered(w http.ResponseWriter, r *http.Request, p any, began bool) (abort bool) {
	if p == http.ErrAbortHandler {
		return true
	}
	if rec := recordFrom(r.Context()); rec != nil {
		rec.notePanic(p)
	}
	g.flow.logger.Error("kapi: a handler panicked; the request is answered 500 and the server goes on",
		"method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
	if began {
		return true
	}
	writeStatus(w, r, nil, NewStatusError(http.StatusInternalServerError, kapi.StatusReasonInternalError,
		"Internal error occurred: the request caused the server to panic; look in the server's log for details").Status)
	return false
}

// writeTooManyRequests is the 429 of a request over its cap. The message is
// kube-apiserver's; the Retry-After header and details.retryAfterSeconds make
// client-go and kubectl wait a second and retry.
func writeTooManyRequests(w http.ResponseWriter, r *http.Request) {
	e := NewStatusError(http.StatusTooManyRequests, kapi.StatusReasonTooManyRequests, "Too many requests, please try again later.")
	e.Status.Details = &kapi.StatusDetails{RetryAfterSeconds: 1}
	w.Header().Set("Retry-After", "1")
	writeStatus(w, r, nil, e.Status)
}

// writeShuttingDown is the 503 of a request that arrives while the server
// shuts down or after it closed: with Retry-After, as kube-apiserver, since
// another replica may well answer.
func writeShuttingDown(w http.ResponseWriter, r *http.Request) {
	e := NewStatusError(http.StatusServiceUnavailable, kapi.StatusReasonServiceUnavailable, "the server is shutting down")
	e.Status.Details = &kapi.StatusDetails{RetryAfterSeconds: 1}
	w.Header().Set("Retry-After", "1")
	writeStatus(w, r, nil, e.Status)
}

// startedWriter notes whether the response has begun.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (w *startedWriter) WriteHeader(code int) {
	w.started = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *startedWriter) Write(p []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(p)
}

func (w *startedWriter) Flush() {
	w.started = true
	http.NewResponseController(w.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher: nothing to tell
}

func (w *startedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// timeoutWriter is the writer of a handler with a deadline. The handler has
// headers of its own, copied to the response when it writes its header; once
// the deadline has passed, everything it writes is discarded, so that a
// handler that goes on cannot write into a response already answered.
type timeoutWriter struct {
	w      http.ResponseWriter
	header http.Header // the handler's; only the handler's goroutine uses it

	mu          sync.Mutex
	wroteHeader bool
	timedOut    bool
}

// reset readies a recycled writer for a response to w: the handler's
// headers start as w's.
func (tw *timeoutWriter) reset(w http.ResponseWriter) {
	tw.w, tw.wroteHeader, tw.timedOut = w, false, false
	maps.Copy(tw.header, w.Header())
}

func (tw *timeoutWriter) Header() http.Header { return tw.header }

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.writeHeaderLocked(code)
}

func (tw *timeoutWriter) writeHeaderLocked(code int) {
	if tw.timedOut || tw.wroteHeader {
		return
	}
	tw.wroteHeader = true
	h := tw.w.Header()
	clear(h)
	maps.Copy(h, tw.header)
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	tw.writeHeaderLocked(http.StatusOK)
	return tw.w.Write(p)
}

func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return
	}
	tw.writeHeaderLocked(http.StatusOK)
	http.NewResponseController(tw.w).Flush() //nolint:errcheck // as http.Flusher: nothing to tell
}

// began says whether the handler has begun its response.
func (tw *timeoutWriter) began() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return tw.wroteHeader
}

// timeout ends the handler's use of the response and answers st, unless
// the handler has begun its response: then it returns false and changes
// nothing.
func (tw *timeoutWriter) timeout(r *http.Request, st kapi.Status) bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.wroteHeader {
		return false
	}
	tw.timedOut = true
	writeStatus(tw.w, r, nil, st)
	return true
}

// recoverDecode guards the hub against a panic in decoding a stored object
// (a user's UnmarshalJSON): the hub's goroutine serves every watch, and a
// panic there would end the process. The object is then skipped, as one that
// does not decode.
func recoverDecode(decode func(storage.KeyValue) (any, error)) func(storage.KeyValue) (any, error) {
	return func(kv storage.KeyValue) (obj any, err error) {
		defer func() {
			if p := recover(); p != nil {
				obj, err = nil, &corruptObject{key: kv.Key, revision: kv.ModRevision, err: fmt.Errorf("panic: %v", p)}
			}
		}()
		return decode(kv)
	}
}
