package prometheus_test

import (
	"io"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/internal/test/observetest"
	"github.com/kapi-dev/kapi/observe/prometheus"
)

// series is one sample: its labels as name=value joined by commas, sorted.
func series(m *dto.Metric) string {
	var l []string
	for _, p := range m.GetLabel() {
		l = append(l, p.GetName()+"="+p.GetValue())
	}
	sort.Strings(l)
	return strings.Join(l, ",")
}

func gather(t *testing.T, m *prometheus.Metrics) map[string]map[string]*dto.Metric {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]*dto.Metric{}
	for _, f := range families {
		out[f.GetName()] = map[string]*dto.Metric{}
		for _, s := range f.GetMetric() {
			out[f.GetName()][series(s)] = s
		}
	}
	return out
}

const widgetLabels = "component=apiserver,group=example.com,resource=widgets,subresource=,version=v1"

// TestSequenceMetrics compares the metrics of the known sequence with the
// series kube-apiserver's endpoints/metrics would make of it: its label
// names and values (CleanVerb, CleanScope, codeToString), response sizes of
// reads only, the watch's events, inflight gauges back at zero.
func TestSequenceMetrics(t *testing.T) {
	m := prometheus.New()
	srv := observetest.NewServer(t, apiserver.WithObserver(m))
	m.Bind(srv.API)
	observetest.Run(t, srv.URL, srv.Client())
	got := gather(t, m)

	want := map[string]float64{}
	for _, s := range observetest.Sequence {
		want["code="+itoa(s.Code)+","+withPrefix(widgetLabels, "dry_run=,")+",scope="+s.Scope+",verb="+s.MetricsVerb]++
	}
	requests := got["apiserver_request_total"]
	for key, n := range want {
		key = sortLabels(key)
		s := requests[key]
		if s == nil {
			t.Errorf("apiserver_request_total{%s} missing; have %v", key, keys(requests))
			continue
		}
		if v := s.GetCounter().GetValue(); v != n {
			t.Errorf("apiserver_request_total{%s} = %v, want %v", key, v, n)
		}
	}
	var widgetRequests float64
	for key, s := range requests {
		if strings.Contains(key, "resource=widgets") {
			widgetRequests += s.GetCounter().GetValue()
		}
	}
	if widgetRequests != float64(len(observetest.Sequence)) {
		t.Errorf("%v widget requests counted, want %d", widgetRequests, len(observetest.Sequence))
	}
	if s := requests[sortLabels("code=200,component=,dry_run=,group=,resource=,scope=,subresource=/readyz,verb=GET,version=")]; s == nil {
		t.Errorf("the readiness probe is not counted as kube counts it: %v", keys(requests))
	}

	durations := got["apiserver_request_duration_seconds"]
	watch := durations[sortLabels(withPrefix(widgetLabels, "dry_run=,")+",scope=namespace,verb=WATCH")]
	if watch == nil || watch.GetHistogram().GetSampleCount() != 1 || len(watch.GetHistogram().GetBucket()) != 23 {
		t.Errorf("the watch's duration: %v", watch)
	}

	sizes := got["apiserver_response_sizes"]
	for key, s := range sizes {
		if !strings.Contains(key, "verb=GET") && !strings.Contains(key, "verb=LIST") {
			t.Errorf("a response size of a write: %s", key)
		}
		if strings.Contains(key, "resource=widgets") && s.GetHistogram().GetSampleSum() == 0 {
			t.Errorf("%s: no bytes", key)
		}
	}
	if len(sizes) < 3 { // GET (two codes share a series), LIST, and the probe's GET
		t.Errorf("response sizes %v", keys(sizes))
	}

	events := got["apiserver_watch_events_total"]["group=example.com,resource=widgets,version=v1"]
	if events == nil || events.GetCounter().GetValue() != 1 {
		t.Errorf("apiserver_watch_events_total: %v", events)
	}
	for _, kind := range []string{"mutating", "readOnly"} {
		s := got["apiserver_current_inflight_requests"]["request_kind="+kind]
		if s == nil || s.GetGauge().GetValue() != 0 {
			t.Errorf("apiserver_current_inflight_requests{%s} = %v, want 0 after the sequence", kind, s)
		}
	}
	lr := got["apiserver_longrunning_requests"][sortLabels(widgetLabels+",scope=namespace,verb=WATCH")]
	if lr == nil || lr.GetGauge().GetValue() != 0 {
		t.Errorf("apiserver_longrunning_requests: %v", lr)
	}
	if s := got["apiserver_storage_objects"]["resource=widgets.example.com"]; s == nil || s.GetGauge().GetValue() != 0 {
		t.Errorf("apiserver_storage_objects: %v", s)
	}
	if s := got["kapi_responses_total"]["content_type=application/json"]; s == nil || s.GetCounter().GetValue() < float64(len(observetest.Sequence)) {
		t.Errorf("kapi_responses_total: %v", got["kapi_responses_total"])
	}

	// Served in Prometheus' text format, as kubectl get --raw /metrics shows it.
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if !strings.Contains(string(body), `apiserver_request_total{code="409",component="apiserver",dry_run="",group="example.com",resource="widgets",scope="resource",subresource="",verb="POST",version="v1"} 1`) {
		t.Errorf("/metrics lacks the 409:\n%s", body)
	}
}

// TestDryRunLabel: a dry run is counted with dry_run="All", as kube's.
func TestDryRunLabel(t *testing.T) {
	m := prometheus.New()
	srv := observetest.NewServer(t, apiserver.WithObserver(m))
	resp, err := srv.Client().Do(observetest.Request(t, "POST", srv.URL+"/apis/example.com/v1/namespaces/default/widgets?dryRun=All&dryRun=All",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"dry"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, err := srv.Client().Get(srv.URL + "/version"); err == nil {
		resp.Body.Close()
	}
	key := sortLabels("code=201," + withPrefix(widgetLabels, "dry_run=All,") + ",scope=resource,verb=POST")
	if s := gather(t, m)["apiserver_request_total"][key]; s == nil || s.GetCounter().GetValue() != 1 {
		t.Errorf("apiserver_request_total{%s}: %v", key, s)
	}
}

// TestLongRunningGauge: a watch in progress is a long-running request, not
// an inflight one.
func TestLongRunningGauge(t *testing.T) {
	m := prometheus.New()
	srv := observetest.NewServer(t, apiserver.WithObserver(m))
	resp, err := srv.Client().Do(observetest.Request(t, "GET", srv.URL+"/apis/example.com/v1/widgets?watch=true", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The response has started: the handler has counted the watch.
	s := gather(t, m)["apiserver_longrunning_requests"][sortLabels(widgetLabels+",scope=cluster,verb=WATCH")]
	if s == nil || s.GetGauge().GetValue() != 1 {
		t.Errorf("apiserver_longrunning_requests during a watch: %v", s)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func withPrefix(labels, prefix string) string { return prefix + labels }

func sortLabels(s string) string {
	l := strings.Split(s, ",")
	sort.Strings(l)
	return strings.Join(l, ",")
}

func keys(m map[string]*dto.Metric) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}
