package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/crd"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
)

// newKapi serves the example's widgets from an in-process kapi, with Go's
// profiles under /debug/pprof/ as the example's -pprof serves them. Its
// PID is the test's own, so that the RSS and CPU code runs (on figures
// that mean nothing here).
func newKapi(t *testing.T, opts ...apiserver.Option) *target {
	t.Helper()
	return serveAPI(t, widgetapi.Register, opts...)
}

// serveAPI serves a kapi server that register fills, as newKapi does.
func serveAPI(t *testing.T, register func(*apiserver.Server) error, opts ...apiserver.Option) *target {
	t.Helper()
	api, err := apiserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := register(api); err != nil {
		t.Fatal(err)
	}
	// Complete starts the controllers (the definitions' of a control
	// plane), as crdtest's Start does.
	if err := api.Complete(); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		_ = api.Close() // ends the watches first
		hs.Close()
	})
	return &target{Name: "kapi", URL: hs.URL, PID: os.Getpid()}
}

// newControlPlane is examples/controlplane in-process (namespaces, leases,
// events and CustomResourceDefinitions), with Go's profiles as its -pprof
// serves them.
func newControlPlane(t *testing.T) *target {
	t.Helper()
	return serveAPI(t, crd.Serve, apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents())
}

// newBoltKapi is newKapi on a bolt file in a temporary directory.
func newBoltKapi(t *testing.T) *target {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "kapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // after the server's cleanup
	return newKapi(t, apiserver.WithStorage(db))
}

func serveHandler(t *testing.T, name string, h http.Handler) *target {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return &target{Name: name, URL: hs.URL}
}

