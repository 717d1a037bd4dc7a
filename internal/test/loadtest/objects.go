package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
)

// The objects curve: one collection of widgets grown from 1,000 to
// 1,000,000 in a store (a bolt file, etcd), kapi started on it at each
// size and measured: start-up, memory, LIST, GET and CREATE. The store is
// filled directly, not through kapi's HTTP API (a million creates over
// HTTP would take the curve's whole budget): one widget is created
// through kapi, and copies of its stored key and value, renamed, are
// written with kapi stopped, by kapi's own storage package (bolt) or in
// batched transactions (etcd), as kapi would have stored them.

// ObjectsPoint is what the objects curve measured at one size of the
// collection in one store.
type ObjectsPoint struct {
	Store   string `json:"store"` // bolt or etcd
	Objects int    `json:"objects"`
	// NotReady says why kapi did not get ready at this size (within
	// readyWithin); nothing else of the point but the fill is measured.
	NotReady string `json:"notReady,omitempty"`
	// FillSeconds: the direct fill up to Objects, from the previous size.
	FillSeconds float64 `json:"fillSeconds"`
	// StoreMiB is the store's size on disk after the fill (the bolt file;
	// etcd's data directory), when known.
	StoreMiB float64 `json:"storeMiB,omitempty"`
	// From the server process's start: its first /healthz answer (the
	// process is up and listening) and its first /readyz 200 (its watch
	// cache holds every object).
	HealthzMs float64 `json:"healthzMs"`
	ReadyMs   float64 `json:"readyMs"`
	// IdleMs: from the process's start until it was idle (see
	// waitIdle: the work it goes on doing once ready, such as the garbage
	// collector's first look at every object, done), and the server's CPU
	// seconds from ready to idle. The requests are measured after it.
	IdleMs float64 `json:"idleMs,omitempty"`
	// At ready, counted: the server's GC cycles so far and the share of
	// its CPU they took (MemStats' NumGC and GCCPUFraction); and the top
	// of its CPU profile over most of the start-up, where that lasts
	// seconds.
	StartGCs         int64   `json:"startGCs,omitempty"`
	StartGCCPU       float64 `json:"startGCCPUFraction,omitempty"`
	StartProfile     string  `json:"startProfile,omitempty"`
	ReadyCPUSec      float64 `json:"readyCPUSeconds,omitempty"` // the server's CPU from its start to ready
	AfterReadyCPUSec float64 `json:"afterReadyCPUSeconds,omitempty"`
	// The server's RSS and live heap (after a forced GC) once ready and
	// settled, and the store's process's RSS (etcd) beside.
	RSSMiB      float64 `json:"rssMiB"`
	HeapMiB     float64 `json:"heapMiB,omitempty"`
	StoreRSSMiB float64 `json:"storeRSSMiB,omitempty"`
	// LIST of the whole collection in JSON, one at a time.
	Lists      int     `json:"lists"`
	ListBytes  int64   `json:"listBytes"`
	ListP50Ms  float64 `json:"listP50ms"`
	ListP99Ms  float64 `json:"listP99ms"`
	ListMaxMs  float64 `json:"listMaxMs"`
	GCsPerList float64 `json:"gcsPerList,omitempty"` // the server's GC cycles per LIST, counted (NumGC)
	// ListCPUMs is the server's CPU time per LIST.
	ListCPUMs float64 `json:"listCPUms,omitempty"`
	// GET of one widget (a different one each request) and CREATE, closed
	// loop over -conns connections.
	GetPerSec    float64 `json:"getPerSecond"`
	GetP99Ms     float64 `json:"getP99ms"`
	CreatePerSec float64 `json:"createPerSecond"`
	CreateP99Ms  float64 `json:"createP99ms"`
	// The server's CPU per GET and per CREATE, µs, and its GC cycles per
	// 1,000 CREATEs, counted.
	GetCPUUs        float64 `json:"getCPUMicros,omitempty"`
	CreateCPUUs     float64 `json:"createCPUMicros,omitempty"`
	GCsPer1kCreates float64 `json:"gcsPer1000Creates,omitempty"`
	// CreateProfile is the top of kapi's CPU profile during the CREATEs,
	// by cumulative share (where the server serves one).
	CreateProfile string `json:"createProfile,omitempty"`
}

