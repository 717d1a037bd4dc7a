package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd"
)

// wrappedWatcher is the client's Watcher behind a type of its own: the
// store then watches through it, as before it had streams of its own.
type wrappedWatcher struct{ clientv3.Watcher }

// BenchmarkOwnWrites is kapi's PUT on etcd without its HTTP: 8 writers
// each updating a key of its own in a loop, each write waiting until the
// store's watch has delivered its writer's last one (kapi's watch cache
// must reach an object's last write before the next write starts from
// it). The watch is on a stream of its own (stream) or through the
// client's Watcher (watcher); etcd runs in the test process, so cpu-µs/op
// counts it too, alike for both.
//
//	go test -run '^$' -bench OwnWrites -count 6 ./storage/etcd/
func BenchmarkOwnWrites(b *testing.B) {
	for _, mode := range []string{"watcher", "stream"} {
		b.Run(mode, func(b *testing.B) {
			client := mustClient(b)
			if mode == "watcher" {
				client.Watcher = wrappedWatcher{client.Watcher}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := etcd.New(ctx, client, etcd.WithPrefix(freshPrefix()))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			const writers = 8
			value := make([]byte, 1000)
			revs := make([]int64, writers)
			for w := range writers {
				if revs[w], err = s.Create(ctx, fmt.Sprintf("/w/%d", w), value); err != nil {
					b.Fatal(err)
				}
			}
			events, err := s.Watch(ctx, "/", revs[writers-1])
			if err != nil {
				b.Fatal(err)
			}
			// seen[w] is the revision of w's last write the watch delivered.
			var mu sync.Mutex
			seen := append([]int64(nil), revs...)
			delivered := sync.NewCond(&mu)
			go func() {
				for ev := range events {
					if ev.Err != nil {
						if !errors.Is(ev.Err, storage.ErrClosed) {
							b.Error(ev.Err)
						}
						return
					}
					var w int
					fmt.Sscanf(ev.Key, "/w/%d", &w)
					mu.Lock()
					seen[w] = ev.ModRevision
					mu.Unlock()
					delivered.Broadcast()
				}
			}()
			var next atomic.Int64
			var wg sync.WaitGroup
			before := cpuTime()
			b.ResetTimer()
			for w := range writers {
				wg.Go(func() {
					key, rev := fmt.Sprintf("/w/%d", w), revs[w]
					for next.Add(1) <= int64(b.N) {
						mu.Lock()
						for seen[w] < rev {
							delivered.Wait()
						}
						mu.Unlock()
						var err error
						if rev, err = s.Update(ctx, key, value, rev); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
