package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/actions"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/fairness"
	"github.com/kapi-dev/kapi/internal/leakcheck"
	"github.com/kapi-dev/kapi/storage/memory"
)

// probe is a resource whose hooks do what spec.mode says: block until the
// test releases them, or panic.
type probe struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		Mode string `json:"mode,omitempty"`
	} `json:"spec"`
}

const probes = "/apis/faults.example.com/v1/probes"

// Modes of a probe.
const (
	modeBlockValidate = "block-validate" // Validate blocks, ignoring its context
	modeBlockColumn   = "block-column"   // the Table column blocks, once per object version; so does a GET of probes/NAME/hold, every time
	modePanicValidate = "panic-validate"
	modePanicDefault  = "panic-default"
	modePanicColumn   = "panic-column"
	modeAbort         = "abort" // Validate panics with http.ErrAbortHandler
)

// hooks holds blocked hooks until released.
type hooks struct {
	entered chan string // the probe's name, each time a hook begins to block
	release chan struct{}
	once    sync.Once
}

func newHooks() *hooks {
	return &hooks{entered: make(chan string, 1024), release: make(chan struct{})}
}

func (h *hooks) block(name string) {
	select {
	case h.entered <- name:
	default: // nobody counts this many: a load test
	}
	<-h.release
}

// free lets every blocked hook, and every later one, go on.
func (h *hooks) free() { h.once.Do(func() { close(h.release) }) }

// wait returns once n hooks have begun to block.
func (h *hooks) wait(t testing.TB, n int) {
	t.Helper()
	for range n {
		select {
		case <-h.entered:
		case <-time.After(deadline):
			t.Fatalf("no hook blocked within %v", deadline)
		}
	}
}

func registerProbes(h *hooks) func(*apiserver.Server) error {
	return func(s *apiserver.Server) error {
		if err := apiserver.Register(s, apiserver.Resource[probe]{
			Group: "faults.example.com", Version: "v1", Kind: "Probe", Plural: "probes",
			Default: func(p *probe) {
				if p.Spec.Mode == modePanicDefault {
					panic("a defaulting bug")
				}
			},
			Validate: func(_ context.Context, p, _ *probe) apiserver.FieldErrors {
				switch p.Spec.Mode {
				case modeBlockValidate:
					h.block(p.Name)
				case modePanicValidate:
					panic("a validation bug")
				case modeAbort:
					panic(http.ErrAbortHandler)
				}
				return nil
			},
			Columns: []apiserver.Column[probe]{{Name: "Mode", Type: "string", Value: func(p *probe) any {
				switch p.Spec.Mode {
				case modeBlockColumn:
					h.block(p.Name)
				case modePanicColumn:
					panic("a column bug")
				}
				return p.Spec.Mode
			}}},
		}); err != nil {
			return err
		}
		// A read that blocks every time, taking a read-only slot or a seat
		// (Table cells are made once per object version).
		return actions.AddSubresource(s, actions.Subresource{
			Group: "faults.example.com", Version: "v1", Resource: "probes", Name: "hold",
			Get: actions.Read(func(_ context.Context, req actions.Request) (*probe, error) {
				p := req.Object.(*probe)
				if p.Spec.Mode == modeBlockColumn {
					h.block(p.Name)
				}
				return p, nil
			}),
		})
	}
}

// newProbeServer starts a server of probes; blocked hooks are released when
// the test ends, before the server stops.
func newProbeServer(t testing.TB, h *hooks, opts ...apiserver.Option) (*apiservertest.Server, *apiClient) {
	t.Helper()
	srv := apiservertest.New(t, registerProbes(h), opts...)
	t.Cleanup(h.free)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	t.Cleanup(tr.CloseIdleConnections)
	return srv, &apiClient{t: t, base: srv.URL, hc: &http.Client{Transport: tr}}
}

