package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// TestCorruptObject: the example keeps its objects in a bolt file; a widget
// whose stored value was truncated while the server was stopped is shown to
// kubectl as kube-apiserver shows a corrupt object, and client-go removes it
// with ignoreStoreReadErrorWithClusterBreakingPotential (a readable one it
// may not).
func TestCorruptObject(t *testing.T) {
	dir := t.TempDir()
	p := program{name: "examples/widgets", bin: widgetsBin, buildErr: widgetsBuildErr, args: []string{"-data", dir}}
	srv := startProgram(t, p)
	ctx := ctxFor(t, 60*time.Second)
	widgets := dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace("default")
	for _, name := range []string{"bad", "good"} {
		if _, err := widgets.Create(ctx, newWidget(name, map[string]any{"color": "Red"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	srv.stop()
	truncateStored(t, filepath.Join(dir, "kapi.db"), "/widgets.example.com/default/bad")
	srv = startProgram(t, p)
	k := newKubectl(t, dispatcherKubectl, srv)
	widgets = dynamicClient(t, srv, nil).Resource(widgetsGVR).Namespace("default")

	const corrupt = "Error from server (InternalError): Internal error occurred: StorageError: corrupt object, Code: 7, Key: /widgets.example.com/default/bad, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision="
	if r := k.run(t, "get", "wd", "bad"); r.err == nil || !strings.HasPrefix(r.stderr, corrupt) {
		t.Errorf("kubectl get of the corrupt widget: %s\nwant stderr starting %q", r, corrupt)
	}
	const unreadable = "Error from server (StorageReadError): failed to read one or more widgets.example.com from the storage: StorageError: corrupt object, Code: 7, Key: /widgets.example.com/default/bad,"
	if r := k.run(t, "get", "wd"); r.err == nil || !strings.HasPrefix(r.stderr, unreadable) {
		t.Errorf("kubectl get of the list: %s\nwant stderr starting %q", r, unreadable)
	}
	k.must(t, "get", "wd", "good")
	informer, synced := corruptWatchListInformer(t, srv)

	unsafe := true
	_, err := widgets.Get(ctx, "good", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = widgets.Delete(ctx, "good", metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: &unsafe})
	if !apierrors.IsConflict(err) {
		t.Errorf("unsafe deletion of a readable widget: %v, want a conflict", err)
	}
	if err := widgets.Delete(ctx, "bad", metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: &unsafe}); err != nil {
		t.Fatalf("unsafe deletion of the corrupt widget: %v", err)
	}
	if _, err := widgets.Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the corrupt widget after its deletion: %v", err)
	}
	if out := k.must(t, "get", "wd", "-o", "name"); out != "widget.example.com/good\n" {
		t.Errorf("kubectl get wd after the unsafe deletion printed %q", out)
	}
	// Readable again: the informer's next attempt (after client-go's
	// backoff) syncs, without the deleted widget.
	select {
	case <-synced:
	case <-time.After(90 * time.Second): // client-go's backoff reaches 30 s between attempts
		t.Fatal("the informer did not sync within 90s of the corrupt widget's deletion")
	}
	if keys := informer.GetStore().ListKeys(); len(keys) != 1 || keys[0] != "default/good" {
		t.Errorf("the informer holds %v, want [default/good]", keys)
	}
}

// corruptWatchListInformer starts a dynamic informer on widgets in default,
// with client-go's defaults (a streaming list first), while a widget there
// is unreadable. kube-apiserver never lets it believe it has them all: its
// cacher cannot initialize over a corrupt object, so the watch-list request
// is refused, and the LIST client-go falls back to answers etcd3's
// StorageReadError (k8s.io/apiserver storage/cacher Cacher.Watch and
// CacheDelegator.GetList, storage/etcd3 store.GetList). Here both answer that
// 500: the informer does not sync, and its watch error handler gets the
// list's error. It returns the informer and a channel closed once it syncs.
func corruptWatchListInformer(t *testing.T, srv *server) (cache.SharedIndexInformer, <-chan struct{}) {
	t.Helper()
	log := &requestLog{}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamicClient(t, srv, log), 0, "default", nil)
	informer := factory.ForResource(widgetsGVR).Informer()
	failed := make(chan error, 1)
	if err := informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		select {
		case failed <- err:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	synced := make(chan struct{})
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			close(synced)
		}
	}()
	select {
	case <-synced:
		t.Fatalf("the informer synced without the unreadable widget, holding %v; its requests:\n%s", informer.GetStore().ListKeys(), log)
	case err := <-failed:
		if apierrors.ReasonForError(err) != metav1.StatusReasonStoreReadError {
			t.Fatalf("the informer's error: %v (reason %s), want the list's StorageReadError", err, apierrors.ReasonForError(err))
		}
		if !strings.Contains(err.Error(), "/widgets.example.com/default/bad") {
			t.Errorf("the informer's error %q does not name the unreadable widget", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the informer neither synced nor failed in 60s; its requests:\n%s", log)
	}
	refused := false
	for _, r := range log.all() {
		if strings.Contains(r.URL, "watch=true") && strings.Contains(r.URL, "sendInitialEvents=true") {
			if r.Status != http.StatusInternalServerError {
				t.Errorf("the streaming list %s, want 500", r)
			}
			refused = true
		}
	}
	if !refused {
		t.Errorf("the informer did not try a streaming list; its requests:\n%s", log)
	}
	return informer, synced
}

// truncateStored cuts the latest stored value of key in half, in the bolt
// file of a stopped server: the history bucket holds each version under the
// key, 0x00 0x01 and the revision, as a flags byte, the create revision and
// the value.
func truncateStored(t *testing.T, path, key string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("history"))
		prefix := append([]byte(key), 0, 1)
		var last, record []byte
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			last, record = bytes.Clone(k), bytes.Clone(v)
		}
		if last == nil {
			return fmt.Errorf("no version of %s in %s", key, path)
		}
		const header = 9
		return b.Put(last, record[:header+(len(record)-header)/2])
	})
	if err != nil {
		t.Fatal(err)
	}
}
