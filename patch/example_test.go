package patch_test

import (
	"fmt"
	"reflect"
	"time"

	"github.com/kapi-dev/kapi"

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

func ExampleSchema_Apply() {
	type spec struct {
		Replicas int    `json:"replicas,omitempty"`
		Color    string `json:"color,omitempty"`
	}
	type widget struct {
		Spec spec `json:"spec"`
	}
	s, _ := patch.SchemaOf(reflect.TypeFor[widget]())
	opts := patch.ApplyOptions{Manager: "alice", APIVersion: "example.com/v1", Now: kapi.NewTime(time.Unix(0, 0))}

	obj, managed, _ := s.Apply(nil, []byte(`{"spec":{"replicas":1}}`), nil, opts)
	fmt.Println(string(obj), string(managed[0].FieldsV1.Raw))

	opts.Manager = "bob"
	_, _, err := s.Apply(obj, []byte(`{"spec":{"replicas":2,"color":"red"}}`), managed, opts)
	fmt.Println(err)

	opts.Force = true
	obj, managed, _ = s.Apply(obj, []byte(`{"spec":{"replicas":2,"color":"red"}}`), managed, opts)
	fmt.Println(string(obj), len(managed))
	// Output:
	// {"spec":{"replicas":1}} {"f:spec":{"f:replicas":{}}}
	// Apply failed with 1 conflict: conflict with "alice": .spec.replicas
	// {"spec":{"color":"red","replicas":2}} 1
}

func ExampleSchema_Update() {
	type widget struct {
		Spec struct {
			Color string `json:"color,omitempty"`
		} `json:"spec"`
	}
	s, _ := patch.SchemaOf(reflect.TypeFor[widget]())
	managed, _ := s.Update(nil, []byte(`{"spec":{"color":"red"}}`), nil, patch.UpdateOptions{Manager: "kubectl-create", APIVersion: "example.com/v1"})
	fmt.Println(managed[0].Manager, managed[0].Operation, string(managed[0].FieldsV1.Raw))
	// Output:
	// kubectl-create Update {"f:spec":{".":{},"f:color":{}}}
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
