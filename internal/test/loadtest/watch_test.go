package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// laggingCache is a server whose watch cache is behind its store, as
// kube-apiserver's widgets cache can be behind kine's revision, and whose
// LIST at resourceVersion=0 answers an old revision, as kube-apiserver's
// may ("any"): a LIST without resourceVersion answers the store's revision,
// one past the cache's; one at resourceVersion=0 a revision before the
// cache's window. A watch from beyond the cache ends at once with an ERROR
// event ("Too large resource version", as kube-apiserver's does when its
// cache does not catch up in time), one from before its window with a 410
// ("too old resource version"). Every PATCH moves the cache on by one and
// is an event for every watch.
type laggingCache struct {
	mu       sync.Mutex
	cache    int64 // the cache's revision; the store's is one more
	oldest   int64 // the first revision of the cache's window
	watchers []chan int64
	// broken: every watch ends with an ERROR event, wherever it starts.
	broken bool
}

func (l *laggingCache) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	l.mu.Lock()
	cache := l.cache
	l.mu.Unlock()
	switch {
	case r.Method == http.MethodPatch:
		l.mu.Lock()
		l.cache++
		rev := l.cache
		for _, ch := range l.watchers {
			ch <- rev
		}
		l.mu.Unlock()
		fmt.Fprintf(w, `{"metadata":{"resourceVersion":"%d"}}`, rev)
	case q.Get("watch") == "true":
		from, _ := strconv.ParseInt(q.Get("resourceVersion"), 10, 64)
		// Registered before the answer's headers, which the client
		// takes as the watch being open: a write after them is its event.
		ch := make(chan int64, 1000)
		l.mu.Lock()
		cache = l.cache
		if !l.broken && from <= cache && from >= l.oldest-1 {
			l.watchers = append(l.watchers, ch)
		}
		l.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		switch {
		case l.broken || from > cache:
			fmt.Fprintf(w, `{"type":"ERROR","object":{"kind":"Status","code":504,"message":"Too large resource version: %d, current: %d"}}`+"\n", from, cache)
			return
		case from < l.oldest-1:
			fmt.Fprintf(w, `{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version: %d (%d)"}}`+"\n", from, l.oldest-1)
			return
		}
		for {
			select {
			case <-r.Context().Done():
				return
			case rev := <-ch:
				fmt.Fprintf(w, `{"type":"MODIFIED","object":{"metadata":{"resourceVersion":"%d"}}}`+"\n", rev)
				w.(http.Flusher).Flush()
			}
		}
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/widgets"):
		rev := cache + 1 // the store's
		if q.Get("resourceVersion") == "0" {
			rev = l.oldest - 5
		}
		fmt.Fprintf(w, `{"kind":"WidgetList","metadata":{"resourceVersion":"%d"},"items":[]}`, rev)
	default:
		http.NotFound(w, r)
	}
}

// TestWatchStart runs the watch fan-out against a server whose cache lags
// its store and whose LIST at resourceVersion=0 is out of its window: the
// watchers start from a write's revision, and see every write; and
// watchers the server ends are counted as errors with their reason, not
// as a quiet "delivered 0".
func TestWatchStart(t *testing.T) {
	sz := sizes{Watchers: 5, WatchRate: 100, WatchDuration: 200 * time.Millisecond, WatchDrain: 2 * time.Second}
	writes := int64(sz.WatchDuration.Seconds() * sz.WatchRate)

	r, err := runWatch(context.Background(), serveHandler(t, "kapi", &laggingCache{cache: 10, oldest: 10}), sz)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 0 || r.Lost != 0 || r.Delivered != writes*int64(sz.Watchers) {
		t.Errorf("lagging cache: delivered %d of %d, lost %d, %d watchers ended (%s)", r.Delivered, writes*int64(sz.Watchers), r.Lost, r.Errors, r.FirstError)
	}

	r, err = runWatch(context.Background(), serveHandler(t, "kapi", &laggingCache{cache: 10, oldest: 10, broken: true}), sz)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != int64(sz.Watchers) || !strings.Contains(r.FirstError, "Too large resource version") || r.Delivered != 0 {
		t.Errorf("watches ended by the server: %d errors (%q), delivered %d; want %d errors naming the server's reason", r.Errors, r.FirstError, r.Delivered, sz.Watchers)
	}
}

// TestCheaperRound: the fan-out keeps its round with the least server CPU
// per delivered event, whichever comes first, and the worst losses and
// ended watches of all its rounds.
func TestCheaperRound(t *testing.T) {
	dear := &Result{Delivered: 100, ServerCPUSeconds: 2, Lost: 0}
	cheap := &Result{Delivered: 100, ServerCPUSeconds: 1, Lost: 3, Errors: 1, FirstError: "ended"}
	lossy := &Result{Delivered: 90, ServerCPUSeconds: 1.8, Lost: 10}
	r := cheaperRound(cheaperRound(cheaperRound(nil, dear), cheap), lossy)
	if r != cheap {
		t.Fatalf("kept the round of %.0f µs per event, want the one of %.0f", cpuPerEventUs(r), cpuPerEventUs(cheap))
	}
	if r.Rounds != 3 || r.Lost != 10 || r.Errors != 1 || r.FirstError != "ended" {
		t.Errorf("rounds %d, lost %d, errors %d %q; want 3 rounds, the 10 lost of the third, the first error", r.Rounds, r.Lost, r.Errors, r.FirstError)
	}
	r = cheaperRound(cheaperRound(nil, &Result{Delivered: 100, ServerCPUSeconds: 1}), &Result{Delivered: 100, ServerCPUSeconds: 3, Errors: 2, FirstError: "later"})
	if r.ServerCPUSeconds != 1 || r.Errors != 2 || r.FirstError != "later" {
		t.Errorf("kept %v s with %d errors %q; want the first round's 1 s with the second's 2 errors", r.ServerCPUSeconds, r.Errors, r.FirstError)
	}
}
