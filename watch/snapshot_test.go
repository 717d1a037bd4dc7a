package watch_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/race"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestReadsUnderWritesAreStateAtRevision checks the cache's snapshots
// while writers change it: every List and Get, read while updates,
// creates and deletes are applied (to a cache three levels deep, so that
// writes copy inner nodes, and with keys that become or stop being the
// least key of a node), is exactly what the store held at the revision it
// answered with: the same keys, each at the same revision, and the same
// count of the keys that follow a page.
func TestReadsUnderWritesAreStateAtRevision(t *testing.T) {
	const keys = 3000
	e := newEnv(t, envOptions{store: []memory.Option{memory.WithHistory(1 << 20)}})
	key := func(i int) string { return fmt.Sprintf("%sns%d/%05d", widgets, i%4, i) }
	for i := range keys {
		mustCreate(t, e.store, key(i), "v")
	}
	e.run(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wrote sync.WaitGroup
	fail := make(chan error, 2)
	write := func(seed uint64, op func(r *rand.Rand) error) {
		wrote.Go(func() {
			r := rand.New(rand.NewPCG(seed, 2))
			for ctx.Err() == nil {
				if err := op(r); err != nil && ctx.Err() == nil {
					fail <- err
					return
				}
			}
		})
	}
	write(1, func(r *rand.Rand) error { // updates in place
		_, err := e.store.Update(ctx, key(r.IntN(keys)), fmt.Appendf(nil, "v%d", r.Int()), 0)
		return err
	})
	write(2, func(r *rand.Rand) error { // keys before and between the others, then gone
		k := fmt.Sprintf("%sns%d/%05d", widgets, r.IntN(4), r.IntN(keys))
		if r.IntN(2) == 0 {
			k = fmt.Sprintf("%sns%d/", widgets, r.IntN(4)) // the least key of its namespace
		}
		k += "x"
		if _, err := e.store.Create(ctx, k, []byte("v")); err != nil && !errors.Is(err, storage.ErrExists) {
			return err
		}
		if _, err := e.store.Delete(ctx, k, 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		return nil
	})

	r := rand.New(rand.NewPCG(3, 3))
	for i := range race.Cases(300) {
		select {
		case err := <-fail:
			t.Fatal(err)
		default:
		}
		prefix := widgets
		if i%2 == 1 {
			prefix = fmt.Sprintf("%sns%d/", widgets, r.IntN(4))
		}
		start, limit := "", 0
		if i%3 == 1 {
			start, limit = key(r.IntN(keys)), 1+r.IntN(100)
		}
		items, rev, remaining := e.widgets.List(prefix, start, limit, nil)
		page, err := e.store.List(context.Background(), prefix, storage.ListOptions{Revision: rev})
		if err != nil {
			t.Fatalf("store List at %d: %v", rev, err)
		}
		var want []storage.KeyValue
		for _, kv := range page.Items {
			if kv.Key >= start {
				want = append(want, kv)
			}
		}
		wantRemaining := 0
		if limit > 0 && len(want) > limit {
			want, wantRemaining = want[:limit], len(want)-limit
		}
		if len(items) != len(want) || remaining != wantRemaining {
			t.Fatalf("List(%q, %q, %d) at %d: %d items, %d remaining; the store held %d, %d", prefix, start, limit, rev, len(items), remaining, len(want), wantRemaining)
		}
		for j, it := range items {
			if it.Key != want[j].Key || it.Revision != want[j].ModRevision {
				t.Fatalf("List(%q) at %d: item %d is %s at %d; the store held %s at %d", prefix, rev, j, it.Key, it.Revision, want[j].Key, want[j].ModRevision)
			}
		}
		k := key(r.IntN(keys))
		it, rev := e.widgets.Get(k)
		kv, err := e.store.Get(context.Background(), k, rev)
		if err != nil || it == nil || it.Revision != kv.ModRevision {
			t.Fatalf("Get(%q) at %d = %v; the store held %v, %v", k, rev, it, kv.ModRevision, err)
		}
	}
	cancel()
	wrote.Wait()
	mustWaitFor(t, e.hub, mustRevision(t, e.store))
	checkCacheMatchesStore(t, e.store, e.widgets)
}
