package etcd

import (
	"context"
	"errors"
	"reflect"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kapi-dev/kapi/storage"
)

// A watch is an etcd watch on a gRPC stream of its own, on the client's
// connection, read by the goroutine that sends its events: kapi's own
// writes come back through it (a write waits for its last one to reach
// the watch cache), and the client's Watcher hands each response through
// three goroutines of its own before the store sees it (its stream's
// reader, its dispatcher, the watch's buffer), a wake-up of each on every
// write. As the client's Watcher, it starts again from the revision after
// the last one delivered when the connection is lost, and ends when etcd
// says it has lost its leader (WithRequireLeader) or compacted past it. A
// client whose Watcher was replaced (namespace.NewWatcher...) watches
// through it (serveWatch).

// watchDirect says whether client's watches may bypass its Watcher: it is
// the one the client makes for itself, and its KV's call options are
// known (kvDirect). The Watcher's Go type is not enough:
// NewWatchFromWatchClient makes one of that type on a service of the
// caller's, which must see the watches; so its service must be the one
// the client's own is, of its type on the client's connection (its
// state, a map of streams, rules out comparing the Watcher whole, as
// kvDirect does the KV). A service of that type on another connection
// (one kept for watches) is the caller's too.
func watchDirect(client *clientv3.Client, kv pb.KVClient) bool {
	if kv == nil || client.Watcher == nil {
		return false
	}
	own := reflect.ValueOf(clientv3.NewWatcher(client))
	w := reflect.ValueOf(client.Watcher)
	if w.Type() != own.Type() || w.Kind() != reflect.Pointer || w.IsNil() {
		return false
	}
	return sameParts(w.Elem().FieldByName("remote"), own.Elem().FieldByName("remote"), 1)
}

// reopenBackoff bounds how often a watch whose stream broke opens another.
const reopenBackoff = 100 * time.Millisecond

// serveStream delivers the changes of the keys from key to end (etcd's
// range end) from revision from on, on out; wctx is the etcd watch's
// (WithRequireLeader), cancelled by cancel when it returns.
func (s *Store) serveStream(ctx, wctx context.Context, cancel context.CancelFunc, key, end []byte, from int64, out chan<- storage.Event) {
	defer close(out)
	defer cancel()
	stop := context.AfterFunc(s.closed, cancel)
	defer stop()
	for {
		err := s.stream(ctx, wctx, key, end, &from, out)
		switch {
		case ctx.Err() != nil:
			return
		case s.closed.Err() != nil:
			s.end(ctx, out, storage.ErrClosed)
			return
		case err == nil:
			return // its final event sent, or ctx ended
		case !transient(err):
			s.end(ctx, out, mapError(err))
			return
		}
		select {
		case <-time.After(reopenBackoff):
		case <-wctx.Done():
		}
	}
}

// stream watches on one gRPC stream, from *from on, moving *from past each
// revision sent. It returns nil once it has sent the watch's final event,
// or ctx has ended; else the stream's error.
func (s *Store) stream(ctx, wctx context.Context, key, end []byte, from *int64, out chan<- storage.Event) error {
	sctx, cancel := context.WithCancel(wctx)
	defer cancel() // ends the stream
	ws, err := pb.NewWatchClient(s.client.ActiveConnection()).Watch(sctx, s.callOpts...)
	if err != nil {
		return rpctypes.Error(err)
	}
	create := &pb.WatchCreateRequest{Key: key, RangeEnd: end, StartRevision: *from, PrevKv: true}
	if err := ws.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: create}}); err != nil {
		return rpctypes.Error(err)
	}
	for {
		resp, err := ws.Recv()
		if err != nil {
			return rpctypes.Error(err)
		}
		switch {
		case resp.CompactRevision != 0:
			s.end(ctx, out, mapError(rpctypes.ErrCompacted))
			return nil
		case resp.Canceled:
			err := error(rpctypes.ErrFutureRev)
			if resp.CancelReason != "" {
				err = rpctypes.Error(status.Error(codes.FailedPrecondition, resp.CancelReason))
			}
			s.end(ctx, out, mapError(err))
			return nil
		}
		if err := s.fillPrevKVs(ctx, resp.Events); err != nil {
			if ctx.Err() == nil && s.closed.Err() == nil {
				s.end(ctx, out, err)
			}
			return nil
		}
		for _, e := range resp.Events {
			ev, err := s.event(e)
			if err != nil {
				s.end(ctx, out, err)
				return nil
			}
			select {
			case out <- ev:
				*from = ev.ModRevision + 1
			case <-ctx.Done():
				return nil
			case <-sctx.Done():
				return sctx.Err() // the store closed
			}
		}
	}
}

// transient says whether a watch's stream broke with err for a reason that
// passes: the connection was lost, or broke mid-stream (as the client's
// Watcher tells them), but not etcd's leader (the caller watches again).
func transient(err error) bool {
	if errors.Is(err, rpctypes.ErrNoLeader) {
		return false
	}
	st, ok := status.FromError(err)
	return ok && (st.Code() == codes.Unavailable || st.Code() == codes.Internal)
}

// isCreate says whether e created its key.
func isCreate(e *mvccpb.Event) bool {
	return e.Type == mvccpb.PUT && e.Kv.CreateRevision == e.Kv.ModRevision
}
