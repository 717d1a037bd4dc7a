package robustness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/faulty"
)

const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"

// scenario is one run's shape.
type scenario struct {
	// backend is the store the replicas share: an etcd cluster of
	// members by default.
	backend  func(t *testing.T, sc scenario) backend
	members  int           // etcd cluster size
	replicas int           // kapi replicas, 2 when 0
	duration time.Duration // of the writes
	clients  int
	keys     int
	watchers int
	// killMember kills etcd's leader a third of the way in and starts it
	// again halfway.
	killMember bool
	// killStore kills the whole store and starts it again, twice: with
	// kill -9 of PostgreSQL's postmaster a third of the way in, with
	// pg_ctl stop -m immediate at two thirds; replica A is stopped and
	// started before either.
	killStore bool
	// breakReplica, if set, breaks replica B's store on purpose.
	breakReplica func(storage.Interface) storage.Interface
	// rotateWriter sends the writes through one replica at a time, each
	// for a quarter of the run (B first, then C, ..., A), the reads to any:
	// so that on PostgreSQL one replica at a time holds the sole-writer
	// lease, and the next waits it out and takes it over.
	rotateWriter bool
}

// result is what a run found.
type result struct {
	ops, unknown, omitted int
	outcomes              map[string]int
	check                 porcupine.CheckResult
	visualization         string
	watchEvents           int
	problems              []string // watch mismatches, unexpected answers
	mu                    sync.Mutex
}

func (r *result) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func (r *result) String() string {
	return fmt.Sprintf("%d operations (%d of unknown outcome, %d answers that carry no information left out; outcomes %v), linearizability %s, %d watch events checked, %d problems",
		r.ops, r.unknown, r.omitted, r.outcomes, r.check, r.watchEvents, len(r.problems))
}

// TestLinearizableOverHTTP is the bounded run of CI: one etcd member, two
// replicas, one stopped and started mid-run, writes on replica A failing
// now and then after they were applied (as a store does when its
// connection breaks), clients and watchers on both.
func TestLinearizableOverHTTP(t *testing.T) {
	res := run(t, scenario{members: 1, duration: 6 * time.Second, clients: 6, keys: 3, watchers: 4})
	t.Log(res)
	report(t, res)
}

