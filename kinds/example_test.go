package kinds_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
)

// A kind defined from a schema while the server serves.
func ExampleRegister() {
	srv, _ := apiserver.New()
	defer srv.Close()
	s, _ := schema.Parse([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{"color":{"type":"string"}}}}}`))
	err := kinds.Register(srv, kinds.Definition{
		Group: "example.com", Kind: "Widget", Plural: "widgets", Namespaced: true,
		Versions: []kinds.Version{{Name: "v1", Served: true, Storage: true, Schema: s}},
	})
	fmt.Println(err)

	body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red","size":3}}`
	req := httptest.NewRequest("POST", "/apis/example.com/v1/namespaces/default/widgets", strings.NewReader(body))
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	fmt.Println(w.Code, w.Header().Get("Warning"))

	fmt.Println(kinds.Remove(srv, "example.com", "Widget"))
	// Output:
	// <nil>
	// 201 299 - "unknown field \"spec.size\""
	// <nil>
}
