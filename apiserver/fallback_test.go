package apiserver_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// silentStore is a store whose watch never delivers: a cache fed by it can
// never catch up with a write.
type silentStore struct{ *memory.Store }

func (silentStore) Watch(ctx context.Context, _ string, _ int64) (<-chan storage.Event, error) {
	ch := make(chan storage.Event)
	go func() { <-ctx.Done(); close(ch) }()
	return ch, nil
}

// TestReadsFallBackToTheStore: when the cache has not caught up with the
// store in time, a consistent get or list reads the store rather than
// failing or answering stale data.
func TestReadsFallBackToTheStore(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(silentStore{store}))
	c := &apiClient{t: t, base: srv.URL, hc: srv.Client()}

	created := c.create(newWidget("default", "late"))
	var wg sync.WaitGroup
	wg.Go(func() {
		got := c.read("default", "late")
		if got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
			t.Errorf("GET = uid %s rv %s, want %s %s", got.UID, got.ResourceVersion, created.UID, created.ResourceVersion)
		}
	})
	wg.Go(func() {
		l := c.list(widgetsIn("default"))
		if names := l.names(); len(names) != 1 || names[0] != "late" || l.Metadata.ResourceVersion != created.ResourceVersion {
			t.Errorf("LIST = %v at %s, want [late] at %s", names, l.Metadata.ResourceVersion, created.ResourceVersion)
		}
	})
	wg.Wait()
	c.do(http.MethodGet, widgetPath("default", "missing"), nil).failure(t, http.StatusNotFound, "NotFound")
}