// objectStore is a store the objects curve grows, with the kapi that
// serves it.
type objectStore struct {
	Name string
	// Max is the largest size of the curve measured on it; 0: all.
	Max int
	// Template reads the stored key and value of the widget
	// objectName(0), which kapi created; kapi is not running.
	Template func(ctx context.Context) (string, []byte, error)
	// Fill writes widgets named objectName(from) to objectName(to-1)
	// into the collection, copies of the template; kapi is not running.
	Fill func(ctx context.Context, key string, value []byte, from, to int) error
	// Start starts kapi on the store and returns once /readyz answers
	// 200, with the times from its start to /healthz's and /readyz's
	// first answers; listening, if not nil, is called at the first.
	Start func(ctx context.Context, listening func(*target)) (t *target, healthz, ready time.Duration, stop func(), err error)
	// Size is the store's size on disk (0: unknown); StorePID its
	// process's (0: in kapi's).
	Size     func() int64
	StorePID func() int
	// Close removes the store.
	Close func()
}

// nsObjects holds the collection; the CREATEs go into nsObjectsCreate,
// so that every LIST and GET of a point sees exactly its size.
const (
	nsObjects       = "objects"
	nsObjectsCreate = "objects-created"
)

// objectName is the i-th widget of the collection: all of one length, so
// that a copy of the first is the same size.
func objectName(i int) string { return fmt.Sprintf("o-%07d", i) }

// copyObject is the stored key and value of the i-th widget made from the
// template's (the widget objectName(0)): its name and the last 7 hex digits
// of its uid replaced.
func copyObject(key string, value []byte, i int) (string, []byte) {
	from, to := objectName(0), objectName(i)
	k := strings.TrimSuffix(key, from) + to
	v := bytes.Replace(value, []byte(`"name":"`+from+`"`), []byte(`"name":"`+to+`"`), 1)
	if j := bytes.Index(v, []byte(`"uid":"`)); j >= 0 {
		end := j + len(`"uid":"`) + 36
		if end < len(v) && v[end] == '"' {
			copy(v[end-7:end], fmt.Sprintf("%07x", i))
		}
	}
	return k, v
}

// objectsTemplate finds the template widget among a store's keys.
func objectsTemplate(kvs []storage.KeyValue) (string, []byte, error) {
	suffix := "/" + nsObjects + "/" + objectName(0)
	for _, kv := range kvs {
		if strings.Contains(kv.Key, "widgets") && strings.HasSuffix(kv.Key, suffix) {
			if !bytes.Contains(kv.Value, []byte(`"name":"`+objectName(0)+`"`)) {
				return "", nil, fmt.Errorf("the template %s does not hold its name as JSON", kv.Key)
			}
			return kv.Key, kv.Value, nil
		}
	}
	return "", nil, fmt.Errorf("no stored widget ends in %s", suffix)
}

// boltTemplate reads the template from the bolt file at path.
func boltTemplate(ctx context.Context, path string) (string, []byte, error) {
	db, err := bolt.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer db.Close()
	all, err := db.List(ctx, "/", storage.ListOptions{})
	if err != nil {
		return "", nil, err
	}
	return objectsTemplate(all.Items)
}

// fillBolt writes the copies into the bolt file at path through kapi's
// bolt store, many at once so that its group commit batches them.
func fillBolt(ctx context.Context, path, key string, value []byte, from, to int) error {
	db, err := bolt.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	return inParallel(ctx, to-from, 512, func(i int) error {
		k, v := copyObject(key, value, from+i)
		_, err := db.Create(ctx, k, v)
		return err
	})
}

// readyWithin is how long the objects curve waits for kapi to get ready.
const readyWithin = 5 * time.Minute

// errNotReady is the error of a server that did not get ready within
// readyWithin.
var errNotReady = fmt.Errorf("not ready within %s", readyWithin)

// createdObjects numbers the CREATEs of the curve, across its points.
var createdObjects atomic.Int64

