package robustness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/faulty"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Overload and stuck clients. The figures (RSS over time, answers by code)
// are logged; the long forms run with KAPI_ROBUSTNESS_LONG=1 for a minute
// (KAPI_ROBUSTNESS_DURATION). Nothing is asserted of time or memory: the
// assertions are that every request is answered as it should be.

func longRun(short time.Duration) (time.Duration, bool) {
	if os.Getenv("KAPI_ROBUSTNESS_LONG") == "" {
		return short, false
	}
	if s := os.Getenv("KAPI_ROBUSTNESS_DURATION"); s != "" {
		if d, err := time.ParseDuration(s); err == nil {
			return d, true
		}
	}
	return time.Minute, true
}

// rss is this process's resident set, in MiB.
func rss() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

func widgetServer(t *testing.T, store storage.Interface, opts ...apiserver.Option) string {
	t.Helper()
	srv, err := apiserver.New(append([]apiserver.Option{apiserver.WithStorage(store), apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := widgetapi.Register(srv); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		_ = srv.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL
}

// TestStalledWatchers: 100 watchers whose clients stop reading, while
// writers write 1 KiB widgets as fast as they can. Every write must
// succeed and a watcher that reads must keep up; the server's memory is
// logged as it goes: it must level off (the watch cache's window), not grow
// with writes × stalled watchers.
func TestStalledWatchers(t *testing.T) {
	duration, _ := longRun(5 * time.Second)
	const writers, names = 4, 200
	stalled := 100
	if s := os.Getenv("KAPI_ROBUSTNESS_STALLED"); s != "" { // 0: the baseline
		stalled, _ = strconv.Atoi(s)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	url := widgetServer(t, store)
	base := strings.TrimPrefix(url, "http://")

	pad := strings.Repeat("x", 700)
	body := func(name string, i int) string {
		return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q,"annotations":{"pad":%q,"i":"%d"}},"spec":{"color":"Red"}}`, name, pad, i)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: writers + 1}}
	var lastRV string
	for i := range names {
		resp, err := client.Post(url+widgetsPath, "application/json", strings.NewReader(body(fmt.Sprintf("w%d", i), 0)))
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("seeding: %v %v", resp, err)
		}
		var w widget
		_ = json.NewDecoder(resp.Body).Decode(&w)
		resp.Body.Close()
		lastRV = w.Metadata.ResourceVersion
	}

	// The stalled: a watch request, then nothing read, ever.
	var conns []net.Conn
	for range stalled {
		c, err := net.Dial("tcp", base)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET %s?watch=1&resourceVersion=0 HTTP/1.1\r\nHost: %s\r\n\r\n", widgetsPath, base)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	// One watcher that reads, from the last write.
	resp, err := http.Get(url + widgetsPath + "?watch=1&resourceVersion=" + lastRV)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var seen atomic.Int64
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), `{"type":"BOOKMARK"`) {
				seen.Add(1)
			}
		}
	}()

	time.Sleep(500 * time.Millisecond) // the watches are open
	startRSS, startHeap := rss(), heapMiB()
	t.Logf("%d stalled watchers open: RSS %.1f MiB, heap in use %.1f MiB", stalled, startRSS, startHeap)

	stop := make(chan struct{})
	var writes, failures atomic.Int64
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodPut, url+widgetsPath+fmt.Sprintf("/w%d", (g*names/writers)+i%(names/writers)), strings.NewReader(body(fmt.Sprintf("w%d", (g*names/writers)+i%(names/writers)), i+1)))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					failures.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failures.Add(1)
					t.Errorf("write: %s", resp.Status)
					return
				}
				writes.Add(1)
			}
		})
	}
	peak := startRSS
	samples := []string{}
	step := duration / 6
	for at := step; at <= duration; at += step {
		time.Sleep(step)
		r := rss()
		peak = max(peak, r)
		samples = append(samples, fmt.Sprintf("%s: %.0f MiB after %d writes", at.Round(time.Second), r, writes.Load()))
	}
	close(stop)
	wg.Wait()
	total := writes.Load()
	deadline := time.Now().Add(30 * time.Second)
	for seen.Load() < total && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	endRSS, endHeap := rss(), heapMiB()
	t.Logf("RSS over %v of writes with %d stalled watchers: %s", duration, stalled, strings.Join(samples, "; "))
	t.Logf("%d writes (%d failed); the reading watcher saw %d events; RSS start %.0f, peak %.0f, end %.0f MiB; heap in use start %.1f, end %.1f MiB",
		total, failures.Load(), seen.Load(), startRSS, peak, endRSS, startHeap, endHeap)
	if failures.Load() > 0 {
		t.Errorf("%d writes failed with stalled watchers open", failures.Load())
	}
	if seen.Load() < total {
		t.Errorf("the reading watcher saw %d events of %d writes", seen.Load(), total)
	}
}

// TestOverload: writers at twice the mutating cap, on a store that takes
// 20 ms a write, so that the cap is reached for certain: every write is
// answered 201, or 429 with Retry-After; never a 5xx, never a timeout.
func TestOverload(t *testing.T) {
	duration, long := longRun(3 * time.Second)
	limit := 16
	if long {
		limit = 200 // the default
	}
	store := faulty.New(memory.New())
	store.Inject(faulty.Fault{Ops: faulty.Writes, Delay: 20 * time.Millisecond})
	url := widgetServer(t, store, apiserver.WithMaxMutatingRequestsInFlight(limit))
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * limit}}

	startRSS := rss()
	var created, refused, bad atomic.Int64
	var firstBad atomic.Value
	stop := time.Now().Add(duration)
	var wg sync.WaitGroup
	for g := range 2 * limit {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				resp, err := client.Post(url+widgetsPath, "application/json",
					strings.NewReader(fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"o-%d-%d"},"spec":{"color":"Red"}}`, g, i)))
				if err != nil {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, err.Error())
					continue
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusCreated:
					created.Add(1)
				case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
					refused.Add(1)
					i-- // the same widget again, as a client would
					time.Sleep(time.Millisecond)
				default:
					bad.Add(1)
					firstBad.CompareAndSwap(nil, fmt.Sprintf("%d: %s", resp.StatusCode, data))
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d writers at twice the cap of %d for %v, 20 ms a write: %d created, %d refused 429 with Retry-After, %d other answers; RSS %.0f → %.0f MiB",
		2*limit, limit, duration, created.Load(), refused.Load(), bad.Load(), startRSS, rss())
	if bad.Load() > 0 {
		t.Errorf("%d answers neither 201 nor 429 with Retry-After; first: %v", bad.Load(), firstBad.Load())
	}
	if refused.Load() == 0 {
		t.Error("no 429 at twice the cap")
	}
}
