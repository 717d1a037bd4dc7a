package etcd_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/etcd"
)

// Two replicas of the example service, each its own apiserver.Server with
// its own etcd client and watch cache, on one etcd cluster and prefix, as
// behind a load balancer: clients built for Kubernetes must not be able to
// tell them apart.

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

const namespace = "default"

// startReplica serves the widgets API on the store under prefix.
func startReplica(t *testing.T, prefix string) *httptest.Server {
	t.Helper()
	return serveWidgets(t, mustStore(t, prefix))
}

// serveWidgets serves the widgets API on store until the test ends.
func serveWidgets(t *testing.T, store *etcd.Store) *httptest.Server {
	t.Helper()
	srv, err := apiserver.New(apiserver.WithStorage(store), apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := widgetapi.Register(srv); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { srv.Close() }) // first: it ends the watches ts.Close would wait for
	return ts
}

func widgetsOn(t *testing.T, ts *httptest.Server) dynamic.ResourceInterface {
	return dynamicClient(t, ts).Resource(widgetsGVR).Namespace(namespace)
}

// dynamicClient is a client of ts that fails the test on any 5xx answer:
// client-go retries some of them (a consistent read that timed out waiting
// for the replica's cache is a 504), which would hide them.
func dynamicClient(t *testing.T, ts *httptest.Server) *dynamic.DynamicClient {
	t.Helper()
	client, err := dynamic.NewForConfig(&rest.Config{
		Host: ts.URL,
		QPS:  -1,
		WrapTransport: func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				resp, err := next.RoundTrip(req)
				if err == nil && resp.StatusCode >= 500 {
					t.Errorf("%s %s: %s", req.Method, req.URL.RequestURI(), resp.Status)
				}
				return resp, err
			})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func newWidget(name, color string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"color": color},
	}}
}

func colorOf(u *unstructured.Unstructured) string {
	c, _, _ := unstructured.NestedString(u.Object, "spec", "color")
	return c
}

