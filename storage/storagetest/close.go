package storagetest

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

// testClose checks, for a backend that can be closed (io.Closer), that
// Close ends every open watch with one ErrClosed event and that every
// method afterwards is storage.ErrClosed, a second Close included.
func testClose(t *testing.T, s storage.Interface) {
	closer, ok := s.(io.Closer)
	if !ok {
		t.Skip("the backend is not an io.Closer")
	}
	ctx := context.Background()
	rev := mustCreate(t, s, "/a", "1")
	caughtUp, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-caughtUp; ev.ModRevision != rev {
		t.Fatalf("event %+v, want /a at %d", ev, rev)
	}
	behind, err := s.Watch(ctx, "/", 0) // /a still to read
	if err != nil {
		t.Fatal(err)
	}
	if err := closer.Close(); err != nil {
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
	errs := map[string]error{
		"Close":    closer.Close(),
		"Get":      errOf(s.Get(ctx, "/a", 0)),
		"List":     errOf(s.List(ctx, "/", storage.ListOptions{})),
		"Revision": errOf(s.Revision(ctx)),
		"Create":   errOf(s.Create(ctx, "/c", nil)),
		"Update":   errOf(s.Update(ctx, "/a", nil, 0)),
		"Delete":   errOf(s.Delete(ctx, "/a", 0)),
		"Watch":    errOf(s.Watch(ctx, "/", 0)),
	}
	if c, ok := s.(Compactor); ok {
		errs["Compact"] = c.Compact(ctx, 1)
	}
	for name, err := range errs {
		if !errors.Is(err, storage.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func errOf[T any](_ T, err error) error { return err }
