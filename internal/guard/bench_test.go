package guard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/guard"
)

// nopWriter is a ResponseWriter that keeps nothing: what the guard
// costs a request is measured, not a recorder's. It flushes, as
// net/http's does.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}
func (w *nopWriter) Flush()                      {}

// BenchmarkGuard is what the guard adds to a request with a deadline
// whose handler answers at once: its context, and on HTTP/2 the hand-off
// to a runner and back (on HTTP/1 the handler runs in the request's
// goroutine).
func BenchmarkGuard(b *testing.B) {
	for _, proto := range protos {
		b.Run(proto.name, func(b *testing.B) { benchmarkGuard(b, proto.major) })
	}
}

func benchmarkGuard(b *testing.B, major int) {
	f := newFlow(b, guard.DefaultLimits(), new(any))
	h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.Context().Done() // as a store's call looks at it
		w.WriteHeader(http.StatusOK)
	}), nil)
	r := httptest.NewRequest(http.MethodPatch, "/apis/g/v1/namespaces/a/widgets/w", nil)
	r.ProtoMajor = major
	conn, stop := context.WithCancel(context.Background()) // as net/http's connection's
	defer stop()
	w := &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		// A context of its own for each request, as net/http gives it.
		ctx, cancel := context.WithCancel(conn)
		h.ServeHTTP(w, r.WithContext(ctx))
		cancel()
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU the process has used: a hand-off wakes the
// other processor, whose time the time per operation does not show.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
