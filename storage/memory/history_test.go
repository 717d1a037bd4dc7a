package memory_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestHistoryBytesBoundsMemory rewrites one key with large values, fresh
// each time as the apiserver marshals them, far more than the byte budget
// holds: the store's count and the heap stay near the budget.
func TestHistoryBytesBoundsMemory(t *testing.T) {
	const budget, size, updates = 8 << 20, 1 << 20, 200
	ctx := t.Context()
	s := memory.New(memory.WithHistoryBytes(budget))
	defer s.Close()
	mustWrite(t, s, "/k")
	before := heapInuse()
	for i := range updates {
		if _, err := s.Update(ctx, "/k", make([]byte, size), 0); err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
		if held := memory.HeldBytes(s); held > budget+size {
			t.Fatalf("after update %d the store holds %d bytes of history, budget %d", i, held, budget)
		}
	}
	// The values are all the same size, so the window keeps exactly what fits.
	if held := memory.HeldBytes(s); held != budget {
		t.Errorf("the store holds %d bytes of history, want the whole budget, %d", held, budget)
	}
	// Live: the latest value and the budget's worth of old ones. Allow four
	// times that for whatever else the runtime holds on to; without the
	// budget, the 200 MiB written would all be held.
	if grown := int64(heapInuse()) - int64(before); grown > 4*(budget+size) {
		t.Errorf("heap in use grew by %d MiB over %d updates of %d MiB, budget %d MiB",
			grown>>20, updates, size>>20, budget>>20)
	}
	runtime.KeepAlive(s)
}

// TestHistoryBytesDefault checks the default budget, 256 MiB. Every update
// stores the same slice: the store counts lengths, so this needs no 300 MiB.
func TestHistoryBytesDefault(t *testing.T) {
	const budget, size, updates = 256 << 20, 1 << 20, 300
	ctx := t.Context()
	s := memory.New()
	defer s.Close()
	mustWrite(t, s, "/k")
	value := make([]byte, size)
	for i := range updates {
		if _, err := s.Update(ctx, "/k", value, 0); err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
	}
	if held := memory.HeldBytes(s); held != budget {
		t.Errorf("the store holds %d MiB of history, want the default budget, %d MiB", held>>20, budget>>20)
	}
}

// TestHistoryBytesExpires: the revisions the byte budget pushes out of the
// window are expired for reads, new watches and watchers left behind.
func TestHistoryBytesExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const size, kept, updates = 1 << 10, 4, 200
		ctx := t.Context()
		s := memory.New(memory.WithHistoryBytes(kept * size))
		defer s.Close()
		created, err := s.Create(ctx, "/k", make([]byte, size))
		if err != nil {
			t.Fatal(err)
		}
		behind, err := s.Watch(ctx, "/", created)
		if err != nil {
			t.Fatal(err)
		}
		var last int64
		for i := range updates {
			if last, err = s.Update(ctx, "/k", make([]byte, size), 0); err != nil {
				t.Fatalf("Update %d: %v", i, err)
			}
		}
		// The budget holds the values of the last kept revisions before the
		// latest, so reads at last-kept and later work.
		oldest := last - kept
		if _, err := s.Get(ctx, "/k", oldest); err != nil {
			t.Errorf("Get at %d, the window's start: %v", oldest, err)
		}
		if _, err := s.Get(ctx, "/k", oldest-1); !errors.Is(err, storage.ErrExpired) {
			t.Errorf("Get at %d: %v, want ErrExpired", oldest-1, err)
		}
		if _, err := s.List(ctx, "/", storage.ListOptions{Revision: oldest - 1}); !errors.Is(err, storage.ErrExpired) {
			t.Errorf("List at %d: %v, want ErrExpired", oldest-1, err)
		}
		if _, err := s.Watch(ctx, "/", oldest-1); !errors.Is(err, storage.ErrExpired) {
			t.Errorf("Watch from %d: %v, want ErrExpired", oldest-1, err)
		}
		from, err := s.Watch(ctx, "/", oldest)
		if err != nil {
			t.Fatalf("Watch from %d: %v", oldest, err)
		}
		for want := oldest + 1; want <= last; want++ {
			if ev := <-from; ev.Err != nil || ev.ModRevision != want {
				t.Fatalf("watch from %d: event %+v, want revision %d", oldest, ev, want)
			}
		}

		// The watcher that read nothing gets what it had fetched, then
		// ErrExpired.
		next := created + 1
		for ev := range behind {
			if ev.Err != nil {
				if !errors.Is(ev.Err, storage.ErrExpired) {
					t.Errorf("final event %v, want ErrExpired", ev.Err)
				}
				break
			}
			if ev.ModRevision != next {
				t.Fatalf("event at %d, want %d", ev.ModRevision, next)
			}
			next++
		}
		if next > oldest {
			t.Errorf("the watcher left behind read up to %d, past the window's start %d", next-1, oldest)
		}
		if _, ok := <-behind; ok {
			t.Error("channel open after the final event")
		}
	})
}

// TestHistoryBytesZeroKeepsUp: even with no budget the last revision stays
// in the window, so a watcher that keeps up never expires.
func TestHistoryBytesZeroKeepsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := memory.New(memory.WithHistoryBytes(0))
		defer s.Close()
		start := mustWrite(t, s, "/k")
		ch, err := s.Watch(ctx, "/", start)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			synctest.Wait() // the watcher has caught up and waits
			rev, err := s.Update(ctx, "/k", fmt.Appendf(nil, "value %d", i), 0)
			if err != nil {
				t.Fatalf("Update %d: %v", i, err)
			}
			if ev := <-ch; ev.Err != nil || ev.ModRevision != rev {
				t.Fatalf("event %+v, want revision %d", ev, rev)
			}
			if _, err := s.Get(ctx, "/k", rev-1); err != nil {
				t.Fatalf("Get at %d, one before the latest: %v", rev-1, err)
			}
		}
	})
}

// heapInuse is the heap in use once garbage is collected.
func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
