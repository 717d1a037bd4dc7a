// Package prometheus serves a kapi server's metrics at /metrics with
// kube-apiserver's names and labels, so dashboards and alerts made for
// kube-apiserver read them.
//
// # Metrics
//
// As kube-apiserver (k8s.io/apiserver endpoints/metrics): apiserver_request_total
// {verb, dry_run, group, version, resource, subresource, scope, component,
// code}, apiserver_request_duration_seconds (its buckets),
// apiserver_response_sizes (reads only), apiserver_current_inflight_requests
// {request_kind}, apiserver_longrunning_requests, apiserver_watch_events_total
// and apiserver_watch_events_sizes {group, version, resource},
// apiserver_storage_objects {resource}. kapi's own: kapi_responses_total
// {content_type} (the encodings served) and kapi_watch_cache_objects
// {resource}, what the watch cache holds.
//
// # Use
//
// New(server) returns an Observer to pass to apiserver.WithObserver (make
// the Metrics before the server, then Bind it) and a handler for /metrics.
package prometheus

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kapi-dev/kapi/observe"
)

// Metrics is an apiserver.Observer that keeps kube-apiserver's request
// metrics in a registry of its own.
type Metrics struct {
	registry      *prom.Registry
	requests      *prom.CounterVec
	durations     *prom.HistogramVec
	sizes         *prom.HistogramVec
	inflight      *prom.GaugeVec
	longRunning   *prom.GaugeVec
	watchEvents   *prom.CounterVec
	watchSizes    *prom.HistogramVec
	responseTypes *prom.CounterVec

	mu     sync.Mutex
	counts func() map[string]int
}

var (
	_ observe.Observer           = (*Metrics)(nil)
	_ observe.WatchEventObserver = (*Metrics)(nil)
	_ prom.Collector             = (*storageObjects)(nil)
)

var (
	requestLabels = []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}
	shortLabels   = []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}
	watchLabels   = []string{"group", "version", "resource"}
)

