package etcd

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/storage"
)

// Watch delivers every change to keys with the given prefix whose revision
// is greater than rev, until ctx ends, from an etcd watch. rev 0, and any
// rev before the store began, mean the store's beginning. A rev etcd has
// compacted away is [storage.ErrExpired] at once; a compaction that passes
// the watch later ends it with an ErrExpired event, and the loss of etcd's
// leader with a [storage.ErrUnavailable] one (the caller watches again from
// its last revision). The
// channel is unbuffered; the goroutine feeding it exits when ctx ends, when
// the store is closed, or after the stream's final error event has been
// received.
func (s *Store) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	if err := s.check(ctx, rev); err != nil {
		return nil, err
	}
	rev = max(rev, s.began)
	// etcd reports a compacted start revision only on the stream, after
	// the watch is created; a read at rev says at once.
	if _, err := s.client.Get(ctx, s.marker, clientv3.WithRev(rev), clientv3.WithCountOnly()); err != nil {
		if err := mapError(err); !errors.Is(err, storage.ErrFutureRevision) {
			return nil, err
		}
	}
	// The etcd watch lives until ctx ends or the store is closed.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	out := make(chan storage.Event)
	if s.watchDirect {
		key := s.data + prefix
		go s.serveStream(ctx, wctx, cancel, []byte(key), []byte(clientv3.GetPrefixRangeEnd(key)), rev+1, out)
		return out, nil
	}
	changes := s.client.Watch(wctx, s.data+prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithPrevKV())
	go s.serveWatch(ctx, cancel, changes, out)
	return out, nil
}

// serveWatch turns etcd's watch responses into events on out.
func (s *Store) serveWatch(ctx context.Context, cancel context.CancelFunc, changes clientv3.WatchChan, out chan<- storage.Event) {
	defer close(out)
	defer cancel() // ends etcd's watch, whichever way this one ends
	send := func(ev storage.Event) bool {
		select {
		case out <- ev:
			return true
		case <-ctx.Done():
		case <-s.closing:
			s.end(ctx, out, storage.ErrClosed)
		}
		return false
	}
	for {
		var (
			resp clientv3.WatchResponse
			ok   bool
		)
		select {
		case resp, ok = <-changes:
		case <-ctx.Done():
			return
		case <-s.closing:
			s.end(ctx, out, storage.ErrClosed)
			return
		}
		if !ok {
			if ctx.Err() == nil {
				s.end(ctx, out, errors.New("etcd: the watch ended"))
			}
			return
		}
		if err := resp.Err(); err != nil {
			s.end(ctx, out, mapError(err))
			return
		}
		events := make([]*mvccpb.Event, len(resp.Events))
		for i, e := range resp.Events {
			events[i] = (*mvccpb.Event)(e)
		}
		if err := s.fillPrevKVs(ctx, events); err != nil {
			s.end(ctx, out, err)
			return
		}
		for _, e := range events {
			ev, err := s.event(e)
			if err != nil {
				s.end(ctx, out, err)
				return
			}
			if !send(ev) {
				return
			}
		}
	}
}

// end sends a stream's final event, unless ctx ends first.
func (s *Store) end(ctx context.Context, out chan<- storage.Event, err error) {
	select {
	case out <- storage.Event{Err: err}:
	case <-ctx.Done():
	}
}

// event converts one etcd event. Updates and deletes need the previous
// version (see fillPrevKVs).
func (s *Store) event(e *mvccpb.Event) (storage.Event, error) {
	ev := storage.Event{Type: storage.Put, KeyValue: s.keyValue(e.Kv)}
	if isCreate(e) {
		return ev, nil // no Prev
	}
	if e.PrevKv == nil {
		return storage.Event{}, fmt.Errorf("etcd: no value of %q before revision %d", ev.Key, e.Kv.ModRevision)
	}
	ev.Prev = e.PrevKv.Value
	if ev.Prev == nil {
		ev.Prev = []byte{} // nil means "created"
	}
	if e.Type == mvccpb.DELETE {
		ev.Type, ev.Value, ev.CreateRevision = storage.Delete, ev.Prev, e.PrevKv.CreateRevision
	}
	return ev, nil
}

// fillPrevKVs reads the previous version of each update and delete among
// events that came without it, at the revision before the event, in one
// transaction per maxTxnOps of them. etcd leaves it out when its own read
// at the revision before fails, which is a compaction, but also (etcd
// v3.7.3, v3rpc/watch.go) when a watch's first events are sent before the
// watch has been marked as wanting previous versions: a watch from a past
// revision that etcd catches up at once. A compaction past the revision
// before is ErrExpired.
func (s *Store) fillPrevKVs(ctx context.Context, events []*mvccpb.Event) error {
	var missing []*mvccpb.Event
	for _, e := range events {
		if e.PrevKv == nil && !isCreate(e) {
			missing = append(missing, e)
		}
	}
	for len(missing) > 0 {
		batch := missing[:min(len(missing), maxTxnOps)]
		missing = missing[len(batch):]
		ops := make([]clientv3.Op, len(batch))
		for i, e := range batch {
			ops[i] = clientv3.OpGet(string(e.Kv.Key), clientv3.WithRev(e.Kv.ModRevision-1))
		}
		resp, err := s.client.Txn(ctx).Then(ops...).Commit()
		if err := mapError(err); errors.Is(err, storage.ErrExpired) {
			e := batch[0]
			return fmt.Errorf("%w: the value before revision %d of %q was compacted", err, e.Kv.ModRevision, s.keyValue(e.Kv).Key)
		} else if err != nil {
			return err
		}
		for i, r := range resp.Responses {
			if kvs := r.GetResponseRange().Kvs; len(kvs) > 0 {
				batch[i].PrevKv = kvs[0]
			}
		}
	}
	return nil
}

// maxTxnOps is etcd's default limit on the operations of a transaction
// (--max-txn-ops).
const maxTxnOps = 128
