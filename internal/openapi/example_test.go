package openapi_test

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/openapi"
)

type Gadget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            struct {
		Size int32 `json:"size"`
	} `json:"spec"`
}

// The document of one group version, and the schema of its resource.
func ExampleGroupVersion() {
	doc, err := openapi.GroupVersion("example.com", "v1", []openapi.Resource{{
		Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets", Namespaced: true,
		Type: reflect.TypeFor[Gadget](),
	}})
	if err != nil {
		panic(err)
	}
	var d struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	_ = json.Unmarshal(doc, &d)
	_, ok := d.Components.Schemas["com.example.v1.Gadget"]
	fmt.Println(ok)
	// Output: true
}
