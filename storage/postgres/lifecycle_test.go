package postgres_test

import (
	"testing"

	"github.com/kapi-dev/kapi/internal/test/lifecycletest"
	"github.com/kapi-dev/kapi/storage"
)

// TestLifecycle runs the lifecycle suite (namespaces, leases) on
// PostgreSQL: each server has a store of its own on one schema, as
// replicas have.
func TestLifecycle(t *testing.T) {
	lifecycletest.Run(t, func(t *testing.T) lifecycletest.Open {
		schema := freshSchema(t)
		return func(t *testing.T) storage.Interface { return mustStore(t, schema) }
	})
}
