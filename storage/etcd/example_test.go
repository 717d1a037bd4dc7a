package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd"
)

func ExampleNew() {
	ctx := context.Background()
	// etcdEndpoint() is the cluster's client URL, such as http://127.0.0.1:2379.
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdEndpoint()}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	// Two stores on one prefix, as two replicas of a service would have.
	// (A prefix of its own, so that the example can run again on the same
	// cluster.)
	prefix := fmt.Sprintf("/example/%d/", time.Now().UnixNano())
	a, err := etcd.New(ctx, client, etcd.WithPrefix(prefix))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := etcd.New(ctx, client, etcd.WithPrefix(prefix))
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	rev, _ := a.Create(ctx, "/widgets/default/a", []byte(`{"size":1}`))
	kv, _ := b.Get(ctx, "/widgets/default/a", 0)
	fmt.Printf("b reads %s, written by a at revision %v\n", kv.Value, kv.ModRevision == rev)

	_, _ = b.Update(ctx, "/widgets/default/a", []byte(`{"size":2}`), rev)
	_, err = a.Update(ctx, "/widgets/default/a", []byte(`{"size":3}`), rev)
	fmt.Println("a's stale update:", errors.Is(err, storage.ErrConflict))
	// Output:
	// b reads {"size":1}, written by a at revision true
	// a's stale update: true
}
