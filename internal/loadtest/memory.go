package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// runMemory loads sz.MemoryObjects widgets into a server that holds
// nothing else yet, LISTs them all once in JSON (so that the cache holds
// every object's JSON encoding, as it does on a server that serves reads),
// and compares the growth of its RSS with the JSON size of the objects.
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
	p := watchProc(t.PID)
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
	return r, nil
}
