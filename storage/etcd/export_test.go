package etcd

import (
	"context"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/storage"
)

// Events converts etcd events as a watch does, for the external tests: etcd
// cannot be made to send events without their previous values on demand.
func (s *Store) Events(ctx context.Context, events ...*clientv3.Event) ([]storage.Event, error) {
	evs := make([]*mvccpb.Event, len(events))
	for i, e := range events {
		evs[i] = (*mvccpb.Event)(e)
	}
	if err := s.fillPrevKVs(ctx, evs); err != nil {
		return nil, err
	}
	out := make([]storage.Event, len(events))
	for i, e := range evs {
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

// WithRevisionTimeout bounds a read of the revision by d, not a minute.
func WithRevisionTimeout(d time.Duration) Option { return func(c *config) { c.revisionTimeout = d } }

// RevisionWaiters is how many Revision calls wait for the next read of
// the revision, not yet started.
func (s *Store) RevisionWaiters() int { return s.revisionWaiters() }

// WatchesDirect says whether the store's watches bypass its client's
// Watcher (watchDirect), for the external tests.
func (s *Store) WatchesDirect() bool { return s.watchDirect }

// WritesDirect says whether the store's writes bypass its client's KV
// (kvDirect), for the external tests.
func (s *Store) WritesDirect() bool { return s.kv != nil }
