package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/bolt"
)

// inProcessBoltObjects is the objects curve's bolt store with kapi served
// in-process: Start opens the file and serves it until stop.
func inProcessBoltObjects(t *testing.T) *objectStore {
	dir := t.TempDir()
	file := filepath.Join(dir, "kapi.db")
	return &objectStore{
		Name:     "bolt",
		Template: func(ctx context.Context) (string, []byte, error) { return boltTemplate(ctx, file) },
		Fill: func(ctx context.Context, key string, value []byte, from, to int) error {
			return fillBolt(ctx, file, key, value, from, to)
		},
		Start: func(ctx context.Context, listening func(*target)) (*target, time.Duration, time.Duration, func(), error) {
			start := time.Now()
			db, err := bolt.Open(file)
			if err != nil {
				return nil, 0, 0, nil, err
			}
			api, err := apiserver.New(apiserver.WithStorage(db), apiserver.WithNamespaces())
			if err == nil {
				err = widgetapi.Register(api)
			}
			if err == nil {
				err = api.Complete()
			}
			if err != nil {
				db.Close()
				return nil, 0, 0, nil, err
			}
			mux := http.NewServeMux()
			mux.Handle("/", api)
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			hs := httptest.NewServer(mux)
			stop := func() { _ = api.Close(); hs.Close(); _ = db.Close() }
			tg := &target{Name: "kapi", URL: hs.URL, PID: os.Getpid()}
			var healthz time.Duration
			for {
				probe := "/readyz"
				if healthz == 0 {
					probe = "/healthz"
				}
				resp, err := http.Get(tg.URL + probe)
				if err != nil {
					stop()
					return nil, 0, 0, nil, err
				}
				resp.Body.Close()
				if healthz == 0 {
					healthz = time.Since(start)
					if listening != nil {
						listening(tg)
					}
				} else if resp.StatusCode == http.StatusOK {
					return tg, healthz, time.Since(start), stop, nil
				}
				time.Sleep(time.Millisecond)
			}
		},
		Size:     func() int64 { return dirSize(dir) },
		StorePID: func() int { return 0 },
		Close:    func() {},
	}
}

// TestObjectsCurve grows a bolt store's collection through three sizes,
// with kapi started on it at each, and checks the figures and that the
// fill wrote what kapi serves: every widget listed, each its own.
func TestObjectsCurve(t *testing.T) {
	sz := sizes{Conns: 4, Duration: 100 * time.Millisecond, Settle: 10 * time.Millisecond,
		Curves: curveSizes{Objects: []int{10, 50, 200}, ObjectsLists: 3}}
	e := &env{Sizes: sz, Logf: t.Logf, Workloads: []string{"objects"},
		ObjectStores: func(context.Context) ([]*objectStore, error) { return []*objectStore{inProcessBoltObjects(t)}, nil }}
	var results []*Result
	runCurves(t.Context(), e, func(name string, r *Result) { r.Workload = name; results = append(results, r) }, func(name string, err error) { t.Fatalf("%s: %v", name, err) })
	points := objectsPoints(results)
	if len(points) != 3 {
		t.Fatalf("%d points, want 3", len(points))
	}
	for i, p := range points {
		if p.Objects != sz.Curves.Objects[i] || p.Store != "bolt" {
			t.Errorf("point %d: %+v", i, p)
		}
		if p.ReadyMs <= 0 || p.HealthzMs <= 0 || p.HealthzMs > p.ReadyMs {
			t.Errorf("%d widgets: healthz %v ms, ready %v ms", p.Objects, p.HealthzMs, p.ReadyMs)
		}
		if p.Lists < 3 || p.ListP50Ms <= 0 || p.ListP99Ms < p.ListP50Ms || p.GetPerSec <= 0 || p.CreatePerSec <= 0 || p.RSSMiB <= 0 || p.StoreMiB <= 0 {
			t.Errorf("%d widgets: %+v", p.Objects, p)
		}
		// The LIST holds exactly the collection: the CREATEs went elsewhere.
		if p.ListBytes < int64(p.Objects)*500 || p.ListBytes > int64(p.Objects)*3000 {
			t.Errorf("%d widgets in a LIST of %d bytes", p.Objects, p.ListBytes)
		}
	}
	md := curvesMarkdown(results, sz, "docs/figures")
	for _, want := range []string{"## How cost grows: objects in one collection", "| bolt | 200 |", "**bolt, 10 to 200 widgets.** *RSS*: ", "](docs/figures/objects-requests.svg)"} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	if err := curvesFigures(dir, results); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"objects-memory.svg", "objects-requests.svg", "objects-per-widget.svg", "objects-create.svg"} {
		if data, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !strings.Contains(string(data), "<polyline") {
			t.Errorf("%s: %v", f, err)
		}
	}
	if table := table(results); !strings.Contains(table, "bolt, 200 widgets") {
		t.Errorf("the results table lacks the points:\n%s", table)
	}
}

