package faulty_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/faulty"
	"github.com/kapi-dev/kapi/storage/memory"
)

func ExampleStore_Inject() {
	ctx := context.Background()
	inner := memory.New()
	defer inner.Close()
	s := faulty.New(inner) // give s to apiserver.WithStorage

	// The next write is applied, then fails as if the connection to the
	// store had broken: its caller cannot know it happened.
	s.Inject(faulty.Fault{Ops: faulty.Writes, Count: 1, AfterWrite: true,
		Err: fmt.Errorf("%w: connection lost", storage.ErrUnavailable)})
	_, err := s.Create(ctx, "/k", []byte("v"))
	fmt.Println(errors.Is(err, storage.ErrUnavailable), errors.Is(err, storage.ErrOutcomeUnknown))

	kv, err := s.Get(ctx, "/k", 0)
	fmt.Println(string(kv.Value), err)
	// Output:
	// true true
	// v <nil>
}
