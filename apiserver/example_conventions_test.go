package apiserver_test

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
)

// Gauge breaks two conventions: a float in spec and Go's int.
type Gauge struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            GaugeSpec `json:"spec,omitempty"`
}

type GaugeSpec struct {
	Threshold float64 `json:"threshold,omitempty"`
	Samples   int     `json:"samples,omitempty"`
}

// Under WithStrictConventions, Register refuses a type that breaks the
// Kubernetes API conventions; without it, the server logs them as
// warnings and serves the type.
func ExampleWithStrictConventions() {
	srv, err := apiserver.New(apiserver.WithStrictConventions())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	err = apiserver.Register(srv, apiserver.Resource[Gauge]{Group: "example.com", Version: "v1", Kind: "Gauge", Plural: "gauges"})
	fmt.Println(errors.Is(err, apiserver.ErrConventions))
	fmt.Println(err)
	// Output:
	// true
	// apiserver: register example.com/v1, Kind=Gauge: the type breaks Kubernetes API conventions: spec.threshold: a float64 in spec does not round-trip between languages and encodings; use an integer (with a unit: milliCPU, basis points) or a resource.Quantity-like string (float-in-spec); spec.samples: Go's int has the platform's size; use int32 or int64 (platform-int)
}

// A resource with CreateOnUpdate creates an object a PUT names that does
// not exist, as kube-apiserver does for Leases: 201 Created.
func ExampleResource_createOnUpdate() {
	srv, err := apiserver.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	err = apiserver.Register(srv, apiserver.Resource[Note]{
		Group: "notes.example.com", Version: "v1", Kind: "Note", Plural: "notes",
		CreateOnUpdate: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	put := func() int {
		req, _ := http.NewRequest(http.MethodPut, ts.URL+"/apis/notes.example.com/v1/notes/first",
			strings.NewReader(`{"apiVersion":"notes.example.com/v1","kind":"Note","metadata":{"name":"first"},"spec":{"text":"hi"}}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fmt.Println(put(), put())
	// Output: 201 200
}
