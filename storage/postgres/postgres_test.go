package postgres_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
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

// TestKeyTooLarge: a key too long for PostgreSQL's index is ErrTooLarge,
// refused before it reaches a transaction, so that the writes batched with
// it still succeed.
func TestKeyTooLarge(t *testing.T) {
	s := mustStore(t, freshSchema(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	var long, short error
	wg.Go(func() { _, long = s.Create(ctx, "/"+strings.Repeat("k", 4000), []byte("v")) })
	wg.Go(func() { _, short = s.Create(ctx, "/k", []byte("v")) })
	wg.Wait()
	if !errors.Is(long, storage.ErrTooLarge) {
		t.Errorf("a 4000-byte key: %v, want ErrTooLarge", long)
	}
	if short != nil {
		t.Errorf("a short key written beside it: %v", short)
	}
	// The longest key taken, of bytes PostgreSQL cannot compress, fits
	// its index.
	longest := make([]byte, 2048)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range longest {
		longest[i] = byte(rng.IntN(256))
	}
	if _, err := s.Create(ctx, string(longest), []byte("v")); err != nil {
		t.Errorf("a 2048-byte key: %v", err)
	}
	if kv, err := s.Get(ctx, string(longest), 0); err != nil || kv.Key != string(longest) {
		t.Errorf("reading the 2048-byte key: %v", err)
	}
}
