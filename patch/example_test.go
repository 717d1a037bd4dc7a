package patch_test

import (
	"fmt"
	"reflect"

	"github.com/kapi-dev/kapi/patch"
)

func ExampleApply() {
	widget := []byte(`{"spec":{"color":"red","replicas":1}}`)

	merged, _ := patch.Apply(patch.MergePatch, widget, []byte(`{"spec":{"color":"blue"}}`))
	fmt.Println(string(merged))

	_, err := patch.Apply(patch.JSONPatch, widget, []byte(`[{"op":"test","path":"/spec/color","value":"green"}]`))
	fmt.Println(err != nil)
	// Output:
	// {"spec":{"color":"blue","replicas":1}}
	// true
}

func ExampleSchema_Patch() {
	type Port struct {
		Name string `json:"name"`
		Port int    `json:"port,omitempty"`
	}
	type Spec struct {
		Ports []Port `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	}
	type Service struct {
		Spec Spec `json:"spec"`
	}
	schema, err := patch.SchemaOf(reflect.TypeFor[Service]())
	if err != nil {
		panic(err)
	}
	service := []byte(`{"spec":{"ports":[{"name":"http","port":80},{"name":"metrics","port":9090}]}}`)

	// Add grpc, change http, delete metrics.
	merged, _ := schema.Patch(patch.StrategicMergePatch, service,
		[]byte(`{"spec":{"ports":[{"name":"grpc","port":9000},{"name":"http","port":8080},{"name":"metrics","$patch":"delete"}]}}`))
	fmt.Println(string(merged))

	// Put http first.
	ordered, _ := schema.Patch(patch.StrategicMergePatch, merged,
		[]byte(`{"spec":{"$setElementOrder/ports":[{"name":"http"},{"name":"grpc"}]}}`))
	fmt.Println(string(ordered))
	// Output:
	// {"spec":{"ports":[{"name":"grpc","port":9000},{"name":"http","port":8080}]}}
	// {"spec":{"ports":[{"name":"http","port":8080},{"name":"grpc","port":9000}]}}
}
