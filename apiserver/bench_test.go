package apiserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// The benchmarks measure the server through its http.Handler: "handler"
// calls ServeHTTP directly (the server's own cost), "loopback" goes through
// net/http over 127.0.0.1 (what a client sees).

func newBenchServer(b *testing.B) *apiserver.Server { return newWidgetHandler(b) }

// newWidgetHandler is the example API as an http.Handler, served in
// process (no listener); it closes when the test ends.
func newWidgetHandler(tb testing.TB, opts ...apiserver.Option) *apiserver.Server {
	tb.Helper()
	srv, err := apiserver.New(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	if err := widgetapi.Register(srv); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}

// serve sends one request to h and checks the code.
func serve(b *testing.B, h http.Handler, method, path string, body []byte, want int) *httptest.ResponseRecorder {
	return serveAs(b, h, method, path, "application/json", body, want)
}

// serveAs is serve with a body of another media type.
func serveAs(b *testing.B, h http.Handler, method, path, contentType string, body []byte, want int) *httptest.ResponseRecorder {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: HTTP %d, want %d: %s", method, path, rec.Code, want, rec.Body.Bytes())
	}
	return rec
}

// loopback serves srv on 127.0.0.1 and returns a function that sends one
// request and returns the body's size.
// loopback is a client over loopback HTTP. It asks for no compression (Go's
// transport would ask for gzip, which a list of 128 KiB and more gets) unless
// gzip is set: then the client compresses nothing itself but reads gzip.
func loopback(b *testing.B, srv *apiserver.Server, gzip ...bool) func(method, path string, body []byte, want int) int {
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	client := hs.Client()
	return func(method, path string, body []byte, want int) int {
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, hs.URL+path, r)
		if err != nil {
			b.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if len(gzip) == 0 || !gzip[0] {
			req.Header.Set("Accept-Encoding", "identity")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != want {
			b.Fatalf("%s %s: HTTP %d, %v", method, path, resp.StatusCode, err)
		}
		return int(n)
	}
}

// realisticWidget is a widget with the fields a real one carries.
func realisticWidget(ns, name string) *widgetapi.Widget {
	replicas := int32(3)
	now := kapi.NewTime(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	return &widgetapi.Widget{
		TypeMeta: kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"},
		ObjectMeta: kapi.ObjectMeta{
			Name: name, Namespace: ns, UID: "6f1c8a52-3b1e-4c8e-9a55-0d2f6b7e9c11",
			ResourceVersion: "123456", Generation: 4, CreationTimestamp: now,
			Labels:      map[string]string{"app.kubernetes.io/name": "shop", "app.kubernetes.io/component": "frontend", "tier": "web"},
			Annotations: map[string]string{"example.com/owner": "team-storefront", "example.com/revision": "42"},
			Finalizers:  []string{"example.com/cleanup"},
			OwnerReferences: []kapi.OwnerReference{{
				APIVersion: "example.com/v1", Kind: "WidgetClass", Name: "gold",
				UID: "0b9d7a1e-2f45-4b6c-8d3e-5a6f7b8c9d0e", Controller: ptr(true),
			}},
		},
		Spec: widgetapi.WidgetSpec{
			Color: "Blue", Replicas: &replicas, Size: 12,
			Ports: []widgetapi.WidgetPort{
				{Name: "http", Port: 8080, Protocol: "TCP"},
				{Name: "metrics", Port: 9090, Protocol: "TCP"},
				{Name: "dns", Port: 53, Protocol: "UDP"},
			},
			Selector: map[string]string{"app.kubernetes.io/name": "shop"},
		},
		Status: widgetapi.WidgetStatus{
			Replicas: 3, Selector: "app.kubernetes.io/name=shop", ObservedGeneration: 4,
			Conditions: []kapi.Condition{
				{Type: "Ready", Status: kapi.ConditionTrue, ObservedGeneration: 4, LastTransitionTime: now, Reason: "AllReplicasReady", Message: "3 of 3 replicas are ready"},
				{Type: "Progressing", Status: kapi.ConditionFalse, ObservedGeneration: 4, LastTransitionTime: now, Reason: "Stable", Message: "the rollout is complete"},
			},
		},
	}
}

// creatable is a realistic widget as a client would POST it.
func creatable(ns, name string) []byte {
	w := realisticWidget(ns, name)
	w.UID, w.ResourceVersion, w.Generation = "", "", 0
	w.CreationTimestamp = kapi.Time{}
	w.Finalizers, w.OwnerReferences = nil, nil
	w.Status = widgetapi.WidgetStatus{}
	data, err := json.Marshal(w)
	if err != nil {
		panic(err)
	}
	return data
}

func BenchmarkGet(b *testing.B) {
	b.Run("handler", func(b *testing.B) {
		srv := newBenchServer(b)
		serve(b, srv, http.MethodPost, widgetsIn("default"), creatable("default", "w"), http.StatusCreated)
		path := widgetPath("default", "w")
		rec := serve(b, srv, http.MethodGet, path, nil, http.StatusOK)
		b.SetBytes(int64(rec.Body.Len()))
		b.ReportAllocs()
		b.ResetTimer()
		defer reportCPU(b)()
		for b.Loop() {
			serve(b, srv, http.MethodGet, path, nil, http.StatusOK)
		}
	})
	b.Run("loopback", func(b *testing.B) {
		srv := newBenchServer(b)
		do := loopback(b, srv)
		do(http.MethodPost, widgetsIn("default"), creatable("default", "w"), http.StatusCreated)
		path := widgetPath("default", "w")
		b.SetBytes(int64(do(http.MethodGet, path, nil, http.StatusOK)))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			do(http.MethodGet, path, nil, http.StatusOK)
		}
	})
}

func BenchmarkList500(b *testing.B) {
	fill := func(b *testing.B, create func(name string)) {
		for i := range 500 {
			create(fmt.Sprintf("w-%03d", i))
		}
	}
	path := widgetsIn("default")
	b.Run("handler", func(b *testing.B) {
		srv := newBenchServer(b)
		fill(b, func(name string) {
			serve(b, srv, http.MethodPost, path, creatable("default", name), http.StatusCreated)
		})
		rec := serve(b, srv, http.MethodGet, path, nil, http.StatusOK)
		var l widgetList
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || len(l.Items) != 500 {
			b.Fatalf("the list has %d items (%v)", len(l.Items), err)
		}
		b.SetBytes(int64(rec.Body.Len()))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			serve(b, srv, http.MethodGet, path, nil, http.StatusOK)
		}
	})
	// The list in protobuf, as client-go's typed clients ask for it (the
	// load harness's list-small-proto): the same items, a smaller body,
	// so the per-request cost weighs more against the bytes.
	b.Run("handler-proto", func(b *testing.B) {
		srv := newBenchServer(b)
		fill(b, func(name string) {
			serve(b, srv, http.MethodPost, path, creatable("default", name), http.StatusCreated)
		})
		benchGets(b, srv, path, "application/vnd.kubernetes.protobuf")
	})
	for _, gzip := range []bool{false, true} {
		name := "loopback"
		if gzip {
			name = "loopback-gzip"
		}
		b.Run(name, func(b *testing.B) {
			srv := newBenchServer(b)
			do := loopback(b, srv, gzip)
			fill(b, func(name string) {
				do(http.MethodPost, path, creatable("default", name), http.StatusCreated)
			})
			b.SetBytes(int64(do(http.MethodGet, path, nil, http.StatusOK)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				do(http.MethodGet, path, nil, http.StatusOK)
			}
		})
	}
}

// benchGets measures GETs of path asking for accept, through the handler.
func benchGets(b *testing.B, srv http.Handler, path, accept string) {
	get := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("HTTP %d: %.200s", rec.Code, rec.Body.Bytes())
		}
		return rec
	}
	b.SetBytes(int64(get().Body.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		get()
	}
}

