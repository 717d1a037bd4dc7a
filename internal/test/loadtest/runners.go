package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// runWatchWorkload is the fan-out name against kapi (t) and the ceiling
// replaying t's frame, in rounds, each server in turn (see watchRounds);
// for watch, the counting kapi's encodes too.
func runWatchWorkload(ctx context.Context, e *env, name string, t *target, sz sizes, add func(string, *Result), fail func(string, error)) {
	var kapi, ceil *Result
	ceiling := e.Ceiling
	if ceiling != nil {
		if cfg, err := recordWatch(ctx, t); err != nil {
			fail(name, fmt.Errorf("recording kapi's watch frame: %w", err))
			ceiling = nil
		} else if err := configureCeiling(ctx, ceiling.URL, cfg); err != nil {
			fail(name, err)
			ceiling = nil
		}
	}
	for range max(sz.Rounds, 1) {
		r, err := runWatchCounted(ctx, t, sz)
		if err != nil {
			fail(name, err)
			return
		}
		kapi = cheaperRound(kapi, r)
		if ceiling != nil {
			r, err := runWatchCounted(ctx, ceiling, sz)
			if err != nil {
				fail(name, err)
				ceiling = nil
				continue
			}
			ceil = cheaperRound(ceil, r)
		}
	}
	add(name, kapi)
	if e.Counting != nil && name == "watch" {
		if _, ok := encodes(ctx, t); !ok {
			counting := sz
			counting.WatchDuration = min(sz.WatchDuration, 2*time.Second)
			if r, err := countEncodes(ctx, e.Counting, counting); err != nil {
				fail(name, fmt.Errorf("counting encodes: %w", err))
			} else {
				add(name, r)
			}
		}
	}
	if ceil != nil {
		add(name, ceil)
	}
}

// runWatchCounted is runWatch, counting the server's write system calls
// per delivered event when it is a local process.
func runWatchCounted(ctx context.Context, t *target, sz sizes) (*Result, error) {
	io0, err0 := procIO(t.PID)
	r, err := runWatch(ctx, t, sz)
	if io1, err1 := procIO(t.PID); err == nil && err0 == nil && err1 == nil && r.Delivered > 0 {
		r.WritesPerEvent = float64(io1.syscw-io0.syscw) / float64(r.Delivered)
	}
	return r, err
}

// cheaperRound keeps the fan-out round with less server CPU per delivered
// event, as the request workloads keep their best round: one run of each
// server against the other swung by up to 1.5x from run to run on the
// shared machine (kapi on etcd at 1,000 watchers: 1.30x, 1.88x, then 1.86x,
// 1.51x, 1.36x in three alternated runs, the ceiling's own figure moving
// 12.6-16.5 µs), with the load of the moment in one server's round and not
// the other's. Events lost and watches ended count over every round: the
// kept round carries the worst of them.
func cheaperRound(a, b *Result) *Result {
	if a == nil {
		b.Rounds = 1
		return b
	}
	kept, other := a, b
	if cpuPerEventUs(b) < cpuPerEventUs(a) {
		kept, other = b, a
	}
	kept.Rounds = a.Rounds + 1
	kept.Lost = max(kept.Lost, other.Lost)
	if other.Errors > kept.Errors {
		kept.Errors, kept.FirstError = other.Errors, other.FirstError
	}
	return kept
}

// startCustom starts a control plane serving widgets as a custom
// resource, seeded as the typed example is for the request workloads.
func startCustom(ctx context.Context, fresh func() (*target, func(), error), sz sizes) (*target, func(), error) {
	t, stop, err := fresh()
	if err != nil {
		return nil, nil, fmt.Errorf("starting a control plane: %w", err)
	}
	if err := defineWidgets(ctx, t); err != nil {
		stop()
		return nil, nil, err
	}
	if err := setup(ctx, t, sz); err != nil {
		stop()
		return nil, nil, err
	}
	return t, stop, nil
}

// runCustomMemory is the memory workload on a fresh control plane
// serving widgets as a custom resource.
func runCustomMemory(ctx context.Context, fresh func() (*target, func(), error), sz sizes) (*Result, error) {
	t, stop, err := fresh()
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := defineWidgets(ctx, t); err != nil {
		return nil, err
	}
	return runMemory(ctx, t, sz)
}

// startBolt starts a kapi on bolt with fresh and makes the namespace its
// CREATE writes into and the widgets its PUT and PATCH update.
func startBolt(ctx context.Context, fresh func() (*target, func(), error)) (*target, func(), error) {
	t, stop, err := fresh()
	if err != nil {
		return nil, nil, fmt.Errorf("starting kapi on bolt: %w", err)
	}
	if err := ensureNamespace(ctx, t, nsCreate); err != nil {
		stop()
		return nil, nil, err
	}
	if _, err := seed(ctx, t, nsWrite, "w", boltWriters, boltWriters); err != nil {
		stop()
		return nil, nil, err
	}
	return t, stop, nil
}