// TestRun runs every workload briefly against in-process servers and
// checks that each produced sane figures: the harness measures what it
// claims to, and its outputs parse.
func TestRun(t *testing.T) {
	ceil := newTestCeiling(t, "")
	counting, closeCounting, err := newCountingKapi()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeCounting() })
	sz := sizes{
		Small: 20, Large: 200, Watchers: 20, SmallWatchers: 7, WatchRate: 50, WatchDuration: 400 * time.Millisecond,
		Informers: 5, SmallInformers: 3, SmallInformerObjects: 50, ClientGoInformers: 2, MemoryObjects: 300, IdleWatchers: 20,
		Duration: 150 * time.Millisecond, Conns: 4, InformerExpiry: time.Minute, Settle: 50 * time.Millisecond,
		KindsCurve: []int{3, 12},
	}
	e := &env{
		Kapi:     newKapi(t),
		Ceiling:  serveHandler(t, "ceiling", ceil),
		Counting: serveHandler(t, "kapi", counting),
		Fresh: func() (*target, func(), error) {
			return newKapi(t), func() {}, nil
		},
		Bolt: func() (*target, func(), error) {
			return newBoltKapi(t), func() {}, nil
		},
		BoltOnly: func() (*target, func(), error) {
			return serveHandler(t, boltOnlyName, newTestCeiling(t, t.TempDir())), func() {}, nil
		},
		ControlPlane: func() (*target, func(), error) {
			return newControlPlane(t), func() {}, nil
		},
		// kapi on etcd's stand-in: etcd is not at hand in a unit test;
		// the workloads, their rows and their targets are the same.
		Etcd:     newKapi(t),
		EtcdOnly: serveHandler(t, etcdOnlyName, newTestCeiling(t, t.TempDir())),
		FreshCeiling: func() (*target, func(), error) {
			ct := serveHandler(t, "ceiling", newTestCeiling(t, ""))
			ct.PID = os.Getpid()
			return ct, func() {}, nil
		},
		Sizes: sz,
		Logf:  t.Logf,
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	results, err := run(ctx, e)
	if err != nil {
		t.Fatal(err)
	}

	seen := map[string]map[string]int{}
	for _, r := range results {
		if seen[r.Workload] == nil {
			seen[r.Workload] = map[string]int{}
		}
		seen[r.Workload][r.Server]++
		t.Run(r.Workload+"/"+r.Server, func(t *testing.T) { checkResult(t, r, sz) })
	}
	for _, w := range allWorkloads {
		if seen[w]["kapi"] == 0 {
			t.Errorf("workload %s has no kapi result", w)
		}
		switch w {
		case "informers-client-go", "memory", "memory-cr", "kinds":
		default:
			if seen[w]["ceiling"] != 1 {
				t.Errorf("workload %s has %d ceiling results, want 1", w, seen[w]["ceiling"])
			}
		}
		want := 0
		if strings.HasSuffix(w, boltSuffix) {
			want = 1
		}
		if seen[w][boltOnlyName] != want {
			t.Errorf("workload %s has %d bolt-only results, want %d", w, seen[w][boltOnlyName], want)
		}
		want = 0
		if strings.HasSuffix(w, etcdSuffix) && slices.Contains(storeOnlyWorkloads, baseName(w)) {
			want = 1
		}
		if seen[w][etcdOnlyName] != want {
			t.Errorf("workload %s has %d etcd-only results, want %d", w, seen[w][etcdOnlyName], want)
		}
	}

	verdicts := judge(results, sz)
	// Issue 29's: 8 LIST lines (one reported), 4 writes on memory, 3 on
	// bolt, 5 on etcd, 4 informer starts, lost events, encodes, 2 of
	// memory; the kinds' 4. (The fan-outs' CPU lines need the ceiling's
	// CPU, which an in-process ceiling has not: TestJudgeNewTargets.)
	if len(verdicts) != 32 {
		t.Errorf("%d targets judged, want 32:\n%s", len(verdicts), targetsTable(verdicts))
	}
	for _, want := range []string{
		"memory: 300 custom objects in ≤ 1.5× the typed widget's RSS per byte of JSON", "kinds: 12 CustomResourceDefinitions in ≤ 1 MB of RSS each",
		"kinds: the 12-th definition's objects served ≤ 1 s after its apply",
		"LIST 200 JSON, a writer at 10/s ≥ 70% of its ceiling's bytes/s (2 connections)", "LIST 200 JSON, a writer at 10/s ≥ 70% of its ceiling's bytes/s (4 connections)",
		"LIST 200 JSON over 16 MiB ≥ 70% of its ceiling's bytes/s (2 connections)", "LIST 200 JSON over 16 MiB ≥ 70% of its ceiling's bytes/s (4 connections)",
		"LIST 20 protobuf ≥ 80%", "LIST 200 protobuf ≥ 80%", "REPORT  LIST 200 as a Table (kubectl get)", "LIST 200 JSON on etcd ≥ 60% of its ceiling's bytes/s",
		"CREATE (memory) ≥ 50%", "PUT (memory) ≥ 50%", "merge PATCH (memory) ≥ 50%", "server-side apply (memory) ≥ 35%",
		"CREATE on bolt, 8 writers, ≥ 90% of the bolt-only server's requests/s", "PUT on bolt, 8 writers, ≥ 90% of the bolt-only server's",
		"merge PATCH on bolt, 8 writers, ≥ 90% of the bolt-only server's",
		"GET on etcd ≥ 60% of its ceiling's requests/s", "CREATE on etcd ≥ 75% of the etcd-only server's requests/s", "PUT on etcd ≥ 75% of the etcd-only",
		"merge PATCH on etcd ≥ 75% of the etcd-only", "server-side apply on etcd ≥ 75% of the etcd-only", "1 etcd round trip",
		"informer start on memory: 3 clients × 50 widgets at the bookmark", "informer start on memory: 5 clients × 200 widgets at the bookmark",
		"informer start on etcd: 3 clients × 50 widgets at the bookmark", "informer start on etcd: 5 clients × 200 widgets at the bookmark",
		"0 of 7×20 on memory, 0 of 20×20 on memory, 0 of 7×20 on etcd, 0 of 20×20 on etcd",
		"memory: 300 widgets in ≤ 2.5× their JSON (RSS growth", "(live heap growth after a forced GC)",
	} {
		if !strings.Contains(targetsTable(verdicts), want) {
			t.Errorf("no target %q among:\n%s", want, targetsTable(verdicts))
		}
	}
	for _, v := range verdicts {
		if v.Target == "WATCH: one encode per event per media type" && !v.Met {
			t.Errorf("kapi encodes per watcher: %s", v.Measured)
		}
		if strings.HasSuffix(v.Workload, boltSuffix) && !strings.Contains(v.Measured, "the bolt-only server") {
			t.Errorf("the bolt target does not say where the bolt-only server stands: %s", v.Measured)
		}
		if v.Target == "WATCH: 0 events lost" && !v.Met {
			t.Errorf("events lost: %s", v.Measured)
		}
	}
	data, err := json.Marshal(struct {
		Results []*Result `json:"results"`
		Targets []verdict `json:"targets"`
	}{results, verdicts})
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Results []map[string]any `json:"results"`
		Targets []map[string]any `json:"targets"`
	}
	if err := json.Unmarshal(data, &parsed); err != nil {
		t.Fatalf("the JSON report does not parse: %v", err)
	}
	if len(parsed.Results) != len(results) || len(parsed.Targets) != len(verdicts) {
		t.Errorf("the JSON report has %d results and %d targets, want %d and %d", len(parsed.Results), len(parsed.Targets), len(results), len(verdicts))
	}
	for _, r := range parsed.Results {
		if _, ok := r["lost"]; !ok {
			t.Errorf("result %v has no lost field", r)
		}
	}
	md := markdown(reportInput{Command: "go run ./internal/test/loadtest -report BENCHMARKS.md", Results: results, Verdicts: verdicts, Sizes: sz, Figures: "docs/figures"})
	for _, want := range []string{"## How cost grows: kinds defined at run time", "| 12 | 2 |", "](docs/figures/kinds-responses.svg)", "## Targets", "## Results", "| get | kapi |", "| get | ceiling |", "| watch | kapi |", "| create-bolt | bolt-only |", "| update-bolt | bolt-only |", "| patch-bolt | bolt-only |", "| get-cr | kapi |",
		"| watch-small | kapi |", "| watch-etcd | ceiling |", "| list-large-table | kapi |", "| create-etcd | etcd-only |", "| informers-etcd | kapi |", "TestRoundTripsPerRequest", "of the typed widget's req/s", "| kinds | kapi |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

func checkResult(t *testing.T, r *Result, sz sizes) {
	if r.Errors != 0 {
		t.Errorf("%d errors, the first: %s", r.Errors, r.FirstError)
	}
	switch baseName(r.Workload) {
	case "watch", "watch-small":
		if want := map[string]int{"watch": sz.Watchers, "watch-small": sz.SmallWatchers}[baseName(r.Workload)]; r.Watchers != want {
			t.Errorf("%d watchers, want %d", r.Watchers, want)
		}
		if r.Lost != 0 {
			t.Errorf("%d events lost", r.Lost)
		}
		if r.Events == 0 || r.Delivered != int64(r.Events)*int64(r.Watchers) {
			t.Errorf("%d events delivered to %d watchers of %d writes", r.Delivered, r.Watchers, r.Events)
		}
		// An event may beat its write's acknowledgement to the client: a
		// delivery latency of 0.
		if r.P50ms < 0 || r.P99ms < r.P50ms {
			t.Errorf("delivery latency p50 %v p99 %v", r.P50ms, r.P99ms)
		}
		// Rounds: kapi's row, not the counting kapi's; its write system
		// calls are counted (its process is the test's). The test's
		// ceiling has no PID.
		if r.Server == "kapi" && r.Rounds > 0 && r.WritesPerEvent <= 0 {
			t.Errorf("%.2f write system calls per event counted over %d rounds", r.WritesPerEvent, r.Rounds)
		}
		if r.EncodeNote != "" && (r.EncodesPerEvent <= 0 || r.WatchEncodesPerEvent > 1.5) {
			t.Errorf("%.2f encodes per write, %.2f of them for %d watchers", r.EncodesPerEvent, r.WatchEncodesPerEvent, r.Watchers)
		}
	case "idle-watchers":
		if r.Watchers != sz.IdleWatchers || r.RSSEndMiB <= 0 {
			t.Errorf("%d idle watchers, RSS %v MiB", r.Watchers, r.RSSEndMiB)
		}
	case "informers", "informers-small", "informers-client-go":
		want, objects := sz.Informers, sz.Large
		switch baseName(r.Workload) {
		case "informers-client-go":
			want = sz.ClientGoInformers
		case "informers-small":
			want, objects = sz.SmallInformers, sz.SmallInformerObjects
		}
		if r.SyncSeconds <= 0 || r.Informers != want || r.Objects != objects {
			t.Errorf("%d informers of %d objects synced in %vs, want %d of %d", r.Informers, r.Objects, r.SyncSeconds, want, objects)
		}
		// Every widget of ~1 KiB went to every client.
		if baseName(r.Workload) != "informers-client-go" && r.BytesPerSec*r.SyncSeconds < float64(want*objects*900) {
			t.Errorf("%.0f bytes read by %d clients of %d widgets", r.BytesPerSec*r.SyncSeconds, want, objects)
		}
	case "kinds":
		p := r.Kinds
		if p == nil || p.Kinds != r.Objects || !slices.Contains(sz.KindsCurve, p.Kinds) || p.Groups != (p.Kinds+9)/10 || p.DefinitionBytes < int64(p.Kinds)*3000 {
			t.Fatalf("kinds: %+v", p)
		}
		if p.LastEstablishedMs <= 0 || p.LastServedMs < p.LastEstablishedMs || p.RSSEndMiB <= 0 || p.HeapEndMiB <= 0 || p.ApplySeconds <= 0 {
			t.Errorf("kinds: %+v", p)
		}
		if len(p.Responses) != 5 {
			t.Fatalf("%d responses timed, want 5", len(p.Responses))
		}
		for _, resp := range p.Responses {
			if resp.FirstMs <= 0 || resp.WarmMs <= 0 || resp.Bytes < 50 {
				t.Errorf("%+v", resp)
			}
		}
		// Every kind is in discovery and OpenAPI: each document grows by at
		// least a kind's name per kind.
		if agg := p.response(respAggregated); agg.Bytes < 50*p.Kinds {
			t.Errorf("aggregated discovery of %d kinds: %d bytes", p.Kinds, agg.Bytes)
		}
		if err := kindsFigures(t.TempDir(), []*KindsPoint{p}); err != nil {
			t.Errorf("drawing the kinds figures: %v", err)
		}
		if v3 := p.response(respV3Doc); v3.Bytes < 3000*min(p.Kinds, 10) {
			t.Errorf("OpenAPI v3 of a group of %d kinds: %d bytes", min(p.Kinds, 10), v3.Bytes)
		}
	case "memory", "memory-cr":
		if r.Objects != sz.MemoryObjects || r.JSONBytes < int64(sz.MemoryObjects)*900 || r.RSSEndMiB <= 0 {
			t.Errorf("%d widgets of %d bytes of JSON, RSS %v MiB", r.Objects, r.JSONBytes, r.RSSEndMiB)
		}
		// The test's own heap: it holds the widgets at least once.
		if r.HeapBaseMiB <= 0 || r.HeapPerJSON <= 0 {
			t.Errorf("live heap %v → %v MiB, %.2f× the JSON", r.HeapBaseMiB, r.HeapEndMiB, r.HeapPerJSON)
		}
	default:
		if want := workloadConns(r.Workload, sz); r.Conns != want {
			t.Errorf("%d connections, want %d", r.Conns, want)
		}
		if r.Requests <= 0 || r.RequestsPerSec <= 0 || r.BytesPerSec <= 0 {
			t.Errorf("%d requests, %v req/s, %v bytes/s", r.Requests, r.RequestsPerSec, r.BytesPerSec)
		}
		if r.P50ms <= 0 || r.P99ms < r.P50ms || r.P999ms < r.P99ms {
			t.Errorf("latency p50 %v p99 %v p99.9 %v", r.P50ms, r.P99ms, r.P999ms)
		}
		// The test's own process stands for the server: RSS is there, CPU
		// may be too few clock ticks to show.
		if r.Server == "kapi" && (r.ServerCPUSeconds < 0 || r.RSSPeakMiB <= 0) {
			t.Errorf("server CPU %vs, RSS peak %v MiB", r.ServerCPUSeconds, r.RSSPeakMiB)
		}
	}
}

func workloadConns(name string, sz sizes) int {
	for _, w := range requestWorkloads(sz.Conns) {
		if w.Name == name {
			return w.conns(sz)
		}
	}
	return -1
}

// newKapiAndCeiling is an in-process kapi and a ceiling beside it.
func newKapiAndCeiling(t *testing.T) (kapi, ceiling *target) {
	t.Helper()
	return newKapi(t), serveHandler(t, "ceiling", newTestCeiling(t, ""))
}

// newTestCeiling is a ceiling, the bolt-only server if dir is not empty,
// released when the test ends.
func newTestCeiling(t *testing.T, dir string) *ceiling {
	t.Helper()
	c, stop, err := newCeiling(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return c
}

// TestCeilingReplays checks that the ceiling answers with what was
// recorded from kapi: status, headers and body.
func TestCeilingReplays(t *testing.T) {
	kapi, ceiling := newKapiAndCeiling(t)
	ctx := t.Context()
	if _, err := seed(ctx, kapi, nsGet, "w", 1, 1); err != nil {
		t.Fatal(err)
	}
	c := kapi.client(1)
	defer c.CloseIdleConnections()
	rec, err := record(ctx, c, "GET", widgetsURL(kapi.URL, nsGet)+"/w-00000", jsonHeader, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Body) < 900 || len(rec.Body) > 1200 {
		t.Errorf("a widget is %d bytes of JSON, want about 1 KiB", len(rec.Body))
	}
	if err := configureCeiling(ctx, ceiling.URL, ceilingConfig{Response: rec}); err != nil {
		t.Fatal(err)
	}
	if err := checkCeiling(ctx, ceiling.URL, rec); err != nil {
		t.Error(err)
	}
}

// TestBoltOnlyStores has the bolt-only server answer one write, whose
// answer must be in its store by then, and then writes from several
// connections and a read: each write's answer is then in its bolt file
// under a key of its own, and the read stored nothing.
func TestBoltOnlyStores(t *testing.T) {
	const writes = 40
	dir := t.TempDir()
	c, stop, err := newCeiling(dir)
	if err != nil {
		t.Fatal(err)
	}
	only := serveHandler(t, boltOnlyName, c)
	ctx := t.Context()
	rec := &recorded{Code: http.StatusCreated, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"kind":"Widget","metadata":{"name":"c-1"}}`)}
	if err := configureCeiling(ctx, only.URL, ceilingConfig{Response: rec}); err != nil {
		t.Fatal(err)
	}
	cl := only.client(4)
	defer cl.CloseIdleConnections()
	// One write alone: stored by the time it is answered.
	if got, err := record(ctx, cl, http.MethodPost, only.URL+"/apis/example.com/v1/widgets", jsonHeader, []byte(`{}`)); err != nil || got.Code != rec.Code {
		t.Fatalf("POST: %v, %+v", err, got)
	}
	if kv, err := c.store.Get(ctx, "/example.com/widgets/store-only/c-1", 0); err != nil || !bytes.Equal(kv.Value, rec.Body) {
		t.Fatalf("the first write, once answered: %q, %v; want the answer stored", kv.Value, err)
	}
	var wg sync.WaitGroup
	for i := 1; i < writes; i++ {
		wg.Go(func() {
			method := http.MethodPost
			if i == 1 {
				method = http.MethodGet
			}
			got, err := record(ctx, cl, method, only.URL+"/apis/example.com/v1/widgets", jsonHeader, []byte(`{}`))
			if err != nil || got.Code != rec.Code || !bytes.Equal(got.Body, rec.Body) {
				t.Errorf("%s: %v, %+v", method, err, got)
			}
		})
	}
	wg.Wait()
	stop()

	s, err := bolt.Open(filepath.Join(dir, "kapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list, err := s.List(ctx, "/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != writes-1 {
		t.Fatalf("%d keys stored, want %d", len(list.Items), writes-1)
	}
	for _, kv := range list.Items {
		if !bytes.Equal(kv.Value, rec.Body) {
			t.Errorf("%s holds %q, want the answer %q", kv.Key, kv.Value, rec.Body)
		}
	}
}

// TestStoreOnlyUpdates has the bolt-only server answer PUTs and a PATCH:
// each updates the key its path names, as kapi's do, rather than creating
// one per request.
func TestStoreOnlyUpdates(t *testing.T) {
	c := newTestCeiling(t, t.TempDir())
	only := serveHandler(t, boltOnlyName, c)
	ctx := t.Context()
	rec := &recorded{Code: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"kind":"Widget","metadata":{"name":"w1"}}`)}
	if err := configureCeiling(ctx, only.URL, ceilingConfig{Response: rec}); err != nil {
		t.Fatal(err)
	}
	cl := only.client(1)
	defer cl.CloseIdleConnections()
	for _, method := range []string{http.MethodPut, http.MethodPut, http.MethodPatch} {
		if got, err := record(ctx, cl, method, only.URL+"/apis/example.com/v1/namespaces/ns/widgets/w1", jsonHeader, []byte(`{}`)); err != nil || got.Code != rec.Code {
			t.Fatalf("%s: %v, %+v", method, err, got)
		}
	}
	kv, err := c.store.Get(ctx, "/widgets.example.com/ns/w1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if kv.ModRevision != kv.CreateRevision+2 {
		t.Errorf("the key was written at %d, created at %d: want two updates after its creation", kv.ModRevision, kv.CreateRevision)
	}
	list, err := c.store.List(ctx, "/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d keys stored, want 1", len(list.Items))
	}
}

