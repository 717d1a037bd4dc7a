package etcd

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kapi-dev/kapi/storage"
)

// TestWriteErrors: each error etcd or its connection gives a write is the
// storage fault of the README's table, with its outcome known only where
// etcd refuses before proposing. The faults a test cluster cannot be made
// to give on demand (leader elections, overload) are checked here.
func TestWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		err     error
		fault   error // nil: not a fault
		unknown bool
	}{
		{rpctypes.ErrNoLeader, storage.ErrUnavailable, false},
		{rpctypes.ErrTooManyRequests, storage.ErrUnavailable, false},
		{rpctypes.ErrNotCapable, storage.ErrUnavailable, false},
		{rpctypes.ErrLeaderChanged, storage.ErrUnavailable, true},
		{rpctypes.ErrStopped, storage.ErrUnavailable, true},
		{rpctypes.ErrUnhealthy, storage.ErrUnavailable, true},
		{rpctypes.ErrTimeout, storage.ErrTimeout, true},
		{rpctypes.ErrTimeoutDueToLeaderFail, storage.ErrTimeout, true},
		{rpctypes.ErrTimeoutDueToConnectionLost, storage.ErrTimeout, true},
		{rpctypes.ErrTimeoutWaitAppliedIndex, storage.ErrTimeout, true},
		{rpctypes.ErrRequestTooLarge, storage.ErrTooLarge, false},
		{status.Error(codes.ResourceExhausted, "grpc: trying to send message larger than max (3000000 vs. 2097152)"), storage.ErrTooLarge, false},
		{rpctypes.ErrNoSpace, storage.ErrNoSpace, false},
		{status.Error(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: connect: connection refused\""), storage.ErrUnavailable, true},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), storage.ErrTimeout, true},
		{clientv3.ErrNoAvailableEndpoints, storage.ErrUnavailable, false},
		{fmt.Errorf("etcdclient: %w", context.DeadlineExceeded), nil, true},
		{rpctypes.ErrEmptyKey, nil, false},
		{errors.New("a bug"), nil, false},
	} {
		got := mapWriteError(tc.err)
		if tc.fault != nil && !errors.Is(got, tc.fault) {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.fault)
		}
		for _, fault := range []error{storage.ErrUnavailable, storage.ErrTimeout, storage.ErrTooLarge, storage.ErrNoSpace} {
			if fault != tc.fault && errors.Is(got, fault) {
				t.Errorf("%v: %v is also %v", tc.err, got, fault)
			}
		}
		if errors.Is(got, storage.ErrOutcomeUnknown) != tc.unknown {
			t.Errorf("%v: %v: outcome unknown %v, want %v", tc.err, got, !tc.unknown, tc.unknown)
		}
		if read := mapError(tc.err); errors.Is(read, storage.ErrOutcomeUnknown) {
			t.Errorf("%v: a read's error %v says a write may have happened", tc.err, read)
		}
	}
}
