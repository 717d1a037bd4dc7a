package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/storage"
)

// Events converts etcd events as a watch does, for the external tests: etcd
// cannot be made to send events without their previous values on demand.
func (s *Store) Events(ctx context.Context, events ...*clientv3.Event) ([]storage.Event, error) {
	if err := s.fillPrevKVs(ctx, events); err != nil {
		return nil, err
	}
	out := make([]storage.Event, len(events))
	for i, e := range events {
		var err error
		if out[i], err = s.event(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WithoutReconnect leaves the client's connect backoff as gRPC makes it,
// as the store did before it reset it: for the outage test's "before".
func WithoutReconnect() Option { return func(c *config) { c.noReconnect = true } }

// RevisionWaiters is how many Revision calls wait for the next read of
// the revision, not yet started.
func (s *Store) RevisionWaiters() int { return s.revisionWaiters() }
