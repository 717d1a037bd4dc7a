package memory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var _ storagetest.Compactor = (*memory.Store)(nil)

// The tests that start watches run in a synctest bubble: the bubble ends
// only once every goroutine started in it has exited, and reports a
// goroutine blocked for good as a deadlock, so they also prove that watches
// leak no goroutine and that writers never wait for watchers.

func TestHistoryWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := memory.New(memory.WithHistory(3))
		defer s.Close()
		for i := range 10 {
			mustWrite(t, s, fmt.Sprintf("/k/%d", i))
		}
		// Writes at 2..11 (a store starts at 1); with 3 revisions of history, 8 is the oldest readable.
		if _, err := s.Get(ctx, "/k/0", 7); !errors.Is(err, storage.ErrExpired) {
			t.Errorf("Get at 7: %v, want ErrExpired", err)
		}
		if _, err := s.List(ctx, "/k/", storage.ListOptions{Revision: 7}); !errors.Is(err, storage.ErrExpired) {
			t.Errorf("List at 7: %v, want ErrExpired", err)
		}
		if _, err := s.Watch(ctx, "/k/", 7); !errors.Is(err, storage.ErrExpired) {
			t.Errorf("Watch from 7: %v, want ErrExpired", err)
		}
		if kv, err := s.Get(ctx, "/k/0", 8); err != nil || kv.ModRevision != 2 {
			t.Errorf("Get of a key written at 2, at 8: %+v, %v", kv, err)
		}
		if res, err := s.List(ctx, "/k/", storage.ListOptions{Revision: 8}); err != nil || len(res.Items) != 7 {
			t.Errorf("List at 8: %d items, %v; want 7", len(res.Items), err)
		}
		ch, err := s.Watch(ctx, "/k/", 8)
		if err != nil {
			t.Fatalf("Watch from 8: %v", err)
		}
		for want := int64(9); want <= 11; want++ {
			if ev := <-ch; ev.Err != nil || ev.ModRevision != want {
				t.Errorf("event %+v, want revision %d", ev, want)
			}
		}
	})
}

func TestWithHistoryBelowOne(t *testing.T) {
	s := memory.New(memory.WithHistory(0))
	defer s.Close()
	mustWrite(t, s, "/a")
	mustWrite(t, s, "/b")
	if _, err := s.Get(t.Context(), "/a", 2); err != nil {
		t.Errorf("Get at 2 with one revision of history: %v", err)
	}
	mustWrite(t, s, "/c")
	if _, err := s.Get(t.Context(), "/a", 2); !errors.Is(err, storage.ErrExpired) {
		t.Errorf("Get at 2 two writes later: %v, want ErrExpired", err)
	}
}

// TestSlowWatcherExpires: a watcher that reads nothing while the history
// window passes it does not hold the writers up, and ends with ErrExpired.
func TestSlowWatcherExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const history, writes = 16, 1000
		s := memory.New(memory.WithHistory(history))
		defer s.Close()
		start, err := s.Revision(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ch, err := s.Watch(t.Context(), "/", 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range writes {
			mustWrite(t, s, fmt.Sprintf("/k/%04d", i))
		}
		var n int64
		for ev := range ch {
			if ev.Err != nil {
				if !errors.Is(ev.Err, storage.ErrExpired) {
					t.Errorf("final event %v, want ErrExpired", ev.Err)
				}
				break
			}
			// The n-th write is revision start+n: a store does not start at 0.
			if n++; ev.ModRevision != start+n {
				t.Fatalf("event %d has revision %d, want %d", n, ev.ModRevision, start+n)
			}
		}
		if n >= writes-history {
			t.Errorf("the watcher read %d events, more than it can hold when the window passes it", n)
		}
		if _, ok := <-ch; ok {
			t.Error("channel open after the final event")
		}
	})
}

func TestCloseEndsWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := memory.New()
		mustWrite(t, s, "/a")
		caughtUp, err := s.Watch(ctx, "/", 2)
		if err != nil {
			t.Fatal(err)
		}
		behind, err := s.Watch(ctx, "/", 2)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, s, "/b")
		if ev := <-caughtUp; ev.Key != "/b" {
			t.Fatalf("event %+v, want /b", ev)
		}
		synctest.Wait() // behind now holds /b, undelivered
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		for name, ch := range map[string]<-chan storage.Event{"caught up": caughtUp, "behind": behind} {
			var last storage.Event
			for ev := range ch {
				last = ev
			}
			if !errors.Is(last.Err, storage.ErrClosed) {
				t.Errorf("%s watcher's final event %+v, want ErrClosed", name, last)
			}
		}
		// What every method answers after Close is the suite's Close case.
	})
}

// TestWatchGoroutinesExit ends watches in every state a watch goroutine can
// be in; the bubble fails if any goroutine outlives it.
func TestWatchGoroutinesExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memory.New(memory.WithHistory(8))
		defer s.Close()
		watch := func(prefix string) (<-chan storage.Event, context.CancelFunc) {
			ctx, cancel := context.WithCancel(t.Context())
			ch, err := s.Watch(ctx, prefix, 0)
			if err != nil {
				t.Fatal(err)
			}
			return ch, cancel
		}
		waiting, cancelWaiting := watch("/quiet/")
		sending, cancelSending := watch("/k/")
		expired, cancelExpired := watch("/k/")
		defer cancelExpired()
		for i := range 100 {
			mustWrite(t, s, fmt.Sprintf("/k/%03d", i))
		}
		synctest.Wait()
		cancelWaiting()
		cancelSending()
		for _, ch := range []<-chan storage.Event{waiting, sending} {
			for ev := range ch {
				if ev.Err != nil {
					t.Errorf("cancelled watch sent %v", ev.Err)
				}
			}
		}
		var last storage.Event
		for ev := range expired {
			last = ev
		}
		if !errors.Is(last.Err, storage.ErrExpired) {
			t.Errorf("final event %+v, want ErrExpired", last)
		}
	})
}

func mustWrite(t *testing.T, s *memory.Store, key string) int64 {
	t.Helper()
	rev, err := s.Create(t.Context(), key, []byte(key))
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	return rev
}
