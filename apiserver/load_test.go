package apiserver_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// loadChange is one change of one widget: a write as the store recorded it,
// or an event as a watcher received it.
type loadChange struct {
	RV   int64
	Type string // ADDED, MODIFIED or DELETED
	Name string
}

func (c loadChange) String() string { return fmt.Sprintf("%s %s@%d", c.Type, c.Name, c.RV) }

// loadServer starts the example API over store, with a client that keeps
// enough idle connections for many concurrent writers (the default two
// would open a connection for almost every request).
func loadServer(t *testing.T, store storage.Interface) *apiClient {
	t.Helper()
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	t.Cleanup(tr.CloseIdleConnections)
	return &apiClient{t: t, base: srv.URL, hc: &http.Client{Transport: tr}}
}

// loadLedger records the writes acknowledged to the writers.
type loadLedger struct {
	mu      sync.Mutex
	acked   []loadChange   // creates and updates, from their responses
	deleted map[string]int // acknowledged deletes by name: a delete's response carries no resourceVersion
	writes  atomic.Int64   // every acknowledged write
	latest  atomic.Int64   // the highest resourceVersion acknowledged
}

func (l *loadLedger) ack(typ string, body []byte) error {
	var o struct {
		Metadata kapi.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(body, &o); err != nil {
		return fmt.Errorf("%s response: %v", typ, err)
	}
	rv, err := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		return fmt.Errorf("%s response resourceVersion %q: %v", typ, o.Metadata.ResourceVersion, err)
	}
	l.mu.Lock()
	l.acked = append(l.acked, loadChange{rv, typ, o.Metadata.Name})
	l.mu.Unlock()
	l.writes.Add(1)
	for cur := l.latest.Load(); rv > cur && !l.latest.CompareAndSwap(cur, rv); cur = l.latest.Load() {
	}
	return nil
}

func (l *loadLedger) ackDelete(name string) {
	l.mu.Lock()
	l.deleted[name]++
	l.mu.Unlock()
	l.writes.Add(1)
}

// someAcked is the resourceVersion of an acknowledged write picked at
// random, or def if there is none yet.
func (l *loadLedger) someAcked(rng *rand.Rand, def int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.acked) == 0 {
		return def
	}
	return l.acked[rng.IntN(len(l.acked))].RV
}

// loadWriter makes n writes (creates, updates and deletes of names drawn
// from a pool that every writer shares; attempts that find the name in the
// wrong state, 409 or 404, write nothing and do not count) and records them.
// It runs on its own goroutine: it returns what went wrong.
func loadWriter(c *apiClient, ns string, g, n, pool int, ledger *loadLedger) error {
	rng := rand.New(rand.NewPCG(uint64(g), 42))
	for done, tries := 0, 0; done < n; tries++ {
		if tries > 50*n {
			return fmt.Errorf("writer %d: %d writes in %d tries", g, done, tries)
		}
		name := fmt.Sprintf("w%02d", rng.IntN(pool))
		w := newWidget(ns, name)
		w.Spec.Size = int32(g*10000 + tries + 1) // every update changes the object
		body, _ := json.Marshal(w)
		var r *response
		var err error
		switch op := rng.IntN(10); {
		case op < 4:
			if r, err = c.send(http.MethodPost, widgetsIn(ns), string(body), "application/json"); err == nil && r.Code == http.StatusCreated {
				err = ledger.ack("ADDED", r.Body)
				done++
			} else if err == nil && r.Code != http.StatusConflict {
				err = fmt.Errorf("create %s: HTTP %d: %s", name, r.Code, r.Body)
			}
		case op < 8:
			if r, err = c.send(http.MethodPut, widgetPath(ns, name), string(body), "application/json"); err == nil && r.Code == http.StatusOK {
				err = ledger.ack("MODIFIED", r.Body)
				done++
			} else if err == nil && r.Code != http.StatusNotFound {
				err = fmt.Errorf("update %s: HTTP %d: %s", name, r.Code, r.Body)
			}
		default:
			if r, err = c.send(http.MethodDelete, widgetPath(ns, name), "", ""); err == nil && r.Code == http.StatusOK {
				ledger.ackDelete(name)
				done++
			} else if err == nil && r.Code != http.StatusNotFound {
				err = fmt.Errorf("delete %s: HTTP %d: %s", name, r.Code, r.Body)
			}
		}
		if err != nil {
			return fmt.Errorf("writer %d: %w", g, err)
		}
	}
	return nil
}

