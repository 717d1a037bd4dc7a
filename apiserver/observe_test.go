package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/internal/test/observetest"
)

// observeRecorder keeps the records of the requests that ended, and the events
// watches sent.
type observeRecorder struct {
	mu      sync.Mutex
	ended   []*apiserver.RequestRecord
	started []string // audit IDs of watches whose response started
	events  []string
}

func (r *observeRecorder) RequestStarted(ctx context.Context, _ *apiserver.RequestRecord) context.Context {
	return ctx
}

func (r *observeRecorder) ResponseStarted(_ context.Context, rec *apiserver.RequestRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, rec.AuditID)
}

func (r *observeRecorder) RequestEnded(_ context.Context, rec *apiserver.RequestRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec.Attributes.ResourceRequest {
		r.ended = append(r.ended, &apiserver.RequestRecord{Attributes: rec.Attributes, UserKnown: rec.UserKnown,
			MetricsVerb: rec.MetricsVerb, Scope: rec.Scope, Code: rec.Code, LongRunning: rec.LongRunning,
			Mutating: rec.Mutating, WatchEvents: rec.WatchEvents, AuditID: rec.AuditID, ResponseBytes: rec.ResponseBytes})
	}
}

func (r *observeRecorder) WatchEventSent(_ *apiserver.RequestRecord, eventType string, size int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if size > 0 {
		r.events = append(r.events, eventType)
	}
}

var _ apiserver.WatchEventObserver = (*observeRecorder)(nil)

// TestObserverSeesSequence: each request of the known sequence reaches an
// observer with kube-apiserver's metrics verb and scope
// (endpoints/metrics/metrics.go CleanVerb, CleanScope), its code, user,
// audit ID and, for the watch, its start and events.
func TestObserverSeesSequence(t *testing.T) {
	rec := &observeRecorder{}
	srv := observetest.NewServer(t, apiserver.WithObserver(rec))
	ids := observetest.Run(t, srv.URL, srv.Client())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ended) != len(observetest.Sequence) {
		t.Fatalf("%d resource requests observed, want %d", len(rec.ended), len(observetest.Sequence))
	}
	for i, step := range observetest.Sequence {
		got := rec.ended[i]
		if got.MetricsVerb != step.MetricsVerb || got.Scope != step.Scope || got.Attributes.Verb != step.Verb || got.Code != step.Code {
			t.Errorf("%s %s: verb %s/%s scope %s code %d, want %s/%s %s %d", step.Method, step.Path,
				got.MetricsVerb, got.Attributes.Verb, got.Scope, got.Code, step.MetricsVerb, step.Verb, step.Scope, step.Code)
		}
		if !got.UserKnown || got.Attributes.User.Name != observetest.User.Name {
			t.Errorf("%s %s: user %v (known %v)", step.Method, step.Path, got.Attributes.User, got.UserKnown)
		}
		if got.AuditID != ids[i] || len(got.AuditID) != 36 {
			t.Errorf("%s %s: audit ID %q, response's %q", step.Method, step.Path, got.AuditID, ids[i])
		}
		if got.Mutating != (step.Method != "GET") || got.LongRunning != (step.Verb == "watch") || got.ResponseBytes == 0 {
			t.Errorf("%s %s: mutating %v long-running %v bytes %d", step.Method, step.Path, got.Mutating, got.LongRunning, got.ResponseBytes)
		}
	}
	if w := rec.ended[3]; w.WatchEvents != 1 || len(rec.events) != 1 || rec.events[0] != "ADDED" {
		t.Errorf("the watch sent %d events, observed %v; want one ADDED", w.WatchEvents, rec.events)
	}
	if len(rec.started) != 1 || rec.started[0] != ids[3] {
		t.Errorf("responses started %v, want the watch's %s", rec.started, ids[3])
	}
}

