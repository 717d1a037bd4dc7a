package etcd

import (
	"context"
	"time"

	"google.golang.org/grpc/connectivity"
)

// reconnectEvery is how often a connection that has lost etcd tries again,
// at least, once the store has reset gRPC's connect backoff.
const reconnectEvery = 500 * time.Millisecond

// reconnect keeps the client's connection from waiting out gRPC's connect
// backoff once etcd is back. gRPC waits longer after each failed attempt
// to connect, up to 120 s by default, so that after an outage of a few
// minutes the first attempt to find etcd back could come two minutes after
// it was, and every replica would answer 504 meanwhile. While the
// connection is in TRANSIENT_FAILURE, this resets that backoff every
// reconnectEvery, so that an attempt is made about that often, whatever
// dial options the client was built with (a client built with a shorter
// backoff of its own, grpc.WithConnectParams, keeps it). It runs from New
// until Close, or until the client is closed.
func (s *Store) reconnect(ctx context.Context) {
	defer close(s.reconnectDone)
	cc := s.client.ActiveConnection()
	if cc == nil {
		return
	}
	for {
		state := cc.GetState()
		switch state {
		case connectivity.Shutdown:
			return
		case connectivity.TransientFailure:
			select {
			case <-time.After(reconnectEvery):
			case <-ctx.Done():
				return
			}
			cc.ResetConnectBackoff() // an attempt now, and short waits after it
			continue
		}
		if !cc.WaitForStateChange(ctx, state) {
			return
		}
	}
}