// loadChangeOf is what a watch event says changed.
func loadChangeOf(ev watchEvent) (loadChange, error) {
	var o struct {
		Metadata kapi.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(ev.Object, &o); err != nil {
		return loadChange{}, fmt.Errorf("event %s: %v", ev.Type, err)
	}
	rv, err := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		return loadChange{}, fmt.Errorf("event %s: resourceVersion %q: %v", ev, o.Metadata.ResourceVersion, err)
	}
	return loadChange{rv, ev.Type, o.Metadata.Name}, nil
}

// loadWatcher is one watch and what it received.
type loadWatcher struct {
	from int64
	ws   *watchStream
	got  []loadChange
	last atomic.Int64 // the revision of the last event received
	err  error
	done chan struct{}
}

// collect reads events until the one about the widget named last; it runs
// on its own goroutine, so it keeps the stream drained during the writes.
func (w *loadWatcher) collect(last string) {
	defer close(w.done)
	// A watcher that stops receiving has failed; one that is slow on a
	// loaded machine (the race detector, other tests) has not: the limit is
	// on a silence, not on the whole run.
	silence := time.NewTimer(2 * deadline)
	defer silence.Stop()
	for {
		select {
		case ev := <-w.ws.events:
			ch, err := loadChangeOf(ev)
			if err != nil {
				w.err = err
				return
			}
			w.got = append(w.got, ch)
			w.last.Store(ch.RV)
			if ch.Name == last {
				return
			}
			silence.Reset(2 * deadline)
		case <-w.ws.done:
			w.err = fmt.Errorf("the watch ended (%v) after %d events", w.ws.err, len(w.got))
			return
		case <-silence.C:
			w.err = fmt.Errorf("no event for %v before the %s event (%d events)", 2*deadline, last, len(w.got))
			return
		}
	}
}

// storeHistory reads the store's changes after from up to and including
// revision to, from the store itself: the reference the watchers are held
// to.
func storeHistory(t *testing.T, store storage.Interface, from, to int64) []loadChange {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	events, err := store.Watch(ctx, "", from)
	if err != nil {
		t.Fatalf("store watch from %d: %v", from, err)
	}
	var out []loadChange
	for ev := range events {
		if ev.Err != nil {
			t.Fatalf("store watch: %v", ev.Err)
		}
		typ := "MODIFIED"
		switch {
		case ev.Type == storage.Delete:
			typ = "DELETED"
		case ev.Prev == nil:
			typ = "ADDED"
		}
		out = append(out, loadChange{ev.ModRevision, typ, ev.Key[strings.LastIndexByte(ev.Key, '/')+1:]})
		if ev.ModRevision >= to {
			return out
		}
	}
	t.Fatalf("the store's history from %d ended before %d", from, to)
	return nil
}