// TestObjectsFillServed checks the fill's copies are widgets kapi serves as
// its own: each listed under its name, with a uid of its own.
func TestObjectsFillServed(t *testing.T) {
	ctx := t.Context()
	s := inProcessBoltObjects(t)
	tg, _, _, stop, err := s.Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ensureNamespace(ctx, tg, nsObjects); err != nil {
		t.Fatal(err)
	}
	c := tg.client(1)
	if _, _, _, err := send(ctx, c, "POST", widgetsURL(tg.URL, nsObjects), jsonHeader, widgetBody(nsObjects, objectName(0), 1, ""), false); err != nil {
		t.Fatal(err)
	}
	stop()
	key, value, err := s.Template(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Fill(ctx, key, value, 1, 40); err != nil {
		t.Fatal(err)
	}
	tg, _, _, stop, err = s.Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var list struct {
		Items []struct {
			Metadata struct{ Name, UID, ResourceVersion string }
		}
	}
	_, body, _, err := send(ctx, tg.client(1), "GET", widgetsURL(tg.URL, nsObjects), jsonHeader, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 40 {
		t.Fatalf("%d widgets listed, want 40", len(list.Items))
	}
	uids := map[string]bool{}
	for i, it := range list.Items {
		if it.Metadata.Name != objectName(i) || uids[it.Metadata.UID] || it.Metadata.UID == "" {
			t.Errorf("item %d: %+v", i, it.Metadata)
		}
		uids[it.Metadata.UID] = true
	}
	// A copy is served by GET and can be updated, as any widget.
	mergeHeader := http.Header{"Content-Type": {"application/merge-patch+json"}, "Accept": {"application/json"}}
	if _, _, _, err := send(ctx, c, "PATCH", widgetsURL(tg.URL, nsObjects)+"/"+objectName(39), mergeHeader, []byte(`{"spec":{"size":5}}`), false); err != nil {
		t.Errorf("patching a copy: %v", err)
	}
}

// TestWatchersCurve runs the watchers curve at two small sizes on
// in-process kapis and the ceiling, and checks its figures and section.
func TestWatchersCurve(t *testing.T) {
	sz := sizes{Conns: 2, Settle: 10 * time.Millisecond,
		Curves: curveSizes{Watchers: []int{5, 20}, WatchersRate: 50, WatchersDuration: 300 * time.Millisecond}}
	ceil := serveHandler(t, "ceiling", newTestCeiling(t, ""))
	ceil.PID = os.Getpid()
	e := &env{Sizes: sz, Logf: t.Logf, Workloads: []string{"watchers"}, Ceiling: ceil,
		Fresh: func() (*target, func(), error) { return newKapi(t), func() {}, nil }}
	var results []*Result
	runCurves(t.Context(), e, func(name string, r *Result) { r.Workload = name; results = append(results, r) }, func(name string, err error) { t.Fatalf("%s: %v", name, err) })
	points := watchersPoints(results)
	if len(points) != 2 {
		t.Fatalf("%d points, want 2", len(points))
	}
	for i, p := range points {
		if p.Watchers != sz.Curves.Watchers[i] || p.Writes != 15 {
			t.Errorf("point %d: %d watchers, %d writes", i, p.Watchers, p.Writes)
		}
		for _, r := range []*Result{p.Kapi, p.Ceiling} {
			if r == nil || r.Lost != 0 || r.Delivered != int64(p.Writes*p.Watchers) || r.ServerCPUSeconds < 0 {
				t.Errorf("%d watchers: %+v", p.Watchers, r)
			}
		}
		if p.WritesPerEvent <= 0 || p.BytesPerEvent < 100 || p.RSSBaseMiB <= 0 {
			t.Errorf("%d watchers: %+v", p.Watchers, p)
		}
	}
	md := curvesMarkdown(results, sz, "docs/figures")
	for _, want := range []string{"## How cost grows: watchers of one collection", "| 20 |", "Server CPU per delivered event", "](docs/figures/watchers-cpu.svg)"} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if err := curvesFigures(t.TempDir(), results); err != nil {
		t.Fatal(err)
	}
}

// TestGrowth checks the curves' words on linearity.
func TestGrowth(t *testing.T) {
	xs := []float64{1000, 10000, 100000, 1000000}
	if got := growth(xs, []float64{2, 20, 200, 2000}, 1000, "u"); !strings.HasPrefix(got, "linear: 2.00 (1k → 10k)") {
		t.Errorf("linear: %s", got)
	}
	if got := growth(xs, []float64{2, 20, 200, 8000}, 1000, "u"); !strings.HasPrefix(got, "linear up to 100k, faster than linearly after") {
		t.Errorf("bent: %s", got)
	}
	if got := flatness(xs, []float64{1, 1, 2, 1}, "ms"); !strings.Contains(got, "2.00× the least (2.00 at 100k") {
		t.Errorf("flatness: %s", got)
	}
	shares := cumShares([]byte("      flat  flat%   sum%        cum   cum%\n     0.10s  1.00%  1.00%      4.50s 45.00%  internal/poll.(*FD).Write\n         0     0%  1.00%      1.20s 12.00%  runtime.gcBgMarkWorker\n"))
	if shares["socket writes"] != 45 || shares["GC"] != 12 {
		t.Errorf("cumShares: %v", shares)
	}
}

// TestCurvesFromJSON redraws the curves' figures and section from a
// run's -json output: CURVES_JSON=a.json,b.json CURVES_OUT=DIR (the
// section goes to DIR/curves.md, the figures beside it). Skipped without
// CURVES_JSON.
func TestCurvesFromJSON(t *testing.T) {
	files, out := os.Getenv("CURVES_JSON"), os.Getenv("CURVES_OUT")
	if files == "" || out == "" {
		t.Skip("CURVES_JSON and CURVES_OUT unset")
	}
	var results []*Result
	for f := range strings.SplitSeq(files, ",") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var run struct {
			Results []*Result `json:"results"`
		}
		if err := json.Unmarshal(data, &run); err != nil {
			t.Fatal(err)
		}
		results = append(results, run.Results...)
	}
	sz := sizes{Conns: 8, Duration: 2 * time.Second, Curves: curveSizes{ObjectsLists: 3}}
	if err := curvesFigures(out, results); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "curves.md"), []byte(curvesMarkdown(results, sz, "docs/figures")), 0o644); err != nil {
		t.Fatal(err)
	}
}
