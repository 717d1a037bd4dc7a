package storagetest

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

func mustCompactor(t *testing.T, s storage.Interface) Compactor {
	t.Helper()
	c, ok := s.(Compactor)
	if !ok {
		t.Skipf("%T does not implement storagetest.Compactor", s)
	}
	return c
}

func mustCompact(t *testing.T, c Compactor, rev int64) {
	t.Helper()
	if err := c.Compact(t.Context(), rev); err != nil {
		t.Fatalf("Compact(%d): %v", rev, err)
	}
}

// compactHistory is the history the compaction tests share.
type compactHistory struct {
	a1, a2, b, a3, bDeleted, c int64
}

func writeCompactHistory(t *testing.T, s storage.Interface) compactHistory {
	t.Helper()
	var h compactHistory
	h.a1 = mustCreate(t, s, "/c/a", "a1")
	h.a2 = mustUpdate(t, s, "/c/a", "a2", 0)
	h.b = mustCreate(t, s, "/c/b", "b1")
	h.a3 = mustUpdate(t, s, "/c/a", "a3", 0)
	h.bDeleted = mustDelete(t, s, "/c/b", 0)
	h.c = mustCreate(t, s, "/c/c", "c1")
	return h
}

func testCompactReads(t *testing.T, s storage.Interface) {
	c := mustCompactor(t, s)
	h := writeCompactHistory(t, s)
	// /c/a's version at the compacted revision was written before it: the
	// compaction must keep it.
	mustCompact(t, c, h.bDeleted)

	a3 := kv("/c/a", "a3", h.a1, h.a3)
	cc := kv("/c/c", "c1", h.c, h.c)
	checkGets(t, s, fmt.Sprintf("Compact(%d)", h.bDeleted), []getCase{
		{"GetAtCompacted", "/c/a", h.bDeleted, a3, nil},
		{"GetLatest", "/c/a", 0, a3, nil},
		{"GetBelowCompacted", "/c/a", h.a3, storage.KeyValue{}, storage.ErrExpired},
		{"GetFirst", "/c/a", h.a1, storage.KeyValue{}, storage.ErrExpired},
		{"GetDeletedAtCompacted", "/c/b", h.bDeleted, storage.KeyValue{}, storage.ErrNotFound},
		{"GetNotYetCreated", "/c/c", h.bDeleted, storage.KeyValue{}, storage.ErrNotFound},
		{"GetCreated", "/c/c", h.c, cc, nil},
	})
	lists := []struct {
		name    string
		rev     int64
		want    []storage.KeyValue
		wantErr error
	}{
		{"AtCompacted", h.bDeleted, []storage.KeyValue{a3}, nil},
		{"Latest", 0, []storage.KeyValue{a3, cc}, nil},
		{"BelowCompacted", h.bDeleted - 1, nil, storage.ErrExpired},
	}
	for _, tc := range lists {
		t.Run("List"+tc.name, func(t *testing.T) {
			res, err := s.List(t.Context(), "/c/", storage.ListOptions{Revision: tc.rev})
			if tc.wantErr != nil {
				wantErr(t, fmt.Sprintf("List at %d after Compact(%d)", tc.rev, h.bDeleted), err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("List at %d: %v", tc.rev, err)
			}
			checkKVs(t, "items", res.Items, tc.want)
		})
	}
	t.Run("CompactFuture", func(t *testing.T) {
		err := c.Compact(t.Context(), h.c+1)
		wantErr(t, "Compact at a future revision", err, storage.ErrFutureRevision)
	})
	t.Run("CompactOlder", func(t *testing.T) {
		// Compacting at or below an earlier compaction changes nothing.
		mustCompact(t, c, h.b)
		mustCompact(t, c, h.bDeleted)
		checkKV(t, "Get at the compacted revision", mustGet(t, s, "/c/a", h.bDeleted), a3)
	})
	wantRevision(t, s, h.c, "after compactions")
}

func testCompactWatch(t *testing.T, s storage.Interface) {
	c := mustCompactor(t, s)
	h := writeCompactHistory(t, s)
	mustCompact(t, c, h.bDeleted)
	for _, rev := range []int64{h.bDeleted - 1, h.a1} {
		t.Run(fmt.Sprintf("From%d", rev), func(t *testing.T) {
			ch, err := s.Watch(t.Context(), "/c/", rev)
			if err == nil {
				drain(t, ch)
			}
			wantErr(t, fmt.Sprintf("Watch from %d after Compact(%d)", rev, h.bDeleted), err, storage.ErrExpired)
		})
	}
	fromCompacted := mustWatch(t, s, "/c/", h.bDeleted)
	fromLatest := mustWatch(t, s, "/c/", h.c)
	z := mustCreate(t, s, "/c/z", "sentinel")
	t.Run("FromCompacted", func(t *testing.T) {
		checkEvents(t, recvN(t, fromCompacted, 2), []storage.Event{created("/c/c", "c1", h.c), created("/c/z", "sentinel", z)})
	})
	t.Run("FromLatest", func(t *testing.T) {
		checkEvents(t, recvN(t, fromLatest, 1), []storage.Event{created("/c/z", "sentinel", z)})
	})
}

// testCompactBehindWatcher compacts away history a watcher has not read.
// The watcher delivers what it had fetched before the compaction, in order,
// then one ErrExpired event, then closes. A backend that had fetched
// everything delivers everything instead, which the contract allows; the
// suite then logs that the expiry path was not exercised.
func testCompactBehindWatcher(t *testing.T, s storage.Interface) {
	c := mustCompactor(t, s)
	const writes = 1000
	start := mustRevision(t, s)
	ch := mustWatch(t, s, "/b/", start)
	mustCreate(t, s, "/b/k", "0")
	for i := 1; i < writes; i++ {
		mustUpdate(t, s, "/b/k", strconv.Itoa(i), 0)
	}
	last := mustRevision(t, s)
	mustCompact(t, c, last)

	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for next := start + 1; next <= last; next++ {
		var (
			ev storage.Event
			ok bool
		)
		select {
		case ev, ok = <-ch:
		case <-deadline.C:
			t.Fatalf("no event %v after revision %d", waitTimeout, next-1)
		}
		switch {
		case !ok:
			t.Fatalf("watch closed after revision %d without an ErrExpired event", next-1)
		case ev.Err != nil:
			if !errors.Is(ev.Err, storage.ErrExpired) {
				t.Fatalf("watch ended with %v, want ErrExpired", ev.Err)
			}
			if rest := drain(t, ch); len(rest) > 0 {
				t.Fatalf("%d events after the final one, the first %s", len(rest), fmtEvent(rest[0]))
			}
			t.Logf("the watch delivered %d of %d events, then ErrExpired", next-start-1, writes)
			return
		case ev.ModRevision != next || string(ev.Value) != strconv.FormatInt(next-start-1, 10):
			t.Fatalf("event %s, want revision %d with value %d", fmtEvent(ev), next, next-start-1)
		}
	}
	t.Logf("the watch had fetched all %d events before the compaction: expiry of a watcher not exercised", writes)
}
