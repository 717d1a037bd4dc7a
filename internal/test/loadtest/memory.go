package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// runMemory loads sz.MemoryObjects widgets into a server that holds
// nothing else yet, LISTs them all once in JSON (so that the cache holds
// every object's JSON encoding, as it does on a server that serves reads),
// and compares the growth of its RSS, and of its live heap after a forced
// GC where the server serves Go's profiles, with the JSON size of the
// objects.
func runMemory(ctx context.Context, t *target, sz sizes) (*Result, error) {
	r := &Result{Workload: "memory", Server: t.Name, Objects: sz.MemoryObjects}
	if t.PID <= 0 {
		return nil, errors.New("memory: the server's RSS is unknown (not a local process)")
	}
	settle(sz)
	base, err := rssBytes(t.PID)
	if err != nil {
		return nil, err
	}
	// After the RSS, whose reading the forced GC would move.
	heapBase, err := liveHeap(ctx, t)
	if err != nil && !errors.Is(err, errNoHeap) {
		return nil, err
	}
	p := watchTarget(t)
	start := time.Now()
	total, err := seed(ctx, t, "memory", "m", sz.MemoryObjects, 8)
	if err != nil {
		return nil, err
	}
	r.DurationSec = time.Since(start).Seconds()
	r.Requests = int64(sz.MemoryObjects)
	r.RequestsPerSec = float64(sz.MemoryObjects) / r.DurationSec
	n, _, err := listSize(ctx, t, "memory")
	if err != nil {
		return nil, err
	}
	if n != sz.MemoryObjects {
		return nil, fmt.Errorf("memory: the LIST has %d widgets, want %d", n, sz.MemoryObjects)
	}
	settle(sz)
	p.stop(r)
	r.JSONBytes = total
	r.RSSBaseMiB = mib(base)
	end, err := rssBytes(t.PID)
	if err != nil {
		return nil, err
	}
	r.RSSEndMiB = mib(end)
	r.RSSPerJSON = float64(end-base) / float64(total)
	if heapBase > 0 {
		heapEnd, err := liveHeap(ctx, t)
		if err != nil {
			return nil, err
		}
		r.HeapBaseMiB, r.HeapEndMiB = mib(heapBase), mib(heapEnd)
		r.HeapPerJSON = float64(heapEnd-heapBase) / float64(total)
	}
	return r, nil
}

// errNoHeap: the server does not serve Go's heap profile (to the harness).
var errNoHeap = errors.New("the server serves no /debug/pprof/heap")

// liveHeap is the server's live heap: the HeapAlloc that net/http/pprof's
// heap profile reports in its text form (debug=1) right after the forced
// garbage collection that gc=1 asks for.
func liveHeap(ctx context.Context, t *target) (int64, error) {
	c := t.client(1)
	defer c.CloseIdleConnections()
	_, body, _, err := send(ctx, c, "GET", t.URL+"/debug/pprof/heap?gc=1&debug=1", nil, nil, true)
	var he *httpError
	if errors.As(err, &he) { // none, or not for the harness (401, 403)
		return 0, fmt.Errorf("%w: %v", errNoHeap, err)
	}
	if err != nil {
		return 0, err
	}
	return heapAlloc(body)
}

// heapAlloc finds the "# HeapAlloc = N" line of a heap profile in its
// text form.
func heapAlloc(profile []byte) (int64, error) {
	for line := range bytes.Lines(profile) {
		if rest, ok := bytes.CutPrefix(line, []byte("# HeapAlloc = ")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("the heap profile's HeapAlloc is %q", bytes.TrimSpace(rest))
			}
			return n, nil
		}
	}
	return 0, errors.New("the heap profile has no HeapAlloc line (not net/http/pprof's debug=1 form?)")
}
