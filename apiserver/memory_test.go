package apiserver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMemoryPerWidget loads widgets of about 1 KiB of JSON through the
// handler, lists them once in JSON (so that the cache holds what serving
// makes), and reports the heap the store and caches hold per widget and
// relative to the widgets' JSON. It measures rather than checks, so it runs
// only when KAPI_MEM_WIDGETS says how many widgets to load (100000 for issue
// 7's figure):
//
//	KAPI_MEM_WIDGETS=100000 go test ./apiserver -run TestMemoryPerWidget -v
func TestMemoryPerWidget(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KAPI_MEM_WIDGETS"))
	if n <= 0 {
		t.Skip("set KAPI_MEM_WIDGETS to the number of widgets to load")
	}
	srv := newWidgetHandler(t)
	do := func(method, path, body string, want int) []byte {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Fatalf("%s %s: HTTP %d: %s", method, path, rec.Code, rec.Body.Bytes())
		}
		return rec.Body.Bytes()
	}
	const path = "/apis/example.com/v1/namespaces/load/widgets"
	do(http.MethodGet, path, "", http.StatusOK) // the hub has started
	base, baseRSS := heapInUse(), residentBytes()

	// As the load harness's widgets: a few labels, an annotation padding
	// the JSON to about 1 KiB.
	pad := strings.Repeat("x", 620)
	var jsonBytes int
	var last []byte
	start := time.Now()
	for i := range n {
		name := fmt.Sprintf("widget-%06d", i)
		body := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q,"labels":{"app":"load","tier":"web","shard":"s%d"},"annotations":{"example.com/padding":"%s"}},"spec":{"color":"Blue","size":%d}}`,
			name, i%16, pad, i)
		last = do(http.MethodPost, path, body, http.StatusCreated)
		jsonBytes += len(last)
	}
	loaded := time.Since(start)
	loadedRSS := residentBytes()
	list := do(http.MethodGet, path, "", http.StatusOK)
	held := float64(heapInUse() - base)
	if rss := residentBytes(); rss > 0 {
		ratio := func(n int64) string {
			return fmt.Sprintf("%.0f MiB (%.2f× the JSON)", float64(n-baseRSS)/(1<<20), float64(n-baseRSS)/float64(jsonBytes))
		}
		debug.FreeOSMemory()
		t.Logf("RSS growth (GOGC=%q): after the creates %s, after the list %s, after returning free memory to the OS %s",
			os.Getenv("GOGC"), ratio(loadedRSS), ratio(rss), ratio(residentBytes()))
	}
	t.Logf("%d widgets of %d bytes of JSON on average (%d bytes of list), loaded in %v", n, jsonBytes/n, len(list), loaded)
	t.Logf("heap in use: %.0f MiB, %.0f bytes per widget, %.2f× the JSON", held/(1<<20), held/float64(n), held/float64(jsonBytes))
	_ = last
	if out := os.Getenv("KAPI_MEM_PROFILE"); out != "" {
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIdleWatcherCost opens idle watches over loopback and reports what
// each costs the process, heap and goroutine stacks, beside a bare
// net/http handler that blocks on the same kind of request. Both ends are in
// the process, so the client's share (its connection and reader) is in
// both figures: the difference is the server's. It runs only when
// KAPI_IDLE_WATCHERS says how many watches to open; KAPI_STACKS logs the
// stack of one kapi watch handler, KAPI_MEM_PROFILE writes a heap profile.
//
// The stack is the cliff to watch: the runtime halves an idle goroutine's
// stack at a collection only while less than a quarter of it is in use, so
// a handler whose frames at the blocking point pass 4 KiB keeps a 16 KiB
// stack for the life of the watch, 8 KiB more than one under it.
func TestIdleWatcherCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KAPI_IDLE_WATCHERS"))
	if n <= 0 {
		t.Skip("set KAPI_IDLE_WATCHERS to the number of watches to open")
	}
	srv := newWidgetHandler(t)
	release := make(chan struct{})
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	for _, s := range []struct {
		name string
		h    http.Handler
	}{{"warm-up", bare}, {"net/http", bare}, {"kapi", srv}, {"net/http", bare}, {"kapi", srv}} {
		hs := httptest.NewServer(s.h)
		tr := &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}
		client := &http.Client{Transport: tr}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		var bodies []io.Closer
		for range n {
			resp, err := client.Get(hs.URL + "/apis/example.com/v1/namespaces/idle/widgets?watch=1&allowWatchBookmarks=true")
			if err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, resp.Body)
		}
		time.Sleep(200 * time.Millisecond) // every handler blocked
		runtime.GC()
		runtime.GC() // stacks shrink at a collection
		runtime.ReadMemStats(&m1)
		heap := float64(m1.HeapInuse - m0.HeapInuse)
		stack := float64(m1.StackInuse - m0.StackInuse)
		if os.Getenv("KAPI_STACKS") != "" && s.name == "kapi" {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			for _, g := range strings.Split(string(buf), "\n\n") {
				if strings.Contains(g, "Watcher).Next") {
					t.Log(g)
					break
				}
			}
		}
		if out := os.Getenv("KAPI_MEM_PROFILE"); out != "" && s.name == "kapi" {
			f, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
		t.Logf("%-8s per idle watch: heap %.1f KiB, stacks %.1f KiB, total %.1f KiB", s.name, heap/float64(n)/1024, stack/float64(n)/1024, (heap+stack)/float64(n)/1024)
		for _, b := range bodies {
			b.Close()
		}
		tr.CloseIdleConnections()
		hs.CloseClientConnections()
		hs.Close()
	}
	close(release)
}

// residentBytes is the process's resident set (Linux), 0 where unknown.
func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
