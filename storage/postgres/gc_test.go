package postgres_test

import (
	"testing"

	"github.com/kapi-dev/kapi/internal/test/gctest"
	"github.com/kapi-dev/kapi/storage"
)

// TestGarbageCollector runs the collector's suite on PostgreSQL: its
// restarts and its two replicas share one database and schema.
func TestGarbageCollector(t *testing.T) {
	gctest.Run(t, func(t *testing.T) (storage.Interface, storage.Interface) {
		schema := freshSchema(t)
		return mustStore(t, schema), mustStore(t, schema)
	})
}