func TestReplicas(t *testing.T) {
	prefix := freshPrefix()
	a, b := startReplica(t, prefix), startReplica(t, prefix)
	// Another application writes to the same etcd all along, moving
	// etcd's revision but not the replicas' store's.
	ctx, stop := context.WithCancel(t.Context())
	var neighbour sync.WaitGroup
	neighbour.Go(func() {
		other := mustStore(t, freshPrefix())
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := other.Create(ctx, fmt.Sprintf("/n/%d", i), []byte("x")); err != nil && ctx.Err() == nil {
				t.Errorf("the neighbour's write: %v", err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	defer neighbour.Wait()
	defer stop()
	t.Run("InformerOnTheOtherReplica", func(t *testing.T) { testInformerAcrossReplicas(t, a, b) })
	t.Run("WatchMovesToTheOtherReplica", func(t *testing.T) { testWatchMoves(t, a, b) })
	t.Run("OptimisticConcurrency", func(t *testing.T) { testConcurrencyAcrossReplicas(t, a, b) })
}

// testInformerAcrossReplicas: writers on A, an informer on B. B's informer
// sees every object's versions in order, and ends holding exactly what
// either replica lists.
func testInformerAcrossReplicas(t *testing.T, a, b *httptest.Server) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const writers, writes = 4, 60
	onA := widgetsOn(t, a)
	for i := range 5 { // some state before the informer starts
		if _, err := onA.Create(ctx, newWidget(fmt.Sprintf("pre-%d", i), "Red"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var (
		mu       sync.Mutex
		lastSeen = map[string]int64{} // per object, the last resourceVersion the informer delivered
		problems []string
		events   int
	)
	observe := func(kind string, obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			if d, isTombstone := obj.(cache.DeletedFinalStateUnknown); isTombstone {
				mu.Lock()
				problems = append(problems, "a deletion the informer missed: "+d.Key)
				mu.Unlock()
			}
			return
		}
		rv, _ := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
		mu.Lock()
		defer mu.Unlock()
		events++
		if prev := lastSeen[u.GetName()]; rv <= prev && kind != "delete" || rv < prev {
			problems = append(problems, fmt.Sprintf("%s %s at %d after %d", kind, u.GetName(), rv, prev))
		}
		lastSeen[u.GetName()] = rv
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamicClient(t, b), 0, namespace, nil)
	informer := factory.ForResource(widgetsGVR).Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe("add", obj) },
		UpdateFunc: func(_, obj any) { observe("update", obj) },
		DeleteFunc: func(obj any) { observe("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer factory.Shutdown()
	defer close(stop)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the informer on B did not sync")
	}

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range writes {
				name := fmt.Sprintf("w%d-%d", w, rng.IntN(6))
				color := []string{"Red", "Green", "Blue"}[i%3]
				cur, err := onA.Get(ctx, name, metav1.GetOptions{})
				switch {
				case apierrors.IsNotFound(err):
					_, err = onA.Create(ctx, newWidget(name, color), metav1.CreateOptions{})
				case err != nil:
				case rng.IntN(4) == 0:
					err = onA.Delete(ctx, name, metav1.DeleteOptions{})
				default:
					_ = unstructured.SetNestedField(cur.Object, color, "spec", "color")
					_, err = onA.Update(ctx, cur, metav1.UpdateOptions{})
				}
				if err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("writer %d, write %d on %s: %v", w, i, name, err)
					return
				}
			}
		})
	}
	wg.Wait()

	onB := widgetsOn(t, b)
	var diff string
	for deadline := time.Now().Add(30 * time.Second); ; {
		listA, errA := onA.List(ctx, metav1.ListOptions{})
		listB, errB := onB.List(ctx, metav1.ListOptions{})
		if errA != nil || errB != nil {
			t.Fatalf("list: %v, %v", errA, errB)
		}
		fromA, fromB, cached := versions(listA.Items), versions(listB.Items), map[string]string{}
		for _, obj := range informer.GetStore().List() {
			u := obj.(*unstructured.Unstructured)
			cached[u.GetName()] = u.GetResourceVersion() + " " + colorOf(u)
		}
		// A consistent list on B reflects A's writes at once.
		if d := mapDiff(fromA, fromB); d != "" {
			t.Fatalf("a list on B differs from one on A made before it:\n%s", d)
		}
		if diff = mapDiff(fromB, cached); diff == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the informer on B did not converge to the lists in 30s:\n%s", diff)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("the informer on B followed %d events of writes made through A", events)
}

func versions(items []unstructured.Unstructured) map[string]string {
	m := map[string]string{}
	for _, u := range items {
		m[u.GetName()] = u.GetResourceVersion() + " " + colorOf(&u)
	}
	return m
}

func mapDiff(want, got map[string]string) string {
	var d string
	for k, v := range want {
		if got[k] != v {
			d += fmt.Sprintf("  %s: %q, then %q\n", k, v, got[k])
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			d += fmt.Sprintf("  %s: absent, then %q\n", k, v)
		}
	}
	return d
}

// testWatchMoves starts a watch on A, drops it part way, and resumes it on
// B from the last resourceVersion it received, while writes go through
// both: the two streams together are every write, once, in order.
func testWatchMoves(t *testing.T, a, b *httptest.Server) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	onA, onB := widgetsOn(t, a), widgetsOn(t, b)
	list, err := onA.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		writes []string // "type name rv" of every write, from the responses
	)
	write := func(i int) {
		via := []dynamic.ResourceInterface{onA, onB}[i%2]
		name := fmt.Sprintf("move-%d", i%5)
		var ev string
		switch obj, err := via.Create(ctx, newWidget(name, "Red"), metav1.CreateOptions{}); {
		case err == nil:
			ev = "ADDED " + name + " " + obj.GetResourceVersion()
		case apierrors.IsAlreadyExists(err):
			if i%3 == 0 {
				if err := via.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					t.Errorf("delete %s: %v", name, err)
					return
				}
				// The client is not told the deletion's revision: the
				// check below takes it from the stream.
				ev = "DELETED " + name + " ?"
			} else {
				cur, err := via.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Errorf("get %s: %v", name, err)
					return
				}
				_ = unstructured.SetNestedField(cur.Object, []string{"Green", "Blue"}[i%2], "spec", "color")
				obj, err := via.Update(ctx, cur, metav1.UpdateOptions{})
				if err != nil {
					t.Errorf("update %s: %v", name, err)
					return
				}
				ev = "MODIFIED " + name + " " + obj.GetResourceVersion()
			}
		default:
			t.Errorf("create %s: %v", name, err)
			return
		}
		mu.Lock()
		writes = append(writes, ev)
		mu.Unlock()
	}

	const first, second = 20, 20
	w, err := onA.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		write(i)
	}
	var got []string
	last := list.GetResourceVersion()
	for len(got) < first/2 { // read part of A's stream, then drop it
		ev := nextWatchEvent(t, w)
		got = append(got, ev)
		last = ev[lastSpace(ev)+1:]
	}
	w.Stop()
	for i := first; i < first+second; i++ {
		write(i)
	}
	w, err = onB.Watch(ctx, metav1.ListOptions{ResourceVersion: last})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for len(got) < first+second {
		got = append(got, nextWatchEvent(t, w))
	}
	// The writes were sequential: their order is the revisions' order.
	if len(got) != len(writes) {
		t.Fatalf("%d events, %d writes", len(got), len(writes))
	}
	revs := make([]int64, len(got))
	for i := range got {
		want := writes[i]
		if want[len(want)-1] == '?' { // a deletion: any revision
			want = want[:len(want)-1] + got[i][lastSpace(got[i])+1:]
		}
		if got[i] != want {
			t.Errorf("event %d = %q, write %q", i, got[i], want)
		}
		revs[i], _ = strconv.ParseInt(got[i][lastSpace(got[i])+1:], 10, 64)
	}
	if !slices.IsSorted(revs) {
		t.Errorf("revisions out of order: %v", revs)
	}
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Errorf("an event after every write was seen: %v", ev.Type)
		}
	case <-time.After(200 * time.Millisecond):
	}
}

