package memory_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

func ExampleNew() {
	ctx := context.Background()
	s := memory.New()
	defer s.Close()

	a, _ := s.Create(ctx, "/widgets/default/a", []byte(`{"size":1}`))
	s.Create(ctx, "/widgets/default/b", []byte(`{"size":5}`))
	s.Update(ctx, "/widgets/default/a", []byte(`{"size":2}`), a)

	// The update's precondition no longer holds.
	_, err := s.Update(ctx, "/widgets/default/a", []byte(`{"size":3}`), a)
	fmt.Println(errors.Is(err, storage.ErrConflict))

	// Reads at an older revision see the store as it was.
	old, _ := s.Get(ctx, "/widgets/default/a", a)
	fmt.Printf("at %d: %s\n", a, old.Value)

	page, _ := s.List(ctx, "/widgets/default/", storage.ListOptions{Limit: 1})
	for _, kv := range page.Items {
		fmt.Printf("%s %s (created %d, modified %d)\n", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision)
	}
	fmt.Println("revision", page.Revision, "remaining", page.Remaining)
	// Output:
	// true
	// at 2: {"size":1}
	// /widgets/default/a {"size":2} (created 2, modified 4)
	// revision 4 remaining 1
}

func ExampleStore_Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the watch
	s := memory.New()
	defer s.Close()

	events, _ := s.Watch(ctx, "/widgets/", 0)
	rev, _ := s.Create(ctx, "/widgets/a", []byte("one"))
	s.Update(ctx, "/widgets/a", []byte("two"), rev)
	s.Delete(ctx, "/widgets/a", 0)

	for range 3 {
		ev := <-events
		fmt.Printf("%s %s at %d: %s (prev %q)\n", ev.Type, ev.Key, ev.ModRevision, ev.Value, ev.Prev)
	}
	// Output:
	// PUT /widgets/a at 2: one (prev "")
	// PUT /widgets/a at 3: two (prev "one")
	// DELETE /widgets/a at 4: two (prev "two")
}

func ExampleStore_Compact() {
	ctx := context.Background()
	s := memory.New()
	defer s.Close()

	for _, key := range []string{"/a", "/b", "/c"} {
		s.Create(ctx, key, []byte("x"))
	}
	// The writes are revisions 2, 3 and 4 (a store starts at 1).
	s.Compact(ctx, 3)

	_, err := s.Get(ctx, "/a", 2)
	fmt.Println(errors.Is(err, storage.ErrExpired))
	_, err = s.Watch(ctx, "/", 2)
	fmt.Println(errors.Is(err, storage.ErrExpired))
	kv, _ := s.Get(ctx, "/a", 3)
	fmt.Printf("%s at 3: modified %d\n", kv.Key, kv.ModRevision)
	// Output:
	// true
	// true
	// /a at 3: modified 2
}

func ExampleWithHistoryBytes() {
	ctx := context.Background()
	// Keep at most 1 KiB of values that have since been replaced.
	s := memory.New(memory.WithHistoryBytes(1 << 10))
	defer s.Close()

	first, _ := s.Create(ctx, "/big", make([]byte, 512))
	for range 4 {
		s.Update(ctx, "/big", make([]byte, 512), 0)
	}
	// Revisions 2 to 6; the budget holds the two old values before the
	// latest, so the window starts at 4.
	_, err := s.Get(ctx, "/big", first+1)
	fmt.Println(errors.Is(err, storage.ErrExpired))
	kv, _ := s.Get(ctx, "/big", first+2)
	fmt.Printf("%s at %d: modified %d\n", kv.Key, first+2, kv.ModRevision)
	// Output:
	// true
	// /big at 4: modified 4
}
