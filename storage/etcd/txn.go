package etcd

import (
	"context"
	"reflect"
	"slices"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// A write's transaction is built here as etcd's protocol messages, not
// through the client's Txn: that clones each comparison by reflection
// twice (proto.Clone) and copies each key and the value twice, 24
// allocations and ~5 KB for an update of a 1 KB object, several
// microseconds of a write's CPU. Here it is one allocation besides the
// key, the value not copied. It is sent on the client's connection with
// the client's call options, as its KV sends one (its interceptors, its
// message size limits and WaitForReady apply alike), unless the client's
// KV was replaced (namespace.NewKV, a wrapper of the caller's): the
// transaction then goes through it, as reads do.

// writeTxn is one write transaction, its messages allocated together.
type writeTxn struct {
	req           pb.TxnRequest
	cmp           pb.Compare
	created       pb.Compare_CreateRevision
	modified      pb.Compare_ModRevision
	cmps          [1]*pb.Compare
	ops           [3]*pb.RequestOp
	opv           [3]pb.RequestOp
	put, mark     pb.PutRequest
	putOp, markOp pb.RequestOp_RequestPut
	del           pb.DeleteRangeRequest
	delOp         pb.RequestOp_RequestDeleteRange
	get           pb.RangeRequest
	getOp         pb.RequestOp_RequestRange
}

// newWriteTxn starts a transaction on key: then its write (put or del)
// and the marker's update.
func (s *Store) newWriteTxn(key string) *writeTxn {
	t := &writeTxn{}
	k := make([]byte, 0, len(s.data)+len(key))
	k = append(append(k, s.data...), key...)
	t.cmp.Key, t.put.Key, t.del.Key, t.get.Key = k, k, k, k
	t.mark.Key = s.markerKey
	t.putOp.RequestPut, t.markOp.RequestPut = &t.put, &t.mark
	t.delOp.RequestDeleteRange, t.getOp.RequestRange = &t.del, &t.get
	t.del.PrevKv, t.get.KeysOnly = true, true
	t.cmps[0] = &t.cmp
	for i := range t.ops {
		t.ops[i] = &t.opv[i]
	}
	t.opv[1].Request, t.opv[2].Request = &t.markOp, &t.getOp
	t.req.Compare, t.req.Success = t.cmps[:], t.ops[:2]
	return t
}

// createTxn is the transaction of a Create of value: if the key has no
// create_revision, put it.
func (s *Store) createTxn(key string, value []byte) *writeTxn {
	t := s.newWriteTxn(key)
	t.cmp.Target, t.cmp.Result, t.cmp.TargetUnion = pb.Compare_CREATE, pb.Compare_EQUAL, &t.created
	t.put.Value, t.opv[0].Request = value, &t.putOp
	return t
}

// updateTxn is the transaction of an Update to value, on precondition's
// condition, else a read of the key's keys only to say why not.
func (s *Store) updateTxn(key string, value []byte, expect int64) *writeTxn {
	t := s.preconditioned(key, expect)
	t.put.Value, t.opv[0].Request = value, &t.putOp
	return t
}

// deleteTxn is the transaction of a Delete, which returns the value
// removed, on precondition's condition, else as updateTxn's.
func (s *Store) deleteTxn(key string, expect int64) *writeTxn {
	t := s.preconditioned(key, expect)
	t.opv[0].Request = &t.delOp
	return t
}

// preconditioned starts the transaction of an update or delete: the key
// exists, and its mod_revision is expect unless that is 0.
func (s *Store) preconditioned(key string, expect int64) *writeTxn {
	t := s.newWriteTxn(key)
	if expect == 0 {
		t.cmp.Target, t.cmp.Result, t.cmp.TargetUnion = pb.Compare_CREATE, pb.Compare_GREATER, &t.created
	} else {
		t.modified.ModRevision = expect
		t.cmp.Target, t.cmp.Result, t.cmp.TargetUnion = pb.Compare_MOD, pb.Compare_EQUAL, &t.modified
	}
	t.req.Failure = t.ops[2:]
	return t
}

// commit sends t: on the client's connection, or through its KV if that
// was replaced (see kvDirect).
func (s *Store) commit(ctx context.Context, t *writeTxn) (*pb.TxnResponse, error) {
	if s.kv != nil {
		resp, err := s.kv.Txn(ctx, &t.req, s.callOpts...)
		return resp, clientv3.ContextError(ctx, err)
	}
	cmps := []clientv3.Cmp{clientv3.FromCompare(&t.cmp)}
	resp, err := s.client.Txn(ctx).If(cmps...).Then(clientOps(t.req.Success)...).Else(clientOps(t.req.Failure)...).Commit()
	return (*pb.TxnResponse)(resp), err
}

// clientOps are ops, as the client's KV takes them.
func clientOps(ops []*pb.RequestOp) []clientv3.Op {
	out := make([]clientv3.Op, len(ops))
	for i, op := range ops {
		switch r := op.Request.(type) {
		case *pb.RequestOp_RequestPut:
			out[i] = clientv3.OpPut(string(r.RequestPut.Key), string(r.RequestPut.Value))
		case *pb.RequestOp_RequestDeleteRange:
			out[i] = clientv3.OpDelete(string(r.RequestDeleteRange.Key), clientv3.WithPrevKV())
		case *pb.RequestOp_RequestRange:
			out[i] = clientv3.OpGet(string(r.RequestRange.Key), clientv3.WithKeysOnly())
		}
	}
	return out
}

// kvDirect is the client's KV service on its connection and the options
// its KV calls with; nil if the client's KV is not the one the client
// makes for itself, or its options could not be learnt. Its Go type is not
// enough: NewKVFromKVClient makes one of that type on a service of the
// caller's (etcd's in-process client, v3client.New, has no connection at
// all and calls the server directly), nor is one on another client's
// connection: it is the client's KV, its retrying service and the gRPC
// service in that, on the client's connection (sameParts, three pointers
// down).
func kvDirect(client *clientv3.Client) (pb.KVClient, []grpc.CallOption) {
	own := clientv3.NewKV(client)
	if client.ActiveConnection() == nil || !sameParts(reflect.ValueOf(&client.KV).Elem(), reflect.ValueOf(&own).Elem(), 3) {
		return nil, nil
	}
	// The client's own KV passes its call options to the service it
	// wraps: a stand-in service learns them, without a call to etcd.
	var learn callOptions
	_, _ = clientv3.NewKVFromKVClient(&learn, client).Txn(context.Background()).Commit()
	if !learn.called {
		return nil, nil
	}
	return clientv3.RetryKVClient(client), learn.opts
}

// callOptions is a KV service that only notes the options of a Txn.
type callOptions struct {
	pb.KVClient // nil: any other call would panic; none is made
	opts        []grpc.CallOption
	called      bool
}

func (c *callOptions) Txn(_ context.Context, _ *pb.TxnRequest, opts ...grpc.CallOption) (*pb.TxnResponse, error) {
	c.opts, c.called = slices.Clone(opts), true
	return &pb.TxnResponse{Header: &pb.ResponseHeader{}}, nil
}
