package postgres_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// TestConformanceAcrossReplicas runs the whole conformance suite on two
// stores of one schema as if they were one: each call goes to the one or
// the other in turn, so that a watch started on one follows the writes of
// both, a read follows a write made through the other, and the
// linearizability check sees one history made through two replicas.
func TestConformanceAcrossReplicas(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		schema := freshSchema(t)
		// A short sole-writer lease: the two write in turns, and the
		// lease moves between them (a write waiting out the other's
		// lease, a tenth of a second at most) as often as the suite
		// pauses its writes for longer than the lease's memory.
		lease := postgres.WithWriterLease(100 * time.Millisecond)
		return &alternating{stores: [2]*postgres.Store{mustStore(t, schema, lease), mustStore(t, schema, lease)}}
	})
}

// alternating sends each call to one of its stores, in turn.
type alternating struct {
	stores [2]*postgres.Store
	calls  atomic.Int64
}

var (
	_ storage.Interface     = (*alternating)(nil)
	_ storagetest.Compactor = (*alternating)(nil)
)

func (a *alternating) next() *postgres.Store { return a.stores[a.calls.Add(1)%2] }

func (a *alternating) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	return a.next().Get(ctx, key, rev)
}

func (a *alternating) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	return a.next().List(ctx, prefix, opts)
}

func (a *alternating) Revision(ctx context.Context) (int64, error) { return a.next().Revision(ctx) }

func (a *alternating) Create(ctx context.Context, key string, value []byte) (int64, error) {
	return a.next().Create(ctx, key, value)
}

func (a *alternating) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	return a.next().Update(ctx, key, value, expect)
}

func (a *alternating) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	return a.next().Delete(ctx, key, expect)
}

func (a *alternating) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	return a.next().Watch(ctx, prefix, rev)
}

func (a *alternating) Compact(ctx context.Context, rev int64) error {
	return a.next().Compact(ctx, rev)
}

// Close closes both; as one store's, a second Close is ErrClosed.
func (a *alternating) Close() error {
	return errors.Join(a.stores[0].Close(), a.stores[1].Close())
}
