package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"
)

// env is what a run drives.
type env struct {
	Kapi    *target
	Ceiling *target // nil: no ceiling figures
	// Counting is a kapi server that counts its encodes (see encodesPath),
	// for the watch's encodes per event when Kapi does not count; may be nil.
	Counting *target
	// Fresh starts a kapi server that holds nothing yet, for the memory
	// workload; nil: that workload is not run.
	Fresh func() (*target, func(), error)
	// FreshUncapped is Fresh with no cap on the watches open at once, for
	// the watchers curve; nil: Fresh.
	FreshUncapped func() (*target, func(), error)
	// Bolt starts a kapi server on the bolt backend that holds nothing
	// yet, its file in a directory of its own, for the bolt workloads;
	// nil: they are not run.
	Bolt func() (*target, func(), error)
	// BoltOnly starts the bolt-only server (see ceiling.store), its file in
	// a directory of its own, measured beside kapi on bolt; may be nil.
	BoltOnly func() (*target, func(), error)
	// Etcd is kapi on etcd (storage/etcd/cmd/widgets-etcd), for the
	// workloads named with etcdSuffix, and EtcdOnly the etcd-only server
	// on the same etcd, measured beside it in GET and the writes; nil:
	// those workloads are left out (EtcdOnly: run without it).
	Etcd, EtcdOnly *target
	// StoreOnly is a server making only the store's requests, with none of
	// kapi's handling (the etcd-only server), measured beside Kapi in GET
	// and the writes (storeOnlyWorkloads); may be nil.
	StoreOnly *target
	// FreshCeiling starts a ceiling that has served nothing yet, for the
	// idle watchers' floor; may be nil.
	FreshCeiling func() (*target, func(), error)
	// ControlPlane starts a control plane that holds nothing yet
	// (examples/controlplane: namespaces and CustomResourceDefinitions),
	// for the kinds and the custom-resource workloads; nil: they are not
	// run.
	ControlPlane func() (*target, func(), error)
	// ObjectStores makes the stores of the objects curve; nil: it is not
	// run.
	ObjectStores func(context.Context) ([]*objectStore, error)
	Sizes        sizes
	Workloads    []string // names to run; empty: all
	Logf         func(format string, args ...any)
}

var allWorkloads = []string{
	"get", "get-rv0", "list-large-json-rv0", "list-small-json", "list-small-proto", "list-large-json", "list-large-proto", "list-large-table",
	"list-large-json-2", "list-huge-json", "list-huge-json-2", "list-writes-json", "list-writes-json-2", "create", "create-bolt", "update", "patch", "apply",
	"update-bolt", "patch-bolt", "watch-small", "watch", "idle-watchers",
	"informers-small", "informers", "informers-client-go", "memory",
	"get-cr", "list-large-json-cr", "create-cr", "apply-cr", "memory-cr", "kinds",
	"get-etcd", "list-large-json-etcd", "create-etcd", "update-etcd", "patch-etcd", "apply-etcd",
	"watch-small-etcd", "watch-etcd", "informers-small-etcd", "informers-etcd",
}

// watchWorkloads are the fan-outs: watch-small (-small-watchers) and
// watch (-watchers), on memory and on etcd.
var watchWorkloads = []string{"watch-small", "watch", "watch-small-etcd", "watch-etcd"}

// storeOnlyWorkloads are those measured on the StoreOnly server too.
var storeOnlyWorkloads = []string{"get", "create", "update", "patch", "apply"}

func (e *env) wants(name string) bool {
	return len(e.Workloads) == 0 || slices.Contains(e.Workloads, name)
}

// wantsEtcd says whether a workload on etcd is to run.
func (e *env) wantsEtcd() bool {
	for _, w := range allWorkloads {
		if strings.HasSuffix(w, etcdSuffix) && e.wants(w) {
			return true
		}
	}
	return false
}

