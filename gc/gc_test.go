package gc_test

import (
	"path/filepath"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/gctest"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/memory"
)

// The suite on the backends of the root module; storage/etcd runs it on
// etcd.

func TestMemory(t *testing.T) {
	gctest.Run(t, func(*testing.T) (storage.Interface, storage.Interface) {
		store := memory.New()
		return store, store
	})
}

func TestBolt(t *testing.T) {
	gctest.Run(t, func(t *testing.T) (storage.Interface, storage.Interface) {
		store, err := bolt.Open(filepath.Join(t.TempDir(), "kapi.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		return store, store
	})
}