// TestLinearizableLong is the opt-in long run: three etcd members, the
// leader killed and started again, a replica stopped and started.
func TestLinearizableLong(t *testing.T) {
	if os.Getenv("KAPI_ROBUSTNESS_LONG") == "" {
		t.Skip("set KAPI_ROBUSTNESS_LONG=1 to run")
	}
	d := time.Minute
	if s := os.Getenv("KAPI_ROBUSTNESS_DURATION"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	res := run(t, scenario{members: 3, duration: d, clients: 8, keys: 4, watchers: 6, killMember: true})
	t.Log(res)
	report(t, res)
}

// TestLinearizableOnPostgres runs the checks with two and with three
// replicas on one PostgreSQL, which the test starts: replica A is stopped
// and started, then PostgreSQL itself is killed (SIGKILL of the
// postmaster) and started, then crashed (pg_ctl stop -m immediate) and
// started. With KAPI_ROBUSTNESS_LONG set it runs for
// KAPI_ROBUSTNESS_DURATION (a minute by default).
func TestLinearizableOnPostgres(t *testing.T) {
	d := 9 * time.Second
	if os.Getenv("KAPI_ROBUSTNESS_LONG") != "" {
		d = time.Minute
		if s := os.Getenv("KAPI_ROBUSTNESS_DURATION"); s != "" {
			var err error
			if d, err = time.ParseDuration(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("replicas=%d", n), func(t *testing.T) {
			res := run(t, scenario{backend: postgresBackend, replicas: n, duration: d, clients: 8, keys: 4, watchers: 6, killStore: true})
			t.Log(res)
			report(t, res)
		})
		t.Run(fmt.Sprintf("replicas=%d/rotating-writer", n), func(t *testing.T) {
			res := run(t, scenario{backend: postgresBackend, replicas: n, duration: d, clients: 8, keys: 4, watchers: 6, killStore: true, rotateWriter: true})
			t.Log(res)
			report(t, res)
		})
	}
}

// TestBrokenServersAreCaught runs the checks against replicas broken on
// purpose: they must fail.
func TestBrokenServersAreCaught(t *testing.T) {
	t.Run("ConsistentReadDoesNotWait", func(t *testing.T) {
		// Replica B's store reports the revision it had when B started,
		// so a consistent read on B is served from whatever its cache
		// holds; B's storage watch lags 20 ms, so that is often stale.
		res := run(t, scenario{members: 1, duration: 3 * time.Second, clients: 6, keys: 2, breakReplica: func(s storage.Interface) storage.Interface {
			return &frozenRevision{Interface: s, lag: 20 * time.Millisecond}
		}})
		t.Log(res)
		if res.check != porcupine.Illegal {
			t.Errorf("a replica serving stale consistent reads passed the linearizability check: %v", res)
		}
	})
	t.Run("CacheDropsAnEvent", func(t *testing.T) {
		// Replica B's watch cache misses the twentieth change.
		res := run(t, scenario{members: 1, duration: 3 * time.Second, clients: 4, keys: 2, watchers: 4, breakReplica: func(s storage.Interface) storage.Interface {
			return &droppingWatch{Interface: s, drop: 20}
		}})
		t.Log(res)
		if !slices.ContainsFunc(res.problems, func(p string) bool { return strings.HasPrefix(p, "watcher") }) {
			t.Errorf("a replica whose cache drops events passed the watch check: %v", res)
		}
	})
}

func report(t *testing.T, res *result) {
	t.Helper()
	if res.check != porcupine.Ok {
		t.Errorf("the history is not linearizable (%s); visualization: %s", res.check, res.visualization)
	}
	for _, p := range res.problems {
		t.Error(p)
	}
}

// run runs a scenario and checks what it recorded.
func run(t *testing.T, sc scenario) *result {
	if sc.backend == nil {
		sc.backend = etcdBackend
	}
	c := sc.backend(t, sc)
	var faultsA atomic.Pointer[faulty.Store] // replaced when A starts again
	a := startReplica(t, func(t *testing.T) storage.Interface {
		f := faulty.New(c.store(t))
		faultsA.Store(f)
		return f
	})
	replicas := []*replica{a}
	for i := 1; i < max(sc.replicas, 2); i++ {
		replicas = append(replicas, startReplica(t, func(t *testing.T) storage.Interface {
			s := c.store(t)
			if i == 1 && sc.breakReplica != nil {
				s = sc.breakReplica(s)
			}
			return s
		}))
	}

	// The oracle: the store's own change log, from before the first write.
	oracleStore := c.store(t)
	startRev, err := oracleStore.Revision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	oracle := startOracle(t, oracleStore, startRev)

	res := &result{outcomes: map[string]int{}}
	rec := &recorder{began: time.Now()}
	ctx, stop := context.WithTimeout(t.Context(), sc.duration)
	defer stop()

	// Watchers, half from the start, half from a list midway.
	watchCtx, stopWatchers := context.WithCancel(t.Context())
	defer stopWatchers()
	var watchers []*watcher
	var watchWG sync.WaitGroup
	startWatcher := func(i int) {
		w := &watcher{id: i, replicas: replicas, at: i % len(replicas)}
		w.from = w.listRV()
		watchers = append(watchers, w)
		watchWG.Go(func() { w.run(watchCtx) })
	}
	for i := range sc.watchers / 2 {
		startWatcher(i)
	}

	// Faults: now and then a write through A fails after it was applied.
	var faultWG sync.WaitGroup
	faultWG.Go(func() {
		for ctx.Err() == nil {
			faultsA.Load().Inject(faulty.Fault{Ops: faulty.Writes, Count: 1, AfterWrite: true,
				Err: fmt.Errorf("%w: injected: connection lost", storage.ErrUnavailable)})
			sleep(ctx, 300*time.Millisecond)
		}
	})

	// The disruptions: a replica stopped and started, the store's
	// member or the whole store killed and started.
	faultWG.Go(func() { c.disrupt(ctx, t, sc) })
	faultWG.Go(func() {
		at, down := sc.duration/2, sc.duration/8
		if sc.killStore { // before the store is killed
			at, down = sc.duration/10, sc.duration/10
		}
		sleep(ctx, at)
		if ctx.Err() != nil {
			return
		}
		t.Log("stopping replica A")
		a.stop()
		sleep(ctx, down)
		a.start()
		t.Log("replica A started again")
	})
	// The other half of the watchers start midway.
	faultWG.Go(func() {
		sleep(ctx, sc.duration/3)
		for i := sc.watchers / 2; i < sc.watchers; i++ {
			startWatcher(i)
		}
	})

	var clientWG sync.WaitGroup
	for id := range sc.clients {
		cl := &client{id: id, replicas: replicas, rec: rec, res: res, keys: sc.keys, rng: rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano()))), seen: map[string]string{}}
		if sc.rotateWriter {
			cl.writer = func() int { return (int(time.Since(rec.began)/(sc.duration/4)) + 1) % len(replicas) }
		}
		clientWG.Go(func() { cl.run(ctx) })
	}
	clientWG.Wait()
	faultWG.Wait()

	// Let the watchers catch up with the last change, then stop them.
	final, err := revisionWhenUp(t, oracleStore)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, w := range watchers {
		for w.last() < final && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	stopWatchers()
	watchWG.Wait()
	log := oracle.upTo(t, final)

	// Linearizability.
	history := rec.operations()
	res.ops = len(history)
	checked, info := porcupine.CheckOperationsVerbose(model.ToModel(), history, 2*time.Minute)
	res.check = checked
	if checked != porcupine.Ok {
		path := filepath.Join(os.TempDir(), fmt.Sprintf("kapi-robustness-%d.html", time.Now().UnixNano()))
		if err := porcupine.VisualizePath(model.ToModel(), info, path); err == nil {
			res.visualization = path
		}
	}

	// Every acknowledged write is in the store's log, and every change in
	// the log is a write some client sent.
	sent := map[string]bool{}
	for _, op := range history {
		in, out := op.Input.(input), op.Output.(output)
		if in.kind == opCreate || in.kind == opUpdate {
			sent[in.value] = true
		}
		if out.outcome == ok && in.kind != opGet && out.rv != "" && !slices.ContainsFunc(log, func(e change) bool { return e.rv == out.rv }) {
			res.problem("%s acknowledged at resourceVersion %s is not in the store's log", in.kind, out.rv)
		}
	}
	for _, e := range log {
		if e.typ != "DELETED" && !sent[e.value] {
			res.problem("the store's log holds %s %s=%s at %s, which no client wrote", e.typ, e.name, e.value, e.rv)
		}
	}

	// Every watcher saw every change after its start, once, in order.
	for _, w := range watchers {
		from, _ := strconv.ParseInt(w.from, 10, 64)
		var want []change
		for _, e := range log {
			if rv, _ := strconv.ParseInt(e.rv, 10, 64); rv > from {
				want = append(want, e)
			}
		}
		got := w.changes()
		res.watchEvents += len(got)
		if w.failure != "" {
			res.problem("watcher %d: %s", w.id, w.failure)
		}
		if !slices.Equal(got, want) {
			res.problem("watcher %d (from %s, %d moves between replicas) saw %d events, the log after its start has %d; first difference: %s",
				w.id, w.from, w.moves, len(got), len(want), firstDifference(got, want))
		}
	}
	return res
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// recorder collects the operations of every client, timed on one clock.
type recorder struct {
	began time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func (r *recorder) now() int64 { return int64(time.Since(r.began)) }

func (r *recorder) add(op porcupine.Operation) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

func (r *recorder) operations() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

// client sends random operations, each to a random replica.
type client struct {
	id       int
	replicas []*replica
	rec      *recorder
	res      *result
	keys     int
	rng      *rand.Rand
	seen     map[string]string // the last resourceVersion seen of each key
	n        int
	writer   func() int // if set, the replica every write goes to
}

var httpClient = &http.Client{Timeout: 20 * time.Second}

func (c *client) run(ctx context.Context) {
	for ctx.Err() == nil {
		key := fmt.Sprintf("k%d", c.rng.IntN(c.keys))
		in := input{key: key}
		switch p := c.rng.IntN(10); {
		case p < 2:
			in.kind = opCreate
		case p < 6:
			in.kind = opGet
		case p < 9:
			in.kind = opUpdate
		default:
			in.kind = opDelete
		}
		if in.kind == opCreate || in.kind == opUpdate {
			c.n++
			in.value = fmt.Sprintf("c%d-%d", c.id, c.n)
		}
		if in.kind == opUpdate || in.kind == opDelete {
			in.precondition = c.seen[key]
			if in.precondition == "" {
				in.precondition = "1"
			}
		}
		r := c.replicas[c.rng.IntN(len(c.replicas))]
		if c.writer != nil && in.kind != opGet {
			r = c.replicas[c.writer()]
		}
		call := c.rec.now()
		out, record := c.send(r, in)
		ret := c.rec.now()
		c.res.mu.Lock()
		if !record {
			c.res.omitted++
			c.res.mu.Unlock()
			sleep(ctx, 5*time.Millisecond) // refused: as a client backs off
			continue
		}
		c.res.outcomes[in.kind.String()+":"+out.outcome.String()]++
		if out.outcome == unknown {
			c.res.unknown++
			ret = math.MaxInt64 // it may take effect at any time after it was sent
		}
		c.res.mu.Unlock()
		if out.rv != "" {
			c.seen[key] = out.rv
		}
		c.rec.add(porcupine.Operation{ClientId: c.id, Input: in, Call: call, Output: out, Return: ret})
	}
}

type widget struct {
	Metadata struct {
		Name            string            `json:"name"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
		Annotations     map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
}

type status struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func widgetBody(name, value, rv string) string {
	rvField := ""
	if rv != "" {
		rvField = fmt.Sprintf(`,"resourceVersion":%q`, rv)
	}
	return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q%s,"annotations":{"v":%q}},"spec":{"color":"Red"}}`, name, rvField, value)
}

// send sends one operation and reads its outcome; record is false for an
// answer that says nothing of the store (a refused request, a failed read).
func (c *client) send(r *replica, in input) (out output, record bool) {
	var method, path, body string
	switch in.kind {
	case opCreate:
		method, path, body = http.MethodPost, widgetsPath, widgetBody(in.key, in.value, "")
	case opGet:
		method, path = http.MethodGet, widgetsPath+"/"+in.key
	case opUpdate:
		method, path, body = http.MethodPut, widgetsPath+"/"+in.key, widgetBody(in.key, in.value, in.precondition)
	case opDelete:
		method, path = http.MethodDelete, widgetsPath+"/"+in.key
		body = fmt.Sprintf(`{"apiVersion":"v1","kind":"DeleteOptions","preconditions":{"resourceVersion":%q}}`, in.precondition)
	}
	req, err := http.NewRequest(method, r.URL()+path+"?timeout=10s", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Op == "dial" {
			return output{}, false // the replica is down: nothing was sent
		}
		// Reset or timed out: a write may have been sent.
		return output{outcome: unknown}, in.kind != opGet
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return output{outcome: unknown}, in.kind != opGet
	}
	if resp.StatusCode < 300 {
		var w widget
		if err := json.Unmarshal(data, &w); err != nil {
			c.res.problem("%s %s: %d with %q: %v", method, path, resp.StatusCode, data, err)
			return output{}, false
		}
		out := output{outcome: ok, rv: w.Metadata.ResourceVersion}
		if in.kind == opGet {
			out.value = w.Metadata.Annotations["v"]
		}
		return out, true
	}
	var st status
	_ = json.Unmarshal(data, &st)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return output{outcome: notFound}, true
	case resp.StatusCode == http.StatusConflict && st.Reason == "AlreadyExists":
		return output{outcome: exists}, true
	case resp.StatusCode == http.StatusConflict:
		return output{outcome: conflict}, true
	case resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		if strings.Contains(st.Message, "may or may not") {
			return output{outcome: unknown}, true
		}
		return output{}, false // refused before it was tried: shutting down, or a read
	case resp.StatusCode == http.StatusTooManyRequests:
		return output{}, false
	}
	c.res.problem("%s %s: unexpected %d: %s", method, path, resp.StatusCode, data)
	return output{}, false
}

// change is one event of a watch, or of the store's log.
type change struct {
	typ, name, value, rv string
}

func (c change) String() string { return c.typ + " " + c.name + "=" + c.value + "@" + c.rv }

func firstDifference(got, want []change) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i].String()
		}
		if i < len(want) {
			w = want[i].String()
		}
		if g != w {
			return fmt.Sprintf("event %d: got %q, want %q", i, g, w)
		}
	}
	return "none"
}