func BenchmarkCreate(b *testing.B) {
	path := widgetsIn("default")
	b.Run("handler", func(b *testing.B) {
		srv := newBenchServer(b)
		body := creatable("default", "PLACEHOLDER")
		b.ReportAllocs()
		defer reportCPU(b)()
		i := 0
		for b.Loop() {
			i++
			serve(b, srv, http.MethodPost, path, bytes.Replace(body, []byte("PLACEHOLDER"), fmt.Appendf(nil, "w-%d", i), 1), http.StatusCreated)
		}
	})
	b.Run("loopback", func(b *testing.B) {
		srv := newBenchServer(b)
		do := loopback(b, srv)
		body := creatable("default", "PLACEHOLDER")
		b.ReportAllocs()
		defer reportCPU(b)()
		i := 0
		for b.Loop() {
			i++
			do(http.MethodPost, path, bytes.Replace(body, []byte("PLACEHOLDER"), fmt.Appendf(nil, "w-%d", i), 1), http.StatusCreated)
		}
	})
}

// BenchmarkUpdate is a PUT of a realistic widget whose spec changes each
// time, so that every request writes and records its managed fields.
func BenchmarkUpdate(b *testing.B) {
	path := widgetPath("default", "w")
	body := creatable("default", "w")
	b.Run("handler", func(b *testing.B) {
		srv := newBenchServer(b)
		serve(b, srv, http.MethodPost, widgetsIn("default"), body, http.StatusCreated)
		b.ReportAllocs()
		defer reportCPU(b)()
		i := 0
		for b.Loop() {
			i++
			serve(b, srv, http.MethodPut, path, bytes.Replace(body, []byte(`"size":12`), fmt.Appendf(nil, `"size":%d`, i%1000+13), 1), http.StatusOK)
		}
	})
}

