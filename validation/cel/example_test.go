package cel_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/validation"
	"github.com/kapi-dev/kapi/validation/cel"
)

func ExampleNew() {
	type Spec struct {
		Range Range `json:"range" rule:"self.min <= self.max" ruleMessage:"min must not exceed max"`
	}
	engine, err := cel.New()
	if err != nil {
		panic(err)
	}
	schema, err := validation.For(reflect.TypeFor[Spec](), validation.WithRuleEngine(engine))
	if err != nil {
		panic(err)
	}
	fmt.Println(schema.Validate(&Spec{Range: Range{Min: 2, Max: 1}}, nil))
	// Output:
	// [range: Invalid value: min must not exceed max]
}

// A server whose types' rule tags are CEL.
func Example_server() {
	engine, err := cel.New()
	if err != nil {
		panic(err)
	}
	api, err := apiserver.New(apiserver.WithRuleEngine(engine))
	if err != nil {
		panic(err)
	}
	err = apiserver.Register(api, apiserver.Resource[Pool]{Group: "example.com", Version: "v1", Kind: "Pool", Plural: "pools"})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.Close()
	resp, err := http.Post(srv.URL+"/apis/example.com/v1/pools", "application/json",
		strings.NewReader(`{"metadata":{"name":"p"},"spec":{"range":{"min":3,"max":1}}}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var st kapi.Status
	_ = json.NewDecoder(resp.Body).Decode(&st)
	fmt.Println(st.Code, st.Message)
	// Output:
	// 422 Pool.example.com "p" is invalid: spec.range: Invalid value: min must not exceed max
}