// runObjects grows s's collection through sz.ObjectsCurve and measures
// kapi at each size.
func runObjects(ctx context.Context, s *objectStore, sz sizes, logf func(string, ...any)) ([]*ObjectsPoint, error) {
	// The template, created through kapi.
	t, _, _, stop, err := s.Start(ctx, nil)
	if err != nil {
		return nil, err
	}
	err = errors.Join(ensureNamespace(ctx, t, nsObjects), ensureNamespace(ctx, t, nsObjectsCreate))
	if err == nil {
		c := t.client(1)
		_, _, _, err = send(ctx, c, "POST", widgetsURL(t.URL, nsObjects), jsonHeader, widgetBody(nsObjects, objectName(0), 1, ""), false)
		c.CloseIdleConnections()
	}
	stop()
	if err != nil {
		return nil, fmt.Errorf("the template widget: %w", err)
	}
	key, value, err := s.Template(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	var points []*ObjectsPoint
	have := 1
	for _, n := range sz.Curves.Objects {
		if s.Max > 0 && n > s.Max {
			logf("objects %s: %d widgets left out (the most measured on it is %d)", s.Name, n, s.Max)
			continue
		}
		p := &ObjectsPoint{Store: s.Name, Objects: n}
		start := time.Now()
		if n > have {
			if err := s.Fill(ctx, key, value, have, n); err != nil {
				return points, fmt.Errorf("%s: filling to %d: %w", s.Name, n, err)
			}
			have = n
		}
		p.FillSeconds = time.Since(start).Seconds()
		p.StoreMiB = mib(s.Size())
		// A CPU profile of the start-up where it lasts seconds, as the
		// previous size's says it will (scaled to this one's).
		var profile chan []byte
		listening := func(t *target) {
			if len(points) == 0 {
				return
			}
			prev := points[len(points)-1]
			secs := int(min(0.8*prev.ReadyMs/1000*float64(n)/float64(prev.Objects), 60))
			if secs < 2 {
				return
			}
			profile = make(chan []byte, 1)
			go func() { profile <- fetchProfile(ctx, t, secs) }()
		}
		t, healthz, ready, stop, err := s.Start(ctx, listening)
		if errors.Is(err, errNotReady) {
			// A point of the curve all the same: the start-up is what grew.
			p.NotReady = err.Error()
			points = append(points, p)
			logf("objects %-4s %8d: filled in %.1f s; %v", s.Name, n, p.FillSeconds, err)
			break
		}
		if err != nil {
			return points, fmt.Errorf("%s: starting on %d widgets: %w", s.Name, n, err)
		}
		p.HealthzMs, p.ReadyMs = ms(healthz), ms(ready)
		if gcs, frac, ok := gcStats(ctx, t); ok {
			p.StartGCs, p.StartGCCPU = gcs, frac
		}
		if t.PID > 0 && t.PID != os.Getpid() {
			cpu0, _ := cpuSeconds(t.PID)
			p.ReadyCPUSec = cpu0
			p.IdleMs = p.ReadyMs + ms(waitIdle(ctx, t.PID))
			cpu1, _ := cpuSeconds(t.PID)
			p.AfterReadyCPUSec = cpu1 - cpu0
		}
		err = measureObjects(ctx, t, s, p, sz)
		if profile != nil {
			if prof := <-profile; len(prof) > 0 {
				p.StartProfile = profileTop(ctx, prof, 25)
			}
		}
		stop()
		if err != nil {
			return points, fmt.Errorf("%s, %d widgets: %w", s.Name, n, err)
		}
		logf("objects %-4s %8d: filled in %.1f s, ready in %.0f ms, idle at %.0f ms (%.1f s of CPU after ready), RSS %.0f MiB, LIST p50 %.0f ms p99 %.0f ms (%d), GET p99 %.2f ms, CREATE %.0f/s", s.Name, n, p.FillSeconds, p.ReadyMs, p.IdleMs, p.AfterReadyCPUSec, p.RSSMiB, p.ListP50Ms, p.ListP99Ms, p.Lists, p.GetP99Ms, p.CreatePerSec)
		points = append(points, p)
	}
	return points, nil
}

// measureObjects measures kapi, just started on p.Objects widgets.
func measureObjects(ctx context.Context, t *target, s *objectStore, p *ObjectsPoint, sz sizes) error {
	settle(sz)
	if t.PID > 0 {
		rss, err := rssBytes(t.PID)
		if err != nil {
			return err
		}
		p.RSSMiB = mib(rss)
	}
	if pid := s.StorePID(); pid > 0 {
		if rss, err := rssBytes(pid); err == nil {
			p.StoreRSSMiB = mib(rss)
		}
	}
	heap, err := liveHeap(ctx, t)
	if err != nil && !errors.Is(err, errNoHeap) {
		return err
	}
	p.HeapMiB = mib(heap)

	// LIST, one at a time: at least sz.Curves.ObjectsLists, more while the
	// budget lasts.
	c := t.client(1)
	defer c.CloseIdleConnections()
	url := widgetsURL(t.URL, nsObjects)
	gc0, hasGC := numGC(ctx, t)
	cpu0, _ := cpuSeconds(t.PID)
	var lat []time.Duration
	begin := time.Now()
	for len(lat) < sz.Curves.ObjectsLists || (time.Since(begin) < sz.Duration && len(lat) < 100) {
		start := time.Now()
		n, _, _, err := send(ctx, c, "GET", url, jsonHeader, nil, false)
		if err != nil {
			return fmt.Errorf("LIST: %w", err)
		}
		lat = append(lat, time.Since(start))
		p.ListBytes = n
	}
	if cpu1, err := cpuSeconds(t.PID); err == nil && t.PID > 0 {
		p.ListCPUMs = (cpu1 - cpu0) * 1000 / float64(len(lat))
	}
	if gc1, ok := numGC(ctx, t); ok && hasGC {
		p.GCsPerList = float64(gc1-gc0) / float64(len(lat))
	}
	p.Lists = len(lat)
	var lr Result
	lr.setLatency(lat)
	p.ListP50Ms, p.ListP99Ms, p.ListMaxMs = lr.P50ms, lr.P99ms, ms(slices.Max(lat))
	if p.ListBytes < int64(p.Objects)*500 {
		return fmt.Errorf("the LIST of %d widgets is %d bytes", p.Objects, p.ListBytes)
	}

	spec := loadSpec{Conns: sz.Conns, Duration: sz.Duration}
	get := runLoad(ctx, t, spec, func(ctx context.Context, c *http.Client, _ int, seq int64) (int64, error) {
		n, _, _, err := send(ctx, c, "GET", url+"/"+objectName(int(seq)%p.Objects), jsonHeader, nil, false)
		return n, err
	})
	if get.Errors > 0 {
		return fmt.Errorf("GET: %d errors, the first: %s", get.Errors, get.FirstError)
	}
	p.GetPerSec, p.GetP99Ms = get.RequestsPerSec, get.P99ms
	if get.Requests > 0 {
		p.GetCPUUs = get.ServerCPUSeconds * 1e6 / float64(get.Requests)
	}
	gc0, hasGC = numGC(ctx, t)
	profile := make(chan []byte, 1)
	go func() { profile <- fetchProfile(ctx, t, max(1, int(sz.Duration.Seconds()))) }()
	create := runLoad(ctx, t, spec, func(ctx context.Context, c *http.Client, _ int, _ int64) (int64, error) {
		name := "c-" + strconv.FormatInt(createdObjects.Add(1), 10)
		n, _, _, err := send(ctx, c, "POST", widgetsURL(t.URL, nsObjectsCreate), jsonHeader, widgetBody(nsObjectsCreate, name, 1, ""), false)
		return n, err
	})
	if create.Errors > 0 {
		return fmt.Errorf("CREATE: %d errors, the first: %s", create.Errors, create.FirstError)
	}
	p.CreatePerSec, p.CreateP99Ms = create.RequestsPerSec, create.P99ms
	if create.Requests > 0 {
		p.CreateCPUUs = create.ServerCPUSeconds * 1e6 / float64(create.Requests)
		if gc1, ok := numGC(ctx, t); ok && hasGC {
			p.GCsPer1kCreates = float64(gc1-gc0) * 1000 / float64(create.Requests)
		}
	}
	if prof := <-profile; len(prof) > 0 {
		p.CreateProfile = profileTop(ctx, prof, 12)
	}
	return nil
}

// waitIdle waits until the process pid is idle, at most 10 minutes, and
// returns how long that took: until, over two successive half-seconds,
// at most one in ten of the samples taken every 25 ms found one of its
// threads running or runnable (on a loaded machine a busy process waiting
// for a core is runnable, where its CPU time alone would look idle). A
// process in the harness's own (a test's) never is idle: it returns at
// once.
func waitIdle(ctx context.Context, pid int) time.Duration {
	start := time.Now()
	if pid == os.Getpid() {
		return 0
	}
	const samples, every = 20, 25 * time.Millisecond
	quiet := 0
	for quiet < 2 && time.Since(start) < 10*time.Minute && ctx.Err() == nil {
		busy := 0
		for range samples {
			r, err := runnable(pid)
			if err != nil {
				return time.Since(start)
			}
			if r {
				busy++
			}
			time.Sleep(every)
		}
		if busy <= samples/10 {
			quiet++
		} else {
			quiet = 0
		}
	}
	return time.Since(start)
}

// runnable says whether one of pid's threads is running or waiting for a
// core (state R in /proc/PID/task/TID/stat).
func runnable(pid int) (bool, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false, err
	}
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, t.Name()))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) && data[i+2] == 'R' {
			return true, nil
		}
	}
	return false, nil
}

