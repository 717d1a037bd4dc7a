package kinds_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/kinds"
)

// BenchmarkCreate is a POST of a custom resource through the handler: its
// body decoded (fields checked for repeats), pruned, defaulted, validated
// against its schema and stored in memory.
func BenchmarkCreate(b *testing.B) {
	srv, err := apiserver.New()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	if err := kinds.Register(srv, widgetDefinition(b)); err != nil {
		b.Fatal(err)
	}
	const path = "/apis/example.com/v1/namespaces/default/widgets"
	body := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"NAME","namespace":"default","labels":{"app":"web","tier":"front"}},` +
		`"spec":{"color":"red","replicas":3,"ports":[{"name":"http","port":80},{"name":"https","port":443}],"free":{"a":{"b":[1,2,3]},"c":"d"}}}`)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(bytes.Replace(body, []byte("NAME"), fmt.Appendf(nil, "w-%d", i), 1)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("%d: %s", rec.Code, rec.Body)
		}
	}
}
