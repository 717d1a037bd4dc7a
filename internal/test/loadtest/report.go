package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// pair finds the kapi and ceiling results of a workload.
func pair(results []*Result, workload string) (kapi, ceiling *Result) {
	for _, r := range results {
		if r.Workload != workload {
			continue
		}
		switch {
		case r.Server == "ceiling":
			ceiling = r
		case isStoreOnly(r.Server):
		case kapi == nil:
			kapi = r // the first kapi row; a counting server's comes later
		}
	}
	return kapi, ceiling
}

// boltOnlyName is the bolt-only server's (see ceiling.store).
const boltOnlyName = "bolt-only"

// isStoreOnly says whether a server of that name makes only its store's
// requests (bolt-only, etcd-only): the ceiling storing first.
func isStoreOnly(server string) bool { return strings.HasSuffix(server, "-only") }

// storeOnlyOf finds the bolt-only or etcd-only server's result of a
// workload.
func storeOnlyOf(results []*Result, workload string) *Result {
	for _, r := range results {
		if r.Workload == workload && isStoreOnly(r.Server) {
			return r
		}
	}
	return nil
}

// storeOnlyNote says where the bolt-only or etcd-only server stands
// between the ceiling and kapi.
func storeOnlyNote(only, kapi, ceiling *Result) string {
	return fmt.Sprintf("the %s server %.0f req/s, %.0f%% of the ceiling's; kapi %.0f%% of the %s server's",
		only.Server, only.RequestsPerSec, 100*ratio(only.RequestsPerSec, ceiling.RequestsPerSec), 100*ratio(kapi.RequestsPerSec, only.RequestsPerSec), only.Server)
}

// table is the results as a plain-text table: one row per workload, kapi
// beside the ceiling.
func table(results []*Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-18s %-9s %10s %10s %9s %9s %9s %10s %9s %9s  %s\n",
		"workload", "server", "req/s", "MB/s", "p50 ms", "p99 ms", "p99.9 ms", "cpu s/1k", "rss peak", "rss end", "÷ ceiling / notes")
	for _, r := range results {
		kapi, ceil := pair(results, r.Workload)
		note := ""
		if r == kapi && ceil != nil && ceil.RequestsPerSec > 0 {
			note = fmt.Sprintf("%.0f%% req/s, %.0f%% bytes/s", 100*ratio(r.RequestsPerSec, ceil.RequestsPerSec), 100*ratio(r.BytesPerSec, ceil.BytesPerSec))
		}
		if isStoreOnly(r.Server) && kapi != nil && ceil != nil {
			note = storeOnlyNote(r, kapi, ceil)
		}
		if r.Watchers > 0 && r.Events >= 0 && r.Workload == "watch" {
			note = fmt.Sprintf("%d watchers × %d events, delivered %d, lost %d", r.Watchers, r.Events, r.Delivered, r.Lost)
			if r.EncodesPerEvent > 0 {
				note += fmt.Sprintf(", %.2f JSON encodes/write (%.2f for the watchers)", r.EncodesPerEvent, r.WatchEncodesPerEvent)
			}
		}
		if r.Workload == "idle-watchers" {
			note = fmt.Sprintf("%d idle watchers: %.1f KiB each (RSS %.1f → %.1f MiB)", r.Watchers, r.IdleWatcherKiB, r.RSSBaseMiB, r.RSSEndMiB)
		}
		if r.Workload == "informers" || r.Workload == "informers-small" {
			note = fmt.Sprintf("%d streaming lists × %d widgets, all at the initial-events-end bookmark in %s (the quickest of %d rounds)", r.Informers, r.Objects, seconds(r.SyncSeconds), r.Rounds)
			if r == kapi && ceil != nil {
				note += fmt.Sprintf(" (%.2f× the ceiling's time)", ratio(r.SyncSeconds, ceil.SyncSeconds))
			}
		}
		if r.Workload == "informers-client-go" {
			note = fmt.Sprintf("%d client-go informers × %d widgets synced in %.2f s", r.Informers, r.Objects, r.SyncSeconds)
		}
		if r.Kinds != nil {
			note = r.Kinds.note()
		}
		if n := curveNote(r); n != "" {
			note = n
		}
		if typed := pairOf(results, strings.TrimSuffix(r.Workload, customSuffix)); r == kapi && typed != nil && typed != r && typed.RequestsPerSec > 0 {
			note += fmt.Sprintf("; %.0f%% of the typed widget's req/s", 100*ratio(r.RequestsPerSec, typed.RequestsPerSec))
		}
		if r.Workload == "memory" || r.Workload == "memory"+customSuffix {
			note = fmt.Sprintf("%d widgets, %.1f MiB of JSON: RSS %.1f → %.1f MiB, growth %.2f× the JSON", r.Objects, mib(r.JSONBytes), r.RSSBaseMiB, r.RSSEndMiB, r.RSSPerJSON)
			if r.HeapEndMiB > 0 {
				note += fmt.Sprintf("; live heap %.1f → %.1f MiB, growth %.2f× the JSON", r.HeapBaseMiB, r.HeapEndMiB, r.HeapPerJSON)
			}
		}
		if r.StoreCPUSeconds > 0 && r.Requests > 0 {
			note += fmt.Sprintf("; CPU per request: server %.0f µs + store %.0f µs", 1e6*r.ServerCPUSeconds/float64(r.Requests), 1e6*r.StoreCPUSeconds/float64(r.Requests))
		}
		if r.Errors > 0 {
			note += fmt.Sprintf(" %d errors: %s", r.Errors, r.FirstError)
		}
		server := r.Server
		if r.EncodeNote != "" {
			server = "counting" // the kapi of -serve-kapi
		}
		fmt.Fprintf(&b, "%-18s %-9s %10s %10s %9s %9s %9s %10s %9s %9s  %s\n",
			r.Workload, server, num(r.RequestsPerSec, "%.0f"), num(r.BytesPerSec/1e6, "%.1f"),
			num(r.P50ms, "%.2f"), num(r.P99ms, "%.2f"), num(r.P999ms, "%.2f"),
			num(r.CPUSecPer1k, "%.3f"), num(r.RSSPeakMiB, "%.0f"), num(r.RSSEndMiB, "%.0f"), note)
	}
	return b.String()
}

