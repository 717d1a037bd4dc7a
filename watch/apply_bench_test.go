package watch

import (
	"context"
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// BenchmarkHubApply is the applier's own cost of one event, without the
// store or its watch: an update of one of 10,000 cached keys (a PUT or
// PATCH), and a create then a delete of a key among them.
func BenchmarkHubApply(b *testing.B) {
	const n = 10000
	store := memory.New()
	defer store.Close()
	ctx := context.Background()
	var shared any = "object"
	key := func(i int) string { return fmt.Sprintf("/registry/widgets/ns%d/%05d", i%10, i) }
	var rev int64
	for i := range n {
		kv, err := store.Create(ctx, key(i), []byte("v"))
		if err != nil {
			b.Fatal(err)
		}
		rev = kv
	}
	h := New(store, "/registry/")
	h.Register("/registry/widgets/", func(storage.KeyValue) (any, error) { return shared, nil })
	if _, err := h.relist(ctx); err != nil {
		b.Fatal(err)
	}
	value := []byte("v2")
	b.Run("update", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			rev++
			i++
			h.apply(storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: key(i * 7919 % n), Value: value, ModRevision: rev}, Prev: value})
		}
	})
	b.Run("create-delete", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			k := fmt.Sprintf("/registry/widgets/ns5/%05d-churn", i%100)
			rev++
			h.apply(storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: k, Value: value, ModRevision: rev}})
			rev++
			h.apply(storage.Event{Type: storage.Delete, KeyValue: storage.KeyValue{Key: k, Value: value, ModRevision: rev}, Prev: value})
		}
	})
}
