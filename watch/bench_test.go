package watch_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/watch"
)

// BenchmarkFanOut measures one write delivered to 1,000 watchers, each
// reading in its own goroutine; ns/event is the time per delivered event.
func BenchmarkFanOut(b *testing.B) {
	const watchers = 1000
	e := newEnv(b, envOptions{})
	key := widgets + "ns/a"
	rev := mustCreate(b, e.store, key, "0")
	e.run(b)

	ctx, cancel := context.WithCancel(context.Background())
	var delivered, exited sync.WaitGroup
	for range watchers {
		w := mustWatch(b, e.widgets, watch.WatchOptions{Revision: rev})
		exited.Go(func() {
			for {
				if _, err := w.Next(ctx); err != nil {
					return
				}
				delivered.Done()
			}
		})
	}
	defer func() {
		cancel()
		exited.Wait()
	}()

	value := []byte("v")
	for b.Loop() {
		delivered.Add(watchers)
		if _, err := e.store.Update(ctx, key, value, 0); err != nil {
			b.Fatal(err)
		}
		delivered.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*watchers), "ns/event")
}

// BenchmarkList measures the first page of 500 of a cache of 10,000 items.
func BenchmarkList(b *testing.B) {
	const items, limit = 10000, 500
	e := newEnv(b, envOptions{})
	for i := range items {
		mustCreate(b, e.store, fmt.Sprintf("%sns%d/%05d", widgets, i%10, i), "v")
	}
	e.run(b)

	for b.Loop() {
		page, _, remaining := e.widgets.List(widgets, "", limit, nil)
		if len(page) != limit || remaining != items-limit {
			b.Fatalf("List = %d items, %d remaining", len(page), remaining)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*limit), "ns/item")
}

// BenchmarkIdleWatcherMemory measures what 10,000 idle watchers hold: just
// created and not read ("Created"), or each waiting in Next in its own
// goroutine, as a served watch request does ("WaitingInNext", which counts
// the goroutines' stacks too).
func BenchmarkIdleWatcherMemory(b *testing.B) {
	const watchers = 10000
	e := newEnv(b, envOptions{})
	for i := range 100 {
		mustCreate(b, e.store, fmt.Sprintf("%sns/%03d", widgets, i), "v")
	}
	e.run(b)
	rev := e.hub.Revision()

	inUse := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse
	}

	b.Run("Created", func(b *testing.B) {
		var total float64
		ws := make([]*watch.Watcher, watchers)
		for b.Loop() {
			clear(ws)
			before := inUse()
			for i := range ws {
				ws[i] = mustWatch(b, e.widgets, watch.WatchOptions{Revision: rev})
			}
			total += float64(inUse()) - float64(before)
		}
		runtime.KeepAlive(ws)
		b.ReportMetric(total/float64(b.N*watchers), "bytes/watcher")
	})

	b.Run("WaitingInNext", func(b *testing.B) {
		var total float64
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			var waiting, exited sync.WaitGroup
			before := inUse()
			for range watchers {
				w := mustWatch(b, e.widgets, watch.WatchOptions{Revision: rev})
				waiting.Add(1)
				exited.Go(func() {
					waiting.Done()
					w.Next(ctx)
				})
			}
			waiting.Wait()
			runtime.Gosched()
			total += float64(inUse()) - float64(before)
			cancel()
			exited.Wait()
		}
		b.ReportMetric(total/float64(b.N*watchers), "bytes/watcher")
	})
}
