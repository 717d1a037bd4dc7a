package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/internal/test/loadtest/plot"
)

// The curves of BENCHMARKS.md's "How cost grows" beside the kinds one:
// objects in one collection (objects.go) and watchers of one collection
// (watchers.go). Each is a workload of its own, run when named or when
// every workload runs, and drawn with the plot package.

// curveWorkloads are the curves' workloads (not in allWorkloads: TestRun
// runs those, and the curves have tests of their own).
var curveWorkloads = []string{"objects", "watchers"}

// curveSizes are the curves' sizes.
type curveSizes struct {
	// Objects: the sizes of the collection, grown in turn, in each of
	// ObjectStores; at least ObjectsLists LISTs at each.
	Objects      []int
	ObjectsLists int
	// Watchers: the numbers of watchers, each on a fresh kapi, the
	// writer writing at WatchersRate for WatchersDuration.
	Watchers         []int
	WatchersRate     float64
	WatchersDuration time.Duration
}

// runCurves runs the curves e wants.
func runCurves(ctx context.Context, e *env, add func(string, *Result), fail func(string, error)) {
	sz := e.Sizes
	if e.wants("objects") && e.ObjectStores != nil && len(sz.Curves.Objects) > 0 {
		stores, err := e.ObjectStores(ctx)
		if err != nil {
			fail("objects", err)
		}
		for _, s := range stores {
			points, err := runObjects(ctx, s, sz, e.logf)
			s.Close()
			for _, p := range points {
				add("objects", &Result{Server: "kapi", Objects: p.Objects, RSSEndMiB: p.RSSMiB, P50ms: p.ListP50Ms, P99ms: p.ListP99Ms, ObjectsCurve: p})
			}
			if err != nil {
				fail("objects", err)
			}
		}
	}
	fresh := e.FreshUncapped
	if fresh == nil {
		fresh = e.Fresh
	}
	if e.wants("watchers") && fresh != nil && len(sz.Curves.Watchers) > 0 {
		points, err := runWatchersCurve(ctx, fresh, e.Ceiling, sz, e.logf)
		for _, p := range points {
			r := *p.Kapi
			r.WatchersCurve = p
			add("watchers", &r)
		}
		if err != nil {
			fail("watchers", err)
		}
	}
}

// curveNote is the results table's note of a curve's point; "" for other
// results.
func curveNote(r *Result) string {
	switch {
	case r.ObjectsCurve != nil:
		return r.ObjectsCurve.note()
	case r.WatchersCurve != nil:
		return r.WatchersCurve.note()
	}
	return ""
}

