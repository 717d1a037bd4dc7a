package storehealth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"testing"

	"github.com/kapi-dev/kapi/internal/storehealth"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/faulty"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newHealth guards a faulty memory store, closed at the test's end.
func newHealth(t *testing.T) (*storehealth.Health, *faulty.Store) {
	t.Helper()
	mem := memory.New()
	store := faulty.New(mem)
	ctx, cancel := context.WithCancel(context.Background())
	h := storehealth.New(ctx, store, quiet)
	t.Cleanup(func() {
		cancel()
		h.Close()
		mem.Close()
	})
	return h, store
}

// TestGuardIsTransparent runs the storage conformance suite through the
// guard of a reachable store: it must answer as the store does.
func TestGuardIsTransparent(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		h, _ := newHealth(t)
		return h.Store()
	})
}

// TestDownFailsFast: once the readiness check finds the store down, calls
// fail at once with ErrUnavailable (a write not applied), without reaching
// the store; once a check passes they go through again.
func TestDownFailsFast(t *testing.T) {
	ctx := context.Background()
	h, store := newHealth(t)
	g := h.Store()
	if _, err := g.Create(ctx, "/a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := h.ReadyCheck(ctx); err != nil {
		t.Fatalf("ReadyCheck of a reachable store: %v", err)
	}

	clear := store.Inject(faulty.Fault{Ops: faulty.Revision, Err: storage.ErrUnavailable})
	if err := h.ReadyCheck(ctx); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("ReadyCheck of an unreachable store = %v, want ErrUnavailable", err)
	}
	if err := h.ReadyCheck(ctx); !errors.Is(err, storehealth.ErrStoreDown) {
		t.Fatalf("ReadyCheck of a store known down = %v, want ErrStoreDown", err)
	}
	// Writes struck by a fault would say so: the guard must refuse them
	// before they reach the store.
	clearWrites := store.Inject(faulty.Fault{Ops: faulty.Writes | faulty.Get, Err: errors.New("reached the store")})
	_, err := g.Create(ctx, "/b", []byte("2"))
	if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, storehealth.ErrStoreDown) || errors.Is(err, storage.ErrOutcomeUnknown) {
		t.Fatalf("Create while down = %v, want ErrUnavailable and ErrStoreDown, outcome known", err)
	}
	if _, err := g.Get(ctx, "/a", 0); !errors.Is(err, storehealth.ErrStoreDown) {
		t.Fatalf("Get while down = %v, want ErrStoreDown", err)
	}
	clearWrites()

	clear()
	if err := h.ReadyCheck(ctx); err != nil {
		t.Fatalf("ReadyCheck of a store back = %v", err)
	}
	if _, err := g.Create(ctx, "/b", []byte("2")); err != nil {
		t.Fatalf("Create once back: %v", err)
	}
}

// TestReleased: a call waiting on the store when it is found down is
// released; a write so released may have been applied, and says so.
func TestReleased(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	defer mem.Close()
	store := faulty.New(mem)
	hctx, cancel := context.WithCancel(ctx)
	h := storehealth.New(hctx, store, quiet)
	defer func() { cancel(); h.Close() }()
	// The create is applied, then hangs, as on a store that went away
	// before its answer came back.
	defer store.Inject(faulty.Fault{Ops: faulty.Create, Hang: true, AfterWrite: true})()

	done := make(chan error)
	go func() {
		_, err := h.Store().Create(ctx, "/a", []byte("1"))
		done <- err
	}()
	for { // until the create is in the store, hanging
		if _, err := mem.Get(ctx, "/a", 0); err == nil {
			break
		}
		runtime.Gosched()
	}
	defer store.Inject(faulty.Fault{Ops: faulty.Revision, Err: storage.ErrUnavailable})()
	if err := h.ReadyCheck(ctx); err == nil {
		t.Fatal("ReadyCheck passed with the store unreachable")
	}
	err := <-done
	if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, storage.ErrOutcomeUnknown) || !errors.Is(err, storehealth.ErrStoreDown) {
		t.Fatalf("Create released = %v, want ErrUnavailable, ErrOutcomeUnknown and ErrStoreDown", err)
	}
}

// TestAnswerStands: the store's own answer is not replaced by the release.
func TestAnswerStands(t *testing.T) {
	ctx := context.Background()
	h, _ := newHealth(t)
	g := h.Store()
	if _, err := g.Create(ctx, "/a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Create(ctx, "/a", []byte("1")); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("second Create = %v, want ErrExists", err)
	}
	if _, err := g.Get(ctx, "/none", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get of nothing = %v, want ErrNotFound", err)
	}
}

// BenchmarkGuard is the cost of the guard on a store call: the memory
// store's Get, unguarded and guarded, side by side.
func BenchmarkGuard(b *testing.B) {
	ctx := context.Background()
	mem := memory.New()
	defer mem.Close()
	hctx, cancel := context.WithCancel(ctx)
	h := storehealth.New(hctx, mem, quiet)
	defer func() { cancel(); h.Close() }()
	if _, err := mem.Create(ctx, "/a", []byte(`{"spec":{}}`)); err != nil {
		b.Fatal(err)
	}
	for _, s := range []struct {
		name  string
		store storage.Interface
	}{{"store", mem}, {"guarded", h.Store()}} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.store.Get(ctx, "/a", 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
