package apiserver

import (
	"errors"
	"github.com/kapi-dev/kapi/storage/faulty"
	"github.com/kapi-dev/kapi/storage/memory"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/gc"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// cachedAt waits for the watch cache to hold the last write of key, and
// returns that item.
func cachedAt(t *testing.T, srv *Server, res *resource, key string) *watch.Item {
	t.Helper()
	kv, err := srv.config.store.Get(t.Context(), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if it, _ := res.cache.Get(key); it != nil && it.Revision == kv.ModRevision {
			return it
		}
		time.Sleep(time.Millisecond)
	}
}

func serve(t *testing.T, srv *Server, method, path, contentType, body string, want int) {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	if w.Code != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, w.Code, want, w.Body)
	}
}

// The writes of the controllers inside the server (the collector's
// UpdateMetadata) start from the watch cache's object too: what the write
// path does to the object it is handed (the resource's defaulter, declared
// defaults, a kind's update hook) must not reach the cached object.
func TestControllerWritesLeaveCachedObjectsAlone(t *testing.T) {
	srv, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	err = Register(srv, Resource[gadget]{
		Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true, Status: true,
		Default: func(g *gadget) {
			if g.Spec.Parts != nil {
				g.Spec.Parts["p"] += "!" // in place, as a defaulter of a map would
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/default/gadgets"
	serve(t, srv, "POST", path, "application/json", `{"metadata":{"name":"a","finalizers":["x/y"]},"spec":{"size":1,"parts":{"p":"1"}}}`, http.StatusCreated)
	res := srv.resources[0]
	key := res.key("default", "a")
	before := cachedAt(t, srv, res, key)
	beforeObj, err := cachedObject(before)
	if err != nil {
		t.Fatal(err)
	}
	o := &objects{s: srv, user: garbageCollector, manager: "generic-garbage-collector"}
	r := gc.Resource{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true}
	err = o.UpdateMetadata(t.Context(), r, "default", "a", beforeObj.GetObjectMeta().UID, func(m *kapi.ObjectMeta) bool {
		m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return f == "x/y" })
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := res.decodeStored(storage.KeyValue{Key: before.Key, Value: before.Value, ModRevision: before.Revision})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(beforeObj, fresh) {
		t.Fatalf("the collector's write changed the cached object: %+v, its stored value %+v", beforeObj, fresh)
	}
}

// A namespace deleted in the foreground is finalized by the collector
// (UpdateMetadata), whose write runs the namespace's update hook: the
// label it sets must be set on the write's own labels, not on the cached
// namespace's, which readers (label selectors) read meanwhile. Run with
// -race.
func TestForegroundNamespaceDeletionLeavesCacheAlone(t *testing.T) {
	srv, err := New(WithNamespaces())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	serve(t, srv, "POST", "/api/v1/namespaces", "application/json", `{"metadata":{"name":"doomed"}}`, http.StatusCreated)
	res := srv.namespaces
	key := res.key("", "doomed")
	obj, err := cachedObject(cachedAt(t, srv, res, key))
	if err != nil {
		t.Fatal(err)
	}
	cached := obj.(*builtin.Namespace)

	// A reader of the cached namespace, as a label selector is.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = cached.Labels["kubernetes.io/metadata.name"]
			time.Sleep(100 * time.Microsecond)
		}
	})
	o := &objects{s: srv, user: garbageCollector, manager: "generic-garbage-collector"}
	r := gc.Resource{Version: "v1", Kind: "Namespace", Plural: "namespaces"}
	err = o.UpdateMetadata(t.Context(), r, "", "doomed", cached.UID, func(m *kapi.ObjectMeta) bool {
		m.Finalizers = append(m.Finalizers, "example.com/x")
		return true
	})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}

	// End to end: the namespace goes, its foregroundDeletion finalizer
	// removed by the collector, "kubernetes" by the namespace deleter.
	serve(t, srv, "PUT", "/api/v1/namespaces/doomed", "application/json", `{"metadata":{"name":"doomed"}}`, http.StatusOK)
	serve(t, srv, "DELETE", "/api/v1/namespaces/doomed?propagationPolicy=Foreground", "", "", http.StatusOK)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := srv.config.store.Get(t.Context(), key, 0)
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a namespace deleted in the foreground is still there")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A namespace that holds an object that cannot be read is not finalized:
// the object is still stored, and would be the content of a namespace of
// the same name created later. kube's namespace controller fails to list
// it and keeps the namespace (NamespaceDeletionContentFailure) until an
// unsafe deletion removes it.
func TestNamespaceWithUnreadableContentStays(t *testing.T) {
	srv, err := New(WithNamespaces())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := Register(srv, Resource[gadget]{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	serve(t, srv, "POST", "/api/v1/namespaces", "application/json", `{"metadata":{"name":"ns1"}}`, http.StatusCreated)
	serve(t, srv, "POST", "/apis/example.com/v1/namespaces/ns1/gadgets", "application/json", `{"metadata":{"name":"bad"}}`, http.StatusCreated)
	var res *resource
	for _, r := range srv.resources {
		if r.Plural == "gadgets" {
			res = r
		}
	}
	key := res.key("ns1", "bad")
	kv, err := srv.config.store.Get(t.Context(), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.config.store.Update(t.Context(), key, kv.Value[:len(kv.Value)/2], 0); err != nil {
		t.Fatal(err)
	}
	for len(res.cache.Unreadable(res.keyPrefix("ns1"))) == 0 {
		time.Sleep(time.Millisecond)
	}
	serve(t, srv, "DELETE", "/api/v1/namespaces/ns1", "", "", http.StatusOK)
	time.Sleep(time.Second)
	if _, err := srv.config.store.Get(t.Context(), key, 0); err != nil {
		t.Fatalf("the unreadable object: %v", err)
	}
	if _, err := srv.config.store.Get(t.Context(), srv.namespaces.key("", "ns1"), 0); err != nil {
		t.Fatalf("the namespace of an unreadable object was deleted, the object left behind: %v", err)
	}
	// Once an unsafe deletion removes it, the namespace goes.
	serve(t, srv, "DELETE", "/apis/example.com/v1/namespaces/ns1/gadgets/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true", "", "", http.StatusOK)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := srv.config.store.Get(t.Context(), srv.namespaces.key("", "ns1"), 0); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the namespace stays after its unreadable content was deleted")
		}
	}
}

// The system namespaces are created when serving starts: a store that
// fails then (an etcd not up yet, a leader election) must not leave the
// server without them for good, answering 404 to every create in
// "default" while /readyz says ready. kube-apiserver's system namespaces
// controller keeps making them.
func TestSystemNamespacesAfterAStoreFault(t *testing.T) {
	store := faulty.New(memory.New())
	clear := store.Inject(faulty.Fault{Ops: faulty.Create, Key: "/namespaces/", Err: errors.New("etcdserver: leader changed")})
	srv, err := New(WithStorage(store), WithNamespaces(), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := Register(srv, Resource[gadget]{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/readyz", nil)) // starts serving
	clear()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := httptest.NewRequest("POST", "/apis/example.com/v1/namespaces/default/gadgets", strings.NewReader(`{"metadata":{"generateName":"g"}}`))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if w.Code == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a create in default, the store well again: %d %s", w.Code, w.Body)
		}
	}
}

// A server closed while its store still refuses the system namespaces
// stops trying (the package's leak check sees to that).
func TestSystemNamespacesRetriesEndWithTheServer(t *testing.T) {
	store := faulty.New(memory.New())
	store.Inject(faulty.Fault{Ops: faulty.Create, Key: "/namespaces/", Err: errors.New("etcdserver: leader changed")})
	srv, err := New(WithStorage(store), WithNamespaces(), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/readyz", nil)) // starts serving
	time.Sleep(1500 * time.Millisecond)                                               // one retry
	srv.Close()
}