// fetchProfile is the server's CPU profile over secs seconds; nil if it
// serves none.
func fetchProfile(ctx context.Context, t *target, secs int) []byte {
	c := t.client(1)
	defer c.CloseIdleConnections()
	_, body, _, err := send(ctx, c, "GET", fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", t.URL, secs), nil, nil, true)
	if err != nil {
		return nil
	}
	return body
}

// gcStats is the server's count of GC cycles and the share of its CPU
// they took since it started, from its heap profile's text form.
func gcStats(ctx context.Context, t *target) (n int64, fraction float64, ok bool) {
	c := t.client(1)
	defer c.CloseIdleConnections()
	_, body, _, err := send(ctx, c, "GET", t.URL+"/debug/pprof/heap?debug=1", nil, nil, true)
	if err != nil {
		return 0, 0, false
	}
	var okN, okF bool
	for line := range bytes.Lines(body) {
		if rest, found := bytes.CutPrefix(line, []byte("# NumGC = ")); found {
			n, err = strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
			okN = err == nil
		}
		if rest, found := bytes.CutPrefix(line, []byte("# GCCPUFraction = ")); found {
			fraction, err = strconv.ParseFloat(string(bytes.TrimSpace(rest)), 64)
			okF = err == nil
		}
	}
	return n, fraction, okN && okF
}

// numGC is the server's count of completed GC cycles, from its heap
// profile's text form (no GC forced); ok is false if it serves none.
func numGC(ctx context.Context, t *target) (int64, bool) {
	c := t.client(1)
	defer c.CloseIdleConnections()
	_, body, _, err := send(ctx, c, "GET", t.URL+"/debug/pprof/heap?debug=1", nil, nil, true)
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(body) {
		if rest, ok := bytes.CutPrefix(line, []byte("# NumGC = ")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// objectsPoints are the objects curve's points, in the order measured.
func objectsPoints(results []*Result) []*ObjectsPoint {
	var out []*ObjectsPoint
	for _, r := range results {
		if r.ObjectsCurve != nil {
			out = append(out, r.ObjectsCurve)
		}
	}
	return out
}

// note is the point as the results table's note says it.
func (p *ObjectsPoint) note() string {
	return fmt.Sprintf("%s, %d widgets (%.0f MiB of LIST JSON): ready in %.0f ms, RSS %.0f MiB, LIST p50 %.0f ms p99 %.0f ms (%d), GET p99 %.2f ms, CREATE %.0f/s",
		p.Store, p.Objects, mib(p.ListBytes), p.ReadyMs, p.RSSMiB, p.ListP50Ms, p.ListP99Ms, p.Lists, p.GetP99Ms, p.CreatePerSec)
}
