package apiserver_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// heldWatches holds back the events of its watches while held: a replica
// whose watch cache lags behind the store it shares with another.
type heldWatches struct {
	storage.Interface
	mu   sync.Mutex
	held bool
	cond *sync.Cond
}

func newHeldWatches(inner storage.Interface) *heldWatches {
	h := &heldWatches{Interface: inner}
	h.cond = sync.NewCond(&h.mu)
	return h
}

func (h *heldWatches) hold(on bool) {
	h.mu.Lock()
	h.held = on
	h.mu.Unlock()
	h.cond.Broadcast()
}

func (h *heldWatches) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	in, err := h.Interface.Watch(ctx, prefix, rev)
	if err != nil {
		return nil, err
	}
	out := make(chan storage.Event)
	go func() {
		defer close(out)
		for ev := range in {
			h.mu.Lock()
			for h.held {
				h.cond.Wait()
			}
			h.mu.Unlock()
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// laggingReplica is two servers on one store, a and b, b's watch cache
// held back once the widget w, Red, is in it.
func laggingReplica(t *testing.T) (a, b *apiClient, bs *apiservertest.Server, held *heldWatches) {
	mem := memory.New()
	held = newHeldWatches(mem)
	as := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(mem))
	bs = apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(held))
	a = &apiClient{t: t, base: as.URL, hc: as.Client()}
	b = &apiClient{t: t, base: bs.URL, hc: bs.Client()}
	a.do(http.MethodPost, widgetsIn("default"), `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red"}}`).mustCode(t, http.StatusCreated)
	for b.get(widgetPath("default", "w")+"?resourceVersion=0").Code != http.StatusOK { // in b's cache
		time.Sleep(5 * time.Millisecond)
	}
	held.hold(true)
	t.Cleanup(func() { held.hold(false) })
	return a, b, bs, held
}

// An error that comes of a cached object behind the store is no answer: the
// write goes again from the store's object, as kube-apiserver's
// GuaranteedUpdate does; an error the store's object gives too stands.
func TestStaleCacheErrorsAreRetriedFromTheStore(t *testing.T) {
	a, b, _, _ := laggingReplica(t)
	p := widgetPath("default", "w")
	const jsonPatch = "application/json-patch+json"
	a.do(http.MethodPatch, p, `{"spec":{"color":"Green"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	// b's cache says Red, the store Green: the test holds against the store.
	got := b.do(http.MethodPatch, p, `[{"op":"test","path":"/spec/color","value":"Green"},{"op":"replace","path":"/spec/color","value":"Blue"}]`, "Content-Type", jsonPatch).
		mustCode(t, http.StatusOK).widget(t)
	if got.Spec.Color != "Blue" {
		t.Fatalf("patched through the lagging replica: color %q, want Blue", got.Spec.Color)
	}
	// A test that fails against the store as well is refused.
	r := b.do(http.MethodPatch, p, `[{"op":"test","path":"/spec/color","value":"Green"},{"op":"replace","path":"/spec/color","value":"Red"}]`, "Content-Type", jsonPatch)
	if r.Code != http.StatusUnprocessableEntity {
		t.Fatalf("a JSON Patch test failing against the store: %d %s, want 422", r.Code, r.Body)
	}
	// Deleted and created anew through a: a new UID, which b's cache has
	// not seen. A PUT carrying it is the store's object's.
	a.do(http.MethodDelete, p, nil).mustCode(t, http.StatusOK)
	nw := a.do(http.MethodPost, widgetsIn("default"), `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"Red"}}`).mustCode(t, http.StatusCreated).widget(t)
	got = b.do(http.MethodPut, p, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","uid":"`+string(nw.UID)+`"},"spec":{"color":"Blue"}}`).
		mustCode(t, http.StatusOK).widget(t)
	if got.UID != nw.UID || got.Spec.Color != "Blue" {
		t.Fatalf("PUT with the store's UID through the lagging replica: uid %s color %q, want %s Blue", got.UID, got.Spec.Color, nw.UID)
	}
	// A UID neither holds is refused.
	r = b.do(http.MethodPut, p, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","uid":"not-its-uid"},"spec":{"color":"Red"}}`)
	if r.Code != http.StatusConflict || !strings.Contains(string(r.Body), "Precondition failed") {
		t.Fatalf("PUT with a UID the object never had: %d %s, want 409", r.Code, r.Body)
	}
}

// A write waits for the watch cache only for its own server's last write of
// the same object, and once at most, however far behind the cache is.
func TestWritesWaitForTheCacheOnce(t *testing.T) {
	_, b, bs, _ := laggingReplica(t)
	b.do(http.MethodPost, widgetsIn("default"), `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"v"},"spec":{"color":"Red"}}`).mustCode(t, http.StatusCreated)
	waits := func(name string, want int64, method, path, body string) {
		t.Helper()
		before := apiserver.CacheWaits(bs.API)
		b.do(method, path, body, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
		if got := apiserver.CacheWaits(bs.API) - before; got != want {
			t.Fatalf("%s: waited for the watch cache %d times, want %d", name, got, want)
		}
	}
	// w is as b's cache has it: nothing to wait for.
	waits("a patch of an object the cache holds as stored", 0, http.MethodPatch, widgetPath("default", "w"), `{"spec":{"color":"Green"}}`)
	// b just wrote v and w, which its cache has not seen.
	waits("a patch of the object just written", 1, http.MethodPatch, widgetPath("default", "v"), `{"spec":{"color":"Blue"}}`)
	waits("another patch of it", 1, http.MethodPatch, widgetPath("default", "w"), `{"spec":{"color":"Blue"}}`)
}