func probeBody(name, mode string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"mode":%q}}`, name, mode)
}

const probeTableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// async sends a request in the background; its response arrives on the
// channel.
func (c *apiClient) async(method, path string, body any, header ...string) <-chan *response {
	out := make(chan *response, 1)
	req := c.request(context.Background(), method, path, body, header...)
	go func() {
		resp, err := c.hc.Do(req)
		if err != nil {
			out <- &response{Code: -1, Body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		out <- &response{Code: resp.StatusCode, Header: resp.Header, Body: data}
	}()
	return out
}

func receive(t testing.TB, ch <-chan *response) *response {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(deadline):
		t.Fatalf("no response within %v", deadline)
	}
	panic("unreachable")
}

// tooMany checks a 429 as kube-apiserver words it, with Retry-After.
func tooMany(t testing.TB, r *response) {
	t.Helper()
	st := r.failure(t, http.StatusTooManyRequests, kapi.StatusReasonTooManyRequests)
	if st.Message != "Too many requests, please try again later." {
		t.Errorf("message %q", st.Message)
	}
	if got := r.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	if st.Details == nil || st.Details.RetryAfterSeconds != 1 {
		t.Errorf("details %+v, want retryAfterSeconds 1", st.Details)
	}
}

// TestInFlightCaps: read-only and mutating requests each have a cap; one
// over it is answered 429 at once, the other kind is not affected, and the
// cap frees as soon as a request ends.
func TestInFlightCaps(t *testing.T) {
	h := newHooks()
	_, c := newProbeServer(t, h, apiserver.WithMaxRequestsInFlight(2), apiserver.WithMaxMutatingRequestsInFlight(2))
	c.do(http.MethodPost, probes, probeBody("slow-read", modeBlockColumn)).mustCode(t, http.StatusCreated)

	// Two writes and two reads hold every slot.
	w1 := c.async(http.MethodPost, probes, probeBody("w1", modeBlockValidate))
	w2 := c.async(http.MethodPost, probes, probeBody("w2", modeBlockValidate))
	r1 := c.async(http.MethodGet, probes+"/slow-read/hold", nil)
	r2 := c.async(http.MethodGet, probes+"/slow-read/hold", nil)
	h.wait(t, 4)

	cases := []struct {
		name, method, path string
		body               any
	}{
		{"create", http.MethodPost, probes, probeBody("w3", "")},
		{"delete", http.MethodDelete, probes + "/slow-read", nil},
		{"get", http.MethodGet, probes + "/slow-read", nil},
		{"list", http.MethodGet, probes, nil},
		{"discovery", http.MethodGet, "/apis", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name+" over the cap", func(t *testing.T) {
			tooMany(t, c.do(tc.method, tc.path, tc.body))
		})
	}
	t.Run("health checks are not capped", func(t *testing.T) {
		c.get("/readyz").mustCode(t, http.StatusOK)
	})

	h.free()
	for _, ch := range []<-chan *response{w1, w2} {
		receive(t, ch).mustCode(t, http.StatusCreated)
	}
	for _, ch := range []<-chan *response{r1, r2} {
		receive(t, ch).mustCode(t, http.StatusOK)
	}
	t.Run("served again once the load is gone", func(t *testing.T) {
		c.do(http.MethodPost, probes, probeBody("w3", "")).mustCode(t, http.StatusCreated)
		c.get(probes).mustCode(t, http.StatusOK)
	})
}

// TestCapFreeWhenAnswered: a request's slot is free by the time its client
// has the answer, so that a client sending one request after another is
// never refused, even at a cap of one. (The slot was once given back just
// after the answer could leave; under load the next request came first.)
func TestCapFreeWhenAnswered(t *testing.T) {
	h := newHooks()
	h.free()
	_, c := newProbeServer(t, h, apiserver.WithMaxRequestsInFlight(1), apiserver.WithMaxMutatingRequestsInFlight(1))
	// Each request right after the last of its kind, which held the
	// same slot.
	for i := range 200 {
		c.do(http.MethodPost, probes, probeBody(fmt.Sprintf("p-%d", i), "")).mustCode(t, http.StatusCreated)
		if t.Failed() {
			t.Fatalf("create %d refused", i)
		}
	}
	for i := range 200 {
		c.get(probes+"/p-0").mustCode(t, http.StatusOK)
		if t.Failed() {
			t.Fatalf("get %d refused", i)
		}
	}
}

// TestWatchCap: watches do not count against the read-only cap, and have
// their own.
func TestWatchCap(t *testing.T) {
	h := newHooks()
	_, c := newProbeServer(t, h, apiserver.WithMaxRequestsInFlight(1), apiserver.WithMaxWatches(2))
	c.do(http.MethodPost, probes, probeBody("slow-read", modeBlockColumn)).mustCode(t, http.StatusCreated)
	held := c.async(http.MethodGet, probes+"/slow-read/hold", nil)
	h.wait(t, 1) // the only read-only slot is taken

	ws1 := c.watch(probes + "?watch=true")
	ws2 := c.watch(probes + "?watch=1")
	ws1.expect("ADDED slow-read")
	ws2.expect("ADDED slow-read")
	tooMany(t, c.do(http.MethodGet, probes+"?watch=true", nil))
	// The read-only cap is still full, and counts what is served as a
	// get or a list whatever its watch parameter says.
	for _, path := range []string{probes, probes + "?watch=false", probes + "?watch=0", probes + "/slow-read?watch=true"} {
		tooMany(t, c.do(http.MethodGet, path, nil))
	}

	ws1.stop()
	h.free()
	receive(t, held).mustCode(t, http.StatusOK)
	// A watch slot frees when its handler returns, which follows the
	// client's going away: wait for it without assuming when.
	var r *response
	for end := time.Now().Add(deadline); ; time.Sleep(10 * time.Millisecond) {
		r = c.do(http.MethodGet, probes+"?watch=true&timeoutSeconds=1", nil)
		if r.Code != http.StatusTooManyRequests || time.Now().After(end) {
			break
		}
	}
	r.mustCode(t, http.StatusOK)
	c.get(probes).mustCode(t, http.StatusOK)
}

// TestWatchIgnoresRequestTimeout: the request timeout is not a watch's:
// a watch outlives it and still receives events.
func TestWatchIgnoresRequestTimeout(t *testing.T) {
	h := newHooks()
	// Long enough for the create below on a loaded machine under -race.
	_, c := newProbeServer(t, h, apiserver.WithRequestTimeout(250*time.Millisecond))
	ws := c.watch(probes + "?watch=true")
	time.Sleep(400 * time.Millisecond) // well past the request timeout
	c.do(http.MethodPost, probes, probeBody("late", "")).mustCode(t, http.StatusCreated)
	ws.expect("ADDED late")
}

// TestRequestTimeout: a request past its deadline is answered 504 with
// kube-apiserver's Status, whether the deadline is the server's or the
// client's timeout=, even when the handler ignores its context; what the
// handler does afterwards does not reach the client, and its goroutine ends
// when it returns.
func TestRequestTimeout(t *testing.T) {
	// The server's timeout is every later request's too: long enough for
	// them on a loaded machine under -race.
	short := []apiserver.Option{apiserver.WithRequestTimeout(250 * time.Millisecond)}
	cases := []struct {
		name  string
		opts  []apiserver.Option
		query string
	}{
		{name: "the server's default", opts: short},
		{name: "timeout= shorter than the default", query: "?timeout=100ms"},
		{name: "timeout= longer than the default is capped", opts: short, query: "?timeout=1h"},
		{name: "timeout=0 is the default", opts: short, query: "?timeout=0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHooks()
			_, c := newProbeServer(t, h, tc.opts...)
			before := leakcheck.Take()
			r := c.do(http.MethodPost, probes+tc.query, probeBody("stuck", modeBlockValidate))
			st := r.failure(t, http.StatusGatewayTimeout, kapi.StatusReasonTimeout)
			// kube-apiserver's words, then, for a write, that it may
			// have been applied all the same.
			if want := "Timeout: request did not complete within the allotted timeout; the write may or may not have been applied"; !strings.HasPrefix(st.Message, want) {
				t.Errorf("message %q, want it to begin %q", st.Message, want)
			}
			h.wait(t, 1)
			// The handler goes on, with its context cancelled: its write
			// is abandoned, and it answers no one.
			h.free()
			// The same client and connections go on working.
			c.do(http.MethodPost, probes, probeBody("next", "")).mustCode(t, http.StatusCreated)
			c.get(probes+"/next").mustCode(t, http.StatusOK)
			c.hc.CloseIdleConnections()
			// The server's garbage collector starts its workers once every
			// watch has synced, which may come after the snapshot: they
			// are the server's, not the request's.
			leaked := slices.DeleteFunc(before.Leaked(leakcheck.Wait), func(stack string) bool {
				return strings.Contains(stack, "gc.(*Collector)")
			})
			if len(leaked) > 0 {
				t.Errorf("goroutines outlived the timed-out request:\n%s", strings.Join(leaked, "\n\n"))
			}
		})
	}

	t.Run("timeout= is a Go duration", func(t *testing.T) {
		h := newHooks()
		_, c := newProbeServer(t, h)
		for _, bad := range []string{"abc", "10", "-"} {
			st := c.get(probes+"?timeout="+bad).failure(t, http.StatusBadRequest, kapi.StatusReasonBadRequest)
			if !strings.HasPrefix(st.Message, "invalid timeout specified in the request URL - time: ") {
				t.Errorf("timeout=%s: message %q", bad, st.Message)
			}
		}
		c.get(probes+"?timeout=30s").mustCode(t, http.StatusOK)
	})
}

// syncBuffer is a log destination safe for the handlers' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPanicsInHooks: a panic in a user's hook is a 500 InternalError Status
// for that request only, logged; the server goes on serving.
func TestPanicsInHooks(t *testing.T) {
	h := newHooks()
	var log syncBuffer
	_, c := newProbeServer(t, h, apiserver.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	c.do(http.MethodPost, probes, probeBody("bad-column", modePanicColumn)).mustCode(t, http.StatusCreated)

	cases := []struct {
		name, method, path string
		body               any
		header             []string
		want               string // in the log
	}{
		{"Validate", http.MethodPost, probes, probeBody("v", modePanicValidate), nil, "a validation bug"},
		{"Default", http.MethodPost, probes, probeBody("d", modePanicDefault), nil, "a defaulting bug"},
		{"Column Value in a get", http.MethodGet, probes + "/bad-column", nil, []string{"Accept", probeTableAccept}, "a column bug"},
		{"Column Value in a list", http.MethodGet, probes, nil, []string{"Accept", probeTableAccept}, "a column bug"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := c.do(tc.method, tc.path, tc.body, tc.header...).failure(t, http.StatusInternalServerError, kapi.StatusReasonInternalError)
			if !strings.HasPrefix(st.Message, "Internal error occurred: ") || strings.Contains(st.Message, tc.want) {
				t.Errorf("message %q: want kube's prefix, and not the panic's value (it is for the log)", st.Message)
			}
			if !strings.Contains(log.String(), tc.want) {
				t.Errorf("the log does not hold %q:\n%s", tc.want, log.String())
			}
			// The next request is fine.
			c.get(probes+"/bad-column").mustCode(t, http.StatusOK)
			c.do(http.MethodPost, probes, probeBody("fine-"+strings.ToLower(strings.ReplaceAll(tc.name, " ", "-")), "")).mustCode(t, http.StatusCreated)
		})
	}

	t.Run("http.ErrAbortHandler aborts the response", func(t *testing.T) {
		req := c.request(context.Background(), http.MethodPost, probes, probeBody("a", modeAbort))
		resp, err := c.hc.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("HTTP %d, want the connection aborted", resp.StatusCode)
		}
		c.get(probes).mustCode(t, http.StatusOK)
	})

	t.Run("a panic in a watch ends that stream only", func(t *testing.T) {
		logged := strings.Count(log.String(), "a column bug")
		ws := c.watch(probes+"?watch=true&resourceVersion=0", "Accept", probeTableAccept)
		ws.untilEndOrError()
		if strings.Count(log.String(), "a column bug") == logged {
			t.Error("the watch ended without the panic logged")
		}
		c.get(probes).mustCode(t, http.StatusOK)
	})
}

// untilEndOrError waits for the stream to end, however it ends.
func (ws *watchStream) untilEndOrError() {
	ws.t.Helper()
	for {
		select {
		case <-ws.events:
		case <-ws.done:
			return
		case <-time.After(2 * deadline):
			ws.t.Fatalf("the watch did not end within %v", 2*deadline)
		}
	}
}

// TestShutdown: Shutdown refuses new requests with 503 and Retry-After,
// lets a request in flight finish, ends a watch cleanly (with a last
// bookmark, as when its timeout is up), and returns once all is done.
func TestShutdown(t *testing.T) {
	h := newHooks()
	srv, c := newProbeServer(t, h)
	before := leakcheck.Take()
	ws := c.watch(probes + "?watch=true&allowWatchBookmarks=true")
	inFlight := c.async(http.MethodPost, probes, probeBody("in-flight", modeBlockValidate))
	h.wait(t, 1)

	shutdown := make(chan error, 1)
	go func() { shutdown <- srv.API.Shutdown(context.Background()) }()

	evs := ws.untilEnd() // a clean end: no error from the stream
	if n := len(evs); n == 0 || evs[n-1].Type != "BOOKMARK" {
		t.Errorf("the watch ended with %v, want a last BOOKMARK", evs)
	}
	r := c.get(probes)
	st := r.failure(t, http.StatusServiceUnavailable, kapi.StatusReasonServiceUnavailable)
	if r.Header.Get("Retry-After") != "1" || st.Details == nil || st.Details.RetryAfterSeconds != 1 {
		t.Errorf("Retry-After %q, details %+v; want 1", r.Header.Get("Retry-After"), st.Details)
	}
	select {
	case err := <-shutdown:
		t.Fatalf("Shutdown returned %v while a request was in flight", err)
	default:
	}

	h.free()
	receive(t, inFlight).mustCode(t, http.StatusCreated)
	select {
	case err := <-shutdown:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(deadline):
		t.Fatal("Shutdown did not return after the last request ended")
	}
	c.get(probes).failure(t, http.StatusServiceUnavailable, kapi.StatusReasonServiceUnavailable)
	c.hc.CloseIdleConnections()
	if leaked := before.Leaked(leakcheck.Wait); leaked != nil {
		t.Errorf("goroutines outlived Shutdown:\n%s", strings.Join(leaked, "\n\n"))
	}
}

// TestShutdownContextExpires: Shutdown returns ctx's error when a request
// does not finish in time, and closes the server all the same.
func TestShutdownContextExpires(t *testing.T) {
	h := newHooks()
	srv, c := newProbeServer(t, h)
	inFlight := c.async(http.MethodPost, probes, probeBody("stuck", modeBlockValidate))
	h.wait(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := srv.API.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v, want %v", err, context.DeadlineExceeded)
	}
	c.get(probes).failure(t, http.StatusServiceUnavailable, kapi.StatusReasonServiceUnavailable)
	h.free()
	receive(t, inFlight) // answered, however: the test only needs it over
}

// TestLoadAtTwiceTheCap is the done-when of issue 6: clients at twice the
// in-flight cap, over real HTTP, get 429s with Retry-After and never a 5xx,
// and are served again as soon as the load drops.
func TestLoadAtTwiceTheCap(t *testing.T) {
	const limit = 8
	const clients = 2 * limit
	const perClient = 20
	h := newHooks()
	srv, c := newProbeServer(t, h, apiserver.WithMaxRequestsInFlight(limit), apiserver.WithMaxMutatingRequestsInFlight(limit))
	before := leakcheck.Take()

	// Until the first 429, writes block in Validate: the writers then hold
	// the cap for certain, however fast the machine.
	var rejected, served, bad atomic.Int64
	var firstReject sync.Once
	var failures sync.Map
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < perClient; {
				method, path, body := http.MethodGet, probes, any(nil)
				if (i+j)%2 == 0 {
					method, body = http.MethodPost, probeBody(fmt.Sprintf("p-%d-%d", i, j), modeBlockValidate)
				}
				req := c.request(context.Background(), method, path, body)
				resp, err := c.hc.Do(req)
				if err != nil {
					failures.Store(fmt.Sprintf("client %d: %v", i, err), true)
					bad.Add(1)
					return
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusTooManyRequests:
					rejected.Add(1)
					r := &response{Code: resp.StatusCode, Header: resp.Header, Body: data}
					if err := apiservertest.Collect(func(t testing.TB) { tooMany(t, r) }); err != nil {
						failures.Store(err.Error(), true)
						bad.Add(1)
					}
					firstReject.Do(h.free)
					// A client honours Retry-After; the test does not
					// wait a second per retry: load is what it is about.
					time.Sleep(time.Millisecond)
				case resp.StatusCode >= 500:
					failures.Store(fmt.Sprintf("HTTP %d: %s", resp.StatusCode, data), true)
					bad.Add(1)
					j++
				default:
					if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
						failures.Store(fmt.Sprintf("%s: HTTP %d: %s", method, resp.StatusCode, data), true)
						bad.Add(1)
					}
					served.Add(1)
					j++
				}
			}
		}()
	}
	wg.Wait()
	failures.Range(func(k, _ any) bool {
		t.Error(k)
		return true
	})
	if rejected.Load() == 0 {
		t.Error("no request was refused with 429 at twice the cap")
	}
	if got := served.Load(); got != clients*perClient {
		t.Errorf("%d requests served, want %d", got, clients*perClient)
	}
	t.Logf("%d served, %d refused with 429", served.Load(), rejected.Load())

	// The load is gone: every request is served at once.
	for i := range 2 * limit {
		c.do(http.MethodPost, probes, probeBody(fmt.Sprintf("after-%d", i), "")).mustCode(t, http.StatusCreated)
		c.get(probes).mustCode(t, http.StatusOK)
	}
	c.hc.CloseIdleConnections()
	if leaked := before.Leaked(leakcheck.Wait); leaked != nil {
		t.Errorf("goroutines outlived the load:\n%s", strings.Join(leaked, "\n\n"))
	}
	_ = srv
}

// fragile is a resource whose spec panics when it decodes explode: true, as
// a user's UnmarshalJSON with a bug would.
type fragile struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            fragileSpec `json:"spec"`
}

type fragileSpec struct {
	Explode bool `json:"explode"`
}

func (s *fragileSpec) UnmarshalJSON(data []byte) error {
	var v struct {
		Explode bool `json:"explode"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v.Explode {
		panic("fragile spec")
	}
	s.Explode = v.Explode
	return nil
}

