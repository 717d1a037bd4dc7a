package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdOnlyName is the etcd-only server's: the ceiling, but each request
// first makes the etcd requests kapi on etcd makes for it, from a bare
// etcd client (see etcdOnly).
const etcdOnlyName = "etcd-only"

// etcdOnly is what the etcd-only server does to etcd before it answers:
// the requests storage/etcd makes for kapi's, with nothing of kapi's
// around them, the same values (the answer it replays, an object as kapi
// stores one) at the same concurrency. Its keys are under a prefix of its
// own, with a revision marker beside them as kapi's store keeps one:
//
//   - a POST creates a key of its own: one transaction, if the key has no
//     CreateRevision, put it and the marker;
//   - any other write updates the key its path names: one transaction, if
//     the key's ModRevision is the one it last wrote (the compare-and-swap
//     kapi's update makes on the revision its watch cache holds), put it
//     and the marker, else read it (and try again from its revision; a
//     key not there yet is created);
//   - a GET reads the marker, as a consistent read asks for the store's
//     revision: one linearizable read each (kapi's are shared among those
//     waiting at once; a bare client's are not).
type etcdOnly struct {
	client *clientv3.Client
	data   string
	marker string
	revs   sync.Map // key → the ModRevision of its last write here
	n      atomic.Int64
}

// newEtcdCeiling returns the etcd-only server: the ceiling making each
// request's etcd requests first, on the cluster at endpoints.
func newEtcdCeiling(endpoints string) (*ceiling, func(), error) {
	client, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","), DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, nil, err
	}
	prefix := fmt.Sprintf("/etcd-only/%d/", time.Now().UnixNano())
	e := &etcdOnly{client: client, data: prefix + "data", marker: prefix + "revision"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := client.Put(ctx, e.marker, ""); err != nil {
		client.Close()
		return nil, nil, fmt.Errorf("etcd-only: %w", err)
	}
	return &ceiling{changed: make(chan struct{}), etcd: e}, func() { _ = client.Close() }, nil
}

// do makes r's etcd requests, value being what a write stores.
func (e *etcdOnly) do(r *http.Request, value []byte) error {
	ctx := r.Context()
	switch r.Method {
	case http.MethodGet:
		_, err := e.client.Get(ctx, e.marker)
		return err
	case http.MethodPost:
		_, ok, err := e.create(ctx, fmt.Sprintf("%s/c-%d", e.data, e.n.Add(1)), value)
		if err == nil && !ok {
			err = errors.New("etcd-only: the new key exists")
		}
		return err
	}
	key := e.data + r.URL.Path
	for {
		var rev int64
		if v, ok := e.revs.Load(key); ok {
			rev = v.(int64)
		}
		if rev == 0 {
			written, ok, err := e.create(ctx, key, value)
			if err != nil || ok {
				e.revs.Store(key, written)
				return err
			}
		}
		resp, err := e.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
			Then(clientv3.OpPut(key, string(value)), clientv3.OpPut(e.marker, "")).
			Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
			Commit()
		if err != nil {
			return err
		}
		if resp.Succeeded {
			e.revs.Store(key, resp.Header.Revision)
			return nil
		}
		// Written meanwhile by another request: from its revision, as
		// kapi starts again from the store's (0: not there, create it).
		rev = 0
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			rev = kvs[0].ModRevision
		}
		e.revs.Store(key, rev)
	}
}

// create is kapi's create: key and the marker put if key is absent. ok
// says whether it was.
func (e *etcdOnly) create(ctx context.Context, key string, value []byte) (rev int64, ok bool, err error) {
	resp, err := e.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value)), clientv3.OpPut(e.marker, "")).
		Commit()
	if err != nil {
		return 0, false, err
	}
	return resp.Header.Revision, resp.Succeeded, nil
}
