package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/sqlite"
)

// BenchmarkBackends measures SQLite beside bolt, in one run, on the same
// machine: writes/s of creates and of updates from one writer and from 8
// concurrent ones, and the latency of a Get and of a List of 500 keys.
// Both fsync every commit; "sqlite-normal" is SQLite with
// synchronous=NORMAL, which does not (what FULL costs).
//
//	go test -run '^$' -bench Backends ./storage/sqlite/
func BenchmarkBackends(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) storage.Interface
	}{
		{"bolt", func(b *testing.B) storage.Interface {
			s, err := bolt.Open(filepath.Join(b.TempDir(), "kapi.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
		{"sqlite", func(b *testing.B) storage.Interface { return mustOpen(b, filepath.Join(b.TempDir(), "kapi.db")) }},
		{"sqlite-normal", func(b *testing.B) storage.Interface {
			return mustOpen(b, filepath.Join(b.TempDir(), "kapi.db"), sqlite.WithSynchronous("NORMAL"))
		}},
	}
	value := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"color":"Red","replicas":1}}`)
	for _, backend := range backends {
		b.Run(backend.name, func(b *testing.B) {
			for _, w := range []struct {
				name    string
				writers int
				update  bool
			}{{"Create", 1, false}, {"Create8", 8, false}, {"Update", 1, true}, {"Update8", 8, true}} {
				b.Run(w.name, func(b *testing.B) {
					s := backend.open(b)
					ctx := context.Background()
					if w.update {
						populate(b, s, value)
					}
					var next atomic.Int64
					var wg sync.WaitGroup
					b.ResetTimer()
					for range w.writers {
						wg.Go(func() {
							for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
								var err error
								if w.update {
									_, err = s.Update(ctx, fmt.Sprintf("/w/%04d", i%500), value, 0)
								} else {
									_, err = s.Create(ctx, fmt.Sprintf("/w/%09d", i), value)
								}
								if err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
				})
			}
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
	var wg sync.WaitGroup
	for w := range 10 { // concurrent, to share commits
		wg.Go(func() {
			for i := w; i < len(keys); i += 10 {
				keys[i] = fmt.Sprintf("/w/%04d", i)
				if _, err := s.Create(context.Background(), keys[i], value); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	return keys
}
