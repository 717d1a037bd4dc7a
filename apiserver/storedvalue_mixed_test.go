package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Every kind of write to one object at once: PUTs (some with a stale
// resourceVersion, which conflict, some resetting managedFields with
// [{}]), merge patches (some naming managedFields), JSON patches, applies
// by two managers, and dry runs of each. Each write encodes its object in
// a lent buffer and its managedFields may share their sets' bytes with the
// object it replaced; so every revision read back from the store, every
// event a watch replays and every answer must be what its write answered
// (dry runs: what they asked for), however the writes interleave.
func TestMixedWritesStoreWhatTheyAnswer(t *testing.T) {
	store, c := storedServer(t)
	created := c.do(http.MethodPost, widgetsIn("default"), creatable("default", "m")).mustCode(t, http.StatusCreated)
	start := resourceVersionOf(t, created.Body)
	path := widgetPath("default", "m")
	const writers, writes = 6, 30
	ans := &answers{byRV: map[string][]byte{}}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range writes {
				round := strings.Repeat(string(rune('a'+w)), (i*7+w*13)%60+1)
				dry := i%5 == 4
				q := ""
				if dry {
					q = "?dryRun=All"
				}
				var resp *response
				var method string
				switch w {
				case 0, 1: // PUT of what was read, sometimes stale, sometimes resetting managedFields
					cur := c.get(path)
					if cur.Code != http.StatusOK {
						t.Errorf("GET: HTTP %d: %s", cur.Code, cur.Body)
						return
					}
					var obj map[string]any
					_ = json.Unmarshal(cur.Body, &obj)
					meta := obj["metadata"].(map[string]any)
					if i%3 == 2 {
						meta["resourceVersion"] = start // conflicts
					}
					if i%4 == 3 {
						meta["managedFields"] = []any{map[string]any{}}
					}
					labels, _ := meta["labels"].(map[string]any)
					if labels == nil {
						labels = map[string]any{}
						meta["labels"] = labels
					}
					labels[fmt.Sprintf("put%d", w)] = round
					method = http.MethodPut
					resp = c.do(method, path+q, obj)
				case 2: // merge patch, sometimes naming managedFields
					method = http.MethodPatch
					body := map[string]any{"metadata": map[string]any{"labels": map[string]any{"merge": round}}, "spec": map[string]any{"size": i}}
					if i%3 == 1 {
						body["metadata"].(map[string]any)["annotations"] = map[string]any{"managedFields": round}
					}
					resp = c.do(method, path+q, body, "Content-Type", "application/merge-patch+json")
				case 3: // JSON patch
					method = http.MethodPatch
					body := fmt.Sprintf(`[{"op":"add","path":"/metadata/labels/json","value":%q},{"op":"replace","path":"/spec/size","value":%d}]`, round, 100+i)
					resp = c.do(method, path+q, body, "Content-Type", "application/json-patch+json")
				default: // apply, by a manager of its own, some forced
					method = http.MethodPatch
					body := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"m","namespace":"default","labels":{"apply%d":%q}},"spec":{"color":"Red"}}`, w, round)
					sep := "?"
					if dry {
						sep = "&"
					}
					resp = c.do(method, path+q+sep+"fieldManager=applier"+strconv.Itoa(w)+"&force=true", body, "Content-Type", "application/apply-patch+yaml")
				}
				if resp.Code == http.StatusConflict {
					continue
				}
				if resp.Code != http.StatusOK {
					t.Errorf("%s (writer %d, write %d): HTTP %d: %s", method, w, i, resp.Code, resp.Body)
					return
				}
				if !strings.Contains(string(resp.Body), `"`+round+`"`) {
					t.Errorf("writer %d, write %d: the answer lacks %q: %s", w, i, round, resp.Body)
				}
				if dry {
					continue
				}
				ans.add(t, resp.Body)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	answered := ans.byRV
	key := keyOf(t, store, "m")
	for rv, body := range answered {
		rev, _ := strconv.ParseInt(rv, 10, 64)
		kv, err := store.Get(context.Background(), key, rev)
		if err != nil {
			t.Fatalf("revision %s: %v", rv, err)
		}
		if kv.ModRevision != rev {
			continue // a write that changed nothing answers the revision it found
		}
		sameObject(t, "the store at revision "+rv, withResourceVersion(t, kv.Value, rv), body)
	}
	startRev, _ := strconv.ParseInt(start, 10, 64)
	pending := 0
	for rv := range answered {
		if rev, _ := strconv.ParseInt(rv, 10, 64); rev > startRev {
			pending++
		}
	}
	ws := c.watch(widgetsIn("default") + "?watch=true&resourceVersion=" + start)
	for pending > 0 {
		ev := ws.next()
		rv := resourceVersionOf(t, ev.Object)
		want, ok := answered[rv]
		if !ok {
			t.Fatalf("a watch event of revision %s no write answered: %s", rv, ev.Object)
		}
		sameObject(t, "the watch event of revision "+rv, ev.Object, want)
		pending--
	}
	got := c.get(path).mustCode(t, http.StatusOK)
	sameObject(t, "a GET", got.Body, answered[resourceVersionOf(t, got.Body)])
}
