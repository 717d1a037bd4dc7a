package etcd_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/memory"
)

// BenchmarkBackends measures the three backends side by side, in one run,
// on the same machine: writes/s from one writer and from 8 concurrent ones,
// and the latency of a Get and of a List of 500 keys. etcd is the
// one-member embedded server of these tests, on loopback, fsyncing; bolt
// fsyncs every commit.
//
//	go test -run '^$' -bench Backends ./storage/etcd/
func BenchmarkBackends(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) storage.Interface
	}{
		{"memory", func(b *testing.B) storage.Interface {
			s := memory.New()
			b.Cleanup(func() { s.Close() })
			return s
		}},
		{"bolt", func(b *testing.B) storage.Interface {
			s, err := bolt.Open(filepath.Join(b.TempDir(), "kapi.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
		{"etcd", func(b *testing.B) storage.Interface { return mustStore(b, freshPrefix()) }},
	}
	value := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"color":"Red","replicas":1}}`)
	for _, backend := range backends {
		b.Run(backend.name, func(b *testing.B) {
			b.Run("Create", func(b *testing.B) {
				s := backend.open(b)
				ctx := context.Background()
				i := 0
				for b.Loop() {
					if _, err := s.Create(ctx, fmt.Sprintf("/w/%09d", i), value); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			})
			b.Run("Create8", func(b *testing.B) {
				s := backend.open(b)
				ctx := context.Background()
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for range 8 {
					wg.Go(func() {
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							if _, err := s.Create(ctx, fmt.Sprintf("/w/%09d", i), value); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			})
			b.Run("Get", func(b *testing.B) {
				s := backend.open(b)
				keys := populate(b, s, value)
				ctx := context.Background()
				i := 0
				for b.Loop() {
					if _, err := s.Get(ctx, keys[i%len(keys)], 0); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("List500", func(b *testing.B) {
				s := backend.open(b)
				populate(b, s, value)
				ctx := context.Background()
				for b.Loop() {
					res, err := s.List(ctx, "/w/", storage.ListOptions{})
					if err != nil || len(res.Items) != 500 {
						b.Fatal(len(res.Items), err)
					}
				}
			})
		})
	}
}

func populate(b *testing.B, s storage.Interface, value []byte) []string {
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = fmt.Sprintf("/w/%04d", i)
		if _, err := s.Create(context.Background(), keys[i], value); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}