// TestProc reads this process's CPU time and RSS from /proc.
func TestProc(t *testing.T) {
	pid := os.Getpid()
	busy := make([]byte, 8<<20)
	for i := range busy {
		busy[i] = byte(i)
	}
	cpu, err := cpuSeconds(pid)
	if err != nil || cpu <= 0 {
		t.Errorf("cpuSeconds: %v, %v", cpu, err)
	}
	rss, err := rssBytes(pid)
	if err != nil || rss < int64(len(busy)) {
		t.Errorf("rssBytes: %v, %v (the test holds %d bytes)", rss, err, len(busy))
	}
	if _, err := cpuSeconds(-1); err == nil {
		t.Error("cpuSeconds of no process: no error")
	}
}

// TestTLS drives a server over TLS with the CA given as a file, as -ca
// does, and fails without it.
func TestTLS(t *testing.T) {
	hs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(hs.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw})
	if err := os.WriteFile(ca, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := tlsConfig(ca, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tls  *tls.Config
		ok   bool
	}{{"with the CA", cfg, true}, {"without", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &target{Name: "kapi", URL: hs.URL, TLS: tc.tls}
			c := tg.client(1)
			defer c.CloseIdleConnections()
			_, _, _, err := send(t.Context(), c, "GET", hs.URL+"/", nil, nil, false)
			if (err == nil) != tc.ok {
				t.Errorf("GET over TLS: %v, want success %v", err, tc.ok)
			}
		})
	}
	if _, err := tlsConfig("", "missing.pem", "missing-key.pem"); err == nil {
		t.Error("a client certificate that does not exist: no error")
	}
}

