package apiserver_test

import (
	"fmt"
	"net/http"
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
	benchGets(b, srv, path+"?limit=500000", kubectlTable)
}