// seconds is a duration in seconds as s or, under one, ms.
func seconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.1f ms", 1e3*s)
	}
	return fmt.Sprintf("%.2f s", s)
}

func num(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// verdict is one of the targets, met or missed.
type verdict struct {
	Target   string  `json:"target"`
	Measured string  `json:"measured"`
	Met      bool    `json:"met"`
	Workload string  `json:"workload"` // whose profile explains a miss
	Value    float64 `json:"value"`
	Limit    float64 `json:"limit"`
}

// ratio is a/b, or 0 when b is 0 (JSON has no infinity).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// judge checks the results against issue 16's targets (which tightened
// issue 7's), those the harness measures. A target whose workload did not
// run is left out.
func judge(results []*Result, sz sizes) []verdict {
	var vs []verdict
	atLeast := func(target, workload string, value, limit float64, measured string) {
		vs = append(vs, verdict{Target: target, Measured: measured, Met: value >= limit, Workload: workload, Value: value, Limit: limit})
	}
	atMost := func(target, workload string, value, limit float64, measured string) {
		vs = append(vs, verdict{Target: target, Measured: measured, Met: value <= limit, Workload: workload, Value: value, Limit: limit})
	}
	// Each request workload against its own ceiling: the same requests
	// answered with the bytes kapi sent.
	for _, t := range []struct {
		workload, name string
		limit          float64
		bytes          bool
	}{
		{"get", "GET", 0.80, false},
		{"list-large-json", fmt.Sprintf("LIST %d JSON", sz.Large), 0.60, true},
		{"list-large-json-2", fmt.Sprintf("LIST %d JSON", sz.Large), 0.60, true},
		{"list-huge-json", fmt.Sprintf("LIST %d JSON over 16 MiB", sz.Large), 0.70, true},
		{"list-huge-json-2", fmt.Sprintf("LIST %d JSON over 16 MiB", sz.Large), 0.70, true},
		{"list-writes-json", fmt.Sprintf("LIST %d JSON, %d writes/s", sz.Large, listWriterRate), 0.70, true},
		{"list-writes-json-2", fmt.Sprintf("LIST %d JSON, %d writes/s", sz.Large, listWriterRate), 0.70, true},
		{"list-small-proto", fmt.Sprintf("LIST %d protobuf", sz.Small), 0.80, true},
		{"list-large-proto", fmt.Sprintf("LIST %d protobuf", sz.Large), 0.80, true},
		{"create", "CREATE (memory)", 0.40, false},
		{"create-bolt", fmt.Sprintf("CREATE (bolt, %d writers)", boltWriters), 0.25, false},
		{"update", "PUT", 0.35, false},
		{"patch", "merge PATCH", 0.35, false},
		{"apply", "server-side apply", 0.25, false},
	} {
		k, c := pair(results, t.workload)
		if k == nil || c == nil {
			continue
		}
		if t.bytes {
			q := ratio(k.BytesPerSec, c.BytesPerSec)
			atLeast(fmt.Sprintf("%s ≥ %.0f%% of its ceiling's bytes/s (%d connections)", t.name, 100*t.limit, k.Conns), t.workload, q, t.limit,
				fmt.Sprintf("%.0f%% (%.0f vs %.0f MB/s)", 100*q, k.BytesPerSec/1e6, c.BytesPerSec/1e6))
			continue
		}
		q := ratio(k.RequestsPerSec, c.RequestsPerSec)
		cpu := ""
		if c.CPUSecPer1k > 0 {
			cpu = fmt.Sprintf("; server CPU per request %.1f× the ceiling's", ratio(k.CPUSecPer1k, c.CPUSecPer1k))
		}
		only := storeOnlyOf(results, t.workload)
		if only != nil {
			cpu += "; " + storeOnlyNote(only, k, c)
		}
		atLeast(fmt.Sprintf("%s ≥ %.0f%% of its ceiling's requests/s", t.name, 100*t.limit), t.workload, q, t.limit,
			fmt.Sprintf("%.0f%% (%.0f vs %.0f req/s%s)", 100*q, k.RequestsPerSec, c.RequestsPerSec, cpu))
		if only != nil && only.Server == etcdOnlyName {
			// kapi on etcd: its writes against the etcd-only server's, its
			// consistent GET against the ceiling.
			name := strings.TrimSuffix(t.name, " (memory)")
			if t.workload == "get" {
				atLeast(name+" on etcd ≥ 60% of its ceiling's requests/s", t.workload, q, 0.60,
					fmt.Sprintf("%.0f%% (%.0f vs %.0f req/s)", 100*q, k.RequestsPerSec, c.RequestsPerSec))
				continue
			}
			q := ratio(k.RequestsPerSec, only.RequestsPerSec)
			atLeast(name+" on etcd ≥ 75% of the etcd-only server's requests/s", t.workload, q, 0.75,
				fmt.Sprintf("%.0f%% (%.0f vs %.0f req/s)", 100*q, k.RequestsPerSec, only.RequestsPerSec))
		}
	}
	// Informers starting: the time until every client is at its
	// initial-events-end bookmark, against the ceiling replaying kapi's
	// streaming list.
	for _, w := range []string{"informers-small", "informers"} {
		k, c := pair(results, w)
		if k == nil || c == nil {
			continue
		}
		q := ratio(k.SyncSeconds, c.SyncSeconds)
		cpu := ""
		if c.CPUSecPer1k > 0 {
			cpu = fmt.Sprintf("; server CPU per streaming list %.1f× the ceiling's", ratio(k.CPUSecPer1k, c.CPUSecPer1k))
		}
		atMost(fmt.Sprintf("informer start: %d clients × %d widgets at the bookmark in ≤ 1.5× the ceiling's time", k.Informers, k.Objects), w, q, 1.5,
			fmt.Sprintf("%.2f× (%s vs %s%s)", q, seconds(k.SyncSeconds), seconds(c.SyncSeconds), cpu))
	}
	var watchKapi, watchCeiling, counting *Result
	for _, r := range results {
		if r.Workload == "watch" && r.EncodesPerEvent > 0 {
			counting = r
		}
		if r.Workload == "watch" && r.EncodesPerEvent == 0 {
			switch {
			case r.Server == "ceiling":
				watchCeiling = r
			case watchKapi == nil:
				watchKapi = r
			}
		}
	}
	if k := watchKapi; k != nil {
		atMost("WATCH: 0 events lost", "watch", float64(k.Lost), 0, fmt.Sprintf("%d lost of %d×%d", k.Lost, k.Watchers, k.Events))
		if c := watchCeiling; c != nil && k.CPUSecPer1k > 0 && c.CPUSecPer1k > 0 {
			// CPU per 1,000 writes, each delivered to every watcher.
			q := ratio(k.CPUSecPer1k/float64(k.Watchers), c.CPUSecPer1k/float64(c.Watchers))
			atMost(fmt.Sprintf("WATCH: server CPU per delivered event ≤ 1.3× the ceiling's (%d watchers × %.0f events/s)", k.Watchers, k.Rate), "watch", q, 1.3,
				fmt.Sprintf("%.2f× (%.1f vs %.1f µs per event delivered)", q, 1e3*k.CPUSecPer1k/float64(k.Watchers), 1e3*c.CPUSecPer1k/float64(c.Watchers)))
		}
	}
	if c := counting; c != nil {
		atMost("WATCH: one encode per event per media type", "", c.WatchEncodesPerEvent, 1,
			fmt.Sprintf("%.2f JSON encodes per event for %d watchers (%.2f per write in all)", c.WatchEncodesPerEvent, c.Watchers, c.EncodesPerEvent))
	}
	for _, r := range results {
		if r.Workload == "memory" {
			atMost(fmt.Sprintf("memory: %d widgets in ≤ 3× their JSON (RSS growth, default GC settings)", r.Objects), "memory", r.RSSPerJSON, 3,
				fmt.Sprintf("%.2f× (%.0f MiB of RSS for %.0f MiB of JSON)", r.RSSPerJSON, r.RSSEndMiB-r.RSSBaseMiB, mib(r.JSONBytes)))
			if r.HeapEndMiB > 0 {
				atMost(fmt.Sprintf("memory: %d widgets in ≤ 1.5× their JSON (live heap growth after a forced GC)", r.Objects), "memory", r.HeapPerJSON, 1.5,
					fmt.Sprintf("%.2f× (%.0f MiB of live heap for %.0f MiB of JSON)", r.HeapPerJSON, r.HeapEndMiB-r.HeapBaseMiB, mib(r.JSONBytes)))
			}
		}
	}
	vs = append(vs, customTargets(results)...)
	return append(vs, kindsTargets(results)...)
}

func targetsTable(vs []verdict) string {
	var b strings.Builder
	for _, v := range vs {
		mark := "MET   "
		if !v.Met {
			mark = "MISSED"
		}
		fmt.Fprintf(&b, "%s  %-62s %s\n", mark, v.Target, v.Measured)
	}
	return b.String()
}

type reportInput struct {
	LoadBefore, LoadAfter string // load averages
	Command               string
	Results               []*Result
	Verdicts              []verdict
	Sizes                 sizes
	Elapsed               time.Duration
	Profiles              []profile
	RunErr                error
	// Figures is where the figures were drawn (-figures), relative to the
	// report; empty: none.
	Figures string
}

// machine describes the machine in one line.
func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	goVersion := runtime.Version()
	if out, err := exec.Command("go", "version").Output(); err == nil {
		goVersion = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("%s, %d cores (GOMAXPROCS %d), %s/%s, %s", model, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, goVersion)
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// markdown is BENCHMARKS.md.
func markdown(in reportInput) string {
	var b strings.Builder
	sz := in.Sizes
	fmt.Fprintf(&b, "# kapi against its ceiling\n\n")
	fmt.Fprintf(&b, "Generated by the load harness (`internal/test/loadtest`) on %s in %s; regenerate with\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), in.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", in.Command)
	fmt.Fprintf(&b, "**Machine**: %s. The harness, kapi and the ceiling share it: every figure is what a server got with the client busy on the same cores, and both servers are measured the same way, one after the other, never at once. The machine is shared with other work too: its load average (1, 5, 15 min) was %s before the run and %s after, so the figures are noisy, and a ratio near a target's line can fall either side of it from one run to the next.\n\n", machine(), in.LoadBefore, in.LoadAfter)
	fmt.Fprintf(&b, "**Servers**: *kapi* is `examples/widgets` (memory backend), built and started as its own process; *ceiling* is `go run ./internal/test/loadtest -serve-ceiling ADDR`, a no-op `net/http` server answering every request with the status, headers and body recorded from kapi for that workload (for LIST the same pre-concatenated bytes; for WATCH one pre-encoded frame, written after each write by every watcher's own handler goroutine, woken by one shared channel as kapi's watchers are: a first version with one loop writing to all connections was far slower than kapi, p99 4 s, so it was no ceiling). ")
	fmt.Fprintf(&b, "*kapi on bolt* (the CREATE with %d writers) is the same example with `-data DIR` in a temporary directory on the machine's disk, started for it alone; its ceiling replays its own CREATE response. Beside them runs the *bolt-only* server (`-serve-ceiling` with `-ceiling-store DIR`, a directory of its own on the same disk): the ceiling again, but each CREATE first stores the answer it replays (the created object, as kapi stores it) under a key of its own in kapi's bolt store, and is answered once that is on disk: what kapi on bolt would do if its own request handling cost nothing. For informers starting, the ceiling replays the whole response kapi sent to one streaming list, recorded once (every ADDED frame and the initial-events-end bookmark), written in one go to each client and the watch then held open. ", boltWriters)
	fmt.Fprintf(&b, "Idle watchers are measured on a fresh kapi and a fresh ceiling each. Encodes per event come from a third process, `-serve-kapi` (the row *counting*): kapi with a widget type that counts its JSON encodes (the example server exposes no such counter), measured with no watcher and then with all of them: the difference is the watchers' share.\n\n")
	fmt.Fprintf(&b, "**Workloads**: widgets of about 1 KiB of JSON as the server returns them (labels, ports, a selector and their managedFields); %d keep-alive connections, closed loop, %d rounds of %s per workload and server, kapi and the ceiling in turn, the best round of each reported (a stall of the shared machine hits one round, not the figure)", sz.Conns, max(sz.Rounds, 1), sz.Duration)
	if sz.Rate > 0 {
		fmt.Fprintf(&b, " at an offered %.0f requests/s", sz.Rate)
	}
	fmt.Fprintf(&b, "; no compression asked (`Accept-Encoding` unset). LIST small = %d widgets, large = %d; the large LIST in JSON runs again over %d connections (*list-large-json-2*). Where the whole-collection list kept from the last one cannot serve as it is, the large LIST in JSON runs with a writer merge-patching one of its widgets at %d/s beside it, against kapi only (*list-writes-json*, and over %d connections *list-writes-json-2*), and a LIST of %d widgets of about 1.9 KB (an annotation of %d bytes each: over 16 MiB in all) runs as *list-huge-json* and *list-huge-json-2*. CREATE on bolt (*create-bolt*) runs over %d connections whatever the others use. UPDATE is a PUT carrying the last resourceVersion (each connection its own widget), PATCH a merge patch, apply a server-side apply (`application/apply-patch+yaml`, `fieldManager=loadtest`, `force=true`) of the whole widget. ", sz.Small, sz.Large, listFewConns, listWriterRate, listFewConns, sz.Large, hugePadding, boltWriters)
	smallStart, _ := streamingWorkload("informers-small", sz)
	fmt.Fprintf(&b, "WATCH: %d watchers (JSON) while one writer merge-patches at %.0f/s for %s; latency is from the write's acknowledgement to each watcher's receipt, and every watcher must see every write's resourceVersion in order. Informers: streaming lists (the request client-go's informers send: `sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&watch=true`) started at once, %d on %d widgets in a namespace of their own (*informers-small*) and %d on the %d widgets of the large LIST (*informers*), each read to its initial-events-end bookmark without decoding, since client-go's own decoding costs the client ~80 µs of CPU per widget (100 × 10,000 would be minutes of the client's CPU on this machine, measuring client-go, not the server); the time until the last is there, %d rounds (%d of the small start, a few tens of milliseconds each), kapi and the ceiling in turn, the quickest of each, and the server's CPU per streaming list over all rounds; then %d real client-go dynamic informers at once on the large LIST's widgets. Memory: %d widgets loaded into a fresh server, then listed once (so each one's JSON is cached), RSS growth compared with the JSON the server returned for them, and so is the growth of the live heap (`HeapAlloc` from `/debug/pprof/heap?gc=1&debug=1`, right after a forced GC) from before the load to after it. Idle watchers: RSS growth for %d watches on an empty namespace.\n\n",
		sz.Watchers, sz.WatchRate, sz.WatchDuration, sz.SmallInformers, sz.SmallInformerObjects, sz.Informers, sz.Large, max(sz.Rounds, 1), smallStart.Rounds, sz.ClientGoInformers, sz.MemoryObjects, sz.IdleWatchers)

	fmt.Fprintf(&b, "## Targets\n\nThose the harness measures (allocation budgets are Go benchmarks, not here).\n\n| target | measured | |\n|---|---|---|\n")
	for _, v := range in.Verdicts {
		mark := "met"
		if !v.Met {
			mark = "**missed**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", v.Target, v.Measured, mark)
	}
	if in.RunErr != nil {
		fmt.Fprintf(&b, "\nWorkloads that failed:\n\n```\n%v\n```\n", in.RunErr)
	}

	fmt.Fprintf(&b, "\n## Results\n\nLatency is per request (for WATCH, delivery); server CPU is user+system seconds of the server's process per 1,000 requests (for WATCH, per 1,000 writes); RSS in MiB.\n\n")
	fmt.Fprintf(&b, "| workload | server | req/s | MB/s | p50 ms | p99 ms | p99.9 ms | CPU s/1k | RSS peak | RSS end | kapi ÷ ceiling, notes |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, line := range strings.Split(strings.TrimSpace(table(in.Results)), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		note := strings.Join(f[10:], " ")
		fmt.Fprintf(&b, "| %s | %s |\n", strings.Join(f[:10], " | "), note)
	}

	b.WriteString(kindsMarkdown(kindsPoints(in.Results), in.Figures))
	b.WriteString(curvesMarkdown(in.Results, in.Sizes, in.Figures))
	if len(in.Profiles) > 0 {
		fmt.Fprintf(&b, "\n## Profiles of the missed targets\n\nTaken by the same command: kapi (`-pprof`) profiled while the workload ran again for 10 s (informers: streaming lists started again and again; memory: the heap after loading; a bolt workload: a fresh kapi on bolt).\n")
		for _, p := range in.Profiles {
			fmt.Fprintf(&b, "\n### %s\n\n", p.Target)
			if p.Err != "" {
				fmt.Fprintf(&b, "No profile: %s\n", p.Err)
				continue
			}
			fmt.Fprintf(&b, "`%s`\n\n```\n%s```\n", p.Command, p.Top)
		}
	}
	return b.String()
}

// handWritten marks where the measurements made by hand begin in a report
// file (BENCHMARKS.md): Go benchmarks and tests the harness does not run.
// Rewriting the report keeps them.
const handWritten = "<!-- hand-written: the load harness keeps everything below this line when it rewrites the file -->"

// keepHandWritten is md followed by the hand-written part of the report
// file it replaces, if that has one.
func keepHandWritten(md, file string) string {
	old, err := os.ReadFile(file)
	if err != nil {
		return md
	}
	if i := strings.Index(string(old), handWritten); i >= 0 {
		return strings.TrimRight(md, "\n") + "\n\n" + string(old[i:])
	}
	return md
}
