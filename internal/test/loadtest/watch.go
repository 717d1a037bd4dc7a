package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// watchClient holds many watch connections: one each.
func watchClient(t *target, n int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: n,
		DisableCompression:  true,
		TLSClientConfig:     t.TLS,
	}}
}

// openWatch starts a JSON watch of ns from resourceVersion rv and returns
// the response once its headers are in.
func openWatch(ctx context.Context, c *http.Client, t *target, ns, rv string) (*http.Response, error) {
	url := widgetsURL(t.URL, ns) + "?watch=true&resourceVersion=" + rv
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, &httpError{"GET", url, resp.StatusCode, string(body)}
	}
	return resp, nil
}

// currentRV is the resourceVersion of a LIST of ns.
func currentRV(ctx context.Context, t *target, ns string) (string, error) {
	c := t.client(1)
	defer c.CloseIdleConnections()
	_, body, _, err := send(ctx, c, "GET", widgetsURL(t.URL, ns)+"?limit=1", jsonHeader, nil, true)
	if err != nil {
		return "", err
	}
	rv := resourceVersionOf(body) // the list's comes first
	if rv == "" {
		return "", fmt.Errorf("no resourceVersion in the LIST of %s", ns)
	}
	return rv, nil
}

// startRV is the resourceVersion the fan-out's watches start from: that of
// a write to one of ns's widgets, made for it. Not a LIST's: on
// kube-apiserver over kine a consistent LIST's is kine's revision, which
// counts every resource's writes and can be ahead of the widgets' watch
// cache, so that a watch from it waits for the cache and ends "Too large
// resource version" when that does not catch up in time; and a LIST at
// resourceVersion=0 may answer a revision the cache's window has already
// left, so that a watch from it ends "too old resource version" (410). Each
// ended every watcher of a pass before its first event. A widget's own
// write is in the cache as soon as its event is, and is the newest.
func startRV(ctx context.Context, t *target, ns string) (string, error) {
	c := t.client(1)
	defer c.CloseIdleConnections()
	header := http.Header{"Content-Type": {"application/merge-patch+json"}, "Accept": {"application/json"}}
	_, body, _, err := send(ctx, c, "PATCH", widgetsURL(t.URL, ns)+"/w-00000", header, fmt.Appendf(nil, `{"spec":{"size":%d}}`, nextSize.Add(1)), true)
	if err != nil {
		return "", err
	}
	rv := resourceVersionOf(body)
	if rv == "" {
		return "", fmt.Errorf("no resourceVersion in the answer to a PATCH of %s/w-00000", ns)
	}
	return rv, nil
}

// nextSize is the spec.size of the next write of the fan-out: every write
// must change its widget, or it makes no event.
var nextSize atomic.Int64

// received is one event a watcher read.
type received struct {
	at time.Time
	rv int64
}

// readEvents reads newline-framed JSON watch events until the stream ends,
// keeping the time and resourceVersion of each but BOOKMARKs, and counting
// them in count.
func readEvents(body io.Reader, out *[]received, count *atomic.Int64) error {
	br := bufio.NewReaderSize(body, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A frame larger than the buffer: read the rest.
			rest, err2 := br.ReadBytes('\n')
			line, err = append(bytes.Clone(line), rest...), err2
		}
		if len(bytes.TrimSpace(line)) > 0 {
			at := time.Now()
			if bytes.HasPrefix(line, []byte(`{"type":"BOOKMARK"`)) {
				continue
			}
			if bytes.HasPrefix(line, []byte(`{"type":"ERROR"`)) {
				return fmt.Errorf("watch error event: %.300s", line)
			}
			rv, _ := strconv.ParseInt(resourceVersionOf(line), 10, 64)
			*out = append(*out, received{at, rv})
			count.Add(1)
		}
		if err != nil {
			return err
		}
	}
}

// encodes asks a server for its encode counter (see encodesPath); ok is
// false if it has none.
func encodes(ctx context.Context, t *target) (n int64, ok bool) {
	c := t.client(1)
	defer c.CloseIdleConnections()
	_, body, _, err := send(ctx, c, "GET", t.URL+encodesPath, nil, nil, true)
	if err != nil {
		return 0, false
	}
	n, err = strconv.ParseInt(string(bytes.TrimSpace(body)), 10, 64)
	return n, err == nil
}

