package otel_test

import (
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/internal/test/observetest"
	kapiotel "github.com/kapi-dev/kapi/observe/otel"
	"github.com/kapi-dev/kapi/storage/memory"
)

func attr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

const item = "/apis/example.com/v1/namespaces/{:namespace}/widgets/{:name}"
const collection = "/apis/example.com/v1/namespaces/{:namespace}/widgets"

// TestSequenceSpans: a server span per request, named as kube-apiserver's
// WithTracing names it (endpoints/filters/traces.go
// getSpanNameFromRequestInfo), with http.target and audit-id as it sets
// them, and a storage span under each write.
func TestSequenceSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tracer := kapiotel.New(tp)
	srv := observetest.NewServer(t, apiserver.WithObserver(tracer), apiserver.WithStorage(tracer.Storage(memory.New())))
	ids := observetest.Run(t, srv.URL, srv.Client())

	byAuditID := map[string]sdktrace.ReadOnlySpan{}
	children := map[trace.SpanID][]string{}
	for _, s := range rec.Ended() {
		if s.SpanKind() == trace.SpanKindServer {
			byAuditID[attr(s, "audit-id").AsString()] = s
		} else {
			children[s.Parent().SpanID()] = append(children[s.Parent().SpanID()], s.Name())
		}
	}
	wantNames := []string{"POST " + collection, "GET " + item, "GET " + collection, "GET " + collection,
		"PUT " + item, "POST " + collection, "DELETE " + item, "GET " + item}
	// A read asks the store's revision, then is served from the cache
	// at it (as kube-apiserver's consistent reads from its cache).
	rev := []string{"storage.Revision"}
	wantStorage := [][]string{{"storage.Create"}, rev, rev, rev, {"storage.Update"}, {"storage.Create"}, {"storage.Delete"}, rev}
	for i, step := range observetest.Sequence {
		s := byAuditID[ids[i]]
		if s == nil {
			t.Errorf("%s %s: no span", step.Method, step.Path)
			continue
		}
		if s.Name() != wantNames[i] {
			t.Errorf("span %q, want %q", s.Name(), wantNames[i])
		}
		if got := attr(s, "http.target").AsString(); got != step.Path {
			t.Errorf("%s: http.target %q", s.Name(), got)
		}
		if got := attr(s, "http.response.status_code").AsInt64(); got != int64(step.Code) {
			t.Errorf("%s: status %d, want %d", s.Name(), got, step.Code)
		}
		if got := attr(s, "user.name").AsString(); got != observetest.User.Name {
			t.Errorf("%s: user %q", s.Name(), got)
		}
		storage := children[s.SpanContext().SpanID()]
		// kapi reads a write's current state from storage before some
		// writes: only the write itself is asserted.
		storage = slices.DeleteFunc(storage, func(n string) bool { return n == "storage.Get" })
		encoded := slices.Contains(storage, "encode")
		storage = slices.DeleteFunc(storage, func(n string) bool { return n == "encode" })
		// A delete answers a Status, written as errors are: no encode step.
		if wantEncode := step.Code < 300 && step.Verb != "watch" && step.Verb != "delete"; encoded != wantEncode {
			t.Errorf("%s %s: an encode span %v, want %v", step.Method, step.Path, encoded, wantEncode)
		}
		if !slices.Equal(storage, wantStorage[i]) {
			t.Errorf("%s %s: storage spans %v, want %v", step.Method, step.Path, storage, wantStorage[i])
		}
	}
	if w := byAuditID[ids[3]]; w == nil || attr(w, "watch.events").AsInt64() != 1 || len(w.Events()) != 1 || w.Events()[0].Name != "response started" {
		t.Errorf("the watch's span: %v", w)
	}
	var probes int
	for _, s := range rec.Ended() {
		if s.Name() == "GET" && strings.HasPrefix(attr(s, "http.target").AsString(), "/readyz") {
			probes++
		}
	}
	if probes == 0 {
		t.Error("a non-resource request is not named by its method alone, as kube's")
	}
}

// TestCallerTrace: the caller's span is a link, as kube-apiserver does for
// users outside system:masters and system:monitoring; WithTrustedParents
// makes it the parent.
func TestCallerTrace(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, trusted := range []bool{false, true} {
		rec := tracetest.NewSpanRecorder()
		var opts []kapiotel.Option
		if trusted {
			opts = append(opts, kapiotel.WithTrustedParents())
		}
		srv := observetest.NewServer(t, apiserver.WithObserver(kapiotel.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), opts...)))
		req := observetest.Request(t, "GET", srv.URL+"/apis/example.com/v1/widgets", "")
		req.Header.Set("Traceparent", parent)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp, err := srv.Client().Get(srv.URL + "/version"); err == nil {
			resp.Body.Close()
		}
		var span sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.Name() == "GET /apis/example.com/v1/widgets" {
				span = s
			}
		}
		if span == nil {
			t.Fatal("no span")
		}
		inTrace := span.SpanContext().TraceID().String() == "4bf92f3577b34da6a3ce929d0e0e4736"
		linked := len(span.Links()) == 1 && span.Links()[0].SpanContext.SpanID().String() == "00f067aa0ba902b7"
		if inTrace != trusted || linked == trusted {
			t.Errorf("trusted %v: in the caller's trace %v, linked %v", trusted, inTrace, linked)
		}
	}
}