func lastSpace(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' {
			return i
		}
	}
	return -1
}

// nextWatchEvent returns the next event as "type name resourceVersion",
// skipping bookmarks.
func nextWatchEvent(t *testing.T, w watch.Interface) string {
	t.Helper()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				t.Fatalf("watch event %s with %T: %v", ev.Type, ev.Object, ev.Object)
			}
			return fmt.Sprintf("%s %s %s", ev.Type, u.GetName(), u.GetResourceVersion())
		case <-time.After(30 * time.Second):
			t.Fatal("no watch event in 30s")
		}
	}
}

// testConcurrencyAcrossReplicas: a read through B right after a write
// through A sees it, and an update through B from the version before the
// write is refused with 409 Conflict.
func testConcurrencyAcrossReplicas(t *testing.T, a, b *httptest.Server) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	onA, onB := widgetsOn(t, a), widgetsOn(t, b)
	for i := range 10 {
		name := fmt.Sprintf("occ-%d", i)
		if _, err := onA.Create(ctx, newWidget(name, "Red"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		stale, err := onB.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("B does not read the object A just created: %v", err)
		}
		fresh := stale.DeepCopy()
		_ = unstructured.SetNestedField(fresh.Object, "Green", "spec", "color")
		updated, err := onA.Update(ctx, fresh, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := onB.Get(ctx, name, metav1.GetOptions{})
		if err != nil || got.GetResourceVersion() != updated.GetResourceVersion() || colorOf(got) != "Green" {
			t.Fatalf("B reads %v (rv %s), %v right after A's update to rv %s", got.Object["spec"], got.GetResourceVersion(), err, updated.GetResourceVersion())
		}
		_ = unstructured.SetNestedField(stale.Object, "Blue", "spec", "color")
		if _, err := onB.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("a stale update through B after A's: %v, want 409 Conflict", err)
		}
		if err := onB.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr(stale.GetResourceVersion())}}); !apierrors.IsConflict(err) {
			t.Fatalf("a stale delete through B after A's update: %v, want 409 Conflict", err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
