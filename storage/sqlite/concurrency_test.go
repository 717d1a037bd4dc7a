package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/sqlite"
)

// TestManyWritersAndReaders: 64 writers (creates, conditional updates that
// race each other on shared keys, deletes), 16 readers (Gets and Lists at
// the latest and at older revisions) and a watcher, all at once. No call
// fails but with the answer its precondition earns (no "database is
// locked", no SQLITE_BUSY), the successful writes got every revision from
// the start to the end exactly once between them, and the watcher saw each
// of them once, in order, as acknowledged.
func TestManyWritersAndReaders(t *testing.T) {
	const writers, readers, perWriter, shared = 64, 16, 60, 8
	ctx := t.Context()
	s := mustOpen(t, filepath.Join(t.TempDir(), "kapi.db"))
	for i := range shared {
		mustWrite(t, s, fmt.Sprintf("/shared/%d", i), "0")
	}
	first, _ := s.Revision(ctx)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := s.Watch(wctx, "/", first)
	if err != nil {
		t.Fatal(err)
	}

	type ack struct {
		key, value string
		deleted    bool
	}
	var (
		mu     sync.Mutex
		acks   = map[int64]ack{} // revision → the write acknowledged with it
		done   = make(chan struct{})
		failed = func(format string, args ...any) { t.Errorf(format, args...) }
	)
	record := func(rev int64, a ack) {
		mu.Lock()
		defer mu.Unlock()
		if prev, dup := acks[rev]; dup {
			failed("revision %d acknowledged twice: %+v and %+v", rev, prev, a)
		}
		acks[rev] = a
	}
	var wg, rg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range perWriter {
				value := fmt.Sprintf("w%d.%d", w, i)
				switch n := rng.IntN(10); {
				case n < 4: // a key of its own
					key := fmt.Sprintf("/own/%d/%d", w, i)
					rev, err := s.Create(ctx, key, []byte(value))
					if err != nil {
						failed("Create %s: %v", key, err)
						return
					}
					record(rev, ack{key: key, value: value})
					if n == 0 {
						kv, err := s.Delete(ctx, key, rev)
						if err != nil {
							failed("Delete %s: %v", key, err)
							return
						}
						record(kv.ModRevision, ack{key: key, value: value, deleted: true})
					}
				default: // read-modify-write of a shared key: conflicts expected
					key := fmt.Sprintf("/shared/%d", rng.IntN(shared))
					kv, err := s.Get(ctx, key, 0)
					if err != nil {
						failed("Get %s: %v", key, err)
						return
					}
					rev, err := s.Update(ctx, key, []byte(value), kv.ModRevision)
					switch {
					case errors.Is(err, storage.ErrConflict):
					case err != nil:
						failed("Update %s: %v", key, err)
						return
					default:
						record(rev, ack{key: key, value: value})
					}
				}
			}
		})
	}
	for r := range readers {
		rg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 9))
			for {
				select {
				case <-done:
					return
				default:
				}
				rev, err := s.Revision(ctx)
				if err != nil {
					failed("Revision: %v", err)
					return
				}
				at := max(first, rev-rng.Int64N(50))
				if r%2 == 0 {
					at = 0
				}
				res, err := s.List(ctx, "/shared/", storage.ListOptions{Revision: at})
				if err != nil || len(res.Items) != shared {
					failed("List at %d: %d items, %v", at, len(res.Items), err)
					return
				}
				if _, err := s.Get(ctx, fmt.Sprintf("/shared/%d", rng.IntN(shared)), at); err != nil {
					failed("Get at %d: %v", at, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	rg.Wait()
	last, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}
	// Every revision after the shared keys' creation went to exactly one
	// acknowledged write.
	if got, want := int64(len(acks)), last-first; got != want {
		t.Fatalf("%d writes acknowledged, the store went from %d to %d (%d revisions)", got, first, last, want)
	}
	deadline := time.After(10 * time.Second)
	for rev := first + 1; rev <= last; rev++ {
		a, ok := acks[rev]
		if !ok {
			t.Fatalf("revision %d was acknowledged to no writer", rev)
		}
		select {
		case ev := <-events:
			if ev.Err != nil || ev.ModRevision != rev || ev.Key != a.key || string(ev.Value) != a.value || (ev.Type == storage.Delete) != a.deleted {
				t.Fatalf("event %v %s=%q at %d (err %v), want %+v at %d", ev.Type, ev.Key, ev.Value, ev.ModRevision, ev.Err, a, rev)
			}
		case <-deadline:
			t.Fatalf("no event for revision %d", rev)
		}
	}
	t.Logf("%d writes acknowledged (revisions %d to %d) in %d commits", len(acks), first+1, last, sqlite.Commits(s))
	mustCheck(t, s)
}

// TestSecondOpenRefused: a file open in one store cannot be opened by
// another, in this process (here) or another; the error names the lock.
// Once the first is closed, it can.
func TestSecondOpenRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kapi.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, "/a", "1")
	second, err := sqlite.Open(path)
	if err == nil {
		second.Close()
		t.Fatal("a second Open of an open file succeeded")
	}
	t.Logf("second Open: %v", err)
	// The refused Open took nothing from the first store.
	mustWrite(t, s, "/b", "2")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path)
	if res, err := s.List(t.Context(), "/", storage.ListOptions{}); err != nil || len(res.Items) != 2 {
		t.Errorf("after reopening: %v, %v", res.Items, err)
	}
}
