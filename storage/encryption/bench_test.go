package encryption_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// BenchmarkStore is the cost of encryption per write and per read, side
// by side with the same backend unwrapped, for a widget of about 1 KiB
// and one of 16 KiB:
//
//	go test -run '^$' -bench Store -benchmem ./storage/encryption
//
// Write is an Update of one key, Read a Get of it, Watch the delivery of
// an update's event (which decrypts the value and the previous one) and
// List a page of 100 such values. The memory backend shows the cipher's
// cost alone; bolt's fsync dwarfs it.
func BenchmarkStore(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) storage.Interface
	}{
		{"memory", func(b *testing.B) storage.Interface {
			m := memory.New()
			b.Cleanup(func() { m.Close() })
			return m
		}},
		{"bolt", func(b *testing.B) storage.Interface {
			return mustOpenBolt(b, filepath.Join(b.TempDir(), "kapi.db"))
		}},
	}
	wrappers := []struct {
		name string
		wrap func(b *testing.B, s storage.Interface) storage.Interface
	}{
		{"unwrapped", func(_ *testing.B, s storage.Interface) storage.Interface { return s }},
		{"identity", func(b *testing.B, s storage.Interface) storage.Interface {
			return mustNew(b, s, config([]string{"*.*"}, identity))
		}},
		{"aesgcm", func(b *testing.B, s storage.Interface) storage.Interface { return mustNew(b, s, everything) }},
	}
	ops := []struct {
		name       string
		memoryOnly bool // bolt's watch and list would measure bolt
		run        func(b *testing.B, s storage.Interface, value []byte)
	}{
		{"Write", false, benchWrite},
		{"Read", false, benchRead},
		{"Watch", true, benchWatch},
		{"List100", true, benchList},
	}
	for _, size := range []int{1 << 10, 16 << 10} {
		value := widgetOfSize(size)
		for _, backend := range backends {
			for _, w := range wrappers {
				for _, op := range ops {
					if op.memoryOnly && backend.name != "memory" {
						continue
					}
					b.Run(fmt.Sprintf("%s/%s/%dKiB/%s", backend.name, w.name, size>>10, op.name), func(b *testing.B) {
						op.run(b, w.wrap(b, backend.open(b)), value)
					})
				}
			}
		}
	}
}

// widgetOfSize is a widget's JSON padded to size bytes with labels.
func widgetOfSize(size int) []byte {
	head := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default","labels":{"pad":"`
	tail := `"}},"spec":{"color":"Red","size":3}}`
	return []byte(head + strings.Repeat("x", size-len(head)-len(tail)) + tail)
}

const benchKey = "/widgets.example.com/default/w"

func benchWrite(b *testing.B, s storage.Interface, value []byte) {
	benchOne(b, s, value, func(ctx context.Context) error {
		_, err := s.Update(ctx, benchKey, value, 0)
		return err
	})
}

func benchRead(b *testing.B, s storage.Interface, value []byte) {
	benchOne(b, s, value, func(ctx context.Context) error {
		_, err := s.Get(ctx, benchKey, 0)
		return err
	})
}

// benchOne measures op on benchKey, created with value.
func benchOne(b *testing.B, s storage.Interface, value []byte, op func(context.Context) error) {
	ctx := context.Background()
	if _, err := s.Create(ctx, benchKey, value); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func benchWatch(b *testing.B, s storage.Interface, value []byte) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rev, err := s.Create(ctx, benchKey, value)
	if err != nil {
		b.Fatal(err)
	}
	events, err := s.Watch(ctx, "/", rev)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Update(ctx, benchKey, value, 0); err != nil {
			b.Fatal(err)
		}
		if ev := <-events; ev.Err != nil || len(ev.Value) != len(value) {
			b.Fatalf("event %+v", ev)
		}
	}
}

func benchList(b *testing.B, s storage.Interface, value []byte) {
	ctx := context.Background()
	for i := range 100 {
		if _, err := s.Create(ctx, fmt.Sprintf("/widgets.example.com/default/w%03d", i), value); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(100 * int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if res, err := s.List(ctx, "/widgets.example.com/", storage.ListOptions{}); err != nil || len(res.Items) != 100 {
			b.Fatalf("List: %d items, %v", len(res.Items), err)
		}
	}
}
