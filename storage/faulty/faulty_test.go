package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/faulty"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var _ storagetest.Compactor = (*faulty.Store)(nil)

// TestConformance: with no fault armed the wrapper is the store it wraps.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		s := memory.New()
		t.Cleanup(func() { s.Close() })
		return faulty.New(s)
	})
}

func TestFaults(t *testing.T) {
	ctx := t.Context()
	inner := memory.New()
	t.Cleanup(func() { inner.Close() })
	s := faulty.New(inner)
	boom := fmt.Errorf("%w: boom", storage.ErrUnavailable)

	t.Run("CountAndKey", func(t *testing.T) {
		s.Inject(faulty.Fault{Ops: faulty.Create, Key: "/a/", Count: 2, Err: boom})
		if _, err := s.Create(ctx, "/b/0", nil); err != nil {
			t.Errorf("a create outside the fault's keys: %v", err)
		}
		for i, want := range []error{boom, boom, nil} {
			if _, err := s.Create(ctx, fmt.Sprintf("/a/%d", i), nil); !errors.Is(err, want) && (want != nil || err != nil) {
				t.Errorf("create %d: %v, want %v", i, err, want)
			}
		}
	})
	t.Run("BeforeWrite", func(t *testing.T) {
		clear := s.Inject(faulty.Fault{Ops: faulty.Writes, Err: boom})
		_, err := s.Create(ctx, "/before", []byte("v"))
		clear()
		if !errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrOutcomeUnknown) {
			t.Errorf("create: %v, want unavailable with a known outcome", err)
		}
		if _, err := inner.Get(ctx, "/before", 0); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("the write struck before it was applied is there: %v", err)
		}
	})
	t.Run("AfterWrite", func(t *testing.T) {
		clear := s.Inject(faulty.Fault{Ops: faulty.Writes, Err: boom, AfterWrite: true})
		_, err := s.Create(ctx, "/after", []byte("v"))
		clear()
		if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, storage.ErrOutcomeUnknown) {
			t.Errorf("create: %v, want unavailable with an unknown outcome", err)
		}
		if kv, err := inner.Get(ctx, "/after", 0); err != nil || string(kv.Value) != "v" {
			t.Errorf("the write struck after it was applied: %v %v", kv, err)
		}
	})
	t.Run("Hang", func(t *testing.T) {
		clear := s.Inject(faulty.Fault{Ops: faulty.Reads, Hang: true})
		defer clear()
		hctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := s.Revision(hctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a hung read: %v, want the context's deadline", err)
		}
	})
	t.Run("WatchFault", func(t *testing.T) {
		clear := s.Inject(faulty.Fault{Ops: faulty.Watch, Err: boom})
		_, err := s.Watch(ctx, "/", 0)
		clear()
		if !errors.Is(err, boom) {
			t.Errorf("watch: %v, want %v", err, boom)
		}
	})
	t.Run("BreakWatches", func(t *testing.T) {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if n := s.Watches(); n != 0 {
			t.Fatalf("%d watches before any, want 0", n)
		}
		events, err := s.Watch(wctx, "/", 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := s.Watches(); n != 1 {
			t.Errorf("%d watches open, want 1", n)
		}
		rev, err := s.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The watch relays the history, then the break.
		for ev := range events {
			if ev.Err != nil {
				t.Fatalf("the watch ended before the break: %v", ev.Err)
			}
			if ev.ModRevision >= rev {
				break
			}
		}
		if n := s.BreakWatches(boom); n != 1 {
			t.Errorf("BreakWatches ended %d watches, want 1", n)
		}
		var last storage.Event
		for ev := range events {
			last = ev
		}
		if !errors.Is(last.Err, boom) {
			t.Errorf("the broken watch's last event: %+v, want the error", last)
		}
		if n := s.Watches(); n != 0 {
			t.Errorf("%d watches open once the watch has ended, want 0", n)
		}
	})
}
