package kinds_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
)

// widgetLikeSchema is the typed example widget's spec as a schema.
const widgetLikeSchema = `{"type":"object","properties":{"spec":{"type":"object","required":["color"],"properties":{
  "color":{"type":"string","enum":["Red","Green","Blue"]},"replicas":{"type":"integer","minimum":0,"default":1},
  "size":{"type":"integer","minimum":0},"selector":{"type":"object","additionalProperties":{"type":"string"}},
  "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
    "items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer"}}}}}},
  "status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}`

// TestMemoryPerObject loads objects of about 1 KiB of JSON into a server
// serving the typed example widget and into one serving the same kind
// defined from a schema, lists each once, and reports the heap each holds
// per object, side by side. It measures rather than checks, so it runs
// only when KAPI_MEM_OBJECTS says how many objects to load:
//
//	KAPI_MEM_OBJECTS=20000 go test ./kinds -run TestMemoryPerObject -v
func TestMemoryPerObject(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KAPI_MEM_OBJECTS"))
	if n <= 0 {
		t.Skip("set KAPI_MEM_OBJECTS to the number of objects to load")
	}
	s, err := schema.Parse([]byte(widgetLikeSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		register func(*apiserver.Server) error
	}{
		{"typed widget", widgetapi.Register},
		{"kind from a schema", func(srv *apiserver.Server) error {
			return kinds.Register(srv, kinds.Definition{Group: "example.com", Kind: "Widget", Plural: "widgets", Namespaced: true,
				Versions: []kinds.Version{{Name: "v1", Served: true, Storage: true, Schema: s, Status: true}}})
		}},
	} {
		srv, err := apiserver.New()
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.register(srv); err != nil {
			t.Fatal(err)
		}
		do := func(method, path, body string, want int) []byte {
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != want {
				t.Fatalf("%s %s: HTTP %d: %s", method, path, rec.Code, rec.Body.Bytes())
			}
			return rec.Body.Bytes()
		}
		const path = "/apis/example.com/v1/namespaces/load/widgets"
		do(http.MethodGet, path, "", http.StatusOK)
		base := heapInUse()
		pad := strings.Repeat("x", 620)
		var jsonBytes int
		for i := range n {
			body := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"widget-%06d","labels":{"app":"load","tier":"web","shard":"s%d"},"annotations":{"example.com/padding":"%s"}},"spec":{"color":"Blue","size":%d}}`,
				i, i%16, pad, i)
			jsonBytes += len(do(http.MethodPost, path, body, http.StatusCreated))
		}
		do(http.MethodGet, path, "", http.StatusOK)
		held := float64(heapInUse() - base)
		t.Logf("%s: %d objects of %d bytes of JSON: heap %.0f bytes per object, %.2f× the JSON",
			tc.name, n, jsonBytes/n, held/float64(n), held/float64(jsonBytes))
		srv.Close()
	}
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
