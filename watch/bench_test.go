package watch_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
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

// BenchmarkIdleWatcherMemory measures what 1,000 idle watchers hold: just
// created and not read ("Created"), or each waiting in Next in its own
// goroutine, as a served watch request does ("WaitingInNext", which counts
// the goroutines' stacks too).
func BenchmarkIdleWatcherMemory(b *testing.B) {
	const watchers = 1000
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

// BenchmarkReadsUnderWrites measures Get of one item and List of the first
// 500 of a cache of 10,000, each in b.RunParallel, while writers change the
// store as fast as they can: one updating existing keys, one creating and
// deleting keys (which adds to and removes from the cache's key order). It
// also reports how many writes the hub applied per second meanwhile: a
// read path that holds a lock slows the writers too.
func BenchmarkReadsUnderWrites(b *testing.B) {
	const items, limit = 10000, 500
	for _, writers := range []int{0, 2} {
		for _, read := range []string{"Get", "List"} {
			b.Run(fmt.Sprintf("%s/writers=%d", read, writers), func(b *testing.B) {
				e, keys := runFilled(b, items)

				ctx, cancel := context.WithCancel(context.Background())
				var wrote sync.WaitGroup
				var writes atomic.Int64
				if writers > 0 {
					wrote.Go(func() { // updates
						value := []byte("v2")
						for i := 0; ctx.Err() == nil; i++ {
							if _, err := e.store.Update(ctx, keys[i*7919%items], value, 0); err == nil {
								writes.Add(1)
							}
						}
					})
					wrote.Go(func() { // creates and deletes, in the middle of the key order
						for i := 0; ctx.Err() == nil; i++ {
							k := fmt.Sprintf("%sns5/%05d-churn", widgets, i%100)
							if _, err := e.store.Create(ctx, k, []byte("v")); err == nil {
								writes.Add(1)
							}
							if _, err := e.store.Delete(ctx, k, 0); err == nil {
								writes.Add(1)
							}
						}
					})
				}
				from := e.hub.Revision()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						i++
						switch read {
						case "Get":
							if it, _ := e.widgets.Get(keys[i*31%items]); it == nil {
								b.Error("Get = nil")
								return
							}
						case "List":
							if page, _, _ := e.widgets.List(widgets, "", limit, nil); len(page) != limit {
								b.Errorf("List = %d items", len(page))
								return
							}
						}
					}
				})
				b.StopTimer()
				applied := e.hub.Revision() - from
				cancel()
				wrote.Wait()
				if writers > 0 {
					b.ReportMetric(float64(applied)/b.Elapsed().Seconds(), "writes/s")
				}
			})
		}
	}
}

// BenchmarkCacheMemory measures what a cache holds per item beyond the
// object itself: every item decodes to the same shared object, so the heap
// the hub gains while it relists 100,000 keys (runtime.MemStats.HeapAlloc
// after a collection) is the items, their keys' share and the structure
// that orders them.
func BenchmarkCacheMemory(b *testing.B) {
	const items = 100000
	var shared any = object{Value: "shared"}
	store := memory.New()
	defer store.Close()
	for i := range items {
		mustCreate(b, store, fmt.Sprintf("%sns%d/%06d", widgets, i%10, i), "v")
	}
	var total float64
	for b.Loop() {
		b.StopTimer()
		before := heapAlloc()
		b.StartTimer()
		hub := watch.New(store, root)
		cache := hub.Register(widgets, func(storage.KeyValue) (any, error) { return shared, nil })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- hub.Run(ctx) }()
		mustWaitFor(b, hub, mustRevision(b, store))
		b.StopTimer()
		total += float64(heapAlloc()) - float64(before)
		if it, _ := cache.Get(fmt.Sprintf("%sns0/%06d", widgets, 0)); it == nil {
			b.Fatal("Get = nil")
		}
		cancel()
		if err := <-done; err != nil {
			b.Fatalf("Run: %v", err)
		}
		b.StartTimer()
	}
	b.ReportMetric(total/float64(b.N*items), "bytes/item")
}

// BenchmarkFollow measures the hub following a store written by 8
// writers at once, each waiting for the hub to reach its write before the
// next, as the server's writers do when the next request reads the cache:
// the store's feed, the hub's apply of each event (10,000 cached items)
// and the wake-ups between them. cpu-ns/op is the whole process's CPU per
// write, which a machine busy with other work changes less than the time.
func BenchmarkFollow(b *testing.B) {
	const items, writers = 10000, 8
	e, keys := runFilled(b, items)
	value := []byte("v2")
	b.ReportAllocs()
	b.ResetTimer()
	start := processCPU()
	var n atomic.Int64
	var wrote sync.WaitGroup
	for range writers {
		wrote.Go(func() {
			ctx := context.Background()
			for i := n.Add(1); i <= int64(b.N); i = n.Add(1) {
				rev, err := e.store.Update(ctx, keys[i*7919%items], value, 0)
				if err == nil {
					err = e.hub.WaitFor(ctx, rev)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wrote.Wait()
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// runFilled is an env whose store holds n widgets in 10 namespaces, its
// hub running and caught up, and their keys.
func runFilled(b *testing.B, n int) (*env, []string) {
	e := newEnv(b, envOptions{})
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%sns%d/%05d", widgets, i%10, i)
		mustCreate(b, e.store, keys[i], "v")
	}
	e.run(b)
	return e, keys
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
