package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result is what one workload measured against one server.
type Result struct {
	Workload string  `json:"workload"`
	Server   string  `json:"server"` // kapi, ceiling or bolt-only
	Conns    int     `json:"conns,omitempty"`
	Rate     float64 `json:"offeredRate,omitempty"`
	Rounds   int     `json:"rounds,omitempty"` // this is the best of them

	DurationSec    float64 `json:"durationSeconds,omitempty"`
	Requests       int64   `json:"requests,omitempty"`
	Errors         int64   `json:"errors"`
	FirstError     string  `json:"firstError,omitempty"`
	RequestsPerSec float64 `json:"requestsPerSecond,omitempty"`
	BytesPerSec    float64 `json:"bytesPerSecond,omitempty"`
	P50ms          float64 `json:"p50ms,omitempty"`
	P99ms          float64 `json:"p99ms,omitempty"`
	P999ms         float64 `json:"p999ms,omitempty"`

	ServerCPUSeconds float64 `json:"serverCPUSeconds,omitempty"`
	// StoreCPUSeconds is the CPU of the store's processes (-store-pid)
	// during the same time, apart from the server's.
	StoreCPUSeconds float64 `json:"storeCPUSeconds,omitempty"`
	// CPUSecPer1k: of informers starting, per 1,000 streaming lists over
	// all rounds (ServerCPUSeconds is the reported round's).
	CPUSecPer1k float64 `json:"serverCPUSecondsPer1000Requests,omitempty"`
	RSSPeakMiB  float64 `json:"serverRSSPeakMiB,omitempty"`
	RSSEndMiB   float64 `json:"serverRSSEndMiB,omitempty"`

	// WATCH fan-out: latency figures are delivery latency, from the
	// write's acknowledgement to a watcher's receipt.
	Watchers        int     `json:"watchers,omitempty"`
	Events          int     `json:"events,omitempty"`          // writes, each one event for every watcher
	Delivered       int64   `json:"delivered,omitempty"`       // events received, over all watchers
	Lost            int64   `json:"lost"`                      // events some watcher did not get in order
	EncodesPerEvent float64 `json:"encodesPerEvent,omitempty"` // JSON encodes of a widget per write, in the whole server
	// WritesPerEvent is the server's write system calls per delivered
	// event of a fan-out (/proc/PID/io): below 1, watchers behind took
	// several events in one write, which makes each cheaper.
	WritesPerEvent float64 `json:"writeSyscallsPerEvent,omitempty"`
	// WatchEncodesPerEvent is EncodesPerEvent less the same figure with no
	// watcher: the watchers' share.
	WatchEncodesPerEvent float64 `json:"watchEncodesPerEvent,omitempty"`
	EncodeNote           string  `json:"encodeNote,omitempty"`

	// Informer start, memory, idle watchers.
	Informers      int     `json:"informers,omitempty"`
	SyncSeconds    float64 `json:"syncSeconds,omitempty"`
	Objects        int     `json:"objects,omitempty"`
	JSONBytes      int64   `json:"jsonBytes,omitempty"`
	RSSBaseMiB     float64 `json:"serverRSSBaseMiB,omitempty"`
	RSSPerJSON     float64 `json:"rssGrowthPerJSONByte,omitempty"`
	IdleWatcherKiB float64 `json:"rssPerIdleWatcherKiB,omitempty"`
	// The live heap after a forced GC, before and after the memory
	// workload's load (where the server serves Go's profiles).
	HeapBaseMiB float64 `json:"liveHeapBaseMiB,omitempty"`
	HeapEndMiB  float64 `json:"liveHeapEndMiB,omitempty"`
	HeapPerJSON float64 `json:"liveHeapGrowthPerJSONByte,omitempty"`

	// Kinds is what the kinds workload measured at one number of kinds.
	Kinds *KindsPoint `json:"kinds,omitempty"`
	// ObjectsCurve and WatchersCurve are a point of those curves.
	ObjectsCurve  *ObjectsPoint  `json:"objectsCurve,omitempty"`
	WatchersCurve *WatchersPoint `json:"watchersCurve,omitempty"`
}

