package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/faulty"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestClientGoRetriesStoreFaults: while the store is unavailable (say, an
// etcd leader election), kapi answers 503 with Retry-After; client-go
// waits and sends the create again, and the caller gets the created object
// without seeing an error.
func TestClientGoRetriesStoreFaults(t *testing.T) {
	store := faulty.New(memory.New())
	srv := apiservertest.New(t, func(s *apiserver.Server) error {
		return apiserver.Register(s, apiserver.Resource[gate]{
			Group: "faults.example.com", Version: "v1", Kind: "Gate", Plural: "gates",
		})
	}, apiserver.WithStorage(store))

	var log requestLog
	client, err := dynamic.NewForConfig(restConfig(&server{URL: srv.URL}, &log))
	if err != nil {
		t.Fatal(err)
	}
	gates := client.Resource(schema.GroupVersionResource{Group: "faults.example.com", Version: "v1", Resource: "gates"})

	// The store refuses the next two creates, as etcd without a leader.
	store.Inject(faulty.Fault{Ops: faulty.Create, Count: 2, Err: fmt.Errorf("%w: etcdserver: no leader", storage.ErrUnavailable)})
	created, err := gates.Create(ctxFor(t, time.Minute), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "faults.example.com/v1", "kind": "Gate", "metadata": map[string]any{"name": "through"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through two 503s: %v (client-go did not retry)", err)
	}
	if created.GetName() != "through" || created.GetResourceVersion() == "" {
		t.Errorf("created %v", created.Object)
	}
	var codes []int
	for _, r := range log.all() {
		if r.Method == http.MethodPost {
			codes = append(codes, r.Status)
		}
	}
	if want := []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusCreated}; !slices.Equal(codes, want) {
		t.Errorf("POST codes %v, want %v", codes, want)
	}
}
