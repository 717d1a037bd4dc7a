package etcd_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/storage/etcd"
)

// TestServeWhileEtcdIsDown: a kapi server on the only etcd member, which is
// stopped; once /readyz finds it gone, 600 clients retrying (as client-go,
// after Retry-After) get 503 with Retry-After at once for writes and
// consistent lists, and 200 for resourceVersion=0 lists and /version, which
// the watch cache and the server answer themselves. Latencies are
// reported, not asserted (the machine is shared).
func TestServeWhileEtcdIsDown(t *testing.T) {
	if testing.Short() {
		t.Skip("a load of 600 clients")
	}
	m := newMember(t, nil)
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client.Host}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	store, err := etcd.New(ctx, client, etcd.WithPrefix(freshPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ts := serveWidgets(t, store)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1000
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	do := func(method, path, body string) (int, http.Header, error) {
		req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header, err
	}
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	widget := func(name string) string {
		return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q},"spec":{"color":"Red"}}`, name)
	}
	if code, _, err := do(http.MethodPost, widgets, widget("before")); code != http.StatusCreated {
		t.Fatalf("create before the outage: %d %v", code, err)
	}
	readyz := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if code, _, _ := do(http.MethodGet, "/readyz", ""); code == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz did not answer %d within a minute", want)
			}
		}
	}
	readyz(http.StatusOK)
	m.stop()
	readyz(http.StatusServiceUnavailable)

	type kind struct {
		name, method, path string
		write              bool
		want               int
		clients            int
	}
	kinds := []kind{
		{"create", http.MethodPost, widgets, true, http.StatusServiceUnavailable, 220},
		{"consistent list", http.MethodGet, widgets, false, http.StatusServiceUnavailable, 340},
		{"list rv=0", http.MethodGet, widgets + "?resourceVersion=0", false, http.StatusOK, 20},
		{"version", http.MethodGet, "/version", false, http.StatusOK, 20},
	}
	type tally struct {
		mu        sync.Mutex
		latencies []time.Duration
		codes     map[int]int
		wrong     []string
	}
	tallies := make([]*tally, len(kinds))
	load, stop := context.WithTimeout(t.Context(), 3*time.Second)
	defer stop()
	var wg sync.WaitGroup
	for k, kd := range kinds {
		tl := &tally{codes: map[int]int{}}
		tallies[k] = tl
		for c := range kd.clients {
			wg.Go(func() {
				for n := 0; load.Err() == nil; n++ {
					body := ""
					if kd.write {
						body = widget(fmt.Sprintf("w-%d-%d", c, n))
					}
					start := time.Now()
					code, header, err := do(kd.method, kd.path, body)
					took := time.Since(start)
					tl.mu.Lock()
					tl.latencies = append(tl.latencies, took)
					tl.codes[code]++
					if (err != nil || code != kd.want || code == http.StatusServiceUnavailable && header.Get("Retry-After") == "") && len(tl.wrong) < 5 {
						tl.wrong = append(tl.wrong, fmt.Sprintf("%d (Retry-After %q) %v", code, header.Get("Retry-After"), err))
					}
					tl.mu.Unlock()
					if code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests {
						select {
						case <-load.Done():
						case <-time.After(time.Second):
						}
					}
				}
			})
		}
	}
	wg.Wait()
	for k, kd := range kinds {
		tl := tallies[k]
		l := slices.Sorted(slices.Values(tl.latencies))
		if len(l) == 0 {
			t.Errorf("%s: no requests", kd.name)
			continue
		}
		at := func(q float64) time.Duration { return l[int(q*float64(len(l)-1))].Round(10 * time.Microsecond) }
		t.Logf("%-16s (%3d clients): %d requests, codes %v, latency p50 %v p90 %v p99 %v max %v",
			kd.name, kd.clients, len(l), tl.codes, at(0.5), at(0.9), at(0.99), l[len(l)-1].Round(10*time.Microsecond))
		if len(tl.wrong) > 0 {
			t.Errorf("%s with etcd down: want %d, got %q", kd.name, kd.want, tl.wrong)
		}
	}

	m.start()
	back := time.Now()
	for deadline := back.Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, _, _ := do(http.MethodPost, widgets, widget("after")); code == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no write succeeded within a minute of etcd's return")
		}
	}
	t.Logf("first successful write %v after etcd came back", time.Since(back).Round(time.Millisecond))
}
