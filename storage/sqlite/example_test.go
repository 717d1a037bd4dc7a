package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/sqlite"
)

func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kapi")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kapi.sqlite")

	s, err := sqlite.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	a, _ := s.Create(ctx, "/widgets/default/a", []byte(`{"size":1}`))
	s.Update(ctx, "/widgets/default/a", []byte(`{"size":2}`), a)

	// One store per file: a second one is refused while the first is open.
	if _, err := sqlite.Open(path); err != nil {
		fmt.Println("second Open refused")
	}
	s.Close()

	// Everything acknowledged is on disk: a new process finds it, history
	// included.
	s, err = sqlite.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	kv, _ := s.Get(ctx, "/widgets/default/a", 0)
	fmt.Printf("%s %s (created %d, modified %d)\n", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision)
	old, _ := s.Get(ctx, "/widgets/default/a", a)
	fmt.Printf("at %d: %s\n", a, old.Value)
	_, err = s.Update(ctx, "/widgets/default/a", []byte(`{"size":3}`), a)
	fmt.Println(errors.Is(err, storage.ErrConflict))
	// Output:
	// second Open refused
	// /widgets/default/a {"size":2} (created 2, modified 3)
	// at 2: {"size":1}
	// true
}

func ExampleWithHistory() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kapi")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Keep the last 2 revisions of history.
	s, err := sqlite.Open(filepath.Join(dir, "kapi.sqlite"), sqlite.WithHistory(2))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for _, key := range []string{"/a", "/b", "/c", "/d"} {
		s.Create(ctx, key, []byte("x"))
	}
	// The writes are revisions 2 to 5; the window starts at 3.
	_, err = s.Get(ctx, "/a", 2)
	fmt.Println(errors.Is(err, storage.ErrExpired))
	page, _ := s.List(ctx, "/", storage.ListOptions{Revision: 3})
	fmt.Println(len(page.Items), "keys at 3")
	// Output:
	// true
	// 2 keys at 3
}

func ExampleStore_Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "kapi")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "kapi.sqlite"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	a, _ := s.Create(ctx, "/widgets/default/a", []byte("1"))
	s.Update(ctx, "/widgets/default/a", []byte("2"), a)
	s.Delete(ctx, "/widgets/default/a", 0)
	// From an older revision: the watch catches up from the log.
	events, _ := s.Watch(ctx, "/widgets/", a)
	for range 2 {
		ev := <-events
		fmt.Printf("%v %s %s (was %s) at %d\n", ev.Type, ev.Key, ev.Value, ev.Prev, ev.ModRevision)
	}
	// Output:
	// PUT /widgets/default/a 2 (was 1) at 3
	// DELETE /widgets/default/a 2 (was 2) at 4
}