// curvesFigures draws the curves' figures into dir.
func curvesFigures(dir string, results []*Result) error {
	charts := map[string]plot.Chart{}
	if points := objectsPoints(results); len(points) > 0 {
		for file, c := range objectsCharts(points) {
			charts[file] = c
		}
	}
	if points := watchersPoints(results); len(points) > 0 {
		for file, c := range watchersCharts(points) {
			charts[file] = c
		}
	}
	if len(charts) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for file, c := range charts {
		if len(c.Series) == 0 {
			continue // nothing measured to draw (an in-process server's RSS growth)
		}
		svg, err := c.SVG()
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), svg, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// byStore groups the objects points by store, in the order first seen.
func byStore(points []*ObjectsPoint) (names []string, by map[string][]*ObjectsPoint) {
	by = map[string][]*ObjectsPoint{}
	for _, p := range points {
		if by[p.Store] == nil {
			names = append(names, p.Store)
		}
		by[p.Store] = append(by[p.Store], p)
	}
	return names, by
}

func objectsCharts(points []*ObjectsPoint) map[string]plot.Chart {
	names, by := byStore(points)
	const x = "widgets in the collection"
	series := func(name string, y func(*ObjectsPoint) float64, dashed bool, colour int) []plot.Series {
		var out []plot.Series
		for i, s := range names {
			ser := plot.Series{Name: s + ": " + name, Dashed: dashed, Color: plot.PaletteColor(colour + i*len(profileParts))}
			for _, p := range by[s] {
				if v := y(p); v > 0 {
					ser.Points = append(ser.Points, plot.Point{X: float64(p.Objects), Y: v})
				}
			}
			if len(ser.Points) > 0 {
				out = append(out, ser)
			}
		}
		return out
	}
	mem := plot.Chart{Title: "kapi's RSS and start-up against the widgets stored", XLabel: x, YLabel: "MiB / seconds (log scale)", LogX: true, LogY: true,
		Series: append(append(series("RSS, MiB", func(p *ObjectsPoint) float64 { return p.RSSMiB }, false, 0),
			series("start-up to /readyz, s", func(p *ObjectsPoint) float64 { return p.ReadyMs / 1000 }, true, 1)...),
			series("etcd's RSS, MiB", func(p *ObjectsPoint) float64 { return p.StoreRSSMiB }, true, 2)...)}
	reqs := plot.Chart{Title: "Requests against the widgets in the collection", XLabel: x, YLabel: "ms (log scale)", LogX: true, LogY: true, Height: 480,
		Series: append(append(append(series("LIST p50", func(p *ObjectsPoint) float64 { return p.ListP50Ms }, false, 0),
			series("LIST p99", func(p *ObjectsPoint) float64 { return p.ListP99Ms }, true, 0)...),
			series("GET p99", func(p *ObjectsPoint) float64 { return p.GetP99Ms }, false, 1)...),
			series("CREATE p99", func(p *ObjectsPoint) float64 { return p.CreateP99Ms }, true, 2)...)}
	per := plot.Chart{Title: "Cost per widget (flat: linear growth)", XLabel: x, YLabel: "per 1,000 widgets (log scale)", LogX: true, LogY: true, Height: 480,
		Series: append(append(append(series("RSS, MiB", func(p *ObjectsPoint) float64 { return p.RSSMiB * 1000 / float64(p.Objects) }, false, 0),
			series("start-up, s", func(p *ObjectsPoint) float64 { return p.ReadyMs / float64(p.Objects) }, true, 1)...),
			series("LIST p50, ms", func(p *ObjectsPoint) float64 { return p.ListP50Ms * 1000 / float64(p.Objects) }, false, 2)...),
			series("LIST server CPU, ms", func(p *ObjectsPoint) float64 { return p.ListCPUMs * 1000 / float64(p.Objects) }, true, 3)...)}
	rate := plot.Chart{Title: "CREATE rate against the widgets stored", XLabel: x, YLabel: "creates/s", LogX: true,
		Series: series("CREATE/s", func(p *ObjectsPoint) float64 { return p.CreatePerSec }, false, 0)}
	return map[string]plot.Chart{"objects-memory.svg": mem, "objects-requests.svg": reqs, "objects-per-widget.svg": per, "objects-create.svg": rate}
}

func watchersCharts(points []*WatchersPoint) map[string]plot.Chart {
	const x = "watchers of one collection"
	line := func(name string, colour int, dashed bool, y func(*WatchersPoint) float64) plot.Series {
		s := plot.Series{Name: name, Color: plot.PaletteColor(colour), Dashed: dashed}
		for _, p := range points {
			if v := y(p); v > 0 {
				s.Points = append(s.Points, plot.Point{X: float64(p.Watchers), Y: v})
			}
		}
		return s
	}
	nonEmpty := func(ss ...plot.Series) []plot.Series {
		var out []plot.Series
		for _, s := range ss {
			if len(s.Points) > 0 {
				out = append(out, s)
			}
		}
		return out
	}
	cpu := plot.Chart{Title: "Server CPU per delivered event (flat: linear growth)", XLabel: x, YLabel: "µs per event", LogX: true,
		Series: nonEmpty(line("kapi", 0, false, func(p *WatchersPoint) float64 { return cpuPerEventUs(p.Kapi) }),
			line("ceiling", 1, true, func(p *WatchersPoint) float64 { return cpuPerEventUs(p.Ceiling) }),
			line("the harness reading (its own CPU)", 2, true, func(p *WatchersPoint) float64 { return p.HarnessCPUPerEventUs }))}
	lat := plot.Chart{Title: "Delivery latency against watchers", XLabel: x, YLabel: "ms (log scale)", LogX: true, LogY: true,
		Series: nonEmpty(line("kapi p99", 0, false, func(p *WatchersPoint) float64 { return max(p.Kapi.P99ms, 0.01) }),
			line("kapi p50", 0, true, func(p *WatchersPoint) float64 { return max(p.Kapi.P50ms, 0.01) }),
			line("ceiling p99", 1, false, func(p *WatchersPoint) float64 {
				if p.Ceiling == nil {
					return 0
				}
				return max(p.Ceiling.P99ms, 0.01)
			}))}
	mem := plot.Chart{Title: "kapi's RSS growth per watcher (flat: linear growth)", XLabel: x, YLabel: "KiB per watcher", LogX: true,
		Series: nonEmpty(line("RSS peak during the writes, less before the watches", 0, false, func(p *WatchersPoint) float64 {
			return (p.Kapi.RSSPeakMiB - p.RSSBaseMiB) * 1024 / float64(p.Watchers)
		}))}
	return map[string]plot.Chart{"watchers-cpu.svg": cpu, "watchers-latency.svg": lat, "watchers-memory.svg": mem}
}

// growth says how ys grow with xs from one point to the next, per unit
// of x (scale units): linear while each step's slope is within a factor
// 1.5 of the one before; the first step that is not is where it stops.
func growth(xs, ys []float64, scale float64, unit string) string {
	if len(xs) < 2 {
		return "one point only"
	}
	var slopes []string
	bend := -1
	var prev float64
	for i := 1; i < len(xs); i++ {
		s := (ys[i] - ys[i-1]) / (xs[i] - xs[i-1]) * scale
		slopes = append(slopes, fmt.Sprintf("%s (%s → %s)", sig(s), count(xs[i-1]), count(xs[i])))
		if i > 1 && bend < 0 && (s > 1.5*prev || s < prev/1.5) {
			bend = i
		}
		prev = s
	}
	if bend < 0 {
		return fmt.Sprintf("linear: %s %s between successive sizes", strings.Join(slopes, ", "), unit)
	}
	way := "faster than linearly"
	if (ys[bend]-ys[bend-1])/(xs[bend]-xs[bend-1]) < (ys[bend-1]-ys[bend-2])/(xs[bend-1]-xs[bend-2]) {
		way = "slower than linearly"
	}
	return fmt.Sprintf("linear up to %s, %s after: %s %s between successive sizes", count(xs[bend-1]), way, strings.Join(slopes, ", "), unit)
}

// flatness says whether ys stay flat over xs: the largest against the
// smallest.
func flatness(xs, ys []float64, unit string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	var loX, hiX float64
	for i, y := range ys {
		if y < lo {
			lo, loX = y, xs[i]
		}
		if y > hi {
			hi, hiX = y, xs[i]
		}
	}
	var vals []string
	for i := range xs {
		vals = append(vals, fmt.Sprintf("%s at %s", sig(ys[i]), count(xs[i])))
	}
	return fmt.Sprintf("%s %s; the most %.2f× the least (%s at %s, %s at %s)", strings.Join(vals, ", "), unit, hi/lo, sig(hi), count(hiX), sig(lo), count(loX))
}

// sig is v with 3 significant digits.
func sig(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// count is a size as people write it: 1,000, 10k, 1M.
func count(v float64) string {
	switch {
	case v >= 1e6 && math.Mod(v, 1e6) == 0:
		return fmt.Sprintf("%.0fM", v/1e6)
	case v >= 1e3 && math.Mod(v, 1e3) == 0:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// curvesMarkdown is the report's sections on the objects and watchers
// curves, with their figures if they were drawn into figures (a path
// relative to the report).
func curvesMarkdown(results []*Result, sz sizes, figures string) string {
	var b strings.Builder
	if points := objectsPoints(results); len(points) > 0 {
		objectsMarkdown(&b, points, sz, figures)
	}
	if points := watchersPoints(results); len(points) > 0 {
		watchersMarkdown(&b, points, figures)
	}
	return b.String()
}

// listCacheLimit is the largest LIST body kapi's whole-collection cache
// keeps (16 MiB): a larger LIST is assembled item by item every time.
const listCacheLimit = 16 << 20

func objectsMarkdown(b *strings.Builder, points []*ObjectsPoint, sz sizes, figures string) {
	names, by := byStore(points)
	fmt.Fprintf(b, "\n## How cost grows: objects in one collection\n\n")
	fmt.Fprintf(b, "One collection of widgets (each ~1 KiB of JSON with its managedFields) grown in a store, kapi stopped: one widget created through kapi, then renamed copies of its stored key and value written directly (bolt: through kapi's `storage/bolt`, 512 writes at once, group-committed; etcd: transactions of %d puts, 4 at once), then kapi (`examples/widgets -data DIR`; `storage/etcd/cmd/widgets-etcd` on one etcd member on 127.0.0.1, `--quota-backend-bytes` 16 GiB) started on it. ", etcdFillBatch)
	fmt.Fprintf(b, "*Ready*: from the process's start to its first `/readyz` 200, which waits for the watch cache to hold every object (*healthz*: to its first `/healthz` answer, the process up and listening), and the server's CPU seconds until then. *Idle*: from the start until no thread of the server was running or runnable in 9 of 10 samples over a second: once ready, kapi's garbage collector takes its first look at every object, which decodes each; *after-ready CPU* is what that took. The rest is measured once idle. RSS and live heap (after a forced GC), and etcd's RSS beside. ")
	fmt.Fprintf(b, "LIST: the whole collection in JSON, one at a time, at least %d and more while they fit in %s, with the server's CPU and its GC cycles (`NumGC`) per LIST. GET (a different widget each time) and CREATE (into a namespace of its own, so that the collection keeps its size): closed loop over %d connections for %s each, with the server's CPU per request and its GC cycles per 1,000 CREATEs.\n\n", sz.Curves.ObjectsLists, sz.Duration, sz.Conns, sz.Duration)
	fmt.Fprintf(b, "| store | widgets | fill s | store MiB | healthz ms | ready ms | ready CPU s | idle ms | after-ready CPU s | RSS MiB | heap MiB | etcd RSS MiB |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, p := range points {
		if p.NotReady != "" {
			fmt.Fprintf(b, "| %s | %d | %.1f | %s | %s |||||||\n", p.Store, p.Objects, p.FillSeconds, num(p.StoreMiB, "%.0f"), p.NotReady)
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %.1f | %s | %s | %s | %s | %s | %s | %.0f | %s | %s |\n", p.Store, p.Objects, p.FillSeconds, num(p.StoreMiB, "%.0f"), msText(p.HealthzMs), msText(p.ReadyMs),
			num(p.ReadyCPUSec, "%.2f"), num(p.IdleMs, "%.0f"), num(p.AfterReadyCPUSec, "%.2f"), p.RSSMiB, num(p.HeapMiB, "%.0f"), num(p.StoreRSSMiB, "%.0f"))
	}
	fmt.Fprintf(b, "\n| store | widgets | LIST MiB | LISTs | LIST p50 ms | LIST p99 ms | LIST CPU ms | GCs/LIST | GET/s | GET p99 ms | GET CPU µs | CREATE/s | CREATE p99 ms | CREATE CPU µs | GCs/1k CREATEs |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, p := range points {
		if p.NotReady != "" {
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %.1f | %d | %s | %s | %s | %.2f | %.0f | %s | %.0f | %.0f | %s | %.0f | %.1f |\n", p.Store, p.Objects, mib(p.ListBytes), p.Lists, msText(p.ListP50Ms), msText(p.ListP99Ms), msText(p.ListCPUMs), p.GCsPerList,
			p.GetPerSec, msText(p.GetP99Ms), p.GetCPUUs, p.CreatePerSec, msText(p.CreateP99Ms), p.CreateCPUUs, p.GCsPer1kCreates)
	}
	b.WriteString("\n")
	for _, s := range names {
		ps := by[s]
		var notReady []string
		for len(ps) > 0 && ps[len(ps)-1].NotReady != "" {
			notReady = append(notReady, fmt.Sprintf("at %s widgets kapi was %s of its start", count(float64(ps[len(ps)-1].Objects)), ps[len(ps)-1].NotReady))
			ps = ps[:len(ps)-1]
		}
		if len(ps) == 0 {
			continue
		}
		var xs, rss, heap, ready, readyCPU, after, list, cpu, get, getCPU, create, createCPU []float64
		for _, p := range ps {
			xs = append(xs, float64(p.Objects))
			rss, heap = append(rss, p.RSSMiB), append(heap, p.HeapMiB)
			ready, readyCPU, after = append(ready, p.ReadyMs/1000), append(readyCPU, p.ReadyCPUSec), append(after, p.AfterReadyCPUSec)
			list, cpu = append(list, p.ListP50Ms), append(cpu, p.ListCPUMs)
			get, getCPU = append(get, p.GetP99Ms), append(getCPU, p.GetCPUUs)
			create, createCPU = append(create, p.CreatePerSec), append(createCPU, p.CreateCPUUs)
		}
		first, last := ps[0], ps[len(ps)-1]
		fmt.Fprintf(b, "**%s, %s to %s widgets.** *RSS*: %s", s, count(xs[0]), count(xs[len(xs)-1]), growth(xs, rss, 1024*1024/1000, "KiB per 1,000 widgets"))
		if last.HeapMiB > 0 {
			fmt.Fprintf(b, "; the live heap: %s", growth(xs, heap, 1024*1024/1000, "KiB per 1,000 widgets"))
		}
		fmt.Fprintf(b, ". *Start-up to ready*: %s; ", growth(xs, ready, 1000, "s per 1,000 widgets"))
		if last.ReadyCPUSec > 0 {
			fmt.Fprintf(b, "it is the server's CPU: %s (%.0f%% of the wall time at %s on %d cores, the rest waiting on the store and the machine); ", growth(xs, readyCPU, 1000, "CPU s per 1,000 widgets"), 100*last.ReadyCPUSec/(last.ReadyMs/1000), count(xs[len(xs)-1]), cores())
		}
		if len(notReady) > 0 {
			fmt.Fprintf(b, "%s; ", strings.Join(notReady, "; "))
		}
		fmt.Fprintf(b, "at %s, %.0f%% of it before the first `/healthz` answer (the store opened, the process serving) and %.0f%% filling the watch cache. ", count(xs[len(xs)-1]), 100*last.HealthzMs/last.ReadyMs, 100-100*last.HealthzMs/last.ReadyMs)
		if last.AfterReadyCPUSec > 0 {
			fmt.Fprintf(b, "*After ready*, the garbage collector's first look: %s, idle %.1f s after ready at %s. ", growth(xs, after, 1000, "CPU s per 1,000 widgets"), (last.IdleMs-last.ReadyMs)/1000, count(xs[len(xs)-1]))
		}
		fmt.Fprintf(b, "*LIST p50*: %s; the server's CPU per LIST: %s", growth(xs, list, 1000, "ms per 1,000 widgets"), growth(xs, cpu, 1000, "ms per 1,000 widgets"))
		var cached, assembled []string
		for _, p := range ps {
			if p.ListBytes <= listCacheLimit {
				cached = append(cached, count(float64(p.Objects)))
			} else {
				assembled = append(assembled, count(float64(p.Objects)))
			}
		}
		if len(cached) > 0 && len(assembled) > 0 {
			fmt.Fprintf(b, ". The LIST is at most 16 MiB at %s, where kapi's whole-collection body cache serves it as it is, and over 16 MiB at %s, where it is assembled item by item each time", strings.Join(cached, ", "), strings.Join(assembled, ", "))
		}
		if last.GCsPerList > 0 {
			fmt.Fprintf(b, "; %.2f GC cycles per LIST at %s against %.2f at %s", last.GCsPerList, count(xs[len(xs)-1]), first.GCsPerList, count(xs[0]))
		}
		fmt.Fprintf(b, ". *GET p99* (flat if a GET does not depend on the collection's size): %s; its CPU: %s. ", flatness(xs, get, "ms"), flatness(xs, getCPU, "µs"))
		fmt.Fprintf(b, "*CREATE/s*: %s; its CPU: %s", flatness(xs, create, "creates/s"), flatness(xs, createCPU, "µs"))
		if last.GCsPer1kCreates > 0 || first.GCsPer1kCreates > 0 {
			fmt.Fprintf(b, "; GC cycles per 1,000 CREATEs %.1f at %s, %.1f at %s", first.GCsPer1kCreates, count(xs[0]), last.GCsPer1kCreates, count(xs[len(xs)-1]))
		}
		b.WriteString(".\n\n")
		if most := slices.MaxFunc(points, func(a, b *ObjectsPoint) int { return a.Objects - b.Objects }); last.Objects < most.Objects && len(ps) > 1 {
			// Why this store stops short, from its own figures: the fill
			// rate and the start-up per widget of its largest size.
			prev := ps[len(ps)-2]
			rate := float64(last.Objects-prev.Objects) / max(last.FillSeconds, 0.001)
			fill := float64(most.Objects-last.Objects) / rate
			start := last.IdleMs / 1000 * float64(most.Objects) / float64(last.Objects)
			list := last.ListP50Ms / 1000 * float64(most.Objects) / float64(last.Objects)
			fmt.Fprintf(b, "%s stops at %s (`-objects-etcd-max`): at its measured rates, %s would take about %.0f s more of filling (%.0f widgets/s from %s to %s), %.0f s from start to idle and %.0f s a LIST, %.0f s with %d LISTs, beyond the curve's budget of a few minutes.\n\n",
				s, count(float64(last.Objects)), count(float64(most.Objects)), fill, rate, count(float64(prev.Objects)), count(float64(last.Objects)), start, list, fill+start+float64(sz.Curves.ObjectsLists)*list, sz.Curves.ObjectsLists)
		}
		// The largest size's start-up profile.
		var prof *ObjectsPoint
		for _, p := range ps {
			if p.StartProfile != "" {
				prof = p
			}
		}
		if prof != nil {
			fmt.Fprintf(b, "<details><summary>%s: kapi's CPU profile over its start-up at %s widgets (by cumulative share)</summary>\n\n```\n%s```\n\n</details>\n\n", s, count(float64(prof.Objects)), prof.StartProfile)
		}
		if last.CreateProfile != "" {
			fmt.Fprintf(b, "<details><summary>%s: kapi's CPU profile during the CREATEs at %s widgets (by cumulative share)</summary>\n\n```\n%s```\n\n</details>\n\n", s, count(xs[len(xs)-1]), last.CreateProfile)
		}
	}
	if figures != "" {
		fmt.Fprintf(b, "![kapi's RSS and start-up against the widgets stored](%[1]s/objects-memory.svg)\n\n![Cost per widget](%[1]s/objects-per-widget.svg)\n\n![Requests against the widgets in the collection](%[1]s/objects-requests.svg)\n\n![CREATE rate](%[1]s/objects-create.svg)\n", figures)
	}
}

// cores is the machine's number of CPUs.
func cores() int { return runtime.NumCPU() }

func watchersMarkdown(b *strings.Builder, points []*WatchersPoint, figures string) {
	p0 := points[0]
	fmt.Fprintf(b, "\n## How cost grows: watchers of one collection\n\n")
	fmt.Fprintf(b, "The WATCH fan-out at each number of watchers, on a fresh kapi (memory backend, no cap on the watches open: `-max-watches 0`) each time, then on the ceiling (one pre-encoded frame, written by each watcher's own goroutine): all the watchers (JSON) open on one collection, then one writer merge-patches its widgets at %.0f/s for %d writes; every watcher must see every write in order (*lost* counts the misses). Server CPU per delivered event = the server's CPU during the writes and their delivery ÷ the events delivered. Latency: from a write's acknowledgement to each watcher's receipt. ", p0.Kapi.Rate, p0.Writes)
	fmt.Fprintf(b, "Counted beside: kapi's write system calls and bytes written per delivered event (`/proc/PID/io`), the harness's own CPU per event (its watchers read every event on the same %d cores), and where kapi's CPU went (a CPU profile over the writes: the cumulative share of socket writes `internal/poll.(*FD).Write`, the scheduler `runtime.schedule`, the GC's workers `runtime.gcBgMarkWorker` and allocation `runtime.mallocgc`).\n\n", cores())
	fmt.Fprintf(b, "| watchers | kapi µs CPU/event | ceiling µs CPU/event | kapi ÷ ceiling | kapi p50 ms | kapi p99 ms | ceiling p99 ms | lost | RSS before MiB | RSS peak MiB | KiB/watcher | writes/event | ceiling writes/event | bytes/event | harness µs/event |")
	for _, part := range profileParts {
		fmt.Fprintf(b, " %s %% |", part.Name)
	}
	fmt.Fprintf(b, "\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|%s\n", strings.Repeat("--:|", len(profileParts)))
	var xs, cpu, ratios, p99, rss []float64
	for _, p := range points {
		k, c := cpuPerEventUs(p.Kapi), cpuPerEventUs(p.Ceiling)
		var cp99 float64
		if p.Ceiling != nil {
			cp99 = p.Ceiling.P99ms
		}
		perWatcher := (p.Kapi.RSSPeakMiB - p.RSSBaseMiB) * 1024 / float64(p.Watchers)
		fmt.Fprintf(b, "| %d | %.1f | %s | %s | %s | %s | %s | %d | %.0f | %.0f | %.1f | %.2f | %s | %.0f | %.1f |", p.Watchers, k, num(c, "%.1f"), num(ratio(k, c), "%.2f"), msText(p.Kapi.P50ms), msText(p.Kapi.P99ms), num(cp99, "%.1f"), p.Kapi.Lost,
			p.RSSBaseMiB, p.Kapi.RSSPeakMiB, perWatcher, p.WritesPerEvent, num(p.CeilingWritesPerEvent, "%.2f"), p.BytesPerEvent, p.HarnessCPUPerEventUs)
		for _, part := range profileParts {
			if v, ok := p.Profile[part.Name]; ok {
				fmt.Fprintf(b, " %.0f |", v)
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
		xs, cpu, ratios = append(xs, float64(p.Watchers)), append(cpu, k), append(ratios, ratio(k, c))
		p99, rss = append(p99, p.Kapi.P99ms), append(rss, p.Kapi.RSSPeakMiB)
	}
	last := points[len(points)-1]
	fmt.Fprintf(b, "\n*Server CPU per delivered event* (flat: the total grows linearly with the watchers): %s", flatness(xs, cpu, "µs"))
	if last.Ceiling != nil {
		fmt.Fprintf(b, "; kapi ÷ ceiling: %s", flatness(xs, ratios, "×"))
	}
	if len(points) > 1 && points[1].Kapi.Delivered > p0.Kapi.Delivered && p0.Writes > 0 {
		// kapi's CPU = a per write + b per delivered event, from the two
		// smallest sizes: the part no watcher shares.
		p1 := points[1]
		perEvent := (p1.Kapi.ServerCPUSeconds - p0.Kapi.ServerCPUSeconds) / float64(p1.Kapi.Delivered-p0.Kapi.Delivered)
		perWrite := (p0.Kapi.ServerCPUSeconds - perEvent*float64(p0.Kapi.Delivered)) / float64(p0.Writes)
		fmt.Fprintf(b, ". Fitted to the two smallest sizes (kapi's CPU = a per write + b per delivered event): a = %.2f ms of CPU per write whatever the watchers (the PATCH itself, which the ceiling answers from a recording), b = %.1f µs per delivered event: the per-write part, spread over few watchers, is what lifts the smallest size", perWrite*1000, perEvent*1e6)
	}
	if last.WritesPerEvent < 0.9*p0.WritesPerEvent {
		fmt.Fprintf(b, "; at %s the CPU per event falls because a write system call carries %.2f events there against %.2f at %s: the connections fall behind and each write takes several queued events", count(xs[len(xs)-1]), 1/last.WritesPerEvent, 1/p0.WritesPerEvent, count(xs[0]))
	}
	fmt.Fprintf(b, ". *RSS peak*: %s. *Delivery p99*: %s. ", growth(xs, rss, 1024, "KiB per watcher"), growth(xs, p99, 1000, "ms per 1,000 watchers"))
	// The latency's measured reason: one write's fan-out is watchers ×
	// (kapi's + the harness's CPU per event), on the machine's cores.
	var fan []string
	for _, p := range points {
		perWrite := float64(p.Watchers) * (cpuPerEventUs(p.Kapi) + p.HarnessCPUPerEventUs) / 1000 / float64(cores())
		demand := p.Kapi.Rate * float64(p.Watchers) * (cpuPerEventUs(p.Kapi) + p.HarnessCPUPerEventUs) / 1e6
		fan = append(fan, fmt.Sprintf("%s: %s ms a write, %.2f cores of %d (p50 %s ms, p99 %s ms)", count(float64(p.Watchers)), sig(perWrite), demand, cores(), msText(p.Kapi.P50ms), msText(p.Kapi.P99ms)))
	}
	fmt.Fprintf(b, "Why the latency grows: a write reaches its last watcher once every watcher's copy is written and read, and each costs kapi's CPU per event plus the harness's (measured above), shared by %d cores; the time that takes per write, and the cores the whole run asks for (writes/s × watchers × CPU per event): %s. Where that demand passes the cores, events queue behind one another and the latency grows with the run, not only with the watchers. ", cores(), strings.Join(fan, "; "))
	fmt.Fprintf(b, "Counted with the watchers: kapi's write system calls per delivered event %.2f at %s and %.2f at %s (below 1: several events to one write, a watcher's connection behind), %.0f and %.0f bytes written per event, the harness's own CPU %.1f and %.1f µs per event", p0.WritesPerEvent, count(xs[0]), last.WritesPerEvent, count(xs[len(xs)-1]), p0.BytesPerEvent, last.BytesPerEvent, p0.HarnessCPUPerEventUs, last.HarnessCPUPerEventUs)
	if len(p0.Profile) > 0 && len(last.Profile) > 0 {
		var parts []string
		for _, part := range profileParts {
			parts = append(parts, fmt.Sprintf("%s %.0f%% → %.0f%%", part.Name, p0.Profile[part.Name], last.Profile[part.Name]))
		}
		fmt.Fprintf(b, "; kapi's CPU profile from %s to %s watchers: %s", count(xs[0]), count(xs[len(xs)-1]), strings.Join(parts, ", "))
	}
	b.WriteString(".\n")
	if figures != "" {
		fmt.Fprintf(b, "\n![Server CPU per delivered event against watchers](%[1]s/watchers-cpu.svg)\n\n![Delivery latency against watchers](%[1]s/watchers-latency.svg)\n\n![RSS per watcher](%[1]s/watchers-memory.svg)\n", figures)
	}
}

// parseCurves reads the curves' flags.
func parseCurves(objects, watchers string, lists int, rate float64, d time.Duration) (curveSizes, error) {
	o, err := parseInts(objects)
	if err != nil {
		return curveSizes{}, fmt.Errorf("-objects: %w", err)
	}
	w, err := parseInts(watchers)
	if err != nil {
		return curveSizes{}, fmt.Errorf("-watchers-curve: %w", err)
	}
	if rate <= 0 || d <= 0 {
		return curveSizes{}, fmt.Errorf("-watchers-curve-rate and -watchers-curve-duration must be positive")
	}
	return curveSizes{Objects: o, ObjectsLists: max(lists, 1), Watchers: w, WatchersRate: rate, WatchersDuration: d}, nil
}
