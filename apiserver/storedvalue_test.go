package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// A write encodes the object into a pooled buffer and stores a copy made
// to size; the store and the watch cache keep what they are given, so no
// later write may change a value once stored. Writers change objects of
// differing sizes at once, by PUT and merge PATCH (under -race, a buffer reused while the store or
// the cache reads it is a race), each write's answer is kept, and then
// every revision read back from the store, every event a watch from before
// the writes replays from the cache, and every object read from the cache
// must be what its write answered.
func TestStoredValuesOutliveTheirWrite(t *testing.T) {
	store, c := storedServer(t)
	const writers, writes = 4, 40
	start := "0"
	for w := range writers {
		created := c.do(http.MethodPost, widgetsIn("default"), creatable("default", fmt.Sprintf("w%d", w))).mustCode(t, http.StatusCreated)
		start = resourceVersionOf(t, created.Body)
	}
	ans := &answers{byRV: map[string][]byte{}}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			name := fmt.Sprintf("w%d", w)
			rv := ""
			for i := range writes {
				var obj map[string]any
				_ = json.Unmarshal(creatable("default", name), &obj)
				meta := obj["metadata"].(map[string]any)
				if rv != "" {
					meta["resourceVersion"] = rv
				}
				// A label whose length changes with every write moves
				// everything after it in the buffer the next write reuses.
				meta["labels"].(map[string]any)["round"] = strings.Repeat("x", (i*7+w*13)%60)
				obj["spec"].(map[string]any)["size"] = i
				method, body, header := http.MethodPut, any(obj), []string(nil)
				if i%2 == 1 { // a merge patch takes the same way
					method, header = http.MethodPatch, []string{"Content-Type", "application/merge-patch+json"}
					body = map[string]any{"metadata": map[string]any{"labels": meta["labels"]}, "spec": obj["spec"]}
				}
				resp := c.do(method, widgetPath("default", name), body, header...)
				if resp.Code != http.StatusOK {
					t.Errorf("%s %s: HTTP %d: %s", method, name, resp.Code, resp.Body)
					return
				}
				rv = ans.add(t, resp.Body)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	answered := ans.byRV
	for rv, body := range answered {
		var w widgetapi.Widget
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		rev, _ := strconv.ParseInt(rv, 10, 64)
		kv, err := store.Get(context.Background(), keyOf(t, store, w.Name), rev)
		if err != nil {
			t.Fatalf("revision %s: %v", rv, err)
		}
		sameObject(t, "the store at revision "+rv, withResourceVersion(t, kv.Value, rv), body)
	}
	ws := c.watch(widgetsIn("default") + "?watch=true&resourceVersion=" + start)
	for range len(answered) {
		ev := ws.next()
		rv := resourceVersionOf(t, ev.Object)
		sameObject(t, "the watch event of revision "+rv, ev.Object, answered[rv])
	}
	for w := range writers {
		got := c.get(widgetPath("default", fmt.Sprintf("w%d", w))).mustCode(t, http.StatusOK)
		sameObject(t, "a GET", got.Body, answered[resourceVersionOf(t, got.Body)])
	}
}

// answers holds each write's answer by its resourceVersion; add is safe
// for concurrent use.
type answers struct {
	mu   sync.Mutex
	byRV map[string][]byte
}

// add keeps an answer and returns its resourceVersion.
func (a *answers) add(t *testing.T, body []byte) string {
	rv := resourceVersionOf(t, body)
	a.mu.Lock()
	a.byRV[rv] = body
	a.mu.Unlock()
	return rv
}

// storedServer serves widgets from a memory store the test reads too.
func storedServer(t *testing.T) (*memory.Store, *apiClient) {
	store := memory.New()
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithStorage(store))
	return store, &apiClient{t: t, base: srv.URL, hc: srv.Client()}
}

// keyOf is the store's key of the widget named name in default.
func keyOf(t *testing.T, store *memory.Store, name string) string {
	t.Helper()
	all, err := store.List(context.Background(), "", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range all.Items {
		if strings.HasSuffix(kv.Key, "/default/"+name) {
			return kv.Key
		}
	}
	t.Fatalf("no key for %s among %d", name, len(all.Items))
	return ""
}

// resourceVersionOf is the resourceVersion of an object's JSON.
func resourceVersionOf(t *testing.T, obj []byte) string {
	t.Helper()
	var m struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(obj, &m); err != nil || m.Metadata.ResourceVersion == "" {
		t.Fatalf("no resourceVersion in %s: %v", obj, err)
	}
	return m.Metadata.ResourceVersion
}

// withResourceVersion is a stored value, which has none, with rv.
func withResourceVersion(t *testing.T, value []byte, rv string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(value, &m); err != nil {
		t.Fatalf("stored value %s: %v", value, err)
	}
	m["metadata"].(map[string]any)["resourceVersion"] = rv
	out, _ := json.Marshal(m)
	return out
}

// sameObject fails the test unless got and want are the same JSON object.
func sameObject(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %s: %v", what, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil || want == nil {
		t.Fatalf("%s: no answer to compare with (%v)", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s is\n%s\nits write answered\n%s", what, got, want)
	}
}