// New makes the metrics. Bind gives them the server whose stored objects
// they count.
func New() *Metrics {
	m := &Metrics{
		registry: prom.NewRegistry(),
		requests: prom.NewCounterVec(prom.CounterOpts{Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code."},
			append(requestLabels, "code")),
		durations: prom.NewHistogramVec(prom.HistogramOpts{Name: "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}},
			requestLabels),
		sizes: prom.NewHistogramVec(prom.HistogramOpts{Name: "apiserver_response_sizes",
			Help:    "Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
			Buckets: prom.ExponentialBuckets(1000, 10, 7)}, shortLabels),
		inflight: prom.NewGaugeVec(prom.GaugeOpts{Name: "apiserver_current_inflight_requests",
			Help: "Maximal number of currently used inflight request limit of this apiserver per request kind in last second."},
			[]string{"request_kind"}),
		longRunning: prom.NewGaugeVec(prom.GaugeOpts{Name: "apiserver_longrunning_requests",
			Help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way."},
			shortLabels),
		watchEvents: prom.NewCounterVec(prom.CounterOpts{Name: "apiserver_watch_events_total",
			Help: "Number of events sent in watch clients"}, watchLabels),
		watchSizes: prom.NewHistogramVec(prom.HistogramOpts{Name: "apiserver_watch_events_sizes",
			Help: "Watch event size distribution in bytes", Buckets: prom.ExponentialBuckets(1024, 2, 8)}, watchLabels),
		responseTypes: prom.NewCounterVec(prom.CounterOpts{Name: "kapi_responses_total",
			Help: "Responses by the media type they were encoded in."}, []string{"content_type"}),
	}
	m.inflight.WithLabelValues("mutating")
	m.inflight.WithLabelValues("readOnly")
	m.registry.MustRegister(m.requests, m.durations, m.sizes, m.inflight, m.longRunning, m.watchEvents, m.watchSizes,
		m.responseTypes, &storageObjects{m: m})
	return m
}

// ObjectCounter is what Bind reads the stored objects from: an
// *apiserver.Server, whose ObjectCounts counts them by resource from its
// watch cache. It is an interface so that this module needs only the
// observe port, not the server.
type ObjectCounter interface {
	ObjectCounts() map[string]int
}

// Bind counts the stored objects of srv in apiserver_storage_objects.
func (m *Metrics) Bind(srv ObjectCounter) {
	m.mu.Lock()
	m.counts = srv.ObjectCounts
	m.mu.Unlock()
}

// Registry is where the metrics are, to add others or gather them.
func (m *Metrics) Registry() *prom.Registry { return m.registry }

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// labels are a request's labels as kube-apiserver's, or nil for a request
// it does not count: resource requests, and the probes and discovery with
// their path as subresource.
func labels(rec *observe.RequestRecord) []string {
	a := rec.Attributes
	if a.ResourceRequest {
		return []string{rec.MetricsVerb, rec.DryRun, a.APIGroup, a.APIVersion, a.Resource, a.Subresource, rec.Scope, "apiserver"}
	}
	switch a.Path {
	case "/healthz", "/livez", "/readyz":
		return []string{rec.MetricsVerb, "", "", "", "", a.Path, "", ""}
	case "/api", "/apis":
		return []string{rec.MetricsVerb, "", "", "", "", a.Path, "", "apiserver"}
	}
	return nil
}

func withoutDryRun(l []string) []string { return append([]string{l[0]}, l[2:]...) }

func kind(rec *observe.RequestRecord) string {
	if rec.Mutating {
		return "mutating"
	}
	return "readOnly"
}

// RequestStarted implements apiserver.Observer.
func (m *Metrics) RequestStarted(ctx context.Context, rec *observe.RequestRecord) context.Context {
	if rec.LongRunning {
		if l := labels(rec); l != nil {
			m.longRunning.WithLabelValues(withoutDryRun(l)...).Inc()
		}
	} else {
		m.inflight.WithLabelValues(kind(rec)).Inc()
	}
	return ctx
}

// ResponseStarted implements apiserver.Observer.
func (m *Metrics) ResponseStarted(context.Context, *observe.RequestRecord) {}

// RequestEnded implements apiserver.Observer.
func (m *Metrics) RequestEnded(_ context.Context, rec *observe.RequestRecord) {
	l := labels(rec)
	if rec.LongRunning {
		if l != nil {
			m.longRunning.WithLabelValues(withoutDryRun(l)...).Dec()
		}
	} else {
		m.inflight.WithLabelValues(kind(rec)).Dec()
	}
	if rec.ContentType != "" {
		m.responseTypes.WithLabelValues(rec.ContentType).Inc()
	}
	if l == nil {
		return
	}
	m.requests.WithLabelValues(append(l, strconv.Itoa(rec.Code))...).Inc()
	m.durations.WithLabelValues(l...).Observe(time.Since(rec.Received).Seconds())
	if rec.MetricsVerb == "GET" || rec.MetricsVerb == "LIST" {
		m.sizes.WithLabelValues(withoutDryRun(l)...).Observe(float64(rec.ResponseBytes))
	}
}

// WatchEventSent implements apiserver.WatchEventObserver.
func (m *Metrics) WatchEventSent(rec *observe.RequestRecord, _ string, size int) {
	a := rec.Attributes
	m.watchEvents.WithLabelValues(a.APIGroup, a.APIVersion, a.Resource).Inc()
	m.watchSizes.WithLabelValues(a.APIGroup, a.APIVersion, a.Resource).Observe(float64(size))
}

// storageObjects reads the server's object counts when scraped.
type storageObjects struct{ m *Metrics }

var (
	storageDesc = prom.NewDesc("apiserver_storage_objects", "Number of stored objects at the time of last check split by kind.", []string{"resource"}, nil)
	cacheDesc   = prom.NewDesc("kapi_watch_cache_objects", "Number of objects the watch cache holds, by resource.", []string{"resource"}, nil)
)

func (c *storageObjects) Describe(ch chan<- *prom.Desc) { ch <- storageDesc; ch <- cacheDesc }

func (c *storageObjects) Collect(ch chan<- prom.Metric) {
	c.m.mu.Lock()
	counts := c.m.counts
	c.m.mu.Unlock()
	if counts == nil {
		return
	}
	for resource, n := range counts() {
		// kapi counts from its watch cache, which holds every stored
		// object: the two are one figure.
		ch <- prom.MustNewConstMetric(storageDesc, prom.GaugeValue, float64(n), resource)
		ch <- prom.MustNewConstMetric(cacheDesc, prom.GaugeValue, float64(n), resource)
	}
}