// watcher watches the widgets through one replica, and moves to the other
// when its watch ends, from the last resourceVersion it saw.
type watcher struct {
	id       int
	replicas []*replica
	at       int    // the replica it watches through
	from     string // the resourceVersion it started from
	moves    int
	failure  string

	mu     sync.Mutex
	events []change
	lastRV atomic.Int64
}

// listRV is the resourceVersion of a consistent list: the watcher's start.
func (w *watcher) listRV() string {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := httpClient.Get(w.replicas[w.at].URL() + widgetsPath)
		if err == nil {
			var list struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			err = json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				rv, _ := strconv.ParseInt(list.Metadata.ResourceVersion, 10, 64)
				w.lastRV.Store(rv)
				return list.Metadata.ResourceVersion
			}
		}
		w.at = (w.at + 1) % len(w.replicas) // that replica is down: the next
		time.Sleep(10 * time.Millisecond)
		if time.Now().After(deadline) {
			w.failure = "no replica answered a list for 30s"
			return "0"
		}
	}
}

func (w *watcher) last() int64 { return w.lastRV.Load() }

func (w *watcher) changes() []change {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.events)
}

func (w *watcher) run(ctx context.Context) {
	rv := w.from
	for ctx.Err() == nil {
		next, err := w.watch(ctx, w.replicas[w.at].URL(), rv)
		rv = next
		if err != nil {
			w.failure = err.Error()
			return
		}
		if ctx.Err() == nil {
			w.at = (w.at + 1) % len(w.replicas)
			w.moves++
			sleep(ctx, 10*time.Millisecond)
		}
	}
}

