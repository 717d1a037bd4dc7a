package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kapi-dev/kapi/storage"
)

const defaultPrefix = "/kapi/"

// Option configures a [Store].
type Option func(*config)

type config struct {
	prefix string
	// noReconnect leaves the client's connect backoff alone, for the
	// outage test to measure what it costs.
	noReconnect bool
	// revisionTimeout bounds a read of the revision (revisionTimeout).
	revisionTimeout time.Duration
}

// WithPrefix sets where in etcd's key space the store lives: its keys are
// prefix+"data"+key, and its revision marker is prefix+"revision". Stores
// with different prefixes share one etcd cluster without seeing each
// other's keys, as long as neither prefix begins with the other (end them
// with "/"). The default is "/kapi/".
func WithPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// Store is a [storage.Interface] on an etcd cluster. Any number of Stores,
// in any number of processes, may use the same cluster and prefix: they are
// one store. Its methods are safe for concurrent use. The zero value is not
// usable: call [New].
type Store struct {
	client *clientv3.Client
	data   string // prefix of the etcd keys of the store's keys
	marker string // the revision marker's etcd key
	// markerKey is marker as a write's transaction puts it (shared by
	// them all, never changed).
	markerKey []byte
	// kv and callOpts send the writes' transactions (see txn.go); nil
	// kv: through the client's KV.
	kv       pb.KVClient
	callOpts []grpc.CallOption
	// watchDirect: watches on streams of their own (see watchstream.go).
	watchDirect bool
	// began is the revision that created the marker: nothing under data
	// was written before it, so reads and watches below it mean it.
	began int64

	closeOnce sync.Once
	closing   chan struct{} // closed by Close
	// stopReconnect ends the reconnect goroutine, which closes
	// reconnectDone when it has.
	stopReconnect context.CancelFunc
	reconnectDone chan struct{}

	revisions       revisionReads
	revisionTimeout time.Duration // bounds a read of it (revisionTimeout)
	// closed ends when Close is called.
	closed      context.Context
	closeCancel context.CancelFunc
}

var _ storage.Interface = (*Store)(nil)

// New returns the store under the configured prefix of the cluster client
// talks to, creating its revision marker if this is the first store there.
// The client stays the caller's: Close the store, then the client. Until
// Close, the store keeps the client's connection trying to reach etcd
// about every second while it cannot, whatever the client's dial options
// (see the package documentation, Outages).
func New(ctx context.Context, client *clientv3.Client, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("etcd: nil client")
	}
	c := config{prefix: defaultPrefix, revisionTimeout: revisionTimeout}
	for _, opt := range opts {
		opt(&c)
	}
	s := &Store{
		client:  client,
		data:    c.prefix + "data",
		marker:  c.prefix + "revision",
		closing: make(chan struct{}),

		markerKey: []byte(c.prefix + "revision"),

		revisionTimeout: c.revisionTimeout,
	}
	s.kv, s.callOpts = kvDirect(client)
	s.watchDirect = watchDirect(client, s.kv)
	s.closed, s.closeCancel = context.WithCancel(context.Background())
	resp, err := client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.marker), "=", 0)).
		Then(clientv3.OpPut(s.marker, "")).
		Else(clientv3.OpGet(s.marker)).
		Commit()
	if err != nil {
		return nil, fmt.Errorf("etcd: creating the revision marker %q: %w", s.marker, err)
	}
	if resp.Succeeded {
		s.began = resp.Header.Revision
	} else {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return nil, fmt.Errorf("etcd: the revision marker %q vanished", s.marker)
		}
		s.began = kvs[0].CreateRevision
	}
	s.reconnectDone = make(chan struct{})
	if c.noReconnect {
		s.stopReconnect = func() {}
		close(s.reconnectDone)
	} else {
		var rctx context.Context
		rctx, s.stopReconnect = context.WithCancel(context.Background())
		go s.reconnect(rctx)
	}
	return s, nil
}

// Get returns the key's value at rev (0: the latest).
func (s *Store) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	if err := s.check(ctx, rev); err != nil {
		return storage.KeyValue{}, err
	}
	var kv []*mvccpb.KeyValue
	if rev == 0 { // no need to know the store's revision
		resp, err := s.client.Get(ctx, s.data+key)
		if err != nil {
			return storage.KeyValue{}, mapError(err)
		}
		kv = resp.Kvs
	} else {
		resp, _, err := s.read(ctx, clientv3.OpGet(s.data+key, s.at(rev)), rev)
		if err != nil {
			return storage.KeyValue{}, err
		}
		kv = resp.GetResponseRange().Kvs
	}
	if len(kv) == 0 {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	return s.keyValue(kv[0]), nil
}

