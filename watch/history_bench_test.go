package watch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// BenchmarkHistoryMemory measures what a cache's event history holds: the
// heap (runtime.MemStats.HeapAlloc after a collection) gained by a hub with
// one cache and a history of 10,000 events over 1,000 or 10,000 updates of
// 1 KiB values spread over 100 keys, reported per 1,000 events.
//
// The store keeps a single revision of history and each update waits for
// the hub, so the growth is the cache's, not the store's. Three decoders
// split it:
//
//   - object=1KiB decodes each value into a new object holding a copy of
//     it, as a real decoder does: the whole cost of an event.
//   - object=shared returns the same object (one interface value, so not
//     even a box is allocated) for every value: what is left is the log's
//     overhead, each event's Item and its slot in the log.
//   - object=1KiB,encoded also has a watcher read every event and ask for
//     its JSON encoding, which the Item keeps for every later reader, as a
//     served watch does: the cost of an event in a server with watchers.
//
// The first and third also split their total: log-bytes is measured in the
// same iteration by a second fill with the shared object, item-bytes is the
// rest, the decoded objects (and their encodings).
func BenchmarkHistoryMemory(b *testing.B) {
	const keys = 100
	var shared any = object{Value: "shared"}
	decoders := []struct {
		name   string
		decode watch.DecodeFunc
		encode bool
	}{
		{"object=1KiB", decode, false},
		{"object=shared", func(storage.KeyValue) (any, error) { return shared, nil }, false},
		{"object=1KiB,encoded", decode, true},
	}
	for _, events := range []int{1000, 10000} {
		for _, d := range decoders {
			b.Run(fmt.Sprintf("%s/events=%d", d.name, events), func(b *testing.B) {
				var total, overhead float64
				for b.Loop() {
					total += historyGrowth(b, keys, events, d.decode, d.encode)
					if d.name != "object=shared" {
						overhead += historyGrowth(b, keys, events, decoders[1].decode, false)
					}
				}
				per := float64(b.N) * float64(events) / 1000
				b.ReportMetric(total/per, "bytes/1k-events")
				if overhead > 0 {
					b.ReportMetric((total-overhead)/per, "item-bytes/1k-events")
					b.ReportMetric(overhead/per, "log-bytes/1k-events")
				}
			})
		}
	}
}

// historyGrowth fills a fresh cache with keys objects, then makes events
// updates of 1 KiB values and returns how much the heap grew meanwhile.
func historyGrowth(b *testing.B, keys, events int, dec watch.DecodeFunc, encode bool) float64 {
	b.Helper()
	store := memory.New(memory.WithHistory(1))
	defer store.Close()
	hub := watch.New(store, root, watch.WithHistory(10000, 0))
	cache := hub.Register(widgets, dec)
	stop := startRun(b, hub)
	defer func() {
		if err := stop(); err != nil {
			b.Errorf("Run: %v", err)
		}
	}()
	value := strings.Repeat("v", 1024-8)
	key := func(i int) string { return fmt.Sprintf("%sns/%03d", widgets, i%keys) }
	for i := range keys {
		mustCreate(b, store, key(i), fmt.Sprintf("%s%08d", value, i))
	}
	rev := mustRevision(b, store)
	mustWaitFor(b, hub, rev)
	from := rev

	b.StopTimer()
	before := heapAlloc()
	b.StartTimer()
	for i := range events {
		rev = mustUpdate(b, store, key(i), fmt.Sprintf("%s%08d", value, keys+i))
		mustWaitFor(b, hub, rev) // one at a time: the store keeps no more history than that
	}
	if encode {
		w := mustWatch(b, cache, watch.WatchOptions{Revision: from})
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		for range events {
			ev, err := w.Next(ctx)
			if err != nil {
				b.Fatalf("Next: %v", err)
			}
			if _, err := ev.Item.Encoded("application/json", func() ([]byte, error) {
				obj, err := ev.Item.Object()
				if err != nil {
					return nil, err
				}
				return json.Marshal(obj)
			}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	after := heapAlloc()
	b.StartTimer()
	runtime.KeepAlive(cache)
	return float64(after) - float64(before)
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