// runWatch is the fan-out: sz.Watchers watchers on nsWatch while one writer
// merge-patches its widgets at sz.WatchRate for sz.WatchDuration. Against
// kapi every watcher must see every write's resourceVersion, in order;
// against the ceiling, whose frame is always the same, every frame.
func runWatch(ctx context.Context, t *target, sz sizes) (*Result, error) {
	r := &Result{Workload: "watch", Server: t.Name, Watchers: sz.Watchers, Rate: sz.WatchRate}
	// The ceiling ignores the resourceVersion, and a write to it would be
	// one more frame to a watcher that opens before the ceiling, having
	// acknowledged the write, counts it (TestRun: 147 events delivered to
	// 7 watchers of 20 writes).
	rv := "0"
	if t.Name != "ceiling" {
		var err error
		if rv, err = startRV(ctx, t, nsWatch); err != nil {
			return nil, err
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wc := watchClient(t, sz.Watchers)
	defer wc.CloseIdleConnections()

	events := make([][]received, sz.Watchers)
	var opened sync.WaitGroup
	var openErr atomic.Value
	var readers sync.WaitGroup
	var count atomic.Int64     // events received by all watchers
	var watchErr atomic.Value  // the first watcher that ended before its time, why
	var watchErrs atomic.Int64 // how many did
	for i := range sz.Watchers {
		opened.Add(1)
		readers.Go(func() {
			resp, err := openWatch(wctx, wc, t, nsWatch, rv)
			opened.Done()
			if err != nil {
				openErr.CompareAndSwap(nil, err)
				return
			}
			defer resp.Body.Close()
			// readEvents returns once the stream ends: before the
			// workload ends, the server ended the watch.
			if err := readEvents(resp.Body, &events[i], &count); wctx.Err() == nil {
				watchErrs.Add(1)
				watchErr.CompareAndSwap(nil, fmt.Errorf("watcher %d after %d events: %w", i, len(events[i]), err))
			}
		})
	}
	opened.Wait()
	if err, ok := openErr.Load().(error); ok {
		return nil, fmt.Errorf("opening %d watches: %w", sz.Watchers, err)
	}
	enc0, hasEncodes := encodes(ctx, t)

	// The writer: merge patches of 10 widgets in turn, at a fixed rate.
	wr := t.client(1)
	defer wr.CloseIdleConnections()
	header := http.Header{"Content-Type": {"application/merge-patch+json"}, "Accept": {"application/json"}}
	var acks []time.Time
	var rvs []int64
	p := watchTarget(t)
	interval := time.Duration(float64(time.Second) / sz.WatchRate)
	start := time.Now()
	n := int(sz.WatchDuration.Seconds() * sz.WatchRate)
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		url := widgetsURL(t.URL, nsWatch) + fmt.Sprintf("/w-%05d", i%10)
		_, body, _, err := send(ctx, wr, "PATCH", url, header, fmt.Appendf(nil, `{"spec":{"size":%d}}`, nextSize.Add(1)), true)
		if err != nil {
			return nil, fmt.Errorf("write %d: %w", i, err)
		}
		acks = append(acks, time.Now())
		v, _ := strconv.ParseInt(resourceVersionOf(body), 10, 64)
		if t.Name == "kapi" && len(rvs) > 0 && v <= rvs[len(rvs)-1] {
			return nil, fmt.Errorf("write %d: resourceVersion %d after %d: the write changed nothing, or the server is not Kubernetes-like", i, v, rvs[len(rvs)-1])
		}
		rvs = append(rvs, v)
	}
	r.Events = n
	r.Requests = int64(n)
	// Wait for the last deliveries: at most 10s after the last write
	// (sz.WatchDrain if set).
	want := int64(n) * int64(sz.Watchers)
	deadline := time.Now().Add(cmp.Or(sz.WatchDrain, 10*time.Second))
	for count.Load() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r.DurationSec = time.Since(start).Seconds()
	p.stop(r)
	if hasEncodes && n > 0 {
		if enc1, ok := encodes(ctx, t); ok {
			r.EncodesPerEvent = float64(enc1-enc0) / float64(n)
			r.EncodeNote = "JSON encodes of a widget anywhere in the server per write, all watchers included"
		}
	}
	cancel()
	readers.Wait()

	var lat []time.Duration
	for _, evs := range events {
		j := 0 // the write the next event should be
		for _, ev := range evs {
			if t.Name == "kapi" {
				for j < n && rvs[j] < ev.rv { // skipped writes
					j++
				}
				if j >= n || rvs[j] != ev.rv {
					continue // an event of no write of ours, or out of order
				}
			} else if j >= n {
				break
			}
			lat = append(lat, max(0, ev.at.Sub(acks[j])))
			j++
		}
		r.Delivered += int64(len(evs))
		r.Lost += int64(n) - int64(matched(evs, rvs, t.Name == "kapi"))
	}
	r.setLatency(lat)
	if err, ok := watchErr.Load().(error); ok {
		// Reported beside the figures: a watch the server ended is lost
		// events, and the reason belongs with them.
		r.Errors, r.FirstError = watchErrs.Load(), err.Error()
	}
	return r, nil
}

// matched counts the writes a watcher saw, in order.
func matched(evs []received, rvs []int64, byRV bool) int {
	if !byRV {
		return min(len(evs), len(rvs))
	}
	j, m := 0, 0
	for _, ev := range evs {
		for j < len(rvs) && rvs[j] < ev.rv {
			j++
		}
		if j < len(rvs) && rvs[j] == ev.rv {
			m++
			j++
		}
	}
	return m
}

// runIdleWatchers opens sz.IdleWatchers watches on a namespace nobody
// writes to and reports the server's RSS growth per watcher. If whileOpen
// is set, it is called before the watches end.
func runIdleWatchers(ctx context.Context, t *target, sz sizes, whileOpen func()) (*Result, error) {
	r := &Result{Workload: "idle-watchers", Server: t.Name, Watchers: sz.IdleWatchers}
	if t.PID <= 0 {
		return nil, errors.New("idle watchers: the server's RSS is unknown (not a local process)")
	}
	rv, err := currentRV(ctx, t, nsGet)
	if err != nil {
		return nil, err
	}
	settle(sz)
	before, err := rssBytes(t.PID)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wc := watchClient(t, sz.IdleWatchers)
	defer wc.CloseIdleConnections()
	var bodies []io.Closer
	for range sz.IdleWatchers {
		resp, err := openWatch(wctx, wc, t, "idle", rv)
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, resp.Body)
	}
	settle(sz)
	after, err := rssBytes(t.PID)
	if err != nil {
		return nil, err
	}
	if whileOpen != nil {
		whileOpen()
	}
	for _, b := range bodies {
		b.Close()
	}
	r.RSSBaseMiB, r.RSSEndMiB = mib(before), mib(after)
	r.IdleWatcherKiB = float64(after-before) / 1024 / float64(sz.IdleWatchers)
	return r, nil
}

// settle gives the server a moment to finish what it was doing (and its
// garbage collector to run) before RSS is read.
func settle(sz sizes) { time.Sleep(sz.Settle) }