// on is the server a workload named name runs against: kapi on etcd for
// a name with etcdSuffix, else kapi (nil: none to drive).
func (e *env) on(name string) *target {
	if strings.HasSuffix(name, etcdSuffix) {
		return e.Etcd
	}
	return e.Kapi
}

func (e *env) logf(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

// run runs the chosen workloads against kapi and, where one exists, the
// ceiling, one after the other (never both at once: they share the
// machine), and returns every result. A workload that fails is reported
// and the others go on; the error joins the failures.
func run(ctx context.Context, e *env) ([]*Result, error) {
	var results []*Result
	var failed []string
	fail := func(name string, err error) {
		e.logf("%s: %v", name, err)
		failed = append(failed, fmt.Sprintf("%s: %v", name, err))
	}
	add := func(name string, r *Result) {
		r.Workload = name
		e.logf("%-18s %-9s %s", name, r.Server, r.summary())
		results = append(results, r)
	}
	sz := e.Sizes
	e.logf("seeding kapi at %s: %d + %d widgets of ~1 KiB", e.Kapi.URL, sz.Small, sz.Large)
	if err := setup(ctx, e.Kapi, sz); err != nil {
		return nil, err
	}
	if e.wants("list-huge-json") || e.wants("list-huge-json-2") {
		// As large as the widgets, seeded only for these.
		if _, err := seedPadded(ctx, e.Kapi, nsHuge, "w", sz.Large, 8, hugePadding); err != nil {
			return nil, fmt.Errorf("seeding %s: %w", nsHuge, err)
		}
		n, size, err := listSize(ctx, e.Kapi, nsHuge)
		if err != nil {
			return nil, err
		}
		e.logf("LIST %s: %d widgets, %d bytes of JSON (%.0f per widget)", nsHuge, n, size, float64(size)/float64(n))
	}
	if e.wants("informers-small") {
		// Their namespace of their own, seeded only for them.
		if _, err := seed(ctx, e.Kapi, nsInformers, "w", sz.SmallInformerObjects, 8); err != nil {
			return nil, fmt.Errorf("seeding %s: %w", nsInformers, err)
		}
	}
	if e.Etcd != nil && e.wantsEtcd() {
		e.logf("seeding kapi on etcd at %s", e.Etcd.URL)
		if err := setup(ctx, e.Etcd, sz); err != nil {
			return nil, fmt.Errorf("kapi on etcd: %w", err)
		}
		if e.wants("informers-small-etcd") {
			if _, err := seed(ctx, e.Etcd, nsInformers, "w", sz.SmallInformerObjects, 8); err != nil {
				return nil, fmt.Errorf("seeding %s on etcd: %w", nsInformers, err)
			}
		}
	}
	for _, want := range []struct {
		ns string
		n  int
	}{{nsSmall, sz.Small}, {nsLarge, sz.Large}} {
		n, size, err := listSize(ctx, e.Kapi, want.ns)
		if err != nil {
			return nil, err
		}
		if n != want.n {
			return nil, fmt.Errorf("the LIST of %s has %d widgets, want %d", want.ns, n, want.n)
		}
		e.logf("LIST %s: %d widgets, %d bytes of JSON (%.0f per widget)", want.ns, n, size, float64(size)/float64(n))
	}

	var bolt, boltOnly *target // started for the first bolt workload
	stopBolt, stopBoltOnly := func() {}, func() {}
	defer func() { stopBolt(); stopBoltOnly() }()
	var custom *target // started for the first custom-resource workload
	stopCustom := func() {}
	defer func() { stopCustom() }()
	for _, w := range requestWorkloads(sz.Conns) {
		if !e.wants(w.Name) {
			continue
		}
		t := e.on(w.Name)
		if t == nil {
			e.logf("%s: no kapi on etcd to drive: left out", w.Name)
			continue
		}
		if w.Custom {
			if e.ControlPlane == nil {
				e.logf("%s: no control plane to drive (-server): left out", w.Name)
				continue
			}
			if custom == nil {
				var err error
				if custom, stopCustom, err = startCustom(ctx, e.ControlPlane, sz); err != nil {
					custom, stopCustom = nil, func() {}
					fail(w.Name, err)
					continue
				}
			}
			t = custom
		}
		if w.Bolt {
			if e.Bolt == nil {
				e.logf("%s: no kapi on bolt to drive (-server): left out", w.Name)
				continue
			}
			if bolt == nil {
				var err error
				if bolt, stopBolt, err = startBolt(ctx, e.Bolt); err != nil {
					stopBolt = func() {}
					fail(w.Name, err)
					continue
				}
				if e.BoltOnly != nil {
					// A figure beside the target's, not the target's own:
					// without it, the workload runs as before.
					if boltOnly, stopBoltOnly, err = e.BoltOnly(); err != nil {
						boltOnly, stopBoltOnly = nil, func() {}
						e.logf("%s: no bolt-only server: %v", w.Name, err)
					}
				}
			}
			t = bolt
		}
		var only *target
		switch {
		case w.Bolt:
			only = boltOnly
		case w.Etcd:
			if slices.Contains(storeOnlyWorkloads, baseName(w.Name)) {
				only = e.EtcdOnly
			}
		case slices.Contains(storeOnlyWorkloads, w.Name):
			only = e.StoreOnly
		}
		rs, err := runRequestWorkload(ctx, e, t, only, w)
		if err != nil {
			fail(w.Name, err)
			continue
		}
		for _, r := range rs {
			add(w.Name, r)
		}
	}

	for _, name := range watchWorkloads {
		if !e.wants(name) {
			continue
		}
		t := e.on(name)
		if t == nil {
			e.logf("%s: no kapi on etcd to drive: left out", name)
			continue
		}
		wsz := sz
		if baseName(name) == "watch-small" {
			wsz.Watchers = sz.SmallWatchers
		}
		runWatchWorkload(ctx, e, name, t, wsz, add, fail)
	}
	if e.wants("idle-watchers") {
		// On a fresh server where one is at hand: a server that has served
		// the other workloads has free heap that hides the watchers' cost.
		t, stop := e.Kapi, func() {}
		if e.Fresh != nil {
			var err error
			if t, stop, err = e.Fresh(); err != nil {
				fail("idle-watchers", err)
			}
		}
		if t != nil {
			if r, err := runIdleWatchers(ctx, t, sz, nil); err != nil {
				fail("idle-watchers", err)
			} else {
				add("idle-watchers", r)
			}
			stop()
		}
		if e.FreshCeiling != nil {
			if r, err := idleCeiling(ctx, e.FreshCeiling, sz); err != nil {
				fail("idle-watchers", fmt.Errorf("ceiling: %w", err))
			} else {
				add("idle-watchers", r)
			}
		}
	}
	for _, name := range []string{"informers-small", "informers", "informers-small-etcd", "informers-etcd"} {
		if !e.wants(name) {
			continue
		}
		t := e.on(name)
		if t == nil {
			e.logf("%s: no kapi on etcd to drive: left out", name)
			continue
		}
		s, _ := streamingWorkload(name, sz)
		if k, c, err := runInformerStart(ctx, e, t, s); err != nil {
			fail(name, err)
		} else {
			add(name, k)
			if c != nil {
				add(name, c)
			}
		}
	}
	if e.wants("informers-client-go") {
		if r, err := runInformers(ctx, e.Kapi, sz, sz.Large); err != nil {
			fail("informers-client-go", err)
		} else {
			add("informers-client-go", r)
		}
	}
	if e.wants("memory") && e.Fresh != nil {
		fresh, stop, err := e.Fresh()
		if err != nil {
			fail("memory", err)
		} else {
			r, err := runMemory(ctx, fresh, sz)
			stop()
			if err != nil {
				fail("memory", err)
			} else {
				add("memory", r)
			}
		}
	}
	if e.wants("memory-cr") && e.ControlPlane != nil {
		// The same load of widgets defined as a custom resource, on a
		// control plane that serves nothing else.
		if r, err := runCustomMemory(ctx, e.ControlPlane, sz); err != nil {
			fail("memory-cr", err)
		} else {
			add("memory-cr", r)
		}
	}
	if e.wants("kinds") && e.ControlPlane != nil {
		for _, n := range sz.KindsCurve {
			t, stop, err := e.ControlPlane()
			if err != nil {
				fail("kinds", err)
				break
			}
			p, err := runKinds(ctx, t, n, sz)
			stop()
			if err != nil {
				fail("kinds", fmt.Errorf("%d kinds: %w", n, err))
				break
			}
			add("kinds", &Result{Server: t.Name, Objects: n, Kinds: p})
		}
	}
	runCurves(ctx, e, add, fail)
	if len(failed) > 0 {
		return results, fmt.Errorf("%d workloads failed:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	return results, nil
}

// summary is one line of a result for the log.
func (r *Result) summary() string {
	var b strings.Builder
	if r.RequestsPerSec > 0 {
		fmt.Fprintf(&b, "%.0f req/s  %.1f MB/s  p50 %.2fms p99 %.2fms p99.9 %.2fms", r.RequestsPerSec, r.BytesPerSec/1e6, r.P50ms, r.P99ms, r.P999ms)
	}
	if r.Watchers > 0 && r.Events > 0 {
		fmt.Fprintf(&b, "%d watchers × %d events: delivery p50 %.2fms p99 %.2fms, lost %d", r.Watchers, r.Events, r.P50ms, r.P99ms, r.Lost)
		if r.EncodesPerEvent > 0 {
			fmt.Fprintf(&b, ", %.2f encodes/event", r.EncodesPerEvent)
		}
	}
	if r.IdleWatcherKiB != 0 {
		fmt.Fprintf(&b, "%d idle watchers: %.1f KiB each", r.Watchers, r.IdleWatcherKiB)
	}
	if r.Informers > 0 {
		fmt.Fprintf(&b, "%d informers × %d widgets synced in %s", r.Informers, r.Objects, seconds(r.SyncSeconds))
	}
	if r.JSONBytes > 0 {
		fmt.Fprintf(&b, "  %d widgets, %.1f MiB of JSON: RSS %.1f → %.1f MiB, %.2f× the JSON", r.Objects, mib(r.JSONBytes), r.RSSBaseMiB, r.RSSEndMiB, r.RSSPerJSON)
		if r.HeapEndMiB > 0 {
			fmt.Fprintf(&b, "; live heap %.1f → %.1f MiB, %.2f×", r.HeapBaseMiB, r.HeapEndMiB, r.HeapPerJSON)
		}
	}
	if r.CPUSecPer1k > 0 {
		fmt.Fprintf(&b, "  cpu %.3fs/1k", r.CPUSecPer1k)
	}
	if r.RSSPeakMiB > 0 {
		fmt.Fprintf(&b, "  rss peak %.0f MiB", r.RSSPeakMiB)
	}
	if r.Errors > 0 {
		fmt.Fprintf(&b, "  %d errors (%s)", r.Errors, r.FirstError)
	}
	return b.String()
}

// better is the round with more requests/s.
func better(a, b *Result) *Result {
	return keepBest(a, b, a != nil && b.RequestsPerSec > a.RequestsPerSec)
}

// keepBest is round b if it is the first (a is nil) or bBetter, else a;
// either way counting the rounds so far in its Rounds.
func keepBest(a, b *Result, bBetter bool) *Result {
	if a == nil || bBetter {
		b.Rounds = 1
		if a != nil {
			b.Rounds += a.Rounds
		}
		return b
	}
	a.Rounds++
	return a
}
