package postgres_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/postgres"
)

// Two replicas of the example service, each its own apiserver.Server with
// its own store (pool, poller, watch cache) on one database and schema, as
// behind a load balancer: what one is written, the other reads and its
// watchers see, in order; optimistic concurrency holds across them.

const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"

// serveWidgets serves the widgets API on store until the test ends.
func serveWidgets(t *testing.T, store *postgres.Store) string {
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
	return ts.URL
}

type answer struct {
	code       int
	retryAfter string
	status     kapi.Status
	body       string
}

func send(t *testing.T, method, url, body string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(data)}
	if resp.StatusCode >= 300 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(data, &a.status)
	}
	return a
}

func widgetJSON(name, color, resourceVersion string) string {
	rv := ""
	if resourceVersion != "" {
		rv = fmt.Sprintf(`,"resourceVersion":%q`, resourceVersion)
	}
	return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q%s},"spec":{"color":%q}}`, name, rv, color)
}

// object is what the tests read of a widget or a list.
type object struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		Color string `json:"color"`
	} `json:"spec"`
}

func decode(t *testing.T, a answer, want int) object {
	t.Helper()
	if a.code != want {
		t.Fatalf("answer %d, want %d: %s", a.code, want, a.body)
	}
	var o object
	if err := json.Unmarshal([]byte(a.body), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// watchEvents watches url's widgets from rv and sends "TYPE name rv" for
// each event, until the test ends.
func watchEvents(t *testing.T, url, rv string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+widgetsPath+"?watch=1&resourceVersion="+rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %s", resp.Status)
	}
	out := make(chan string, 1024)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); resp.Body.Close(); wg.Wait() })
	wg.Go(func() {
		defer close(out)
		dec := json.NewDecoder(bufio.NewReader(resp.Body))
		for {
			var ev struct {
				Type   string `json:"type"`
				Object object `json:"object"`
			}
			if err := dec.Decode(&ev); err != nil {
				return
			}
			if ev.Type != "BOOKMARK" {
				out <- fmt.Sprintf("%s %s %s", ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion)
			}
		}
	})
	return out
}

func nextColor(color string, n int) string {
	colors := []string{"Red", "Green", "Blue"}
	for i, c := range colors {
		if c == color {
			return colors[(i+n)%len(colors)]
		}
	}
	return colors[0]
}

func TestReplicas(t *testing.T) {
	schema := freshSchema(t)
	a := serveWidgets(t, mustStore(t, schema))
	b := serveWidgets(t, mustStore(t, schema))

	list := decode(t, send(t, http.MethodGet, b+widgetsPath, ""), http.StatusOK)
	onB := watchEvents(t, b, list.Metadata.ResourceVersion)

	var want []string
	for i := range 10 {
		name := fmt.Sprintf("w%d", i%4)
		via, other := a, b
		if i%3 == 2 {
			via, other = b, a
		}
		cur := send(t, http.MethodGet, other+widgetsPath+"/"+name, "")
		switch cur.code {
		case http.StatusNotFound:
			created := decode(t, send(t, http.MethodPost, via+widgetsPath, widgetJSON(name, "Red", "")), http.StatusCreated)
			want = append(want, "ADDED "+name+" "+created.Metadata.ResourceVersion)
		case http.StatusOK:
			// Each update changes the color (one that changes
			// nothing would be answered with the object as it is).
			old := decode(t, cur, http.StatusOK)
			updated := decode(t, send(t, http.MethodPut, via+widgetsPath+"/"+name, widgetJSON(name, nextColor(old.Spec.Color, 1), old.Metadata.ResourceVersion)), http.StatusOK)
			want = append(want, "MODIFIED "+name+" "+updated.Metadata.ResourceVersion)
			// The other replica reads the write at once, and refuses
			// an update from the version it replaced.
			got := decode(t, send(t, http.MethodGet, other+widgetsPath+"/"+name, ""), http.StatusOK)
			if got.Metadata.ResourceVersion != updated.Metadata.ResourceVersion {
				t.Errorf("%s: the other replica reads resourceVersion %s right after the write of %s", name, got.Metadata.ResourceVersion, updated.Metadata.ResourceVersion)
			}
			if stale := send(t, http.MethodPut, other+widgetsPath+"/"+name, widgetJSON(name, nextColor(old.Spec.Color, 2), old.Metadata.ResourceVersion)); stale.code != http.StatusConflict {
				t.Errorf("%s: a stale update through the other replica: %d, want 409: %s", name, stale.code, stale.body)
			}
		default:
			t.Fatalf("GET %s: %d %s", name, cur.code, cur.body)
		}
	}
	for i, w := range want {
		select {
		case got, ok := <-onB:
			if !ok {
				t.Fatalf("B's watch ended after %d events", i)
			}
			if got != w {
				t.Errorf("B's watch event %d = %q, want %q", i, got, w)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("B's watch: no event %d (%q) in 30s", i, w)
		}
	}
	listA := send(t, http.MethodGet, a+widgetsPath, "")
	listB := send(t, http.MethodGet, b+widgetsPath, "")
	if listA.code != http.StatusOK || listA.body != listB.body {
		t.Errorf("the replicas list differently:\nA: %s\nB: %s", listA.body, listB.body)
	}
}

// TestReplicasWithoutNotifications: a replica whose notifications never
// come (its listener is on another channel) still sees every write of the
// other, through its poll.
func TestReplicasWithoutNotifications(t *testing.T) {
	schema := freshSchema(t)
	a := mustStore(t, schema)
	b := mustStore(t, schema, postgres.WithPollInterval(100*time.Millisecond), postgres.WithoutNotifications())
	start, err := b.Revision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	events, err := b.Watch(t.Context(), "/", start)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		rev, err := a.Create(t.Context(), fmt.Sprintf("/k%02d", i), []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-events:
			if ev.Err != nil || ev.ModRevision != rev {
				t.Fatalf("B's watch: %+v, want /k%02d at %d", ev, i, rev)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("B's watch: nothing of A's write at %d in 30s", rev)
		}
	}
}
