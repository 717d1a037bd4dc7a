package kinds_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
)

// TestManyKinds registers KAPI_KINDS kinds, each with a 30-property
// schema, on a serving server, and reports the time the last Register
// took, the first discovery and OpenAPI answers after it, and the heap per
// kind. It measures rather than checks:
//
//	KAPI_KINDS=1000 go test ./kinds -run TestManyKinds -v
func TestManyKinds(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KAPI_KINDS"))
	if n <= 0 {
		t.Skip("set KAPI_KINDS to the number of kinds to register")
	}
	var props []string
	for i := range 30 {
		props = append(props, fmt.Sprintf(`"field%d":{"type":"string","maxLength":63,"description":"field %d of the spec"}`, i, i))
	}
	s, err := schema.Parse([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{` + strings.Join(props, ",") + `}},"status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(path, accept string) time.Duration {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept", accept)
		start := time.Now()
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, rec.Code)
		}
		return time.Since(start)
	}
	get("/apis", "application/json")
	base := heapInUse()
	var last time.Duration
	start := time.Now()
	for i := range n {
		def := kinds.Definition{Group: fmt.Sprintf("g%d.example.com", i), Kind: "Thing", Plural: "things", Namespaced: true,
			Versions: []kinds.Version{{Name: "v1", Served: true, Storage: true, Schema: s, Status: true}}}
		t0 := time.Now()
		if err := kinds.Register(srv, def); err != nil {
			t.Fatal(err)
		}
		last = time.Since(t0)
	}
	all := time.Since(start)
	aggregated := get("/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	root := get("/openapi/v3", "application/json")
	doc := get(fmt.Sprintf("/openapi/v3/apis/g%d.example.com/v1", n-1), "application/json")
	held := float64(heapInUse() - base)
	t.Logf("%d kinds registered in %v; the last in %v; then /apis (aggregated) %v, /openapi/v3 %v (builds every document), one group version's document %v; heap %.0f KiB per kind",
		n, all, last, aggregated, root, doc, held/float64(n)/1024)
}
