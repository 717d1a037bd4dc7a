package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
)

var benchValue = []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"color":"Red","replicas":1}}`)

// BenchmarkStore measures the store's calls one at a time, and writes from
// 8 concurrent writers, which share transactions, on the tests' PostgreSQL
// (fsync on, as a deployment's).
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
		own, pg := processCPU(b, os.Getpid()), postgresCPU(b)
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
		// The CPU per write, the store's (this process's) and
		// PostgreSQL's, for which the wall time on a shared machine says
		// little.
		perWrite := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
		b.ReportMetric(perWrite(processCPU(b, os.Getpid())-own), "store-cpu-µs/write")
		if pg >= 0 {
			b.ReportMetric(perWrite(postgresCPU(b)-pg), "postgres-cpu-µs/write")
		}
	}
	b.Run("Create8", func(b *testing.B) {
		s := mustStore(b, freshSchema(b))
		concurrently(b, s, func(i int64) error {
			_, err := s.Create(ctx, fmt.Sprintf("/w/%09d", i), benchValue)
			return err
		})
	})
	b.Run("Update8", func(b *testing.B) {
		s := mustStore(b, freshSchema(b))
		const keys = 500
		for i := range keys {
			if _, err := s.Create(ctx, fmt.Sprintf("/w/%03d", i), benchValue); err != nil {
				b.Fatal(err)
			}
		}
		concurrently(b, s, func(i int64) error {
			_, err := s.Update(ctx, fmt.Sprintf("/w/%03d", i%keys), benchValue, 0)
			return err
		})
	})
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

// processCPU is the CPU time pid has used (utime + stime of
// /proc/PID/stat), 0 if it cannot be read.
func processCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	_, after, ok := strings.Cut(s[strings.LastIndexByte(s, ')')+1:], " ")
	if !ok {
		return 0
	}
	fields := strings.Fields(after) // from the state, the stat's 3rd field
	if len(fields) < 13 {
		b.Fatalf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: bad utime or stime", pid)
	}
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// postgresCPU is the CPU time the tests' throwaway cluster's processes
// (the postmaster and its children, the backends among them) have used,
// -1 if the tests run on a server of their own.
func postgresCPU(b *testing.B) time.Duration {
	if testCluster == nil {
		return -1
	}
	postmaster, err := testCluster.PID()
	if err != nil {
		b.Fatal(err)
	}
	total := processCPU(b, postmaster)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(data)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 1 && f[1] == strconv.Itoa(postmaster) {
			total += processCPU(b, pid)
		}
	}
	return total
}
