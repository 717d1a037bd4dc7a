package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

func BenchmarkCreate(b *testing.B) {
	benchmarkCreate(b, func(i int) string { return fmt.Sprintf("/widgets/%09d", i) })
}

// BenchmarkCreateInterleaved creates keys as 8 writers naming their own
// objects do: each new key lands inside the key range, not after it.
func BenchmarkCreateInterleaved(b *testing.B) {
	benchmarkCreate(b, func(i int) string { return fmt.Sprintf("/widgets/w-%d-%09d", i%8, i/8) })
}

func benchmarkCreate(b *testing.B, key func(i int) string) {
	ctx := context.Background()
	s := memory.New()
	defer s.Close()
	value := []byte(`{"spec":{"size":1}}`)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Create(ctx, key(i), value); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkUpdateWatched(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := memory.New()
	defer s.Close()
	rev, err := s.Create(ctx, "/widgets/a", nil)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := s.Watch(ctx, "/widgets/", rev)
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for range ch {
		}
	}()
	value := []byte(`{"spec":{"size":1}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Update(ctx, "/widgets/a", value, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func populate(b *testing.B, s *memory.Store, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("/widgets/default/%04d", i)
		if _, err := s.Create(context.Background(), keys[i], []byte(`{"spec":{"size":1}}`)); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	s := memory.New()
	defer s.Close()
	keys := populate(b, s, 500)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Get(ctx, keys[i%len(keys)], 0); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkList500(b *testing.B) {
	ctx := context.Background()
	s := memory.New()
	defer s.Close()
	populate(b, s, 500)
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.List(ctx, "/widgets/default/", storage.ListOptions{})
		if err != nil || len(res.Items) != 500 {
			b.Fatal(len(res.Items), err)
		}
	}
}
