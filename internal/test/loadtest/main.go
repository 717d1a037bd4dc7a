// Command loadtest drives a Kubernetes-style API server over HTTP and
// measures it against its ceiling: a no-op net/http server writing the same
// response bytes. See doc.go.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	log.SetFlags(log.Ltime)
	if err := mainErr(); err != nil {
		log.Fatal(err)
	}
}

func mainErr() error {
	began := time.Now()
	var (
		serveCeiling = flag.String("serve-ceiling", "", "serve the ceiling on `ADDR` and do nothing else")
		ceilingStore = flag.String("ceiling-store", "", "with -serve-ceiling: serve as the bolt-only server, storing each write's answer in a bolt file in `DIR` first")
		ceilingPG    = flag.String("ceiling-postgres", "", "with -serve-ceiling: serve as the PostgreSQL-only server, storing each write's answer through kapi's PostgreSQL store at `URL` first")
		ceilingFill  = flag.Int("ceiling-postgres-fill", 0, "with -ceiling-postgres: values of ~1 KiB the PostgreSQL-only server stores before it serves, so that its tables hold as many rows as kapi's after a pass's seeding (-small + -large widgets)")
		ceilingEtcd  = flag.String("ceiling-etcd", "", "with -serve-ceiling: serve as the etcd-only server, making each request's etcd requests (as kapi on etcd makes them) on the cluster at `ENDPOINTS` first")
		servePG      = flag.String("serve-postgres", "", "start a throwaway PostgreSQL cluster, write its URL and its postmaster's PID to `FILE`, and wait for a signal to remove it")
		fillPG       = flag.String("fill-postgres", "", "store -fill-objects widgets in the PostgreSQL database at `URL` (kapi's schema), as examples/widgets stores them, and exit")
		fillObjs     = flag.Int("fill-objects", 1000000, "widgets -fill-postgres stores")
		storePID     = flag.String("store-pid", "", "comma-separated `PIDs` of the store's processes (etcd; PostgreSQL's postmaster), each counted with its children: their CPU is reported beside the server's")
		serveKapi    = flag.String("serve-kapi", "", "serve an in-memory kapi whose widgets count their JSON encodes on `ADDR` and do nothing else")

		server    = flag.String("server", "", "base `URL` of the API server to drive; empty: build and start examples/widgets (memory backend), the ceiling and a counting kapi")
		serverPID = flag.Int("server-pid", 0, "`PID` of the -server process, for its CPU and RSS (local servers only)")
		ceilURL   = flag.String("ceiling", "", "base `URL` of a ceiling (-serve-ceiling) to measure -server against")
		ceilPID   = flag.Int("ceiling-pid", 0, "`PID` of the -ceiling process, for its CPU and RSS")
		onlyURL   = flag.String("store-only", "", "base `URL` of a server making only the store's requests (-serve-ceiling -ceiling-etcd), measured beside -server in GET and the writes")
		onlyName  = flag.String("store-only-name", etcdOnlyName, "what the -store-only server's rows are called")
		onlyPID   = flag.Int("store-only-pid", 0, "`PID` of the -store-only process, for its CPU and RSS")
		caFile    = flag.String("ca", "", "PEM `file` of the CA that signed the server's certificate (https)")
		certFile  = flag.String("cert", "", "PEM `file` of the client certificate")
		keyFile   = flag.String("key", "", "PEM `file` of the client certificate's key")

		workloads = flag.String("workloads", "", "comma-separated workloads to run (default all): "+strings.Join(allWorkloads, ","))
		duration  = flag.Duration("duration", 2*time.Second, "how long each round of a request workload runs, per server")
		rounds    = flag.Int("rounds", 3, "rounds of each request workload, kapi and the ceiling in turn; the best round of each is reported")
		conns     = flag.Int("conns", 8, "keep-alive connections of each request workload")
		rate      = flag.Float64("rate", 0, "offered `requests/s` of each request workload; 0: as fast as the connections go")
		small     = flag.Int("small", 500, "widgets in the small LIST")
		large     = flag.Int("large", 10000, "widgets in the large LIST and the informers' namespace")
		watchers  = flag.Int("watchers", 1000, "watchers of the fan-out")
		fewWatch  = flag.Int("small-watchers", 300, "watchers of the smaller fan-out (watch-small)")
		etcdBin   = flag.String("etcd-bin", os.Getenv("ETCD_BIN"), "the etcd `binary` the default run and the objects curve start (default $ETCD_BIN; empty: built from internal/test/robustness's version)")
		noEtcd    = flag.Bool("no-etcd", false, "start no etcd in the default run: the workloads on etcd are left out")
		watchRate = flag.Float64("watch-rate", 50, "writes/s during the fan-out")
		watchDur  = flag.Duration("watch-duration", 6*time.Second, "how long the fan-out's writer writes")
		informers = flag.Int("informers", 100, "streaming lists started at once, as informers start them (the wire only: no client-go)")
		fewInf    = flag.Int("small-informers", 8, "streaming lists started at once in the small informer start")
		infFresh  = flag.Bool("informers-fresh", false, "write a widget of the informers' namespace before each of kapi's informer-start rounds, so that none starts at a state a round before it saw")
		fewInfObj = flag.Int("small-informer-objects", 1000, "widgets of the small informer start, in a namespace of their own")
		clientGo  = flag.Int("client-go-informers", 10, "client-go dynamic informers started at once (their decoding makes the client the bottleneck: ~80µs of CPU per widget)")
		memObjs   = flag.Int("memory-objects", 100000, "widgets the memory workload loads")
		idle      = flag.Int("idle-watchers", 1000, "watchers of the idle-watcher workload")
		kindsList = flag.String("kinds", "10,30,100,300,1000", "comma-separated numbers of kinds the kinds workload registers, each on a fresh control plane")
		figures   = flag.String("figures", "", "draw the figures of the curves measured (the kinds, objects and watchers workloads') as SVG files in `DIR` (e.g. docs/figures)")
		objsList  = flag.String("objects", "1000,10000,100000,1000000", "comma-separated sizes the objects workload grows one collection to, in turn")
		objStores = flag.String("objects-stores", "bolt,etcd", "comma-separated stores of the objects workload: bolt, etcd")
		objLists  = flag.Int("objects-lists", 5, "LISTs of the whole collection at least, at each size of the objects workload")
		etcdMax   = flag.Int("objects-etcd-max", 0, "the largest size of the objects workload measured on etcd; 0: all")
		wCurve    = flag.String("watchers-curve", "100,300,1000,3000,10000", "comma-separated numbers of watchers of the watchers workload, each on a fresh kapi")
		wCurveRt  = flag.Float64("watchers-curve-rate", 5, "writes/s during each point of the watchers workload")
		wCurveDur = flag.Duration("watchers-curve-duration", 10*time.Second, "how long the writer writes at each point of the watchers workload")

		jsonOut    = flag.String("json", "", "write the results as JSON to `file` (- for stdout)")
		cpuProfile = flag.String("cpuprofile", "", "write this process's CPU profile to `file`: the harness's (is the client the bottleneck?) or a -serve-ceiling server's")
		report     = flag.String("report", "", "write the report, in Markdown, to `file` (e.g. BENCHMARKS.md); profiles the server on every missed target")
	)
	flag.Parse()
	if err := setStorePIDs(*storePID); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Before the servers too: the PostgreSQL-only server's profile is
	// compared with kapi's.
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	switch {
	case *servePG != "":
		return servePostgres(ctx, *servePG)
	case *fillPG != "":
		return fillPostgres(ctx, *fillPG, *fillObjs)
	case *serveCeiling != "" && *ceilingPG != "":
		h, stopCeiling, err := newPostgresCeiling(ctx, *ceilingPG, *ceilingFill)
		if err != nil {
			return err
		}
		defer stopCeiling()
		return serve(ctx, *serveCeiling, h)
	case *serveCeiling != "" && *ceilingEtcd != "":
		h, stopCeiling, err := newEtcdCeiling(*ceilingEtcd)
		if err != nil {
			return err
		}
		defer stopCeiling()
		return serve(ctx, *serveCeiling, h)
	case *serveCeiling != "":
		h, stopCeiling, err := newCeiling(*ceilingStore)
		if err != nil {
			return err
		}
		defer stopCeiling()
		return serve(ctx, *serveCeiling, h)
	case *serveKapi != "":
		h, closeAPI, err := newCountingKapi()
		if err != nil {
			return err
		}
		defer closeAPI()
		return serve(ctx, *serveKapi, h)
	}

	curve, err := parseInts(*kindsList)
	if err != nil {
		return fmt.Errorf("-kinds: %w", err)
	}
	curves, err := parseCurves(*objsList, *wCurve, *objLists, *wCurveRt, *wCurveDur)
	if err != nil {
		return err
	}
	sz := sizes{
		Small: *small, Large: *large, Watchers: *watchers, SmallWatchers: *fewWatch, WatchRate: *watchRate, WatchDuration: *watchDur,
		Informers: *informers, SmallInformers: *fewInf, SmallInformerObjects: *fewInfObj, ClientGoInformers: *clientGo, MemoryObjects: *memObjs, IdleWatchers: *idle,
		Duration: *duration, Conns: *conns, Rate: *rate, InformerExpiry: 3 * time.Minute, InformersFresh: *infFresh, Settle: time.Second, Rounds: *rounds,
		KindsCurve: curve, Curves: curves,
	}
	e := &env{Sizes: sz}
	if *workloads != "" {
		e.Workloads = strings.Split(*workloads, ",")
		for _, w := range e.Workloads {
			if !contains(allWorkloads, w) && !contains(curveWorkloads, w) {
				return fmt.Errorf("no workload %q; there are %s", w, strings.Join(append(allWorkloads, curveWorkloads...), ", "))
			}
		}
	}
	var local *localServers
	if *server == "" {
		var err error
		if local, err = startLocal(ctx); err != nil {
			return err
		}
		defer local.stop()
		e.Kapi, e.Ceiling, e.Counting, e.Fresh, e.FreshCeiling = local.kapi, local.ceiling, local.counting, local.fresh, local.freshCeiling
		e.Bolt, e.BoltOnly = local.freshBolt, local.freshBoltOnly
		e.ControlPlane = local.freshControlPlane
		e.FreshUncapped = local.freshUncapped
		e.ObjectStores = local.objectStores(strings.Split(*objStores, ","), *etcdBin, *etcdMax)
		if !*noEtcd && e.wantsEtcd() {
			if err := local.startEtcd(ctx, *etcdBin); err != nil {
				return fmt.Errorf("kapi on etcd (-no-etcd leaves it out): %w", err)
			}
			e.Etcd, e.EtcdOnly = local.etcd, local.etcdOnly
		}
	} else {
		tlsc, err := tlsConfig(*caFile, *certFile, *keyFile)
		if err != nil {
			return err
		}
		e.Kapi = &target{Name: "kapi", URL: strings.TrimSuffix(*server, "/"), PID: *serverPID, TLS: tlsc}
		if *ceilURL != "" {
			e.Ceiling = &target{Name: "ceiling", URL: strings.TrimSuffix(*ceilURL, "/"), PID: *ceilPID}
		}
		if *onlyURL != "" {
			if !isStoreOnly(*onlyName) {
				return fmt.Errorf("-store-only-name %q: it must end in -only", *onlyName)
			}
			e.StoreOnly = &target{Name: *onlyName, URL: strings.TrimSuffix(*onlyURL, "/"), PID: *onlyPID}
		}
	}

	loadBefore := loadAverage()
	started := time.Now()
	results, runErr := run(ctx, e)
	elapsed := time.Since(started)
	setupTime := started.Sub(began)
	fmt.Println()
	fmt.Print(table(results))
	verdicts := judge(results, sz)
	fmt.Println()
	fmt.Print(targetsTable(verdicts))

	if *figures != "" {
		if err := kindsFigures(*figures, kindsPoints(results)); err != nil {
			return err
		}
		if err := curvesFigures(*figures, results); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		data, err := json.MarshalIndent(struct {
			Results []*Result `json:"results"`
			Targets []verdict `json:"targets"`
		}{results, verdicts}, "", "  ")
		if err != nil {
			return err
		}
		data = append(data, '\n')
		if *jsonOut == "-" {
			os.Stdout.Write(data)
		} else if err := os.WriteFile(*jsonOut, data, 0o644); err != nil {
			return err
		}
	}
	if *report != "" {
		var profiles []profile
		if local != nil {
			profiles = local.profileMissed(ctx, e, verdicts)
		}
		// The whole run: the builds and start-ups, the workloads and the
		// profiles.
		total := time.Since(began)
		md := markdown(reportInput{
			Command:    "go run ./internal/test/loadtest " + strings.Join(os.Args[1:], " "),
			LoadBefore: loadBefore, LoadAfter: loadAverage(),
			Results: results, Verdicts: verdicts, Sizes: sz, Elapsed: elapsed, Setup: setupTime, Total: total, Profiles: profiles, RunErr: runErr,
			Figures: figuresFromReport(*figures, *report),
		})
		if err := os.WriteFile(*report, []byte(keepHandWritten(md, *report)), 0o644); err != nil {
			return err
		}
		log.Printf("wrote %s", *report)
	}
	return runErr
}

// figuresFromReport is the figures' directory as a path from the report's,
// for its links; empty if there are none.
func figuresFromReport(figures, report string) string {
	if figures == "" {
		return ""
	}
	rel, err := filepath.Rel(filepath.Dir(report), figures)
	if err != nil {
		return figures
	}
	return filepath.ToSlash(rel)
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(list string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// serve serves h on addr until ctx ends.
func serve(ctx context.Context, addr string, h http.Handler) error {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// ListenAndServe returns once Shutdown starts: the handlers under way
	// (a bolt-only server's writes) finish before the caller releases
	// what they use.
	<-stopped
	return nil
}