// TestPanicInUserDecoding: a type's own UnmarshalJSON that panics is a 500
// for a request body, and a stored object that makes it panic is left out of
// the watch cache (whose goroutine serves every watch) instead of ending the
// process: it is unreadable, as one that does not decode.
func TestPanicInUserDecoding(t *testing.T) {
	store := memory.New()
	var log syncBuffer
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[fragile]{Group: "faults.example.com", Version: "v1", Kind: "Fragile", Plural: "fragiles"})
	}, apiserver.WithStorage(store), apiserver.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}
	const fragiles = "/apis/faults.example.com/v1/fragiles"

	c.do(http.MethodPost, fragiles, `{"metadata":{"name":"a"},"spec":{"explode":true}}`).failure(t, http.StatusInternalServerError, kapi.StatusReasonInternalError)
	ws := c.watch(fragiles + "?watch=true")
	if _, err := store.Create(context.Background(), "/fragiles.faults.example.com/stored", []byte(`{"metadata":{"name":"stored"},"spec":{"explode":true}}`)); err != nil {
		t.Fatal(err)
	}
	c.do(http.MethodPost, fragiles, `{"metadata":{"name":"b"},"spec":{}}`).mustCode(t, http.StatusCreated)
	ws.expect("ADDED b") // the stored object that does not decode is skipped
	// A list says which objects it cannot read, as kube-apiserver's.
	c.get(fragiles).failure(t, http.StatusInternalServerError, kapi.StatusReasonStoreReadError)
	c.get(fragiles+"/b").mustCode(t, http.StatusOK)
	for _, want := range []string{"a handler panicked", "Key: /fragiles.faults.example.com/stored, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=", "panic: fragile spec"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not hold %q:\n%s", want, log.String())
		}
	}
}

// TestLimitOptionErrors: a negative cap or a request timeout that is not
// positive is an error from New, not a surprise at the first request.
func TestLimitOptionErrors(t *testing.T) {
	for name, opt := range map[string]apiserver.Option{
		"negative read-only cap": apiserver.WithMaxRequestsInFlight(-1),
		"negative mutating cap":  apiserver.WithMaxMutatingRequestsInFlight(-1),
		"negative watch cap":     apiserver.WithMaxWatches(-1),
		"zero request timeout":   apiserver.WithRequestTimeout(0),
		"fairness level unknown": apiserver.WithFairness(fairness.Config{Schemas: []fairness.Schema{{Name: "s", Level: "none", Match: func(fairness.Request) bool { return true }}}}),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := apiserver.New(opt)
			if err == nil {
				s.Close()
				t.Fatal("New succeeded, want an error")
			}
		})
	}
	t.Run("zero caps remove them", func(t *testing.T) {
		s, err := apiserver.New(apiserver.WithMaxRequestsInFlight(0), apiserver.WithMaxMutatingRequestsInFlight(0), apiserver.WithMaxWatches(0))
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
}
