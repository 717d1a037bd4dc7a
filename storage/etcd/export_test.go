package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/storage"
)

// Event converts one etcd event as a watch does, for the external tests:
// etcd cannot be made to send an event without its previous value on
// demand.
func (s *Store) Event(ctx context.Context, e *clientv3.Event) (storage.Event, error) {
	return s.event(ctx, e)
}
