package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
)

// Two stores on one database and schema, as two replicas of a service
// would have: one store. (The example has no Output line, so that it
// compiles everywhere and runs nowhere: it needs a PostgreSQL server.
// TestReplicas does the same against the tests' server.)
func ExampleOpen() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "postgres://kapi@127.0.0.1:5432/kapi"
	a, err := postgres.Open(ctx, url, postgres.WithSchema("widgets"))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, url, postgres.WithSchema("widgets"))
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

	// A kapi server on it, as on any other backend.
	srv, err := apiserver.New(apiserver.WithStorage(a))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
}
