package etcd_test

import (
	"testing"

	"github.com/kapi-dev/kapi/internal/test/gctest"
	"github.com/kapi-dev/kapi/storage"
)

// TestGarbageCollector runs the collector's suite on etcd: its restarts
// and its two replicas share one etcd cluster and prefix.
func TestGarbageCollector(t *testing.T) {
	gctest.Run(t, func(t *testing.T) (storage.Interface, storage.Interface) {
		prefix := freshPrefix()
		return mustStore(t, prefix), mustStore(t, prefix)
	})
}
