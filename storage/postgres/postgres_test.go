package postgres_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/postgres"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

var _ storagetest.Compactor = (*postgres.Store)(nil)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		return mustStore(t, freshSchema(t))
	})
}

// TestLongSchemaName: a schema name of PostgreSQL's longest (63 bytes,
// more than a notification channel's name may take with the store's
// prefix) works, notifications and watches included.
func TestLongSchemaName(t *testing.T) {
	schema := freshSchema(t)
	schema += strings.Repeat("x", 63-len(schema))
	dropAtEnd(t, schema)
	a, b := mustStore(t, schema), mustStore(t, schema)
	events, err := b.Watch(t.Context(), "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := a.Create(t.Context(), "/k", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		if ev.Err != nil || ev.ModRevision != rev {
			t.Errorf("b's watch: %+v, want /k at %d", ev, rev)
		}
	case <-time.After(10 * time.Second):
		t.Error("b's watch saw nothing of a's write")
	}
}

// TestKeyTooLarge: a key too long for PostgreSQL's index is ErrTooLarge,
// refused before it reaches a transaction, so that the writes batched with
// it still succeed.
func TestKeyTooLarge(t *testing.T) {
	s := mustStore(t, freshSchema(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	var long, short error
	wg.Go(func() { _, long = s.Create(ctx, "/"+strings.Repeat("k", 4000), []byte("v")) })
	wg.Go(func() { _, short = s.Create(ctx, "/k", []byte("v")) })
	wg.Wait()
	if !errors.Is(long, storage.ErrTooLarge) {
		t.Errorf("a 4000-byte key: %v, want ErrTooLarge", long)
	}
	if short != nil {
		t.Errorf("a short key written beside it: %v", short)
	}
	// The longest key taken, of bytes PostgreSQL cannot compress, fits
	// its index.
	longest := make([]byte, 2048)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range longest {
		longest[i] = byte(rng.IntN(256))
	}
	if _, err := s.Create(ctx, string(longest), []byte("v")); err != nil {
		t.Errorf("a 2048-byte key: %v", err)
	}
	if kv, err := s.Get(ctx, string(longest), 0); err != nil || kv.Key != string(longest) {
		t.Errorf("reading the 2048-byte key: %v", err)
	}
}

// TestWriteNotSentIsRetryable: a write whose caller stops waiting before
// the committer took it (busy with a commit that hangs) was never sent:
// it fails with ErrUnavailable, which the HTTP layer answers 503 with
// Retry-After, not with "may or may not have been applied" nor as the
// caller's own timeout; and it is not applied. The write whose commit
// hung, sent, is the one whose outcome is unknown.
func TestWriteNotSentIsRetryable(t *testing.T) {
	hung, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s := mustStore(t, freshSchema(t), postgres.WithBeforeCommit(func([]int64) {
		once.Do(func() {
			close(hung)
			<-release
		})
	}))
	sentCtx, giveUp := context.WithCancel(t.Context())
	var sentErr error
	var wg sync.WaitGroup
	wg.Go(func() { _, sentErr = s.Create(sentCtx, "/sent", []byte("v")) })
	<-hung
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := s.Create(ctx, "/not-sent", []byte("v"))
	if !errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrOutcomeUnknown) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a write refused before the committer took it: %v; want ErrUnavailable only", err)
	}
	t.Logf("the write not sent: %v", err)
	// A caller that cancels (a client that disconnected) is told its own
	// cancellation, no fault of the store's: storehealth must not count
	// it as the store unavailable.
	cancelled, cancelNow := context.WithCancel(t.Context())
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancelNow()
	}()
	_, err = s.Create(cancelled, "/cancelled", []byte("v"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrOutcomeUnknown) {
		t.Errorf("a write cancelled before the committer took it: %v; want context.Canceled only", err)
	}
	giveUp()
	wg.Wait()
	if !errors.Is(sentErr, storage.ErrOutcomeUnknown) {
		t.Errorf("a write given up on while its commit hung: %v; want ErrOutcomeUnknown", sentErr)
	}
	close(release)
	if _, err := s.Create(t.Context(), "/after", []byte("v")); err != nil {
		t.Fatalf("a write after: %v", err)
	}
	if _, err := s.Get(t.Context(), "/not-sent", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the write not sent: Get says %v, want ErrNotFound", err)
	}
	if _, err := s.Get(t.Context(), "/cancelled", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the write cancelled before it was sent: Get says %v, want ErrNotFound", err)
	}
	if _, err := s.Get(t.Context(), "/sent", 0); err != nil {
		t.Errorf("the write whose commit hung, then went on: Get says %v", err)
	}
}
