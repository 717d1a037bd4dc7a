package etcd_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// The store sends its writes and watches straight on the client's
// connection only when the client's KV and Watcher are the ones the
// client makes for itself: any other, whatever its Go type, is the
// caller's way to etcd and must be used.

// TestInProcessClient: a client of an etcd in the same process
// (v3client.New, etcd's way to embed one) has no connection at all; its
// KV calls the server directly. The whole suite passes on it.
func TestInProcessClient(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		client := v3client.New(etcdServer().Server)
		t.Cleanup(func() { client.Close() })
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		s, err := etcd.New(ctx, client, etcd.WithPrefix(freshPrefix()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// countingKV counts the transactions sent through it.
type countingKV struct {
	pb.KVClient
	txns atomic.Int64
}

func (c *countingKV) Txn(ctx context.Context, in *pb.TxnRequest, opts ...grpc.CallOption) (*pb.TxnResponse, error) {
	c.txns.Add(1)
	return c.KVClient.Txn(ctx, in, opts...)
}

// countingWatch counts the watch streams opened through it.
type countingWatch struct {
	pb.WatchClient
	streams atomic.Int64
}

func (c *countingWatch) Watch(ctx context.Context, opts ...grpc.CallOption) (pb.Watch_WatchClient, error) {
	c.streams.Add(1)
	return c.WatchClient.Watch(ctx, opts...)
}

// TestKVFromKVClient: a client whose KV or Watcher is the client's own
// type built on a service of the caller's (NewKVFromKVClient,
// NewWatchFromWatchClient) writes or watches through that service.
func TestKVFromKVClient(t *testing.T) {
	for _, replaced := range []string{"kv", "watcher"} {
		t.Run(replaced, func(t *testing.T) {
			ctx := t.Context()
			client := mustClient(t)
			kv := &countingKV{KVClient: clientv3.RetryKVClient(client)}
			watches := &countingWatch{WatchClient: pb.NewWatchClient(client.ActiveConnection())}
			if replaced == "kv" {
				client.KV = clientv3.NewKVFromKVClient(kv, client)
			} else {
				client.Watcher = clientv3.NewWatchFromWatchClient(watches, client)
			}
			s, rev := watchedCreate(t, client)
			if _, err := s.Update(ctx, "/a", []byte("2"), rev); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Delete(ctx, "/a", 0); err != nil {
				t.Fatal(err)
			}
			if n := kv.txns.Load(); replaced == "kv" && n < 3 {
				t.Errorf("%d transactions through the client's KV service for 3 writes", n)
			}
			if n := watches.streams.Load(); replaced == "watcher" && n != 1 {
				t.Errorf("%d watch streams opened through the client's Watch service, want 1", n)
			}
		})
	}
}

// TestWatcherOnAnotherConnection: a client whose Watcher is the client's
// own type on the client's own type of service, but on a connection of the
// caller's (a connection kept for watches, NewWatchFromWatchClient on
// pb.NewWatchClient(conn)), watches through that connection, not the
// client's.
func TestWatcherOnAnotherConnection(t *testing.T) {
	ctx := t.Context()
	var streams atomic.Int64
	count := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if method == "/etcdserverpb.Watch/Watch" {
			streams.Add(1)
		}
		return streamer(ctx, desc, cc, method, opts...)
	}
	watches, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdEndpoint()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainStreamInterceptor(count)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watches.Close() })
	client := mustClient(t)
	client.Watcher = clientv3.NewWatchFromWatchClient(pb.NewWatchClient(watches.ActiveConnection()), client)
	watchedCreate(t, client)
	if n := streams.Load(); n != 1 {
		t.Errorf("%d watch streams opened on the Watcher's connection, want 1", n)
	}
	// A client's own Watcher, and one made again as the client makes it,
	// are still bypassed.
	for _, own := range []bool{false, true} {
		plain := mustClient(t)
		if own {
			plain.Watcher = clientv3.NewWatchFromWatchClient(pb.NewWatchClient(plain.ActiveConnection()), plain)
		}
		ps, err := etcd.New(ctx, plain, etcd.WithPrefix(freshPrefix()))
		if err != nil {
			t.Fatal(err)
		}
		if !ps.WatchesDirect() {
			t.Errorf("a client's own Watcher (made again: %v) is not bypassed", own)
		}
		ps.Close()
	}
}

// TestKVOnAnotherConnection: a client whose KV is the client's own type
// on a service of the client's type, but on another client's connection
// (RetryKVClient(other)), writes through it; telling so reads neither
// connection's state, which their goroutines change (under -race, a
// comparison of the two connections' internals is a race).
func TestKVOnAnotherConnection(t *testing.T) {
	for range 5 {
		other, client := mustClient(t), mustClient(t)
		client.KV = clientv3.NewKVFromKVClient(clientv3.RetryKVClient(other), client)
		s, _ := watchedCreate(t, client)
		if s.WritesDirect() {
			t.Fatal("a KV on another client's connection is bypassed")
		}
	}
}

// watchedCreate makes a store on client, watches it and creates /a, whose
// event it waits for; it returns the store and the create's revision.
func watchedCreate(t *testing.T, client *clientv3.Client) (*etcd.Store, int64) {
	t.Helper()
	ctx := t.Context()
	s, err := etcd.New(ctx, client, etcd.WithPrefix(freshPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	events, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Create(ctx, "/a", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-events; ev.Err != nil || ev.ModRevision != rev {
		t.Fatalf("event %+v, want the create at %d", ev, rev)
	}
	return s, rev
}