// TestRequestLog: one line per request, with kube-apiserver's httplog keys.
func TestRequestLog(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	srv := observetest.NewServer(t, apiserver.WithRequestLog(logger))
	ids := observetest.Run(t, srv.URL, srv.Client())
	mu.Lock()
	defer mu.Unlock()
	byID := map[string]map[string]any{}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line["msg"] != "HTTP" {
			t.Errorf("msg %v", line["msg"])
		}
		if id, _ := line["audit-ID"].(string); id != "" {
			if byID[id] != nil {
				t.Errorf("two lines for %s", id)
			}
			byID[id] = line
		}
	}
	for i, step := range observetest.Sequence {
		line := byID[ids[i]]
		if line == nil {
			t.Errorf("%s %s: no line", step.Method, step.Path)
			continue
		}
		if line["verb"] != step.MetricsVerb || line["URI"] != step.Path || line["resp"] != float64(step.Code) ||
			line["userAgent"] != "observetest/1.0" || !strings.HasPrefix(line["srcIP"].(string), "127.0.0.1") || line["latency"] == nil {
			t.Errorf("%s %s: %v", step.Method, step.Path, line)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestObserverOptionsRefuseNil(t *testing.T) {
	if _, err := apiserver.New(apiserver.WithObserver(nil)); err == nil {
		t.Error("WithObserver(nil): no error")
	}
	if _, err := apiserver.New(apiserver.WithRequestLog(nil)); err == nil {
		t.Error("WithRequestLog(nil): no error")
	}
	if _, err := apiserver.New(apiserver.WithMetrics(nil)); err == nil {
		t.Error("WithMetrics(nil): no error")
	}
}

// TestObjectCounts: the stored objects by resource, as
// apiserver_storage_objects labels them.
func TestObjectCounts(t *testing.T) {
	srv := observetest.NewServer(t)
	if got := srv.API.ObjectCounts()["widgets.example.com"]; got != 0 {
		t.Errorf("%d widgets before any", got)
	}
	for _, name := range []string{"c", "d"} {
		resp, err := srv.Client().Do(observetest.Request(t, "POST", srv.URL+"/apis/example.com/v1/namespaces/default/widgets",
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"`+name+`"}}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("create: %d", resp.StatusCode)
		}
	}
	// A consistent list is served once the cache holds what was written.
	resp, err := srv.Client().Do(observetest.Request(t, "GET", srv.URL+"/apis/example.com/v1/widgets", ""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := srv.API.ObjectCounts(); got["widgets.example.com"] != 2 {
		t.Errorf("counts %v, want 2 widgets.example.com", got)
	}
}

// TestObserverOfTimedOutRequest: a request past its deadline is observed
// with the 504 the client got, while its handler, still running, can no
// longer change the record (run with -race).
func TestObserverOfTimedOutRequest(t *testing.T) {
	rec := &observeRecorder{}
	release := make(chan struct{})
	defer close(release)
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[observetest.Widget]{
			Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true,
			Validate: func(ctx context.Context, _, _ *observetest.Widget) apiserver.FieldErrors {
				<-ctx.Done() // past the deadline
				<-release    // and a while more, while the record is read
				panic("too late to matter")
			},
		})
	}, apiserver.WithObserver(rec), apiserver.WithRequestTimeout(50*time.Millisecond), apiserver.WithLogger(slog.New(slog.DiscardHandler)),
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{observetest.Token: observetest.User})))
	resp, err := srv.Client().Do(observetest.Request(t, "POST", srv.URL+"/apis/example.com/v1/namespaces/default/widgets",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"slow"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if resp, err := srv.Client().Get(srv.URL + "/version"); err == nil { // the POST's observers have run
		resp.Body.Close()
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ended) != 1 || rec.ended[0].Code != http.StatusGatewayTimeout || !rec.ended[0].UserKnown {
		t.Errorf("observed %+v", rec.ended)
	}
}

// nopObserver observes nothing: what remains is the cost of being observed.
type nopObserver struct{}

func (nopObserver) RequestStarted(ctx context.Context, _ *apiserver.RequestRecord) context.Context {
	return ctx
}
func (nopObserver) ResponseStarted(context.Context, *apiserver.RequestRecord) {}
func (nopObserver) RequestEnded(context.Context, *apiserver.RequestRecord)    {}

// BenchmarkObservedGet is a GET of one widget with an observer that does
// nothing: the cost of the record every observer reads (attributes, audit
// ID, source addresses, the observed writer).
func BenchmarkObservedGet(b *testing.B) {
	srv := newWidgetHandler(b, apiserver.WithObserver(nopObserver{}))
	serve(b, srv, http.MethodPost, widgetsIn("default"), creatable("default", "w"), http.StatusCreated)
	path := widgetPath("default", "w")
	b.ReportAllocs()
	for b.Loop() {
		serve(b, srv, http.MethodGet, path, nil, http.StatusOK)
	}
}