// TestCeilingReplaysStreamingList checks that the ceiling answers a
// streaming list with the bytes kapi sent for one, and that they hold every
// widget and the bookmark that ends the initial events.
func TestCeilingReplaysStreamingList(t *testing.T) {
	kapi, ceiling := newKapiAndCeiling(t)
	ctx := t.Context()
	const n = 30
	if _, err := seed(ctx, kapi, nsInformers, "w", n, 2); err != nil {
		t.Fatal(err)
	}
	c := watchClient(kapi, 1)
	defer c.CloseIdleConnections()
	var fromKapi, fromCeiling recordedStream
	added, size, err := streamingList(ctx, c, widgetsURL(kapi.URL, nsInformers)+streamingListQuery, &fromKapi)
	if err != nil {
		t.Fatal(err)
	}
	if added != n || size != int64(fromKapi.Body.Len()) || size < n*900 {
		t.Fatalf("kapi's streaming list: %d ADDED in %d bytes (%d kept), want %d widgets of ~1 KiB", added, size, fromKapi.Body.Len(), n)
	}
	if err := configureCeiling(ctx, ceiling.URL, ceilingConfig{WatchHeader: fromKapi.Header, Initial: fromKapi.Body.Bytes()}); err != nil {
		t.Fatal(err)
	}
	cc := watchClient(ceiling, 1)
	defer cc.CloseIdleConnections()
	added, _, err = streamingList(ctx, cc, widgetsURL(ceiling.URL, nsInformers)+streamingListQuery, &fromCeiling)
	if err != nil {
		t.Fatal(err)
	}
	if added != n || !bytes.Equal(fromCeiling.Body.Bytes(), fromKapi.Body.Bytes()) {
		t.Errorf("the ceiling's streaming list: %d ADDED in %d bytes, kapi's %d in %d", added, fromCeiling.Body.Len(), n, fromKapi.Body.Len())
	}
	if got, want := fromCeiling.Header.Get("Content-Type"), fromKapi.Header.Get("Content-Type"); got != want || want == "" {
		t.Errorf("the ceiling's Content-Type is %q, kapi's %q", got, want)
	}
	// It answers nothing else: no response was recorded for that.
	plain := ceiling.client(1)
	defer plain.CloseIdleConnections()
	var he *httpError
	if _, _, _, err := send(ctx, plain, "GET", widgetsURL(ceiling.URL, nsInformers), nil, nil, false); !errors.As(err, &he) || he.Code != http.StatusServiceUnavailable {
		t.Errorf("a LIST of a ceiling configured for streaming lists only: %v, want 503", err)
	}
}

