package apiserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// kubectlTable is the Accept header kubectl get sends.
const kubectlTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// BenchmarkTableList is kubectl get on a collection of 2,000 widgets: a
// Table with each row's PartialObjectMetadata (includeObject=Metadata).
func BenchmarkTableList(b *testing.B) {
	srv := newBenchServer(b)
	path := widgetsIn("default")
	for i := range 2000 {
		serve(b, srv, http.MethodPost, path, creatable("default", fmt.Sprintf("w-%04d", i)), http.StatusCreated)
	}
	get := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path+"?limit=500000", nil)
		req.Header.Set("Accept", kubectlTable)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("HTTP %d: %.200s", rec.Code, rec.Body.Bytes())
		}
		return rec
	}
	b.SetBytes(int64(get().Body.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		get()
	}
}
