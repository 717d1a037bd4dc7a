package etcd_test

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var _ storagetest.Compactor = (*etcd.Store)(nil)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		return mustStore(t, freshPrefix())
	})
}

// TestSharedCluster: stores with the same prefix are one store; stores with
// other prefixes, and writes elsewhere in the cluster, are invisible to
// them, revisions included.
func TestSharedCluster(t *testing.T) {
	ctx := t.Context()
	prefix := freshPrefix()
	a, b := mustStore(t, prefix), mustStore(t, prefix)
	other := mustStore(t, freshPrefix())
	client := mustClient(t)

	start, err := a.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if start < 2 {
		t.Errorf("a new store's revision is %d: etcd starts at 1 and the marker's creation is a write", start)
	}
	events, err := b.Watch(ctx, "/", start)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := a.Create(ctx, "/k", []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	// Writes that move etcd's revision but not the store's.
	if _, err := other.Create(ctx, "/k", []byte("elsewhere")); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Put(ctx, "/not/kapi", "x"); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*etcd.Store{"a": a, "b": b} {
		if got, err := s.Revision(ctx); err != nil || got != rev {
			t.Errorf("%s: Revision = %d, %v; want %d, the store's last write, whatever else etcd holds", name, got, err, rev)
		}
		list, err := s.List(ctx, "/", storage.ListOptions{})
		if err != nil || list.Revision != rev || len(list.Items) != 1 || string(list.Items[0].Value) != "v1" {
			t.Errorf("%s: List = %+v, %v; want /k=v1 at revision %d", name, list, err, rev)
		}
	}
	// b's consistent read waits for its watch to reach b.Revision(): the
	// event at that revision must come.
	select {
	case ev := <-events:
		if ev.ModRevision != rev || ev.Key != "/k" {
			t.Errorf("b's watch: %+v, want /k at %d", ev, rev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b's watch saw nothing of a's write")
	}
	u, err := b.Update(ctx, "/k", []byte("v2"), rev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Update(ctx, "/k", []byte("v3"), rev); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("a's update from the revision b replaced: %v, want ErrConflict", err)
	}
	if kv, err := a.Get(ctx, "/k", 0); err != nil || string(kv.Value) != "v2" || kv.ModRevision != u {
		t.Errorf("a reads %+v, %v; want b's write at %d", kv, err, u)
	}
	if kv, err := other.Get(ctx, "/k", 0); err != nil || string(kv.Value) != "elsewhere" {
		t.Errorf("the other prefix reads %+v, %v", kv, err)
	}
}

// TestRevisionsBeforeTheStore: revisions before a store began read as the
// empty store, as long as etcd keeps them, and a watch from 0 means from
// the store's beginning even after etcd compacted the revisions before it.
func TestRevisionsBeforeTheStore(t *testing.T) {
	ctx := t.Context()
	client := mustClient(t)
	if _, err := client.Put(ctx, "/before", "x"); err != nil {
		t.Fatal(err)
	}
	s := mustStore(t, freshPrefix())
	began, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Compact(ctx, began); err != nil {
		t.Fatal(err)
	}
	rev, err := s.Create(ctx, "/k", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "/k", 1); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Get at 1: %v, want ErrNotFound", err)
	}
	if list, err := s.List(ctx, "/", storage.ListOptions{Revision: 1}); err != nil || len(list.Items) != 0 || list.Revision != 1 {
		t.Errorf("List at 1: %+v, %v; want empty at 1", list, err)
	}
	ch, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-ch; ev.Err != nil || ev.ModRevision != rev {
		t.Errorf("watch from 0: %+v, want the create at %d", ev, rev)
	}
}

func TestCloseEndsWatches(t *testing.T) {
	ctx := t.Context()
	s, err := etcd.New(ctx, mustClient(t), etcd.WithPrefix(freshPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Create(ctx, "/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The client's connection is up: what runs beyond this is the watches'.
	baseline := runtime.NumGoroutine()
	func() {
		if err != nil {
			t.Fatal(err)
		}
		caughtUp, err := s.Watch(ctx, "/", 0)
		if err != nil {
			t.Fatal(err)
		}
		if ev := <-caughtUp; ev.ModRevision != rev {
			t.Fatalf("event %+v, want /a", ev)
		}
		behind, err := s.Watch(ctx, "/", 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for name, ch := range map[string]<-chan storage.Event{"caught up": caughtUp, "behind": behind} {
			var last storage.Event
			for ev := range ch {
				last = ev
			}
			if !errors.Is(last.Err, storage.ErrClosed) {
				t.Errorf("%s watcher's final event %+v, want ErrClosed", name, last)
			}
		}
		// What every method answers after Close is the suite's Close case.
	}()
	waitGoroutines(t, baseline)
}

func waitGoroutines(t *testing.T, limit int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > limit {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), limit, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEventWithoutPrevKV: updates and deletes that etcd sends without
// their previous values (as etcd does to a watch it catches up before
// marking it as wanting them) get the values from etcd, more than one
// transaction's worth at a time, and are ErrExpired only once a compaction
// has passed them.
func TestEventWithoutPrevKV(t *testing.T) {
	ctx := t.Context()
	prefix := freshPrefix()
	s := mustStore(t, prefix)
	key := []byte(prefix + "data/a")
	c, err := s.Create(ctx, "/a", []byte("v0"))
	if err != nil {
		t.Fatal(err)
	}
	events := []*clientv3.Event{{Type: mvccpb.PUT, Kv: &mvccpb.KeyValue{Key: key, Value: []byte("v0"), CreateRevision: c, ModRevision: c, Version: 1}}}
	want := []storage.Event{{Type: storage.Put, KeyValue: storage.KeyValue{Key: "/a", Value: []byte("v0"), CreateRevision: c, ModRevision: c}}}
	// More updates than etcd takes in one transaction.
	rev := c
	for i := 1; i <= 130; i++ {
		v := []byte(fmt.Sprintf("v%d", i))
		if rev, err = s.Update(ctx, "/a", v, rev); err != nil {
			t.Fatal(err)
		}
		events = append(events, &clientv3.Event{Type: mvccpb.PUT, Kv: &mvccpb.KeyValue{Key: key, Value: v, CreateRevision: c, ModRevision: rev, Version: int64(i + 1)}})
		want = append(want, storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: "/a", Value: v, CreateRevision: c, ModRevision: rev}, Prev: want[i-1].Value})
	}
	removed, err := s.Delete(ctx, "/a", rev)
	if err != nil {
		t.Fatal(err)
	}
	d := removed.ModRevision
	events = append(events, &clientv3.Event{Type: mvccpb.DELETE, Kv: &mvccpb.KeyValue{Key: key, ModRevision: d}})
	last := want[len(want)-1].Value
	want = append(want, storage.Event{Type: storage.Delete, KeyValue: storage.KeyValue{Key: "/a", Value: last, CreateRevision: c, ModRevision: d}, Prev: last})

	got, err := s.Events(ctx, events...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("event %d without its previous value: %+v\nwant %+v", i, got[i], want[i])
		}
	}

	if err := s.Compact(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Events(ctx, &clientv3.Event{Type: mvccpb.DELETE, Kv: &mvccpb.KeyValue{Key: key, ModRevision: d}}); !errors.Is(err, storage.ErrExpired) {
		t.Errorf("the delete, once compacted: %v; want ErrExpired", err)
	}
}