// TestLiveHeap reads the live heap of a server serving net/http/pprof, and
// tells a server without it and a profile without the figure apart.
func TestLiveHeap(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	withPprof := serveHandler(t, "kapi", mux)
	keep := make([]byte, 4<<20) // live across the forced GC
	n, err := liveHeap(t.Context(), withPprof)
	if err != nil || n < int64(len(keep)) {
		t.Errorf("liveHeap: %d, %v; the test holds %d bytes", n, err, len(keep))
	}
	keep[0] = 1
	without := serveHandler(t, "kapi", http.NotFoundHandler())
	if _, err := liveHeap(t.Context(), without); !errors.Is(err, errNoHeap) {
		t.Errorf("liveHeap of a server without pprof: %v, want errNoHeap", err)
	}
	for _, bad := range []string{"heap profile: 1: 2 [3: 4] @ heap/1048576\n", "# HeapAlloc = x\n", "# HeapAlloc = 0\n"} {
		if n, err := heapAlloc([]byte(bad)); err == nil {
			t.Errorf("heapAlloc(%q) = %d, want an error", bad, n)
		}
	}
	if n, err := heapAlloc([]byte("# runtime.MemStats\n# Alloc = 5\n# HeapAlloc = 1234\n")); n != 1234 || err != nil {
		t.Errorf("heapAlloc: %d, %v, want 1234", n, err)
	}
}

