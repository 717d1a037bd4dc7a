package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var _ storagetest.Compactor = (*postgres.Store)(nil)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		return mustStore(t, freshSchema(t))
	})
}

// TestLongSchemaName: a schema name of PostgreSQL's longest (63 bytes,
// more than a notification channel's name may take with the store's
// prefix) works, notifications and watches included.
func TestLongSchemaName(t *testing.T) {
	schema := freshSchema(t)
	schema += strings.Repeat("x", 63-len(schema))
	dropAtEnd(t, schema)
	a, b := mustStore(t, schema), mustStore(t, schema)
	events, err := b.Watch(t.Context(), "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := a.Create(t.Context(), "/k", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		if ev.Err != nil || ev.ModRevision != rev {
			t.Errorf("b's watch: %+v, want /k at %d", ev, rev)
		}
	case <-time.After(10 * time.Second):
		t.Error("b's watch saw nothing of a's write")
	}
}