// runRequestWorkload runs w against t and, where there is one, the
// ceiling, replaying t's answer to w's recorded request, and the bolt-only
// server if only is not nil, storing that answer: rounds of each in turn,
// the best round of each. The results are kapi's, then the others'.
func runRequestWorkload(ctx context.Context, e *env, t, only *target, w requestWorkload) ([]*Result, error) {
	sz := e.Sizes
	if e.Ceiling == nil {
		only = nil // it replays what the ceiling would
	} else {
		c := t.client(1)
		rec, err := w.record(ctx, c, t.URL)
		c.CloseIdleConnections()
		if err != nil {
			return nil, fmt.Errorf("recording kapi's response for the ceiling: %w", err)
		}
		if err := configureCeiling(ctx, e.Ceiling.URL, ceilingConfig{Response: rec}); err != nil {
			return nil, err
		}
		if only != nil {
			if err := configureCeiling(ctx, only.URL, ceilingConfig{Response: rec}); err != nil {
				e.logf("%s: leaving the %s server out: %v", w.Name, only.Name, err)
				only = nil
			}
		}
	}
	// Rounds, each server in turn, and the best round of each: on a shared
	// machine a stall elsewhere hits one round, and every server gets the
	// same chances.
	spec := loadSpec{Conns: w.conns(sz), Duration: sz.Duration, Rate: sz.Rate}
	servers := []*target{t}
	for _, r := range []*target{e.Ceiling, only} {
		if r != nil {
			servers = append(servers, r)
		}
	}
	ops := make([]op, len(servers))
	for i, s := range servers {
		ops[i] = w.op(s.URL)
	}
	best := make([]*Result, len(servers))
	for range max(sz.Rounds, 1) {
		for i, s := range servers {
			var stop func() error
			if w.During != nil && s == t {
				stop = w.During(ctx, s.URL)
			}
			r := runLoad(ctx, s, spec, ops[i])
			if stop != nil {
				if err := stop(); err != nil {
					return nil, fmt.Errorf("the writer beside the workload: %w", err)
				}
			}
			best[i] = better(best[i], r)
		}
	}
	return best, nil
}

// idleCeiling measures what an idle watch connection costs a server that
// does nothing else: net/http's share of an idle watcher.
func idleCeiling(ctx context.Context, fresh func() (*target, func(), error), sz sizes) (*Result, error) {
	t, stop, err := fresh()
	if err != nil {
		return nil, err
	}
	defer stop()
	ok := &recorded{Code: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"metadata":{"resourceVersion":"1"}}`)}
	if err := configureCeiling(ctx, t.URL, ceilingConfig{Response: ok, WatchHeader: ok.Header, Frame: []byte("{}\n")}); err != nil {
		return nil, err
	}
	return runIdleWatchers(ctx, t, sz, nil)
}

// countEncodes runs the fan-out on a server that counts its encodes,
// first with no watcher, then with sz.Watchers: the difference per write is
// what the watchers cost in encodes.
func countEncodes(ctx context.Context, t *target, sz sizes) (*Result, error) {
	if _, err := seed(ctx, t, nsWatch, "w", 10, 4); err != nil {
		return nil, err
	}
	none := sz
	none.Watchers = 0
	base, err := runWatch(ctx, t, none)
	if err != nil {
		return nil, err
	}
	r, err := runWatch(ctx, t, sz)
	if err != nil {
		return nil, err
	}
	if r.EncodesPerEvent == 0 {
		return nil, errors.New("the server counted no encodes")
	}
	r.WatchEncodesPerEvent = r.EncodesPerEvent - base.EncodesPerEvent
	r.EncodeNote = "counting kapi (-serve-kapi)"
	return r, nil
}

// recordWatch records what the ceiling needs to replay a watch: kapi's
// watch response headers, one event frame, and the write's response.
func recordWatch(ctx context.Context, t *target) (ceilingConfig, error) {
	var cfg ceilingConfig
	rv, err := currentRV(ctx, t, nsWatch)
	if err != nil {
		return cfg, err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	wc := watchClient(t, 1)
	defer wc.CloseIdleConnections()
	resp, err := openWatch(wctx, wc, t, nsWatch, rv)
	if err != nil {
		return cfg, err
	}
	defer resp.Body.Close()
	cfg.WatchHeader = resp.Header.Clone()
	cfg.WatchHeader.Del("Date")
	c := t.client(1)
	defer c.CloseIdleConnections()
	cfg.Response, err = record(ctx, c, "PATCH", widgetsURL(t.URL, nsWatch)+"/w-00000",
		http.Header{"Content-Type": {"application/merge-patch+json"}, "Accept": {"application/json"}}, fmt.Appendf(nil, `{"spec":{"size":%d}}`, nextSize.Add(1)))
	if err != nil {
		return cfg, err
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return cfg, fmt.Errorf("reading the watch: %w", err)
		}
		if !strings.HasPrefix(string(line), `{"type":"BOOKMARK"`) {
			cfg.Frame = line
			return cfg, nil
		}
	}
}
