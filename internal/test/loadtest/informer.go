package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// restConfig is client-go's configuration for t, without client-side rate
// limits (the harness is the only client).
func restConfig(t *target) *rest.Config {
	cfg := &rest.Config{Host: t.URL, QPS: -1}
	if t.TLS != nil {
		cfg.Transport = nil
		cfg.WrapTransport = nil
		// client-go builds its TLS from files or bytes; the harness has a
		// ready tls.Config, so it hands client-go a transport instead.
		cfg.Transport = t.client(1).Transport
	}
	return cfg
}

// runInformers starts sz.ClientGoInformers dynamic informers on the widgets of
// nsLarge at once, each with its own client and connection, as client-go
// starts them by default (a streaming list: a watch with
// sendInitialEvents=true), and measures the time until all have synced.
// Each informer keeps only its objects' metadata, so that the harness's
// own memory stays small; it still decodes every object.
func runInformers(ctx context.Context, t *target, sz sizes, objects int) (*Result, error) {
	r := &Result{Workload: "informers-client-go", Server: t.Name, Informers: sz.ClientGoInformers, Objects: objects}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	var informers []cache.SharedIndexInformer
	var factories []dynamicinformer.DynamicSharedInformerFactory
	for range sz.ClientGoInformers {
		client, err := dynamic.NewForConfig(restConfig(t))
		if err != nil {
			return nil, err
		}
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, nsLarge, nil)
		inf := f.ForResource(widgetsGVR).Informer()
		if err := inf.SetTransform(metadataOnly); err != nil {
			return nil, err
		}
		informers = append(informers, inf)
		factories = append(factories, f)
	}
	defer func() {
		cancel()
		for _, f := range factories {
			f.Shutdown()
		}
	}()
	p := watchTarget(t)
	start := time.Now()
	for _, f := range factories {
		f.Start(ictx.Done())
	}
	timeout := sz.InformerExpiry
	sctx, scancel := context.WithTimeout(ictx, timeout)
	defer scancel()
	var wg sync.WaitGroup
	synced := make([]bool, len(informers))
	for i, inf := range informers {
		wg.Go(func() { synced[i] = cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) })
	}
	wg.Wait()
	r.SyncSeconds = time.Since(start).Seconds()
	p.stop(r)
	for i, ok := range synced {
		if !ok {
			return r, fmt.Errorf("informer %d did not sync within %v", i, timeout)
		}
		if n := len(informers[i].GetStore().ListKeys()); n != objects {
			return r, fmt.Errorf("informer %d synced with %d objects, want %d", i, n, objects)
		}
	}
	return r, nil
}

// metadataOnly keeps name, namespace and resourceVersion of an object.
func metadataOnly(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	small := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}}
	small.SetName(u.GetName())
	small.SetNamespace(u.GetNamespace())
	small.SetResourceVersion(u.GetResourceVersion())
	return small, nil
}

// streaming is one informer-start workload: Clients streaming lists of
// the Objects widgets of NS at once.
type streaming struct {
	Name             string // the workload's
	NS               string
	Clients, Objects int
	Expiry           time.Duration
	Rounds           int // per server, the quickest counting
}

// streamingWorkload is the informer-start workload called name: 100
// clients on the 10,000 widgets of the large LIST, or 8 on 1,000 widgets
// in a namespace of their own (by default).
func streamingWorkload(name string, sz sizes) (streaming, bool) {
	switch baseName(name) {
	case "informers":
		return streaming{name, nsLarge, sz.Informers, sz.Large, sz.InformerExpiry, max(sz.Rounds, 1)}, true
	case "informers-small":
		// Some tens of milliseconds each: more rounds, for a figure
		// that one stall of the shared machine does not make.
		return streaming{name, nsInformers, sz.SmallInformers, sz.SmallInformerObjects, sz.InformerExpiry, 5 * max(sz.Rounds, 1)}, true
	}
	return streaming{}, false
}

// streamingListQuery is the request client-go's informers send to start:
// a watch that first sends every object, then a bookmark.
const streamingListQuery = "?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"

