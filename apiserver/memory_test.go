package apiserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// TestMemoryPerWidget loads widgets of about 1 KiB of JSON through the
// handler, lists them once in JSON (so that the cache holds what serving
// makes), and reports the heap the store and caches hold per widget and
// relative to the widgets' JSON. It measures rather than checks, so it runs
// only when KAPI_MEM_WIDGETS says how many widgets to load (100000 for issue
// 7's figure):
//
//	KAPI_MEM_WIDGETS=100000 go test ./apiserver -run TestMemoryPerWidget -v
func TestMemoryPerWidget(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KAPI_MEM_WIDGETS"))
	if n <= 0 {
		t.Skip("set KAPI_MEM_WIDGETS to the number of widgets to load")
	}
	srv, err := apiserver.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := widgetapi.Register(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	do := func(method, path, body string, want int) []byte {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Fatalf("%s %s: HTTP %d: %s", method, path, rec.Code, rec.Body.Bytes())
		}
		return rec.Body.Bytes()
	}
	const path = "/apis/example.com/v1/namespaces/load/widgets"
	do(http.MethodGet, path, "", http.StatusOK) // the hub has started
	base := heapInUse()

	// As the load harness's widgets: a few labels, an annotation padding
	// the JSON to about 1 KiB.
	pad := strings.Repeat("x", 620)
	var jsonBytes int
	var last []byte
	start := time.Now()
	for i := range n {
		name := fmt.Sprintf("widget-%06d", i)
		body := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q,"labels":{"app":"load","tier":"web","shard":"s%d"},"annotations":{"example.com/padding":"%s"}},"spec":{"color":"blue","size":%d}}`,
			name, i%16, pad, i)
		last = do(http.MethodPost, path, body, http.StatusCreated)
		jsonBytes += len(last)
	}
	loaded := time.Since(start)
	list := do(http.MethodGet, path, "", http.StatusOK)
	held := float64(heapInUse() - base)
	t.Logf("%d widgets of %d bytes of JSON on average (%d bytes of list), loaded in %v", n, jsonBytes/n, len(list), loaded)
	t.Logf("heap in use: %.0f MiB, %.0f bytes per widget, %.2f× the JSON", held/(1<<20), held/float64(n), held/float64(jsonBytes))
	_ = last
	if out := os.Getenv("KAPI_MEM_PROFILE"); out != "" {
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
	}
}
