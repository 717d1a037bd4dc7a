package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// listWatchMarker is set in the child process that runs the informer tests
// with client-go's streaming list switched off.
const listWatchMarker = "KAPI_E2E_LIST_WATCH_CHILD"

// TestInformer runs a dynamic informer on widgets with client-go's defaults
// (streaming list, WatchListClient on): it must sync from the streaming list
// alone, follow adds, updates and deletes, and after 1,000 writes from 4
// concurrent writers hold exactly what the server holds.
func TestInformer(t *testing.T) {
	informerSuite(t, true)
}

// TestInformerListWatch runs the same suite with KUBE_FEATURE_WatchListClient=false,
// which makes client-go's informers LIST and then WATCH. client-go reads its
// feature gates from the environment once per process, so the suite runs in a
// child test process.
func TestInformerListWatch(t *testing.T) {
	if !runInChildProcess(t, listWatchMarker, "KUBE_FEATURE_WatchListClient=false") {
		return
	}
	informerSuite(t, false)
}

func informerSuite(t *testing.T, streaming bool) {
	t.Run("sync-and-follow", func(t *testing.T) {
		informerSyncAndFollow(t, streaming)
	})
	t.Run("concurrent-writers", func(t *testing.T) {
		informerConcurrentWriters(t, streaming)
	})
}

// startInformer starts a dynamic informer on widgets in the test namespace,
// waits (at most 30s) for it to sync and checks how it listed.
func startInformer(t *testing.T, srv *server, streaming bool, handler cache.ResourceEventHandler) cache.SharedIndexInformer {
	t.Helper()
	informer, _ := startSelectingInformer(t, srv, streaming, handler, "", "")
	return informer
}

// startSelectingInformer is startInformer with a label and a field selector
// on its list and watch; it also checks that every request carried them,
// and returns the requests' log.
func startSelectingInformer(t *testing.T, srv *server, streaming bool, handler cache.ResourceEventHandler, labelSelector, fieldSelector string) (cache.SharedIndexInformer, *requestLog) {
	t.Helper()
	log := &requestLog{}
	client := dynamicClient(t, srv, log)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, testNamespace, func(o *metav1.ListOptions) {
		o.LabelSelector, o.FieldSelector = labelSelector, fieldSelector
	})
	informer := factory.ForResource(widgetsGVR).Informer()
	if handler != nil {
		if _, err := informer.AddEventHandler(handler); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})

	syncCtx, syncCancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), informer.HasSynced) {
		t.Fatalf("the informer (labelSelector %q, fieldSelector %q) did not sync within 30s (streaming list: %v); its requests:\n%s",
			labelSelector, fieldSelector, streaming, log)
	}

	reqs := log.all()
	var streamed, listed bool
	for _, r := range reqs {
		u, err := url.Parse(r.URL)
		if err != nil {
			continue
		}
		q := u.Query()
		if q.Get("labelSelector") != labelSelector || q.Get("fieldSelector") != fieldSelector {
			t.Errorf("request %s does not carry labelSelector %q and fieldSelector %q", r, labelSelector, fieldSelector)
		}
		if q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true" && r.Status == 200 {
			streamed = true
		}
		if q.Get("watch") == "" && r.Method == "GET" && strings.HasSuffix(u.Path, "/widgets") {
			listed = true
		}
	}
	if streaming && (!streamed || listed) {
		t.Fatalf("the informer should sync from a streaming list alone (a watch with sendInitialEvents=true answered 200, no LIST); its requests:\n%s", log)
	}
	if !streaming && (streamed || !listed) {
		t.Fatalf("with WatchListClient off the informer should LIST and not stream; its requests:\n%s", log)
	}
	t.Logf("informer requests until synced:\n%s", log)
	return informer, log
}

