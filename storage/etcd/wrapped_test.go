package etcd_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	etcdns "go.etcd.io/etcd/client/v3/namespace"

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