// The objects: widgets of about 1 KiB of JSON as the server returns them,
// managedFields included (as every Kubernetes object carries them): labels,
// ports and a selector make up the size.
const group = "/apis/example.com/v1"

func widgetsURL(base, ns string) string { return base + group + "/namespaces/" + ns + "/widgets" }

// widgetBody is the JSON of a widget to create or replace; rv is the
// resourceVersion to send ("" for none).
func widgetBody(ns, name string, size int, rv string) []byte {
	return paddedWidgetBody(ns, name, size, rv, 0)
}

// paddedWidgetBody is widgetBody with an annotation of padding bytes, for
// widgets as large as those a controller annotates (the huge LIST's).
func paddedWidgetBody(ns, name string, size int, rv string, padding int) []byte {
	b := make([]byte, 0, 1024+padding)
	b = append(b, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":`...)
	b = strconv.AppendQuote(b, name)
	b = append(b, `,"namespace":`...)
	b = strconv.AppendQuote(b, ns)
	if rv != "" {
		b = append(b, `,"resourceVersion":`...)
		b = strconv.AppendQuote(b, rv)
	}
	if padding > 0 {
		b = append(b, `,"annotations":{"loadtest.example.com/padding":"`...)
		b = append(b, bytes.Repeat([]byte("x"), padding)...)
		b = append(b, `"}`...)
	}
	b = append(b, `,"labels":{"app":"loadtest","tier":"backend","team":"platform","shard":"`...)
	b = strconv.AppendInt(b, int64(len(name)%16), 10)
	b = append(b, `"}},"spec":{"color":"Red","replicas":3,"size":`...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, `,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}],"selector":{"app":"loadtest","tier":"backend"}}}`...)
	return b
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}

// seed creates n widgets named prefix-00000... in ns over conns
// connections and returns the total bytes of the created objects' JSON as
// the server returned them.
func seed(ctx context.Context, t *target, ns, prefix string, n, conns int) (int64, error) {
	return seedPadded(ctx, t, ns, prefix, n, conns, 0)
}

// seedPadded is seed of widgets with padding bytes of annotation each.
func seedPadded(ctx context.Context, t *target, ns, prefix string, n, conns, padding int) (int64, error) {
	if err := ensureNamespace(ctx, t, ns); err != nil {
		return 0, err
	}
	c := t.client(conns)
	defer c.CloseIdleConnections()
	var total atomic.Int64
	err := inParallel(ctx, n, conns, func(i int) error {
		name := fmt.Sprintf("%s-%05d", prefix, i)
		m, _, _, err := send(ctx, c, "POST", widgetsURL(t.URL, ns), jsonHeader, paddedWidgetBody(ns, name, i, "", padding), false)
		total.Add(m)
		return err
	})
	return total.Load(), err
}

// inParallel calls do(i) for i from 0 to n-1 on conns goroutines, each
// taking the next i, and returns the first error, after which the
// goroutine that got it stops.
func inParallel(ctx context.Context, n, conns int, do func(i int) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(i); err != nil {
					mu.Lock()
					first = cmpOr(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// ensureNamespace creates namespace ns on a server that serves namespaces
// (the example does), where widgets go only into namespaces that exist.
func ensureNamespace(ctx context.Context, t *target, ns string) error {
	c := t.client(1)
	defer c.CloseIdleConnections()
	body := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`)
	_, _, _, err := send(ctx, c, "POST", t.URL+"/api/v1/namespaces", jsonHeader, body, false)
	var he *httpError
	if errors.As(err, &he) && (he.Code == http.StatusConflict || he.Code == http.StatusNotFound) {
		return nil // there already, or the server has no namespaces
	}
	return err
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// requestWorkload is a workload of independent requests, run the same way
// against kapi and against the ceiling.
type requestWorkload struct {
	Name string
	// op makes the workload's requests to base; it is called once per run.
	op func(base string) op
	// record is the request whose response the ceiling replays (against
	// kapi's base URL).
	record func(ctx context.Context, c *http.Client, base string) (*recorded, error)
	// Conns is the workload's own number of connections; 0: -conns.
	Conns int
	// Bolt: the workload runs against a kapi on the bolt backend (a
	// server of its own, its file in a temporary directory) instead of
	// the memory one.
	Bolt bool
	// During, if not nil, runs beside the workload against kapi (never
	// the ceiling, which replays one answer whatever happens) from its
	// start until stop is called: a writer changing what is listed.
	During func(ctx context.Context, base string) (stop func() error)
	// Custom: the workload runs against a control plane serving widgets
	// as a custom resource (widgetCRD) instead of the typed example.
	Custom bool
	// Etcd: the workload runs against kapi on etcd (widgets-etcd) instead
	// of the memory one.
	Etcd bool
}

// conns is the number of connections w runs over.
func (w requestWorkload) conns(sz sizes) int {
	if w.Conns > 0 {
		return w.Conns
	}
	return sz.Conns
}

// Fixed connection counts of issue 16's targets: LIST 10,000 with 2
// connections beside -conns, and bolt CREATE with 8 concurrent writers
// (whose fsyncs the store batches).
const (
	listFewConns = 2
	boltWriters  = 8
)

// Namespaces of the seeded widgets.
const (
	nsGet    = "get"    // one widget
	nsSmall  = "small"  // the LIST of 500
	nsLarge  = "large"  // the LIST of 10,000, and the informers'
	nsHuge   = "huge"   // the LIST of 10,000 over 16 MiB
	nsWrite  = "write"  // one widget per connection, for PUT, PATCH and apply
	nsCreate = "create" // CREATE's
	nsWatch  = "watch"  // the watch fan-out's writer
	// nsInformers holds the widgets of the small informer start (1,000).
	nsInformers = "informers"
)

const protobuf = "application/vnd.kubernetes.protobuf"

// requestWorkloads are the GET, LIST and write workloads. conns is the
// number of connections, which is the number of widgets the writes share
// (one each, so that optimistic concurrency never conflicts).
func requestWorkloads(conns int) []requestWorkload {
	get := func(path, accept string) (func(string) op, func(context.Context, *http.Client, string) (*recorded, error)) {
		h := http.Header{"Accept": {accept}}
		return func(base string) op {
				url := base + path
				return func(ctx context.Context, c *http.Client, _ int, _ int64) (int64, error) {
					n, _, _, err := send(ctx, c, "GET", url, h, nil, false)
					return n, err
				}
			}, func(ctx context.Context, c *http.Client, base string) (*recorded, error) {
				return record(ctx, c, "GET", base+path, h, nil)
			}
	}
	var ws []requestWorkload
	add := func(name string, mk func(string) op, rec func(context.Context, *http.Client, string) (*recorded, error)) {
		ws = append(ws, requestWorkload{Name: name, op: mk, record: rec})
	}
	mk, rec := get(group+"/namespaces/"+nsGet+"/widgets/w-00000", "application/json")
	add("get", mk, rec)
	// The same reads at resourceVersion=0: any revision will do, the watch
	// cache answers without asking the store, whatever the backend.
	mk, rec = get(group+"/namespaces/"+nsGet+"/widgets/w-00000?resourceVersion=0", "application/json")
	add("get-rv0", mk, rec)
	mk, rec = get(group+"/namespaces/"+nsSmall+"/widgets", "application/json")
	add("list-small-json", mk, rec)
	mk, rec = get(group+"/namespaces/"+nsSmall+"/widgets", protobuf)
	add("list-small-proto", mk, rec)
	mk, rec = get(group+"/namespaces/"+nsLarge+"/widgets", "application/json")
	add("list-large-json", mk, rec)
	mk, rec = get(group+"/namespaces/"+nsLarge+"/widgets?resourceVersion=0", "application/json")
	add("list-large-json-rv0", mk, rec)
	mk, rec = get(group+"/namespaces/"+nsLarge+"/widgets", "application/json")
	add("list-large-json-2", mk, rec)
	ws[len(ws)-1].Conns = listFewConns
	mk, rec = get(group+"/namespaces/"+nsLarge+"/widgets", protobuf)
	add("list-large-proto", mk, rec)
	// kubectl get's LIST: a Table of the large namespace.
	mk, rec = get(group+"/namespaces/"+nsLarge+"/widgets", tableAccept)
	add("list-large-table", mk, rec)
	// The large LIST in JSON where the whole-collection body cache does
	// not serve it: a collection over its 16 MiB (the huge one), or one a
	// writer changes while it is listed, as a controller writing status
	// does.
	mk, rec = get(group+"/namespaces/"+nsHuge+"/widgets", "application/json")
	add("list-huge-json", mk, rec)
	mk, rec = get(group+"/namespaces/"+nsHuge+"/widgets", "application/json")
	add("list-huge-json-2", mk, rec)
	ws[len(ws)-1].Conns = listFewConns
	mk, rec = get(group+"/namespaces/"+nsLarge+"/widgets", "application/json")
	add("list-writes-json", mk, rec)
	ws[len(ws)-1].During = patchingWriter(nsLarge, listWriterRate)
	mk, rec = get(group+"/namespaces/"+nsLarge+"/widgets", "application/json")
	add("list-writes-json-2", mk, rec)
	ws[len(ws)-1].Conns, ws[len(ws)-1].During = listFewConns, patchingWriter(nsLarge, listWriterRate)

	var created atomic.Int64
	createOp := func(base string) op {
		url := widgetsURL(base, nsCreate)
		return func(ctx context.Context, c *http.Client, _ int, _ int64) (int64, error) {
			name := fmt.Sprintf("c-%d", created.Add(1))
			n, _, _, err := send(ctx, c, "POST", url, jsonHeader, widgetBody(nsCreate, name, 1, ""), false)
			return n, err
		}
	}
	createRecord := func(ctx context.Context, c *http.Client, base string) (*recorded, error) {
		name := fmt.Sprintf("c-%d", created.Add(1))
		return record(ctx, c, "POST", widgetsURL(base, nsCreate), jsonHeader, widgetBody(nsCreate, name, 1, ""))
	}
	add("create", createOp, createRecord)
	// The same CREATE against kapi on bolt, 8 writers at once, each
	// acknowledged only once on disk: the ceiling replays the bolt
	// server's answer.
	add("create-bolt", createOp, createRecord)
	ws[len(ws)-1].Conns, ws[len(ws)-1].Bolt = boltWriters, true
	// Each writer updates a widget of its own: as many as the most
	// connections any write workload uses.
	writers := max(conns, boltWriters)

	writeName := func(w int) string { return fmt.Sprintf("w-%05d", w) }
	// PUT as client-go's Update does: with the resourceVersion last read,
	// which each connection keeps for its own widget.
	add("update", func(base string) op {
		rvs := make([]string, writers)
		return func(ctx context.Context, c *http.Client, w int, seq int64) (int64, error) {
			if rvs[w] == "" {
				_, body, _, err := send(ctx, c, "GET", widgetsURL(base, nsWrite)+"/"+writeName(w), jsonHeader, nil, true)
				if err != nil {
					return 0, err
				}
				rvs[w] = resourceVersionOf(body)
			}
			n, body, _, err := send(ctx, c, "PUT", widgetsURL(base, nsWrite)+"/"+writeName(w), jsonHeader, widgetBody(nsWrite, writeName(w), int(seq), rvs[w]), true)
			if err != nil {
				rvs[w] = "" // read it again
				return n, err
			}
			rvs[w] = resourceVersionOf(body)
			return n, nil
		}
	}, func(ctx context.Context, c *http.Client, base string) (*recorded, error) {
		_, body, _, err := send(ctx, c, "GET", widgetsURL(base, nsWrite)+"/"+writeName(0), jsonHeader, nil, true)
		if err != nil {
			return nil, err
		}
		return record(ctx, c, "PUT", widgetsURL(base, nsWrite)+"/"+writeName(0), jsonHeader, widgetBody(nsWrite, writeName(0), 7, resourceVersionOf(body)))
	})

	mergeHeader := http.Header{"Content-Type": {"application/merge-patch+json"}, "Accept": {"application/json"}}
	add("patch", func(base string) op {
		return func(ctx context.Context, c *http.Client, w int, seq int64) (int64, error) {
			n, _, _, err := send(ctx, c, "PATCH", widgetsURL(base, nsWrite)+"/"+writeName(w), mergeHeader, fmt.Appendf(nil, `{"spec":{"size":%d}}`, seq), false)
			return n, err
		}
	}, func(ctx context.Context, c *http.Client, base string) (*recorded, error) {
		return record(ctx, c, "PATCH", widgetsURL(base, nsWrite)+"/"+writeName(0), mergeHeader, []byte(`{"spec":{"size":8}}`))
	})

	// Server-side apply as kubectl apply --server-side sends it: the whole
	// object, as JSON, owned by one field manager.
	const applyQuery = "?fieldManager=loadtest&force=true"
	add("apply", func(base string) op {
		return func(ctx context.Context, c *http.Client, w int, seq int64) (int64, error) {
			n, _, _, err := send(ctx, c, "PATCH", widgetsURL(base, nsWrite)+"/"+writeName(w)+applyQuery, applyHeader, widgetBody(nsWrite, writeName(w), int(seq), ""), false)
			return n, err
		}
	}, func(ctx context.Context, c *http.Client, base string) (*recorded, error) {
		return record(ctx, c, "PATCH", widgetsURL(base, nsWrite)+"/"+writeName(0)+applyQuery, applyHeader, widgetBody(nsWrite, writeName(0), 9, ""))
	})

	// The same requests for widgets defined by a CustomResourceDefinition
	// (issue 28's): the custom resource beside the typed kind. PUT and
	// PATCH on bolt, 8 writers as CREATE's. GET, LIST and the writes on
	// etcd.
	for _, w := range ws {
		if slices.Contains(customWorkloads, w.Name) {
			c := w
			c.Name += customSuffix
			c.Custom = true
			ws = append(ws, c)
		}
		if slices.Contains(boltWorkloads, w.Name) {
			b := w
			b.Name += boltSuffix
			b.Bolt, b.Conns = true, boltWriters
			ws = append(ws, b)
		}
	}
	for _, w := range ws {
		if slices.Contains(etcdWorkloads, w.Name) {
			w.Name += etcdSuffix
			w.Etcd = true
			ws = append(ws, w)
		}
	}
	return ws
}

// tableAccept is what kubectl get asks for: a Table of the objects.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// boltWorkloads run again, named with boltSuffix, against kapi on bolt
// with boltWriters connections (CREATE is create-bolt of its own).
var boltWorkloads = []string{"update", "patch"}

const boltSuffix = "-bolt"

// etcdWorkloads are the request workloads that run again, named with
// etcdSuffix, against kapi on etcd (the watch and informer starts too: see
// run).
var etcdWorkloads = []string{"get", "list-large-json", "create", "update", "patch", "apply"}

const etcdSuffix = "-etcd"

// baseName is the workload a workload on another backend or kind repeats.
func baseName(name string) string {
	for _, suffix := range []string{etcdSuffix, boltSuffix, customSuffix} {
		name = strings.TrimSuffix(name, suffix)
	}
	return name
}

// customWorkloads are the request workloads that run again, named with
// customSuffix, against widgets defined as a custom resource.
var customWorkloads = []string{"get", "list-large-json", "create", "apply"}

const customSuffix = "-cr"

// listWriterRate is the writes/s of the writer beside the list-writes
// workloads.
const listWriterRate = 10

// hugePadding is the annotation that makes the huge LIST's widgets about
// 1.8 KB, as widgets with a controller's annotations are: 10,000 of them
// make a LIST over the 16 MiB the whole-collection body cache keeps.
const hugePadding = 800

// patchingWriter is a During that merge-patches the first widget of ns at
// rate writes/s, each write one change of the collection.
func patchingWriter(ns string, rate float64) func(ctx context.Context, base string) func() error {
	return func(ctx context.Context, base string) func() error {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			c := (&target{URL: base}).client(1)
			defer c.CloseIdleConnections()
			url := widgetsURL(base, ns) + "/w-00000"
			h := http.Header{"Content-Type": {"application/merge-patch+json"}, "Accept": {"application/json"}}
			tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
			defer tick.Stop()
			var first error
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					done <- first
					return
				case <-tick.C:
				}
				if _, _, _, err := send(ctx, c, "PATCH", url, h, fmt.Appendf(nil, `{"spec":{"size":%d}}`, n), false); err != nil && ctx.Err() == nil {
					first = cmpOr(first, err)
				}
			}
		}()
		return func() error {
			cancel()
			return <-done
		}
	}
}

// resourceVersionOf finds metadata.resourceVersion in an object's JSON
// without decoding it all. Widgets have one resourceVersion field.
func resourceVersionOf(obj []byte) string {
	const key = `"resourceVersion":"`
	i := bytes.Index(obj, []byte(key))
	if i < 0 {
		return ""
	}
	rest := obj[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// sizes are the numbers of objects the workloads use.
type sizes struct {
	Small, Large int // widgets in the small and large LIST
	Watchers     int
	// SmallWatchers: the watchers of the smaller fan-out (watch-small).
	SmallWatchers int
	WatchRate     float64 // writes/s during the fan-out
	WatchDuration time.Duration
	WatchDrain    time.Duration // the longest wait for deliveries after the last write; 0: 10s
	Informers     int           // wire-level streaming lists at once, of the large LIST's widgets
	// SmallInformers streaming lists at once of SmallInformerObjects
	// widgets in a namespace of their own.
	SmallInformers, SmallInformerObjects int
	ClientGoInformers                    int // client-go informers at once
	MemoryObjects                        int
	IdleWatchers                         int
	Duration                             time.Duration // of each request workload
	Conns                                int
	Rate                                 float64 // offered requests/s for request workloads; 0 for closed loop
	InformerExpiry                       time.Duration
	// InformersFresh has a widget of the informers' namespace written
	// before each of kapi's rounds: each starts at a state no streaming
	// list saw yet (as after a controller's write), not at the one the
	// rounds before left kept.
	InformersFresh bool
	Settle         time.Duration // before an RSS reading
	Rounds         int           // of each request workload, per server: the best counts
	// KindsCurve: the numbers of kinds the kinds workload registers, each
	// on a fresh control plane.
	KindsCurve []int
	Curves     curveSizes // the objects and watchers curves'
}

// setup seeds the namespaces of the request workloads and the watch.
func setup(ctx context.Context, t *target, sz sizes) error {
	steps := []struct {
		ns, prefix string
		n          int
	}{
		{nsGet, "w", 1}, {nsSmall, "w", sz.Small}, {nsLarge, "w", sz.Large},
		{nsWrite, "w", max(sz.Conns, boltWriters)}, {nsWatch, "w", 10},
	}
	for _, s := range steps {
		if _, err := seed(ctx, t, s.ns, s.prefix, s.n, 8); err != nil {
			return fmt.Errorf("seeding %s: %w", s.ns, err)
		}
	}
	return ensureNamespace(ctx, t, nsCreate)
}

// listSize is the number of items and bytes a LIST of ns returns (JSON).
func listSize(ctx context.Context, t *target, ns string) (int, int, error) {
	c := t.client(1)
	defer c.CloseIdleConnections()
	_, body, _, err := send(ctx, c, "GET", widgetsURL(t.URL, ns), jsonHeader, nil, true)
	if err != nil {
		return 0, 0, err
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, 0, err
	}
	return len(list.Items), len(body), nil
}