func informerSyncAndFollow(t *testing.T, streaming bool) {
	srv := startServer(t)
	ctx := ctxFor(t, 90*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace(testNamespace)
	for i := range 3 {
		if _, err := widgets.Create(ctx, newWidget(fmt.Sprintf("pre-%d", i), map[string]any{"color": "Red"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}

	events := make(chan string, 100)
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			events <- "add " + obj.(*unstructured.Unstructured).GetName()
		},
		UpdateFunc: func(_, obj any) {
			u := obj.(*unstructured.Unstructured)
			c, _, _ := unstructured.NestedString(u.Object, "spec", "color")
			events <- "update " + u.GetName() + " " + c
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				events <- "delete-unknown " + d.Key
				return
			}
			events <- "delete " + obj.(*unstructured.Unstructured).GetName()
		},
	}
	informer := startInformer(t, srv, streaming, handler)
	waitConverged(t, informer, widgets)

	initial := map[string]bool{}
	for range 3 {
		initial[nextEvent(t, events)] = true
	}
	for i := range 3 {
		if want := fmt.Sprintf("add pre-%d", i); !initial[want] {
			t.Errorf("initial events %v lack %q", initial, want)
		}
	}

	created, err := widgets.Create(ctx, newWidget("live", map[string]any{"color": "Red"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := nextEvent(t, events); got != "add live" {
		t.Errorf("after create: event %q, want %q", got, "add live")
	}
	_ = unstructured.SetNestedField(created.Object, "Green", "spec", "color")
	if _, err := widgets.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if got := nextEvent(t, events); got != "update live Green" {
		t.Errorf("after update: event %q, want %q", got, "update live Green")
	}
	if err := widgets.Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got := nextEvent(t, events); got != "delete live" {
		t.Errorf("after delete: event %q, want %q", got, "delete live")
	}
	if err := widgets.Delete(ctx, "pre-1", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got := nextEvent(t, events); got != "delete pre-1" {
		t.Errorf("after delete: event %q, want %q", got, "delete pre-1")
	}
	waitConverged(t, informer, widgets)
	select {
	case e := <-events:
		t.Errorf("unexpected extra event %q", e)
	default:
	}
}

func nextEvent(t *testing.T, events <-chan string) string {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(20 * time.Second):
		t.Fatal("no informer event within 20s")
		return ""
	}
}

const (
	writers     = 4
	totalWrites = 1000
	nameSpace   = 20 // objects the writers fight over
)

func informerConcurrentWriters(t *testing.T, streaming bool) {
	srv := startServer(t)
	ctx := ctxFor(t, 3*time.Minute)
	client := dynamicClient(t, srv, nil)
	widgets := client.Resource(widgetsGVR).Namespace(testNamespace)
	for i := range nameSpace / 2 {
		if _, err := widgets.Create(ctx, newWidget(fmt.Sprintf("w-%d", i), map[string]any{"color": "Red"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	order := &orderChecker{}
	informer := startInformer(t, srv, streaming, order.handler(t))

	var (
		done                       atomic.Int64 // successful writes
		creates, updates, deletes  atomic.Int64
		conflicts, exists, missing atomic.Int64
		wg                         sync.WaitGroup
		errs                       = make(chan error, writers)
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			colors := []string{"Red", "Green", "Blue"}
			for attempts := 0; done.Load() < totalWrites; attempts++ {
				if attempts > 20*totalWrites {
					errs <- fmt.Errorf("writer %d: too many failed attempts", w)
					return
				}
				name := fmt.Sprintf("w-%d", rng.IntN(nameSpace))
				cur, err := widgets.Get(ctx, name, metav1.GetOptions{})
				switch {
				case apierrors.IsNotFound(err):
					_, err = widgets.Create(ctx, newWidget(name, map[string]any{"color": colors[rng.IntN(3)], "size": int64(rng.IntN(100))}), metav1.CreateOptions{})
					if err == nil {
						creates.Add(1)
					}
				case err != nil:
				case rng.IntN(10) < 7:
					_ = unstructured.SetNestedField(cur.Object, int64(rng.IntN(1000)), "spec", "size")
					_ = unstructured.SetNestedField(cur.Object, colors[rng.IntN(3)], "spec", "color")
					_, err = widgets.Update(ctx, cur, metav1.UpdateOptions{})
					if err == nil {
						updates.Add(1)
					}
				default:
					err = widgets.Delete(ctx, name, metav1.DeleteOptions{})
					if err == nil {
						deletes.Add(1)
					}
				}
				switch {
				case err == nil:
					done.Add(1)
				case apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err):
					conflicts.Add(1)
				case apierrors.IsAlreadyExists(err):
					exists.Add(1)
				case apierrors.IsNotFound(err):
					missing.Add(1)
				default:
					errs <- fmt.Errorf("writer %d on %s: %v", w, name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("writes: %d (creates %d, updates %d, deletes %d); lost races: %d conflicts, %d already exists, %d not found",
		done.Load(), creates.Load(), updates.Load(), deletes.Load(), conflicts.Load(), exists.Load(), missing.Load())
	if done.Load() < totalWrites {
		t.Fatalf("only %d writes succeeded", done.Load())
	}
	waitConverged(t, informer, widgets)
	if err := order.err(); err != nil {
		t.Error(err)
	}
}

// orderChecker checks that the informer delivers each object's versions in
// resourceVersion order.
type orderChecker struct {
	mu    sync.Mutex
	first error
}

func (o *orderChecker) fail(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.first == nil {
		o.first = fmt.Errorf(format, args...)
	}
}

func (o *orderChecker) err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.first
}

func (o *orderChecker) handler(t *testing.T) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			prev, cur := oldObj.(*unstructured.Unstructured), newObj.(*unstructured.Unstructured)
			a, err1 := strconv.ParseInt(prev.GetResourceVersion(), 10, 64)
			b, err2 := strconv.ParseInt(cur.GetResourceVersion(), 10, 64)
			if err1 != nil || err2 != nil || b <= a {
				o.fail("update of %s from resourceVersion %s to %s is not in order", cur.GetName(), prev.GetResourceVersion(), cur.GetResourceVersion())
			}
		},
	}
}

// waitConverged polls (for at most 30s) until the informer's store holds
// exactly the objects of a fresh LIST, with the same resourceVersions.
func waitConverged(t *testing.T, informer cache.SharedIndexInformer, widgets dynamic.ResourceInterface) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var diff string
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		list, err := widgets.List(ctx, metav1.ListOptions{})
		cancel()
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		server := map[string]string{}
		for _, item := range list.Items {
			server[item.GetName()] = item.GetResourceVersion()
		}
		cached := map[string]string{}
		for _, obj := range informer.GetStore().List() {
			u := obj.(*unstructured.Unstructured)
			cached[u.GetName()] = u.GetResourceVersion()
		}
		diff = stateDiff(server, cached)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the informer's store did not converge to the server's state within 30s (list rv %s, informer last sync rv %s):\n%s",
				list.GetResourceVersion(), informer.LastSyncResourceVersion(), diff)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func stateDiff(server, cached map[string]string) string {
	var lines []string
	for name, rv := range server {
		if c, ok := cached[name]; !ok {
			lines = append(lines, fmt.Sprintf("  %s: server rv %s, missing from the informer", name, rv))
		} else if c != rv {
			lines = append(lines, fmt.Sprintf("  %s: server rv %s, informer rv %s", name, rv, c))
		}
	}
	for name, rv := range cached {
		if _, ok := server[name]; !ok {
			lines = append(lines, fmt.Sprintf("  %s: informer rv %s, not on the server", name, rv))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