// watch follows one watch from rv until it ends, and returns the last
// resourceVersion seen; an error is a watch the client could not resume.
func (w *watcher) watch(ctx context.Context, base, rv string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+widgetsPath+"?watch=1&allowWatchBookmarks=true&resourceVersion="+rv, nil)
	if err != nil {
		return rv, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rv, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusGone {
			return rv, fmt.Errorf("watch from %s: %s", rv, data)
		}
		return rv, nil // shutting down, say
	}
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return rv, nil
		}
		if ev.Type == "ERROR" {
			if bytes.Contains(ev.Object, []byte(`"code":410`)) {
				return rv, fmt.Errorf("watch from %s ended with %s", rv, ev.Object)
			}
			return rv, nil
		}
		var obj widget
		if err := json.Unmarshal(ev.Object, &obj); err != nil {
			return rv, err
		}
		rv = obj.Metadata.ResourceVersion
		n, _ := strconv.ParseInt(rv, 10, 64)
		w.lastRV.Store(n)
		if ev.Type == "BOOKMARK" {
			continue
		}
		w.mu.Lock()
		w.events = append(w.events, change{ev.Type, obj.Metadata.Name, obj.Metadata.Annotations["v"], rv})
		w.mu.Unlock()
	}
}

// oracle is a watch of the store itself, below kapi: the log of changes.
type oracle struct {
	mu     sync.Mutex
	events []change
	last   int64
	err    error
}