// TestWatchersUnderConcurrentWriters has 50 writers create, update and
// delete widgets of a shared pool of names while 100 watches start, over
// HTTP, from resourceVersions taken during the writes (the latest write
// acknowledged, a consistent list's, an older write's). After a last
// sentinel write, each watcher must have received exactly the store's
// changes after its starting revision: in order, none missing, none twice.
//
// The reference is the store's own history, checked first against the
// writers' acknowledgements: every create and update acknowledged is in it
// at the resourceVersion its response gave, and nothing else is, apart from
// the deletes acknowledged, name for name (a delete's response, a Status,
// carries no resourceVersion, as kube-apiserver's does not).
func TestWatchersUnderConcurrentWriters(t *testing.T) {
	const ns = "load"
	writers, writesEach, watchers, pool := 50, 20, 100, 16
	if testing.Short() {
		writesEach, watchers = 8, 40
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	c := loadServer(t, store)
	start := mustRevision(t, "list", c.list(widgetsIn(ns)).Metadata.ResourceVersion)

	ledger := &loadLedger{deleted: map[string]int{}}
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() { errs <- loadWriter(c, ns, g, writesEach, pool, ledger) })
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	// Start the watches while the writers write, spread over the writes.
	rng := rand.New(rand.NewPCG(7, 7))
	total := int64(writers * writesEach)
	var ws []*loadWatcher
	for i := range watchers {
	spread:
		for ledger.writes.Load() < int64(i)*total/int64(watchers) {
			select {
			case <-writing:
				break spread
			case <-time.After(time.Millisecond):
			}
		}
		var from int64
		switch i % 3 {
		case 0:
			from = max(ledger.latest.Load(), start)
		case 1:
			from = mustRevision(t, "list", c.list(widgetsIn(ns)).Metadata.ResourceVersion)
		default:
			from = ledger.someAcked(rng, start)
		}
		w := &loadWatcher{from: from, done: make(chan struct{})}
		w.ws = c.watch(widgetsIn(ns) + "?watch=true&resourceVersion=" + strconv.FormatInt(from, 10))
		go w.collect("sentinel")
		ws = append(ws, w)
	}
	<-writing
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	sentinel := c.create(newWidget(ns, "sentinel"))
	if data, err := json.Marshal(sentinel); err != nil || ledger.ack("ADDED", data) != nil {
		t.Fatalf("record the sentinel: %v", err)
	}
	last := mustRevision(t, "sentinel", sentinel.ResourceVersion)

	// The reference, checked against what the writers were told.
	ref := storeHistory(t, store, start, last)
	var puts []loadChange
	deletes := map[string]int{}
	for _, ch := range ref {
		if ch.Type == "DELETED" {
			deletes[ch.Name]++
		} else {
			puts = append(puts, ch)
		}
	}
	acked := slices.SortedFunc(slices.Values(ledger.acked), func(a, b loadChange) int { return cmp.Compare(a.RV, b.RV) })
	if !slices.Equal(puts, acked) {
		t.Fatalf("the store's creates and updates differ from those acknowledged:\nstore %v\nacked %v", puts, acked)
	}
	if !maps.Equal(deletes, ledger.deleted) {
		t.Fatalf("the store's deletes by name %v, acknowledged %v", deletes, ledger.deleted)
	}
	t.Logf("%d writes (%d creates and updates, %d deletes) from revision %d to %d; %d watchers",
		len(ref), len(puts), len(ref)-len(puts), start, last, len(ws))

	starts := map[int64]bool{}
	for i, w := range ws {
		select {
		case <-w.done:
		case <-time.After(3 * deadline):
			t.Fatalf("watcher %d (from %d) never finished", i, w.from)
		}
		starts[w.from] = true
		if w.err != nil {
			t.Errorf("watcher %d from %d: %v", i, w.from, w.err)
			continue
		}
		i0, _ := slices.BinarySearchFunc(ref, w.from+1, func(c loadChange, rv int64) int { return cmp.Compare(c.RV, rv) })
		want := ref[i0:]
		if !slices.Equal(w.got, want) {
			n := 0
			for n < len(w.got) && n < len(want) && w.got[n] == want[n] {
				n++
			}
			t.Errorf("watcher %d from %d: %d events, want %d; first difference at %d: got %v, want %v",
				i, w.from, len(w.got), len(want), n, loadAt(w.got, n), loadAt(want, n))
		}
	}
	t.Logf("the watchers started from %d distinct resourceVersions", len(starts))
}

// loadAt is s[i], or "nothing" past its end.
func loadAt(s []loadChange, i int) string {
	if i < len(s) {
		return s[i].String()
	}
	return "nothing"
}

