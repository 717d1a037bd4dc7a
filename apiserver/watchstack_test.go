//go:build !race

package apiserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// TestIdleWatchStack keeps an idle watch's handler stack at 8 KiB. The
// runtime halves an idle goroutine's stack only while under a quarter of it
// is in use, and the frames between net/http and the watcher sit near the
// 4 KiB that decides between 8 and 16 KiB: a frame grown by a few hundred
// bytes anywhere on that path costs every idle watch 8 KiB (see
// TestIdleWatcherCost). The race detector's larger frames would pass the
// line, hence the build tag.
func TestIdleWatchStack(t *testing.T) {
	srv := newWidgetHandler(t)
	release := make(chan struct{})
	defer close(release)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	const n = 100
	stackPerWatch := func(h http.Handler) float64 {
		hs := httptest.NewServer(h)
		defer hs.Close()
		tr := &http.Transport{MaxIdleConnsPerHost: n}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		var bodies []io.Closer
		defer func() {
			for _, b := range bodies {
				b.Close()
			}
		}()
		for range n {
			resp, err := client.Get(hs.URL + "/apis/example.com/v1/namespaces/idle/widgets?watch=1&allowWatchBookmarks=true")
			if err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, resp.Body)
		}
		time.Sleep(100 * time.Millisecond)
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		return float64(int64(m1.StackInuse)-int64(m0.StackInuse)) / n
	}
	stackPerWatch(bare) // warm-up
	base, kapi := stackPerWatch(bare), stackPerWatch(srv)
	t.Logf("stack per idle watch: net/http %.1f KiB, kapi %.1f KiB", base/1024, kapi/1024)
	if kapi-base > 4<<10 {
		t.Errorf("an idle watch's stacks take %.1f KiB more than a bare handler's: the handler's stack no longer shrinks to 8 KiB", (kapi-base)/1024)
	}
}
