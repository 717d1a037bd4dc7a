package apiserver_test

import (
	"path/filepath"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/lifecycletest"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
	"github.com/kapi-dev/kapi/storage/memory"
)

// The lifecycle of namespaces and the paths of leases, on memory and on
// bolt (storage/etcd runs the same suite on etcd).

func TestLifecycleMemory(t *testing.T) {
	lifecycletest.Run(t, func(t *testing.T) lifecycletest.Open {
		store := memory.New()
		return func(*testing.T) storage.Interface { return store }
	})
}

func TestLifecycleBolt(t *testing.T) {
	lifecycletest.Run(t, func(t *testing.T) lifecycletest.Open {
		store, err := bolt.Open(filepath.Join(t.TempDir(), "kapi.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		return func(*testing.T) storage.Interface { return store }
	})
}