// heapInUse is the heap in use after a full collection: the server's and
// the test's together, as they share the process.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestStalledWatcherIsEnded opens watches whose client stops reading, then
// writes far more than the watch cache's history holds. Every write must
// complete, and a watcher that reads must get every one of them, in order,
// keeping up while the stalled ones wait: nothing waits for a stalled
// watcher. The server must not keep what the stalled watchers have not read:
// the heap grows by the history window, a bound that does not depend on how
// many watchers there are, not by writes × stalled watchers. Once read, a
// stalled stream delivers the events it had been given, without a gap, then
// one ERROR event carrying a 410 Expired Status, and ends.
//
// What is reliable here, and why:
//
//   - The window cannot be made smaller: the server's watch cache keeps the
//     last 10,000 events of each resource (watch.New's default) and
//     apiserver.New has no option to change it; hence 16,000 writes.
//   - A stalled client is a watch nobody takes events from: watchStream's
//     reader then holds one read buffer (64 KiB) and stops reading the body.
//     What the server wrote before its handler blocked in Write sits in the
//     kernel's socket buffers: on Linux the sender's is autotuned up to
//     net.ipv4.tcp_wmem's maximum (4 MiB by default) and the receiver's does
//     not grow while the application does not read. With events of ~1.3 KiB
//     that is about 3,000 events, well short of writes − window, so the
//     window passes every stalled handler; the test logs how many events
//     each had been given. On a host whose buffers held more than
//     (writes − window) events a stalled watcher would never fall behind,
//     and the test says so rather than passing.
//   - 16,000 writes over HTTP take about 12 s under -race on 2 cores, so
//     most of them are made directly in the server's store (the server's
//     cache follows its store whoever writes, as with a shared store), while
//     8 clients update other widgets over HTTP at the same time: their
//     writes, too, must all succeed. The store writer keeps within 1,000
//     revisions of the reading watcher, so that the server's cache, which
//     decodes every event, never falls out of the store's own history (that
//     would make it relist and end every watch, the healthy one included).
//   - Reading a stalled stream costs a JSON decode per buffered event, ~3,000
//     per watcher; four are read to the end and checked, the others closed
//     unread. All sixteen count for memory.
func TestStalledWatcherIsEnded(t *testing.T) {
	const (
		ns          = "stall"
		window      = 10000 // the watch cache's history, per resource
		stalled     = 16
		checked     = 4 // stalled watchers read to the end
		names       = 64
		httpWriters = 8
		httpEach    = 250
		storeWrites = 14000
		lead        = 1000 // how far the store writer may run ahead of the reading watcher
		writes      = httpWriters*httpEach + storeWrites
	)
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	c := loadServer(t, store)

	payload := strings.Repeat("0123456789abcdef", 64) // 1 KiB per object
	var from int64
	var eventBytes int
	for i := range names {
		w := newWidget(ns, fmt.Sprintf("s%02d", i))
		w.Annotations = map[string]string{"example.com/payload": payload}
		r := c.do(http.MethodPost, widgetsIn(ns), w).mustCode(t, http.StatusCreated)
		eventBytes = len(r.Body)
		from = mustRevision(t, "create", r.widget(t).ResourceVersion)
	}
	// The stored widgets the store writer rewrites: the second half of the
	// names, the first half is for the HTTP writers.
	ctx, cancel := context.WithTimeout(context.Background(), 10*deadline) // a guard against a hang, not a time limit
	defer cancel()
	listed, err := store.List(ctx, "/", storage.ListOptions{})
	if err != nil || len(listed.Items) != names {
		t.Fatalf("the store lists %d keys (%v), want %d", len(listed.Items), err, names)
	}
	stored := listed.Items[names/2:]

	at := "?watch=true&resourceVersion=" + strconv.FormatInt(from, 10)
	healthy := &loadWatcher{from: from, ws: c.watch(widgetsIn(ns) + at), done: make(chan struct{})}
	go healthy.collect("sentinel")
	stalls := make([]*watchStream, stalled)
	for i := range stalls {
		stalls[i] = c.watch(widgetsIn(ns) + at) // nobody takes its events until the end
	}
	before := heapInUse()

	began := time.Now()
	errs := make(chan error, httpWriters+1)
	var wg sync.WaitGroup
	for g := range httpWriters {
		wg.Go(func() {
			for i := range httpEach {
				w := newWidget(ns, fmt.Sprintf("s%02d", (g*httpEach+i)%(names/2)))
				w.Annotations = map[string]string{"example.com/payload": payload}
				w.Spec.Size = int32(g*httpEach + i + 1)
				body, _ := json.Marshal(w)
				r, err := c.send(http.MethodPut, widgetPath(ns, w.Name), string(body), "application/json")
				if err == nil && r.Code != http.StatusOK {
					err = fmt.Errorf("HTTP %d: %.300s", r.Code, r.Body)
				}
				if err != nil {
					errs <- fmt.Errorf("HTTP writer %d, write %d: %w", g, i, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		objects := make([]widgetapi.Widget, len(stored))
		for i, kv := range stored {
			if err := json.Unmarshal(kv.Value, &objects[i]); err != nil {
				errs <- fmt.Errorf("stored %s: %v", kv.Key, err)
				return
			}
		}
		for i := range storeWrites {
			for {
				rev, err := store.Revision(ctx)
				if err != nil {
					errs <- err
					return
				}
				if rev-healthy.last.Load() < lead {
					break
				}
				select {
				case <-healthy.done:
					errs <- fmt.Errorf("store writer: the reading watcher stopped (%v) at %d", healthy.err, healthy.last.Load())
					return
				case <-ctx.Done():
					errs <- fmt.Errorf("store writer: the reading watcher stayed at %d, the store at %d", healthy.last.Load(), rev)
					return
				case <-time.After(100 * time.Microsecond):
				}
			}
			o := &objects[i%len(objects)]
			o.Spec.Size = int32(100000 + i)
			data, _ := json.Marshal(o)
			if _, err := store.Update(ctx, stored[i%len(stored)].Key, data, 0); err != nil {
				errs <- fmt.Errorf("store write %d: %w", i, err)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sentinel := mustRevision(t, "sentinel", c.create(newWidget(ns, "sentinel")).ResourceVersion)
	t.Logf("%d writes (%d over HTTP) of ~%d-byte events in %v, %d watchers stalled", writes, httpWriters*httpEach, eventBytes,
		time.Since(began).Round(time.Millisecond), stalled)
	if sentinel != from+writes+1 {
		t.Fatalf("the sentinel is at %d, want %d: other writes happened", sentinel, from+writes+1)
	}

	// The reading watcher got everything, while the others stalled.
	select {
	case <-healthy.done:
	case <-time.After(3 * deadline):
		t.Fatal("the reading watcher never got the sentinel")
	}
	if healthy.err != nil {
		t.Fatalf("the reading watcher: %v", healthy.err)
	}
	if len(healthy.got) != writes+1 {
		t.Errorf("the reading watcher got %d events, want %d", len(healthy.got), writes+1)
	}
	for i, ch := range healthy.got {
		if ch.RV != from+1+int64(i) {
			t.Fatalf("the reading watcher's event %d is %v, want revision %d: a gap or a duplicate", i, ch, from+1+int64(i))
		}
	}

	// Memory: the window, whatever the number of stalled watchers. The
	// server holds each event of its history several times over (the
	// store's old value, the cache's decoded object, its shared encoding,
	// the allocator's slack: about 6.5 times its encoded size in HeapInuse,
	// the same with 0, 1, 16 or 32 stalled watchers), and the store's own
	// history is 10,000 revisions too. A server that kept per watcher what
	// it could not send would hold writes × stalled events.
	after := heapInUse()
	growth := int64(after) - int64(before)
	bound := int64(8 * window * eventBytes)
	t.Logf("heap in use: %d MiB before the writes, %d MiB after: %+d MiB (bound %d MiB; buffering per stalled watcher would be ~%d MiB)",
		before>>20, after>>20, growth>>20, bound>>20, int64(writes)*int64(eventBytes)*stalled>>20)
	if growth > bound {
		t.Errorf("the heap grew by %d MiB, more than %d MiB: the server keeps what stalled watchers have not read", growth>>20, bound>>20)
	}

	// The stalled streams, read at last: what each was given, then the end.
	for _, ws := range stalls[checked:] {
		ws.stop()
	}
	for i, ws := range stalls[:checked] {
		evs := ws.untilEnd()
		if len(evs) == 0 {
			t.Errorf("stalled watcher %d: no events at all", i)
			continue
		}
		end, given := evs[len(evs)-1], evs[:len(evs)-1]
		for j, ev := range given {
			ch, err := loadChangeOf(ev)
			if err != nil || ch.Type != "MODIFIED" || ch.RV != from+1+int64(j) {
				t.Fatalf("stalled watcher %d: event %d is %v (%v), want MODIFIED at %d", i, j, ev, err, from+1+int64(j))
			}
		}
		if end.Type != "ERROR" {
			t.Errorf("stalled watcher %d: %d events and no ERROR: it was never left behind (were the socket buffers larger than %d events?)",
				i, len(evs), writes-window)
			continue
		}
		var st kapi.Status
		if err := json.Unmarshal(end.Object, &st); err != nil {
			t.Fatalf("stalled watcher %d: ERROR object: %v", i, err)
		}
		if st.Kind != "Status" || st.Code != http.StatusGone || st.Reason != kapi.StatusReasonExpired {
			t.Errorf("stalled watcher %d: ERROR %+v, want a 410 Expired Status", i, st)
		}
		t.Logf("stalled watcher %d: %d events (%d KiB) before its handler blocked, then ERROR %d %s: %s",
			i, len(given), len(given)*eventBytes>>10, st.Code, st.Reason, st.Message)
	}
}
