package etcd_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/storage/etcd"
)

// roundTrips counts the etcd requests (unary gRPC calls: Range, Txn, ...)
// made on behalf of one HTTP request: the handler's context carries a
// counter, and the client's interceptor adds one for each call made with
// it, each retry included.
type roundTrips struct{}

type tripCounter struct {
	n       atomic.Int64
	methods chan string // each call's method, for the failure message
}

// countingClient is a client of the test server whose calls made with a
// context carrying a *tripCounter are counted in it.
func countingClient(t testing.TB) *clientv3.Client {
	t.Helper()
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if c, ok := ctx.Value(roundTrips{}).(*tripCounter); ok {
			c.n.Add(1)
			select {
			case c.methods <- method[strings.LastIndexByte(method, '/')+1:]:
			default:
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	return interceptedClient(t, count)
}

// interceptedClient is a client of the test server whose every call
// passes through intercept, each retry included.
func interceptedClient(t testing.TB, intercept grpc.UnaryClientInterceptor) *clientv3.Client {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{
		Endpoints: []string{etcdEndpoint()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(intercept)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// TestRoundTripsPerRequest counts the etcd round trips of each kind of
// request on a server whose watch cache is up to date (the usual case):
// a create is one transaction (create if absent, the revision marker
// moved with it); an update, a patch and an apply one transaction too,
// whose compare is the precondition (the ModRevision the watch cache
// holds, which the client's resourceVersion must match) — no read before
// it; a consistent GET or LIST one read of the store's revision, the rest
// from the cache. Before this, every update read the object first: two.
func TestRoundTripsPerRequest(t *testing.T) {
	ctx := t.Context()
	store, err := etcd.New(ctx, countingClient(t), etcd.WithPrefix(freshPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	srv, err := apiserver.New(apiserver.WithStorage(store), apiserver.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := widgetapi.Register(srv); err != nil {
		t.Fatal(err)
	}
	var counter atomic.Pointer[tripCounter]
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := counter.Load(); c != nil {
			r = r.WithContext(context.WithValue(r.Context(), roundTrips{}, c))
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { srv.Close() })

	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	do := func(method, path, contentType, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	// measure counts the round trips of one request, which must answer
	// code. A consistent GET first, not counted, has the cache caught up
	// with the last write, so that the count does not depend on how soon
	// its event comes.
	measure := func(name string, code int, method, path, contentType, body string) int64 {
		t.Helper()
		if code, body := do(http.MethodGet, widgets, "", ""); code != http.StatusOK {
			t.Fatalf("list: %d %s", code, body)
		}
		c := &tripCounter{methods: make(chan string, 64)}
		counter.Store(c)
		got, data := do(method, path, contentType, body)
		counter.Store(nil)
		if got != code {
			t.Fatalf("%s: %d %s, want %d", name, got, data, code)
		}
		close(c.methods)
		var methods []string
		for m := range c.methods {
			methods = append(methods, m)
		}
		t.Logf("%-28s %d round trips %v", name, c.n.Load(), methods)
		return c.n.Load()
	}
	widget := func(name, color, rv string) string {
		meta := fmt.Sprintf(`"name":%q`, name)
		if rv != "" {
			meta += fmt.Sprintf(`,"resourceVersion":%q`, rv)
		}
		return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{%s},"spec":{"color":%q}}`, meta, color)
	}
	// The server is up and its cache has caught up with the store.
	if code, body := do(http.MethodPost, widgets, "application/json", widget("warm", "Red", "")); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	rvOf := func(name string) string {
		t.Helper()
		code, body := do(http.MethodGet, widgets+"/"+name, "", "")
		if code != http.StatusOK {
			t.Fatalf("get %s: %d %s", name, code, body)
		}
		i := strings.Index(body, `"resourceVersion":"`)
		if i < 0 {
			t.Fatalf("no resourceVersion in %s", body)
		}
		rest := body[i+len(`"resourceVersion":"`):]
		return rest[:strings.IndexByte(rest, '"')]
	}
	rvOf("warm")

	create := measure("CREATE", http.StatusCreated, http.MethodPost, widgets, "application/json", widget("w", "Red", ""))
	rv := rvOf("w")
	want := map[string]int64{"CREATE": 1}
	got := map[string]int64{"CREATE": create}
	got["PUT with resourceVersion"] = measure("PUT with resourceVersion", http.StatusOK, http.MethodPut, widgets+"/w", "application/json", widget("w", "Blue", rv))
	got["PUT"] = measure("PUT", http.StatusOK, http.MethodPut, widgets+"/w", "application/json", widget("w", "Green", ""))
	got["merge PATCH"] = measure("merge PATCH", http.StatusOK, http.MethodPatch, widgets+"/w", "application/merge-patch+json", `{"spec":{"color":"Red"}}`)
	got["apply"] = measure("apply", http.StatusOK, http.MethodPatch, widgets+"/w?fieldManager=test&force=true", "application/apply-patch+yaml", widget("w", "Blue", ""))
	for _, w := range []string{"PUT with resourceVersion", "PUT", "merge PATCH", "apply"} {
		want[w] = create // no more than a create: the precondition is the compare
	}
	got["GET"] = measure("GET", http.StatusOK, http.MethodGet, widgets+"/w", "", "")
	got["LIST"] = measure("LIST", http.StatusOK, http.MethodGet, widgets, "", "")
	want["GET"], want["LIST"] = 1, 1 // the store's revision
	got["GET resourceVersion=0"] = measure("GET resourceVersion=0", http.StatusOK, http.MethodGet, widgets+"/w?resourceVersion=0", "", "")
	want["GET resourceVersion=0"] = 0
	// A stale resourceVersion is refused by etcd's compare: still one.
	got["PUT, a stale resourceVersion"] = measure("PUT, a stale resourceVersion", http.StatusConflict, http.MethodPut, widgets+"/w", "application/json", widget("w", "Blue", rv))
	want["PUT, a stale resourceVersion"] = 1
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %d etcd round trips, want %d", name, got[name], w)
		}
	}
}