// TestJudgeNewTargets: each of issue 29's lines is met just over its
// limit and missed just under it, against the row the issue names (the
// ceiling, the bolt-only or the etcd-only server).
func TestJudgeNewTargets(t *testing.T) {
	sz := sizes{Large: 10000, Conns: 8}
	// x is the figure that meets the limit at 1 (a ratio to 1), y its
	// inverse for the lines with a ceiling (at most).
	results := func(x float64) []*Result {
		y := 2 - x
		req := func(workload, server string, conns int, rps, bps float64) *Result {
			return &Result{Workload: workload, Server: server, Conns: conns, RequestsPerSec: rps, BytesPerSec: bps, Requests: 1000}
		}
		return []*Result{
			req("list-writes-json-2", "kapi", 2, 1, 0.70*x), req("list-writes-json-2", "ceiling", 2, 1, 1),
			req("list-large-proto", "kapi", 8, 1, 0.80*x), req("list-large-proto", "ceiling", 8, 1, 1),
			req("list-large-json-etcd", "kapi", 8, 1, 0.60*x), req("list-large-json-etcd", "ceiling", 8, 1, 1),
			req("create", "kapi", 8, 0.50*x, 1), req("create", "ceiling", 8, 1, 1),
			req("apply", "kapi", 8, 0.35*x, 1), req("apply", "ceiling", 8, 1, 1),
			// Against the store-only rows: the ceiling's is far above.
			req("patch-bolt", "kapi", 8, 0.90*x, 1), req("patch-bolt", "ceiling", 8, 10, 1), req("patch-bolt", boltOnlyName, 8, 1, 1),
			req("update-etcd", "kapi", 8, 0.75*x, 1), req("update-etcd", "ceiling", 8, 10, 1), req("update-etcd", etcdOnlyName, 8, 1, 1),
			req("get-etcd", "kapi", 8, 0.60*x, 1), req("get-etcd", "ceiling", 8, 1, 1), req("get-etcd", etcdOnlyName, 8, 10, 1),
			{Workload: "informers-small-etcd", Server: "kapi", Informers: 8, Objects: 1000, SyncSeconds: 1.5 * y},
			{Workload: "informers-small-etcd", Server: "ceiling", Informers: 8, Objects: 1000, SyncSeconds: 1},
			// 100 writes to 300 watchers: 1.3 s of kapi's CPU against 1 s,
			// etcd's apart.
			{Workload: "watch-small-etcd", Server: "kapi", Watchers: 300, Events: 100, Requests: 100, Rate: 50, ServerCPUSeconds: 1.3 * y, CPUSecPer1k: 13 * y, StoreCPUSeconds: 5},
			{Workload: "watch-small-etcd", Server: "ceiling", Watchers: 300, Events: 100, Requests: 100, Rate: 50, ServerCPUSeconds: 1, CPUSecPer1k: 10},
			{Workload: "memory", Server: "kapi", Objects: 100000, JSONBytes: 1 << 20, RSSPerJSON: 2.5 * y, HeapBaseMiB: 1, HeapEndMiB: 1 + 1.5*y, HeapPerJSON: 1.5 * y},
		}
	}
	for _, tc := range []struct {
		name string
		x    float64
		met  bool
	}{
		{"met", 1.01, true},
		{"missed", 0.99, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := judge(results(tc.x), sz)
			targets := targetsTable(vs)
			// The lost-events line has no limit to cross.
			if len(vs) != 13 {
				t.Fatalf("%d targets, want 13:\n%s", len(vs), targets)
			}
			for _, v := range vs {
				if v.Target == "WATCH: 0 events lost" {
					continue
				}
				if v.Met != tc.met {
					t.Errorf("%s: met %v at %v, want %v", v.Target, v.Met, v.Value, tc.met)
				}
			}
			for _, want := range []string{
				"LIST 10000 JSON, a writer at 10/s ≥ 70% of its ceiling's bytes/s (2 connections)",
				"merge PATCH on bolt, 8 writers, ≥ 90% of the bolt-only server's requests/s",
				"PUT on etcd ≥ 75% of the etcd-only server's requests/s", "GET on etcd ≥ 60% of its ceiling's requests/s",
				"WATCH on etcd, 300 watchers × 50 writes/s: server CPU per delivered event ≤ 1.3× the ceiling's",
				"etcd apart: 166.7 µs per event delivered", "informer start on etcd: 8 clients × 1000 widgets",
				"memory: 100000 widgets in ≤ 2.5× their JSON",
			} {
				if !strings.Contains(targets, want) {
					t.Errorf("no %q in:\n%s", want, targets)
				}
			}
		})
	}
}

// TestKeepHandWritten: rewriting a report keeps what was written by hand
// below the marker, and a file without one is replaced whole.
func TestKeepHandWritten(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, old, want string
	}{
		{"with the marker", "# old report\n\n" + handWritten + "\n## by hand\n", "# new\n\n" + handWritten + "\n## by hand\n"},
		{"without", "# old report\n", "# new\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".md")
			if err := os.WriteFile(file, []byte(tc.old), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := keepHandWritten("# new\n", file); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