// BenchmarkPatch is a merge patch of one field of a realistic widget, as
// the load harness sends it.
func BenchmarkPatch(b *testing.B) {
	srv := newBenchServer(b)
	serve(b, srv, http.MethodPost, widgetsIn("default"), creatable("default", "w"), http.StatusCreated)
	b.ReportAllocs()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		i++
		serveAs(b, srv, http.MethodPatch, widgetPath("default", "w"), "application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"size":%d}}`, i%1000+13), http.StatusOK)
	}
}

// BenchmarkPatchAmongMany is BenchmarkPatch in a collection of 10,000
// widgets, as the load harness's PATCH runs beside its large LIST's: the
// watch cache's tree is three levels deep, and each write's path copy
// (watch/tree.go) copies a node at each. It patches 8 of them in turn,
// as the harness's 8 connections do, so their objects stay decoded.
func BenchmarkPatchAmongMany(b *testing.B) {
	srv := newBenchServer(b)
	body := creatable("default", "PLACEHOLDER")
	for i := range 10000 {
		serve(b, srv, http.MethodPost, widgetsIn("default"), bytes.Replace(body, []byte("PLACEHOLDER"), fmt.Appendf(nil, "w-%05d", i), 1), http.StatusCreated)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		i++
		serveAs(b, srv, http.MethodPatch, widgetPath("default", fmt.Sprintf("w-%05d", i%8*1250)), "application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"size":%d}}`, i%1000+13), http.StatusOK)
	}
}

// BenchmarkApply is a server-side apply of a whole realistic widget whose
// spec changes each time, with force, as the load harness sends it.
func BenchmarkApply(b *testing.B) {
	srv := newBenchServer(b)
	body := creatable("default", "w")
	serve(b, srv, http.MethodPost, widgetsIn("default"), body, http.StatusCreated)
	b.ReportAllocs()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		i++
		serveAs(b, srv, http.MethodPatch, widgetPath("default", "w")+"?fieldManager=bench&force=true", "application/apply-patch+yaml",
			bytes.Replace(body, []byte(`"size":12`), fmt.Appendf(nil, `"size":%d`, i%1000+13), 1), http.StatusOK)
	}
}

// reportCPU reports the CPU time the whole process spent per operation
// (cpu-ns/op: the server's goroutines, the watch cache's and GC's
// included), which a machine busy with other work changes far less than
// the time per operation. Call as defer reportCPU(b)() after setup.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() { b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op") }
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWatchEvent is what an event costs per watcher: one merge patch
// per operation, delivered to every watcher of the namespace over loopback
// HTTP (each read as frames, not decoded). Compare watchers=0 with
// watchers=100: the difference per op, divided by 100, is one event to one
// watcher.
func BenchmarkWatchEvent(b *testing.B) {
	for _, watchers := range []int{0, 100} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			srv := newBenchServer(b)
			hs := httptest.NewServer(srv)
			defer hs.Close()
			do := loopback(b, srv)
			do(http.MethodPost, widgetsIn("default"), creatable("default", "w"), http.StatusCreated)
			events := make(chan struct{}, watchers)
			for range watchers {
				req, _ := http.NewRequest(http.MethodGet, hs.URL+widgetsIn("default")+"?watch=true&resourceVersion=0", nil)
				req.Header.Set("Accept-Encoding", "identity")
				resp, err := hs.Client().Do(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("watch: %v", err)
				}
				defer resp.Body.Close()
				r := bufio.NewReaderSize(resp.Body, 64<<10)
				if _, err := r.ReadSlice('\n'); err != nil { // the ADDED of w
					b.Fatal(err)
				}
				go func() {
					for {
						if _, err := r.ReadSlice('\n'); err != nil {
							return
						}
						events <- struct{}{}
					}
				}()
			}
			path := widgetPath("default", "w")
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				i++
				req, _ := http.NewRequest(http.MethodPatch, hs.URL+path, bytes.NewReader(fmt.Appendf(nil, `{"spec":{"size":%d}}`, i%1000+13)))
				req.Header.Set("Content-Type", "application/merge-patch+json")
				req.Header.Set("Accept-Encoding", "identity")
				resp, err := hs.Client().Do(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("patch: %v", err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				for range watchers {
					<-events
				}
			}
		})
	}
}

func BenchmarkEncodeWidget(b *testing.B) {
	w := realisticWidget("default", "shop-frontend")
	data, err := json.Marshal(w)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(w); err != nil {
			b.Fatal(err)
		}
	}
}
