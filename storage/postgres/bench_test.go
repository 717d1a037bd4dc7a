package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

var benchValue = []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"color":"red","replicas":1}}`)

// BenchmarkStore measures the store's calls one at a time, and writes from
// 8 concurrent writers, which share transactions.
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
	b.Run("Create8", func(b *testing.B) {
		s := mustStore(b, freshSchema(b))
		var n atomic.Int64
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Create(ctx, fmt.Sprintf("/w/%09d", n.Add(1)), benchValue); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
	b.Run("Update8", func(b *testing.B) {
		s := mustStore(b, freshSchema(b))
		const keys = 64
		for i := range keys {
			if _, err := s.Create(ctx, fmt.Sprintf("/w/%03d", i), benchValue); err != nil {
				b.Fatal(err)
			}
		}
		var n atomic.Int64
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Update(ctx, fmt.Sprintf("/w/%03d", n.Add(1)%keys), benchValue, 0); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
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