// runInformerStart runs s against kapi (t) and, where there is one, the
// ceiling, configured with kapi's answer to one streaming list (recorded
// once): rounds of each in turn, the quickest round of each.
func runInformerStart(ctx context.Context, e *env, t *target, s streaming) (kapi, ceiling *Result, err error) {
	if e.Ceiling != nil {
		c := watchClient(t, 1)
		rec := &recordedStream{}
		_, _, err := streamingList(ctx, c, widgetsURL(t.URL, s.NS)+streamingListQuery, rec)
		c.CloseIdleConnections()
		if err != nil {
			return nil, nil, fmt.Errorf("recording kapi's streaming list for the ceiling: %w", err)
		}
		if err := configureCeiling(ctx, e.Ceiling.URL, ceilingConfig{WatchHeader: rec.Header, Initial: rec.Body.Bytes()}); err != nil {
			return nil, nil, err
		}
	}
	// The server's CPU, in clock ticks, over all rounds: one round of the
	// small start is a few ticks.
	var kapiCPU, ceilingCPU float64
	for i := range max(s.Rounds, 1) {
		if e.Sizes.InformersFresh {
			if err := touch(ctx, t, s.NS, i); err != nil {
				return nil, nil, err
			}
		}
		r, err := runStreamingLists(ctx, t, s)
		if err != nil {
			return nil, nil, err
		}
		kapiCPU += r.ServerCPUSeconds
		kapi = quicker(kapi, r)
		if e.Ceiling != nil {
			r, err := runStreamingLists(ctx, e.Ceiling, s)
			if err != nil {
				return nil, nil, fmt.Errorf("ceiling: %w", err)
			}
			ceilingCPU += r.ServerCPUSeconds
			ceiling = quicker(ceiling, r)
		}
	}
	perList := func(r *Result, cpu float64) {
		if r != nil && cpu > 0 {
			r.CPUSecPer1k = cpu / float64(r.Rounds*r.Informers) * 1000
		}
	}
	perList(kapi, kapiCPU)
	perList(ceiling, ceilingCPU)
	return kapi, ceiling, nil
}

// touch merge-patches the first widget of ns (each workload's widgets are
// named from 00000), so that the collection is at a state no list saw.
func touch(ctx context.Context, t *target, ns string, i int) error {
	c := t.client(1)
	defer c.CloseIdleConnections()
	url := widgetsURL(t.URL, ns) + "/w-00000"
	header := http.Header{"Content-Type": {"application/merge-patch+json"}}
	_, _, _, err := send(ctx, c, "PATCH", url, header, fmt.Appendf(nil, `{"metadata":{"annotations":{"loadtest/round":"%d"}}}`, i), false)
	return err
}

// quicker is the round whose informers synced sooner.
func quicker(a, b *Result) *Result {
	return keepBest(a, b, a != nil && b.SyncSeconds < a.SyncSeconds)
}

// runStreamingLists starts s.Clients streaming lists of s.NS at once, each
// on its own connection, with the request client-go's informers send, and
// reads each until the bookmark that ends its initial events: the server's
// side of informers starting, without client-go's decoding, which on a
// small machine costs the client far more than the server (about 80 µs of
// CPU per widget). Each list must bring every widget.
func runStreamingLists(ctx context.Context, t *target, s streaming) (*Result, error) {
	r := &Result{Workload: s.Name, Server: t.Name, Informers: s.Clients, Objects: s.Objects}
	ictx, cancel := context.WithTimeout(ctx, s.Expiry)
	defer cancel()
	wc := watchClient(t, s.Clients)
	defer wc.CloseIdleConnections()
	url := widgetsURL(t.URL, s.NS) + streamingListQuery
	p := watchTarget(t)
	start := time.Now()
	var wg sync.WaitGroup
	var firstErr atomic.Value
	var bytesRead atomic.Int64
	for range s.Clients {
		wg.Go(func() {
			n, size, err := streamingList(ictx, wc, url, nil)
			bytesRead.Add(size)
			if err == nil && n != s.Objects {
				err = fmt.Errorf("a streaming list brought %d widgets, want %d", n, s.Objects)
			}
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
			}
		})
	}
	wg.Wait()
	r.SyncSeconds = time.Since(start).Seconds()
	r.DurationSec = r.SyncSeconds
	r.BytesPerSec = float64(bytesRead.Load()) / r.SyncSeconds
	r.Requests = int64(s.Clients)
	p.stop(r)
	if err, ok := firstErr.Load().(error); ok {
		return nil, err
	}
	return r, nil
}

// recordedStream is a streaming list as kapi sent it, for the ceiling.
type recordedStream struct {
	Header http.Header
	Body   bytes.Buffer // every frame up to the initial-events-end bookmark
}

// streamingList reads one streaming list up to its initial-events-end
// bookmark and returns the number of ADDED events and the bytes read; rec,
// if set, keeps the response's headers and bytes.
func streamingList(ctx context.Context, c *http.Client, url string, rec *recordedStream) (int, int64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, &httpError{"GET", url, resp.StatusCode, ""}
	}
	if rec != nil {
		rec.Header = resp.Header.Clone()
		rec.Header.Del("Date") // net/http writes its own
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	added, size := 0, int64(0)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			rest, err2 := br.ReadBytes('\n')
			line, err = append(bytes.Clone(line), rest...), err2
		}
		size += int64(len(line))
		if rec != nil {
			rec.Body.Write(line)
		}
		switch {
		case bytes.HasPrefix(line, []byte(`{"type":"ADDED"`)):
			added++
		case bytes.HasPrefix(line, []byte(`{"type":"BOOKMARK"`)) && bytes.Contains(line, []byte(`"k8s.io/initial-events-end":"true"`)):
			return added, size, nil
		}
		if err != nil {
			return added, size, fmt.Errorf("the stream ended after %d ADDED events and no initial-events-end bookmark: %w", added, err)
		}
	}
}
