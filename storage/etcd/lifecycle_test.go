package etcd_test

import (
	"testing"

	"github.com/kapi-dev/kapi/internal/test/lifecycletest"
	"github.com/kapi-dev/kapi/storage"
)

// TestLifecycle runs the lifecycle suite (namespaces, leases) on etcd: each
// server has a client of its own on one prefix, as replicas have.
func TestLifecycle(t *testing.T) {
	lifecycletest.Run(t, func(t *testing.T) lifecycletest.Open {
		prefix := freshPrefix()
		return func(t *testing.T) storage.Interface { return mustStore(t, prefix) }
	})
}
