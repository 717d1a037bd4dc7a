package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/faulty"
	"github.com/kapi-dev/kapi/storage/memory"
)

// outageKind is one kind of request of the outage load.
type outageKind struct {
	name   string
	method string
	path   func(client, n int) string
	body   func(client, n int) string
	want   int // the answer while the store is down
}

// outageTally is what the clients of one kind got.
type outageTally struct {
	mu        sync.Mutex
	latencies []time.Duration
	codes     map[int]int
	wrong     []string // answers that are not what the kind wants, a few
}

func (o *outageTally) add(d time.Duration, code int, wrong string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.latencies = append(o.latencies, d)
	o.codes[code]++
	if wrong != "" && len(o.wrong) < 5 {
		o.wrong = append(o.wrong, wrong)
	}
}

func (o *outageTally) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := slices.Clone(o.latencies)
	slices.Sort(l)
	if len(l) == 0 {
		return "no requests"
	}
	at := func(q float64) time.Duration { return l[int(q*float64(len(l)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("%d requests, codes %v, latency p50 %v p90 %v p99 %v max %v", len(l), o.codes, at(0.5), at(0.9), at(0.99), l[len(l)-1].Round(10*time.Microsecond))
}

// TestStoreOutage: once the store is known to be unreachable (what /readyz
// finds), 600 clients retrying writes and consistent reads get 503 with
// Retry-After at once, the writes' outcome known (not applied), instead of
// holding the in-flight caps for the request timeout; meanwhile what the
// watch cache serves (resourceVersion=0 lists and gets, watches) and
// /version are answered 200. Latencies are reported, not asserted. Once the
// store is back, writes succeed again.
func TestStoreOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("a load of 600 clients")
	}
	store := faulty.New(memory.New())
	// A request timeout short enough that the old behaviour (waiting on the
	// store until it passes) ends within the test: 504, not 503.
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store), apiserver.WithRequestTimeout(5*time.Second))
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1000
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	do := func(ctx context.Context, method, path, body string) (int, http.Header, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			return 0, nil, nil, err
		}
		switch {
		case method == http.MethodPatch:
			req.Header.Set("Content-Type", "application/merge-patch+json")
		case body != "":
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, data, err
	}
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	widget := func(name string) string {
		return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q},"spec":{"color":"Red"}}`, name)
	}
	for i := range 10 {
		if code, _, body, err := do(t.Context(), http.MethodPost, widgets, widget(fmt.Sprintf("w%d", i))); err != nil || code != http.StatusCreated {
			t.Fatalf("create w%d: %d %s %v", i, code, body, err)
		}
	}
	waitReady := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if code, _, _, _ := do(t.Context(), http.MethodGet, "/readyz", ""); code == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz did not answer %d", want)
			}
		}
	}
	waitReady(http.StatusOK)
	// A consistent list is served once the cache has reached the store's
	// revision: then the GETs at resourceVersion=0 below, which the cache
	// answers through the outage, find every widget created above.
	if code, _, body, err := do(t.Context(), http.MethodGet, widgets, ""); err != nil || code != http.StatusOK || strings.Count(string(body), `"kind":"Widget"`) != 10 {
		t.Fatalf("list before the outage: %d %v, want the 10 widgets: %s", code, err, body)
	}

	// The outage: calls hang until their caller gives up, as on an etcd
	// that cannot be reached; the cache's watch breaks and cannot be
	// opened again.
	unavailable := fmt.Errorf("%w: connection refused", storage.ErrUnavailable)
	clearHang := store.Inject(faulty.Fault{Ops: faulty.Reads | faulty.Writes, Hang: true})
	clearWatch := store.Inject(faulty.Fault{Ops: faulty.Watch, Err: unavailable})
	store.BreakWatches(unavailable)
	waitReady(http.StatusServiceUnavailable)

	storeDown := func(code int, header http.Header, body []byte) string {
		var st kapi.Status
		_ = json.Unmarshal(body, &st)
		switch {
		case code != http.StatusServiceUnavailable:
			return fmt.Sprintf("%d %s", code, body)
		case header.Get("Retry-After") == "":
			return fmt.Sprintf("503 without Retry-After: %s", body)
		case st.Reason != kapi.StatusReasonServiceUnavailable || st.Details == nil || st.Details.RetryAfterSeconds == 0:
			return fmt.Sprintf("503 %s", body)
		case strings.Contains(st.Message, "may or may not have been applied"):
			return fmt.Sprintf("503 with an unknown outcome: %s", st.Message)
		}
		return ""
	}
	kinds := []outageKind{
		{name: "create", method: http.MethodPost, want: http.StatusServiceUnavailable,
			path: func(int, int) string { return widgets },
			body: func(c, n int) string { return widget(fmt.Sprintf("new-%d-%d", c, n)) }},
		{name: "update", method: http.MethodPatch, want: http.StatusServiceUnavailable,
			path: func(c, _ int) string { return fmt.Sprintf("%s/w%d", widgets, c%10) },
			// A valid change: an update starts from the watch cache's
			// object, and is validated before it reaches the store.
			body: func(c, n int) string {
				return fmt.Sprintf(`{"spec":{"color":%q}}`, []string{"Red", "Green", "Blue"}[(c+n)%3])
			}},
		{name: "consistent list", method: http.MethodGet, want: http.StatusServiceUnavailable,
			path: func(int, int) string { return widgets }},
		{name: "consistent get", method: http.MethodGet, want: http.StatusServiceUnavailable,
			path: func(c, _ int) string { return fmt.Sprintf("%s/w%d", widgets, c%10) }},
		{name: "list rv=0", method: http.MethodGet, want: http.StatusOK,
			path: func(int, int) string { return widgets + "?resourceVersion=0" }},
		{name: "get rv=0", method: http.MethodGet, want: http.StatusOK,
			path: func(c, _ int) string { return fmt.Sprintf("%s/w%d?resourceVersion=0", widgets, c%10) }},
		{name: "version", method: http.MethodGet, want: http.StatusOK,
			path: func(int, int) string { return "/version" }},
	}
	// How many of the 600 clients send each kind: most of them what needs
	// the store, as in the outage of issue 30 (420 GETs and 220 POSTs).
	share := []int{120, 100, 180, 120, 40, 20, 20}
	tallies := make([]*outageTally, len(kinds))
	for i := range tallies {
		tallies[i] = &outageTally{codes: map[int]int{}}
	}
	const loadFor = 3 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), loadFor)
	defer cancel()
	var wg sync.WaitGroup
	client := 0
	for k, n := range share {
		kind := kinds[k]
		for range n {
			c := client
			client++
			wg.Go(func() {
				for n := 0; ctx.Err() == nil; n++ {
					body := ""
					if kind.body != nil {
						body = kind.body(c, n)
					}
					start := time.Now()
					// Each request runs to its end: the load stops
					// sending, it does not cut answers short.
					code, header, data, err := do(context.WithoutCancel(ctx), kind.method, kind.path(c, n), body)
					took := time.Since(start)
					wrong := ""
					switch {
					case err != nil:
						wrong = err.Error()
					case kind.want == http.StatusServiceUnavailable:
						wrong = storeDown(code, header, data)
					case code != kind.want:
						wrong = fmt.Sprintf("%d %s", code, data)
					}
					tallies[k].add(took, code, wrong)
					if code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests {
						// As client-go: wait Retry-After (1 s) before the
						// same request again; others retry at once.
						select {
						case <-ctx.Done():
						case <-time.After(time.Second):
						}
					}
				}
			})
		}
	}
	// A watch from now on is the cache's too.
	if code, _, data, err := do(t.Context(), http.MethodGet, widgets+"?watch=true&resourceVersion=0&timeoutSeconds=1", ""); err != nil || code != http.StatusOK {
		t.Errorf("a watch while the store is down: %d %s %v", code, data, err)
	}
	wg.Wait()
	for i, kind := range kinds {
		t.Logf("%-16s (%3d clients): %s", kind.name, share[i], tallies[i])
		if len(tallies[i].wrong) > 0 {
			t.Errorf("%s while the store is down: want %d, got %q", kind.name, kind.want, tallies[i].wrong)
		}
	}

	clearHang()
	clearWatch()
	back := time.Now()
	for deadline := back.Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, _, _, _ := do(t.Context(), http.MethodPost, widgets, widget("after"))
		if code == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write succeeded within 30s of the store's return: %d", code)
		}
	}
	t.Logf("first successful write %v after the store came back", time.Since(back).Round(time.Millisecond))
	waitReady(http.StatusOK)
}

// TestStoreOutageReleasesWaitingWrites: a write already waiting on the
// store when it is found down is answered 503 then, its outcome unknown
// (it was sent), rather than at the request timeout; and /readyz says
// the store is down without waiting on it.
func TestStoreOutageReleasesWaitingWrites(t *testing.T) {
	store := faulty.New(memory.New())
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store), apiserver.WithRequestTimeout(20*time.Second))
	c := &apiClient{t: t, base: srv.URL, hc: http.DefaultClient}
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red"}}`
	defer store.Inject(faulty.Fault{Ops: faulty.Reads | faulty.Writes, Hang: true})()
	// Nothing but the write itself tells the server that the store is gone.
	req, err := http.NewRequest(http.MethodPost, c.base+widgets, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var st kapi.Status
	_ = json.Unmarshal(data, &st)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(st.Message, "may or may not have been applied") {
		t.Fatalf("a write waiting when the store was found down: %d (Retry-After %q) %s, want 503 with Retry-After, its outcome unknown", resp.StatusCode, resp.Header.Get("Retry-After"), data)
	}
	resp, err = c.hc.Get(c.base + "/readyz/storage")
	if err != nil {
		t.Fatal(err)
	}
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(data), "the readiness check finds the store unreachable since") {
		t.Fatalf("/readyz/storage while the store is down: %d %s", resp.StatusCode, data)
	}
}