func startOracle(t *testing.T, s storage.Interface, from int64) *oracle {
	o := &oracle{last: from}
	events, err := s.Watch(t.Context(), "/", from)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range events {
			o.mu.Lock()
			if ev.Err != nil {
				o.err = ev.Err
				o.mu.Unlock()
				return
			}
			typ := "MODIFIED"
			switch {
			case ev.Type == storage.Delete:
				typ = "DELETED"
			case ev.Prev == nil:
				typ = "ADDED"
			}
			var obj widget
			_ = json.Unmarshal(ev.Value, &obj)
			name := ev.Key[strings.LastIndexByte(ev.Key, '/')+1:]
			o.events = append(o.events, change{typ, name, obj.Metadata.Annotations["v"], strconv.FormatInt(ev.ModRevision, 10)})
			o.last = ev.ModRevision
			o.mu.Unlock()
		}
	}()
	return o
}

func (o *oracle) upTo(t *testing.T, rev int64) []change {
	deadline := time.Now().Add(30 * time.Second)
	for {
		o.mu.Lock()
		last, err, events := o.last, o.err, slices.Clone(o.events)
		o.mu.Unlock()
		if err != nil {
			t.Fatalf("the store's own watch: %v", err)
		}
		if last >= rev {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store's own watch reached %d, not %d", last, rev)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// frozenRevision breaks the consistent-read wait: it reports the revision
// of its first answer for ever, and delays its watch, so that a cache fed
// by it lags and is not waited for.
type frozenRevision struct {
	storage.Interface
	lag  time.Duration
	once sync.Once
	rev  int64
}

func (f *frozenRevision) Revision(ctx context.Context) (int64, error) {
	var err error
	f.once.Do(func() { f.rev, err = f.Interface.Revision(ctx) })
	return f.rev, err
}

func (f *frozenRevision) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	return relayWatch(ctx, f.Interface, prefix, rev, func(storage.Event) bool {
		sleep(ctx, f.lag)
		return true
	})
}

// relayWatch relays a watch of s, the events keep says to keep.
func relayWatch(ctx context.Context, s storage.Interface, prefix string, rev int64, keep func(storage.Event) bool) (<-chan storage.Event, error) {
	in, err := s.Watch(ctx, prefix, rev)
	if err != nil {
		return nil, err
	}
	out := make(chan storage.Event)
	go func() {
		defer close(out)
		for ev := range in {
			if !keep(ev) {
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// droppingWatch breaks the watch cache: its watches leave out their
// drop-th event.
type droppingWatch struct {
	storage.Interface
	drop int64
	n    atomic.Int64
}

func (d *droppingWatch) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	return relayWatch(ctx, d.Interface, prefix, rev, func(ev storage.Event) bool {
		return ev.Err != nil || d.n.Add(1) != d.drop
	})
}
