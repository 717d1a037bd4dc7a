// Package otel traces a kapi server's requests with OpenTelemetry, as
// kube-apiserver's WithTracing filter does (k8s.io/apiserver
// endpoints/filters/traces.go): a server span per request, named by
// method and route ("POST /apis/example.com/v1/namespaces/{:namespace}/widgets"),
// with the request's http attributes and its audit-id, and an "encode"
// child span for the response's encoding; Storage adds a child span for
// every storage call made under it.
//
// # Incoming trace context
//
// kube-apiserver continues a caller's trace (W3C traceparent) only for
// users in system:masters or system:monitoring; for everyone else it
// starts a new trace linked to the caller's. A kapi observer sees a request
// before it is authenticated, so it does as kube does for everyone else:
// the caller's span is a link. WithTrustedParents makes it the parent,
// for servers behind a proxy that alone sends traceparent.
package otel

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kapi-dev/kapi/observe"
	"github.com/kapi-dev/kapi/storage"
)

// scope is the instrumentation scope, kube-apiserver's otelhttp's.
const scope = "github.com/kapi-dev/kapi/observe/otel"

// Option configures a Tracer.
type Option func(*Tracer)

// WithTrustedParents continues the caller's trace instead of linking it.
func WithTrustedParents() Option { return func(t *Tracer) { t.trustParents = true } }

// WithPropagator reads the caller's trace context with p (default W3C
// trace context and baggage, as kube-apiserver).
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(t *Tracer) { t.propagator = p }
}

// Tracer is an apiserver.Observer that makes a span per request.
type Tracer struct {
	tracer       trace.Tracer
	propagator   propagation.TextMapPropagator
	trustParents bool
}

var (
	_ observe.Observer           = (*Tracer)(nil)
	_ observe.WatchEventObserver = (*Tracer)(nil)
	_ observe.StepObserver       = (*Tracer)(nil)
	_ storage.Interface          = (*tracedStorage)(nil)
)

// New makes a Tracer with spans from tp.
func New(tp trace.TracerProvider, opts ...Option) *Tracer {
	t := &Tracer{tracer: tp.Tracer(scope), propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	for _, o := range opts {
		o(t)
	}
	return t
}

// SpanName is kube-apiserver's name of a request's span: the method and,
// for a resource request, its route with the namespace and name as
// placeholders.
func SpanName(rec *observe.RequestRecord) string {
	a := rec.Attributes
	if !a.ResourceRequest {
		return rec.Method
	}
	var b strings.Builder
	b.WriteString(rec.Method)
	if a.APIGroup == "" {
		b.WriteString(" /api")
	} else {
		b.WriteString(" /apis/" + a.APIGroup)
	}
	b.WriteString("/" + a.APIVersion)
	if a.Namespace != "" {
		b.WriteString("/namespaces/{:namespace}")
	}
	b.WriteString("/" + a.Resource)
	if a.Name != "" { // a list of one name too, as kube's RequestInfo names it
		b.WriteString("/{:name}")
	}
	if a.Subresource != "" {
		b.WriteString("/" + a.Subresource)
	}
	return b.String()
}

// RequestStarted implements apiserver.Observer.
func (t *Tracer) RequestStarted(ctx context.Context, rec *observe.RequestRecord) context.Context {
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(rec.Received),
		trace.WithAttributes(
			attribute.String("http.request.method", rec.Method),
			attribute.String("http.target", rec.RequestURI),
			attribute.String("user_agent.original", rec.UserAgent),
			attribute.String("audit-id", rec.AuditID),
		),
	}
	if len(rec.SourceIPs) > 0 {
		opts = append(opts, trace.WithAttributes(attribute.String("client.address", rec.SourceIPs[len(rec.SourceIPs)-1])))
	}
	if rec.Header != nil {
		caller := t.propagator.Extract(ctx, propagation.HeaderCarrier(rec.Header))
		if sc := trace.SpanContextFromContext(caller); sc.IsValid() {
			if t.trustParents {
				ctx = caller
			} else {
				opts = append(opts, trace.WithNewRoot(), trace.WithLinks(trace.Link{SpanContext: sc}))
			}
		}
	}
	ctx, _ = t.tracer.Start(ctx, SpanName(rec), opts...)
	return ctx
}

// ResponseStarted implements apiserver.Observer.
func (t *Tracer) ResponseStarted(ctx context.Context, rec *observe.RequestRecord) {
	trace.SpanFromContext(ctx).AddEvent("response started")
}

// WatchEventSent implements apiserver.WatchEventObserver: the watch's span
// counts its events (an event each would make a span without end).
func (t *Tracer) WatchEventSent(*observe.RequestRecord, string, int) {}

// StepStarted implements apiserver.StepObserver: a child span per step
// ("encode").
func (t *Tracer) StepStarted(ctx context.Context, _ *observe.RequestRecord, step string) func() {
	_, span := t.tracer.Start(ctx, step)
	return func() { span.End() }
}

// RequestEnded implements apiserver.Observer.
func (t *Tracer) RequestEnded(ctx context.Context, rec *observe.RequestRecord) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(
		attribute.Int("http.response.status_code", rec.Code),
		attribute.Int64("http.response.body.size", rec.ResponseBytes),
	)
	if rec.UserKnown {
		span.SetAttributes(attribute.String("user.name", rec.Attributes.User.Name))
	}
	if rec.LongRunning {
		span.SetAttributes(attribute.Int64("watch.events", rec.WatchEvents))
	}
	if rec.Code >= 500 || rec.Panic != nil {
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

// Storage wraps store so that each call made under a traced request is a
// child span of it ("storage.Create" and so on, with the key).
func (t *Tracer) Storage(store storage.Interface) storage.Interface {
	return &tracedStorage{store: store, tracer: t.tracer}
}

type tracedStorage struct {
	store  storage.Interface
	tracer trace.Tracer
}

func (s *tracedStorage) start(ctx context.Context, op, key string) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil // the cache's own reads and watches: no request to be part of
	}
	return s.tracer.Start(ctx, "storage."+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.String("key", key)))
}

func end(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

func (s *tracedStorage) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	ctx, span := s.start(ctx, "Get", key)
	kv, err := s.store.Get(ctx, key, rev)
	end(span, err)
	return kv, err
}

func (s *tracedStorage) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	ctx, span := s.start(ctx, "List", prefix)
	r, err := s.store.List(ctx, prefix, opts)
	end(span, err)
	return r, err
}

func (s *tracedStorage) Revision(ctx context.Context) (int64, error) {
	ctx, span := s.start(ctx, "Revision", "")
	rev, err := s.store.Revision(ctx)
	end(span, err)
	return rev, err
}

func (s *tracedStorage) Create(ctx context.Context, key string, value []byte) (int64, error) {
	ctx, span := s.start(ctx, "Create", key)
	rev, err := s.store.Create(ctx, key, value)
	end(span, err)
	return rev, err
}

func (s *tracedStorage) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	ctx, span := s.start(ctx, "Update", key)
	rev, err := s.store.Update(ctx, key, value, expect)
	end(span, err)
	return rev, err
}

func (s *tracedStorage) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	ctx, span := s.start(ctx, "Delete", key)
	kv, err := s.store.Delete(ctx, key, expect)
	end(span, err)
	return kv, err
}

// Watch is not traced: a watch of the store lives as long as the server.
func (s *tracedStorage) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	return s.store.Watch(ctx, prefix, rev)
}