// List returns the keys with the given prefix as they were at
// opts.Revision (0: the latest), in key order.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if err := s.check(ctx, opts.Revision); err != nil {
		return storage.ListResult{}, err
	}
	from := s.data + max(prefix, opts.Start)
	rangeOpts := []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(s.data + prefix)), s.at(opts.Revision)}
	if opts.Limit > 0 {
		rangeOpts = append(rangeOpts, clientv3.WithLimit(opts.Limit))
	}
	page, rev, err := s.read(ctx, clientv3.OpGet(from, rangeOpts...), opts.Revision)
	if err != nil {
		return storage.ListResult{}, err
	}
	r := page.GetResponseRange()
	res := storage.ListResult{Revision: rev, Items: make([]storage.KeyValue, 0, len(r.Kvs))}
	for _, kv := range r.Kvs {
		res.Items = append(res.Items, s.keyValue(kv))
	}
	// Count is the number of keys in the range, the page's included.
	res.Remaining = r.Count - int64(len(r.Kvs))
	return res, nil
}

// Revision returns the revision of the store's last write: the revision of
// the last write under its prefix, not the cluster's, which writes
// elsewhere move too. It is read from etcd after the call, by one read
// that every call waiting at that moment shares (see revisionReads).
func (s *Store) Revision(ctx context.Context) (int64, error) {
	if err := s.check(ctx, 0); err != nil {
		return 0, err
	}
	return s.revision(ctx)
}

// Create stores value under key if the key is absent.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	if err := s.check(ctx, 0); err != nil {
		return 0, err
	}
	resp, err := s.write(ctx, s.createTxn(key, value))
	if err != nil {
		return 0, err
	}
	if !resp.Succeeded {
		return 0, storage.ErrExists
	}
	return resp.Header.Revision, nil
}

// Update replaces the value of an existing key, if its ModRevision is
// expect or expect is 0.
func (s *Store) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	if err := s.check(ctx, 0); err != nil {
		return 0, err
	}
	resp, err := s.write(ctx, s.updateTxn(key, value, expect))
	if err != nil {
		return 0, err
	}
	if !resp.Succeeded {
		return 0, failedPrecondition(resp)
	}
	return resp.Header.Revision, nil
}

// Delete removes an existing key, if its ModRevision is expect or expect
// is 0, and returns the value removed with ModRevision set to the
// deletion's revision.
func (s *Store) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	if err := s.check(ctx, 0); err != nil {
		return storage.KeyValue{}, err
	}
	resp, err := s.write(ctx, s.deleteTxn(key, expect))
	if err != nil {
		return storage.KeyValue{}, err
	}
	if !resp.Succeeded {
		return storage.KeyValue{}, failedPrecondition(resp)
	}
	prev := resp.Responses[0].GetResponseDeleteRange().PrevKvs
	if len(prev) != 1 {
		return storage.KeyValue{}, fmt.Errorf("etcd: deleting %q returned %d previous values", key, len(prev))
	}
	removed := s.keyValue(prev[0])
	removed.ModRevision = resp.Header.Revision
	return removed, nil
}

// Compact discards the cluster's history before rev: reads at revisions
// below it and watches from them fail with [storage.ErrExpired] from now
// on. etcd compacts its whole key space, every prefix's stores included. A
// rev newer than the store's is [storage.ErrFutureRevision]; one at or
// below an earlier compaction changes nothing.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	cur, err := s.Revision(ctx)
	if err != nil {
		return err
	}
	if rev > cur {
		return fmt.Errorf("%w: compact at %d, store at %d", storage.ErrFutureRevision, rev, cur)
	}
	_, err = s.client.Compact(ctx, rev)
	if errors.Is(err, rpctypes.ErrCompacted) {
		return nil // already compacted at rev or later
	}
	return mapError(err)
}

// Close ends every watch with a final [storage.ErrClosed] event. Every
// later call, Close included, returns [storage.ErrClosed]. It does not
// close the client.
func (s *Store) Close() error {
	err := storage.ErrClosed
	s.closeOnce.Do(func() {
		close(s.closing)
		s.closeCancel()
		s.closeRevisions()
		s.stopReconnect()
		<-s.reconnectDone
		err = nil
	})
	return err
}

// check fails a call on a closed store, with an ended context or with a
// negative revision.
func (s *Store) check(ctx context.Context, rev int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-s.closing:
		return storage.ErrClosed
	default:
	}
	if rev < 0 {
		return fmt.Errorf("etcd: negative revision %d", rev)
	}
	return nil
}

// at is the read option for revision rev (0: the latest). Nothing under
// the store's prefix changed before it began, so older revisions read
// there, and stay readable as long as that is.
func (s *Store) at(rev int64) clientv3.OpOption {
	if rev == 0 {
		return clientv3.WithRev(0)
	}
	return clientv3.WithRev(max(rev, s.began))
}

