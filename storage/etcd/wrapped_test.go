package etcd_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	etcdns "go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// namespacedStore is a store on a client whose KV and Watcher are
// namespace's wrappers, under ns: its transactions go through the
// wrapper, not straight to the connection as the client's own KV's do.
func namespacedStore(t *testing.T, ns string) *etcd.Store {
	t.Helper()
	client := mustClient(t)
	client.KV = etcdns.NewKV(client.KV, ns)
	client.Watcher = etcdns.NewWatcher(client.Watcher, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := etcd.New(ctx, client, etcd.WithPrefix("/kapi/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestWrappedKV: a client whose KV was replaced keeps its writes going
// through it, reads and watches alike, the whole suite passes on it, and
// the keys land where its wrapper puts them.
func TestWrappedKV(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		return namespacedStore(t, freshPrefix())
	})
	t.Run("keys", func(t *testing.T) {
		ctx := t.Context()
		ns := freshPrefix()
		s := namespacedStore(t, ns)
		rev, err := s.Create(ctx, "/a", []byte("1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Update(ctx, "/a", []byte("2"), rev); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, "/b", []byte("3")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Delete(ctx, "/b", 0); err != nil {
			t.Fatal(err)
		}
		resp, err := mustClient(t).Get(ctx, ns, clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, kv := range resp.Kvs {
			got[string(kv.Key)] = string(kv.Value)
		}
		if len(got) != 2 || got[ns+"/kapi/data/a"] != "2" || got[ns+"/kapi/revision"] != "" {
			t.Errorf("keys under %s: %q, want %s/kapi/data/a=2 and the marker", ns, got, ns)
		}
	})
}

// TestWatchThroughRestart: a watch goes on through the restart of the
// only member, on its own stream as through the client's Watcher: every
// change once, in order, no error event (the stream is opened again from
// the revision after the last one delivered, as the Watcher's is).
func TestWatchThroughRestart(t *testing.T) {
	for _, mode := range []string{"stream", "watcher"} {
		t.Run(mode, func(t *testing.T) {
			m := newMember(t, nil)
			client, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client.Host}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { client.Close() })
			if mode == "watcher" {
				client.Watcher = wrappedWatcher{client.Watcher}
			}
			ctx := t.Context()
			s, err := etcd.New(ctx, client)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			rev, err := s.Revision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			events, err := s.Watch(ctx, "/", rev)
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			create := func(key string) {
				t.Helper()
				for {
					wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					rev, err := s.Create(wctx, key, []byte(key))
					cancel()
					if err == nil {
						want = append(want, rev)
						return
					}
					if errors.Is(err, storage.ErrExists) || errors.Is(err, storage.ErrOutcomeUnknown) {
						t.Fatalf("create %s: %v", key, err)
					}
					if ctx.Err() != nil {
						t.Fatal(err)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			create("/a")
			m.stop()
			m.start()
			create("/b")
			create("/c")
			for i, rev := range want {
				select {
				case ev := <-events:
					if ev.Err != nil || ev.ModRevision != rev {
						t.Fatalf("event %d: %+v, want the create at %d", i, ev, rev)
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("no event %d (the create at %d) 30 s after it", i, rev)
				}
			}
		})
	}
}
