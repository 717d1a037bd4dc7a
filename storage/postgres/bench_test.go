package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
	"github.com/kapi-dev/kapi/watch"
)

var benchValue = []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"color":"Red","replicas":1}}`)

// BenchmarkStore measures the store's calls one at a time, and writes from
// 8 concurrent writers, which share transactions, on the tests' PostgreSQL
// (fsync on, as a deployment's); Update8Hub with a watch hub following the
// store, whose CPU store-cpu-µs/write then counts too.
//
//	go test -run '^$' -bench Store ./storage/postgres/
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	b.Run("Create", func(b *testing.B) {
		s := mustStore(b, freshSchema(b))
		i := 0
		for b.Loop() {
			if _, err := s.Create(ctx, fmt.Sprintf("/w/%09d", i), benchValue); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
	// As storage/etcd's BenchmarkBackends: eight writers, so that the
	// figures stand beside etcd's, bolt's and memory's.
	concurrently := func(b *testing.B, s storage.Interface, write func(i int64) error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		own := processCPU(b)
		b.ResetTimer()
		for range 8 {
			wg.Go(func() {
				for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
					if err := write(i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
		// The store's CPU per write (this process's), for which the wall
		// time on a shared machine says little. (The load harness
		// reports PostgreSQL's too: internal/test/loadtest/sqlrun.sh.)
		b.ReportMetric(float64((processCPU(b)-own).Microseconds())/float64(b.N), "store-cpu-µs/write")
	}
	b.Run("Create8", func(b *testing.B) {
		s := mustStore(b, freshSchema(b))
		concurrently(b, s, func(i int64) error {
			_, err := s.Create(ctx, fmt.Sprintf("/w/%09d", i), benchValue)
			return err
		})
	})
	update8 := func(b *testing.B, watched, hub bool) {
		s := mustStore(b, freshSchema(b))
		const keys = 500
		for i := range keys {
			if _, err := s.Create(ctx, fmt.Sprintf("/w/%03d", i), benchValue); err != nil {
				b.Fatal(err)
			}
		}
		if watched {
			// As a kapi server's watch cache: one watch of every key,
			// its events taken as they come.
			wctx, cancel := context.WithCancel(ctx)
			events, err := s.Watch(wctx, "", keys+1)
			if err != nil {
				b.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Go(func() {
				for range events {
				}
			})
			b.Cleanup(func() { cancel(); wg.Wait() })
		}
		var h *watch.Hub
		if hub {
			// As a kapi server: its watch hub follows the store, and each
			// writer waits for the hub to reach its write before the
			// next, as the next request that reads the cache does.
			h = watch.New(s, "/")
			var object any = "object"
			h.Register("/w/", func(storage.KeyValue) (any, error) { return object, nil })
			hctx, cancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() { _ = h.Run(hctx) })
			b.Cleanup(func() { cancel(); wg.Wait() })
			rev, err := s.Revision(ctx)
			if err == nil {
				err = h.WaitFor(ctx, rev)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		concurrently(b, s, func(i int64) error {
			rev, err := s.Update(ctx, fmt.Sprintf("/w/%03d", i%keys), benchValue, 0)
			if err == nil && h != nil {
				err = h.WaitFor(ctx, rev)
			}
			return err
		})
	}
	b.Run("Update8", func(b *testing.B) { update8(b, false, false) })
	b.Run("Update8Watched", func(b *testing.B) { update8(b, true, false) })
	b.Run("Update8Hub", func(b *testing.B) { update8(b, false, true) })
	reads := func(b *testing.B, read func(s storage.Interface, rev int64) error) {
		s := mustStore(b, freshSchema(b))
		var rev int64
		for i := range 500 {
			var err error
			if rev, err = s.Create(ctx, fmt.Sprintf("/r/%03d", i), benchValue); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			if err := read(s, rev); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("Get", func(b *testing.B) {
		reads(b, func(s storage.Interface, _ int64) error { _, err := s.Get(ctx, "/r/250", 0); return err })
	})
	b.Run("GetAtRevision", func(b *testing.B) {
		reads(b, func(s storage.Interface, rev int64) error { _, err := s.Get(ctx, "/r/250", rev-1); return err })
	})
	b.Run("List500", func(b *testing.B) {
		reads(b, func(s storage.Interface, _ int64) error {
			_, err := s.List(ctx, "/r/", storage.ListOptions{})
			return err
		})
	})
	b.Run("List500AtRevision", func(b *testing.B) {
		reads(b, func(s storage.Interface, rev int64) error {
			_, err := s.List(ctx, "/r/", storage.ListOptions{Revision: rev - 1})
			return err
		})
	})
	b.Run("List50Of500", func(b *testing.B) {
		reads(b, func(s storage.Interface, _ int64) error {
			_, err := s.List(ctx, "/r/", storage.ListOptions{Limit: 50})
			return err
		})
	})
}

// queryCounter counts the statements a store's pool sends.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	q.n.Add(1)
	return ctx
}

func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// BenchmarkRevision measures the revision read every consistent GET and
// LIST makes: one caller at a time (its round trip), and 8 concurrent
// callers, as the load harness's 8 connections of GET, which share
// queries (calls/query).
//
//	go test -run '^$' -bench Revision ./storage/postgres/
func BenchmarkRevision(b *testing.B) {
	ctx := context.Background()
	for _, callers := range []int{1, 8} {
		b.Run(fmt.Sprint(callers), func(b *testing.B) {
			var q queryCounter
			s := mustStore(b, freshSchema(b), postgres.WithTracer(&q))
			if _, err := s.Create(ctx, "/a", benchValue); err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			before := q.n.Load()
			b.ResetTimer()
			for range callers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if _, err := s.Revision(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/float64(max(1, q.n.Load()-before)), "calls/query")
		})
	}
}

// BenchmarkRecentFollow measures the committer's hand-over of its events
// to the watchers' in-memory log (no PostgreSQL): 10,000 commits of eight
// updates, past the log's bound of 4,096 events, so that almost every
// commit drops as many old events as it adds.
//
//	go test -run '^$' -bench RecentFollow ./storage/postgres/
func BenchmarkRecentFollow(b *testing.B) {
	for b.Loop() {
		if err := postgres.FollowCommits(10000, benchValue, false); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