// read runs op in one transaction with a read of the revision marker, and
// returns op's response and the revision the read stands for: rev, or, for
// 0, the store's revision. A read at the latest revision is at etcd's
// revision, but nothing under the prefix changed since the store's, so it
// reads the same.
func (s *Store) read(ctx context.Context, op clientv3.Op, rev int64) (*pb.ResponseOp, int64, error) {
	resp, err := s.client.Txn(ctx).Then(clientv3.OpGet(s.marker), op).Commit()
	if err != nil {
		return nil, 0, mapError(err)
	}
	marker := resp.Responses[0].GetResponseRange().Kvs
	if len(marker) == 0 {
		return nil, 0, fmt.Errorf("etcd: the revision marker %q is missing", s.marker)
	}
	cur := marker[0].ModRevision
	switch {
	case rev == 0:
		rev = cur
	case rev > cur:
		return nil, 0, fmt.Errorf("%w: revision %d, store at %d", storage.ErrFutureRevision, rev, cur)
	}
	return resp.Responses[1], rev, nil
}

// write commits t: its write and the marker's update if its condition
// holds; otherwise its else branch gives what the caller needs to say why
// not.
func (s *Store) write(ctx context.Context, t *writeTxn) (*pb.TxnResponse, error) {
	resp, err := s.commit(ctx, t)
	return resp, mapWriteError(err)
}

// failedPrecondition says why an update's or delete's condition failed,
// from the else branch's read of the key.
func failedPrecondition(resp *pb.TxnResponse) error {
	if len(resp.Responses) == 1 && len(resp.Responses[0].GetResponseRange().Kvs) > 0 {
		return storage.ErrConflict
	}
	return storage.ErrNotFound
}

func (s *Store) keyValue(kv *mvccpb.KeyValue) storage.KeyValue {
	return storage.KeyValue{
		Key:            strings.TrimPrefix(string(kv.Key), s.data),
		Value:          kv.Value,
		CreateRevision: kv.CreateRevision,
		ModRevision:    kv.ModRevision,
	}
}

// mapError turns etcd's errors into the storage sentinels.
func mapError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w: %w", storage.ErrExpired, err)
	case errors.Is(err, rpctypes.ErrFutureRev):
		return fmt.Errorf("%w: %w", storage.ErrFutureRevision, err)
	}
	if fault := faultOf(err); fault != nil {
		return fmt.Errorf("%w: etcd: %w", fault, err)
	}
	return fmt.Errorf("etcd: %w", err)
}

// mapWriteError is mapError for a write: a fault that may have struck
// after etcd received the write leaves its outcome unknown.
func mapWriteError(err error) error {
	mapped := mapError(err)
	interrupted := faultOf(err) != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
	if interrupted && mayHaveApplied(err) {
		return fmt.Errorf("%w (%w)", mapped, storage.ErrOutcomeUnknown)
	}
	return mapped
}

// faultOf classifies an error of etcd or of its gRPC connection as one of
// the storage faults, or nil if it is none (a bug of the caller's).
func faultOf(err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrRequestTooLarge):
		return storage.ErrTooLarge
	case errors.Is(err, rpctypes.ErrNoSpace):
		return storage.ErrNoSpace
	case errors.Is(err, rpctypes.ErrTimeout), errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail),
		errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost), errors.Is(err, rpctypes.ErrTimeoutWaitAppliedIndex):
		return storage.ErrTimeout
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return nil // the caller's own context: it is ctx.Err()
	case errors.Is(err, clientv3.ErrNoAvailableEndpoints):
		return storage.ErrUnavailable
	}
	var etcdErr rpctypes.EtcdError
	if errors.As(err, &etcdErr) {
		// etcd's own: no leader, leader changed, too many requests,
		// stopped, unhealthy, not capable...
		switch etcdErr.Code() {
		case codes.Unavailable, codes.ResourceExhausted, codes.FailedPrecondition, codes.Aborted, codes.Internal, codes.Unknown:
			return storage.ErrUnavailable
		}
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	switch st.Code() {
	case codes.ResourceExhausted:
		if strings.Contains(st.Message(), "larger than max") { // gRPC's own message size limit
			return storage.ErrTooLarge
		}
		return storage.ErrUnavailable
	case codes.DeadlineExceeded:
		return storage.ErrTimeout
	case codes.Unavailable, codes.Canceled, codes.Aborted, codes.Internal, codes.Unknown, codes.DataLoss:
		return storage.ErrUnavailable
	}
	return nil
}

// mayHaveApplied says whether a write that failed with err may have been
// applied: etcd refuses without proposing when it has no leader, is
// overloaded, or the request is too large or over quota; a timeout, a lost
// connection or a context that ended leave it unknown.
func mayHaveApplied(err error) bool {
	switch {
	case errors.Is(err, rpctypes.ErrNoLeader), errors.Is(err, rpctypes.ErrTooManyRequests),
		errors.Is(err, rpctypes.ErrNotCapable), errors.Is(err, rpctypes.ErrRequestTooLarge),
		errors.Is(err, rpctypes.ErrNoSpace), errors.Is(err, clientv3.ErrNoAvailableEndpoints):
		return false
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "larger than max") {
		return false // refused by the client before sending
	}
	return true
}
