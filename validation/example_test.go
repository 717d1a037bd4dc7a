package validation_test

import (
	"fmt"
	"reflect"

	"github.com/kapi-dev/kapi/validation"
)

type PortSpec struct {
	Name     string `json:"name" validate:"required,maxLength=15" pattern:"^[a-z][-a-z0-9]*$"`
	Port     int32  `json:"port" validate:"minimum=1,maximum=65535"`
	Protocol string `json:"protocol,omitempty" validate:"enum=TCP;UDP;SCTP" default:"TCP"`
}

func ExampleFor() {
	schema, err := validation.For(reflect.TypeFor[PortSpec]())
	if err != nil {
		panic(err)
	}
	p := &PortSpec{Name: "HTTP", Port: 0}
	schema.Default(p)
	fmt.Println("protocol:", p.Protocol)
	for _, e := range schema.Validate(p, nil) {
		fmt.Println(e)
	}
	// Output:
	// protocol: TCP
	// name: Invalid value: "HTTP": must match '^[a-z][-a-z0-9]*$'
	// port: Invalid value: 0: must be between 1 and 65535, inclusive
}

func ExampleRulesOf() {
	f, _ := reflect.TypeFor[PortSpec]().FieldByName("Protocol")
	rules, _ := validation.RulesOf(f)
	fmt.Println(rules.Enum, rules.Default)
	// Output:
	// [TCP UDP SCTP] TCP
}

func ExampleSchema_Validate_immutable() {
	type Volume struct {
		Size int64 `json:"size" validate:"immutable"`
	}
	schema, _ := validation.For(reflect.TypeFor[Volume]())
	fmt.Println(schema.Validate(&Volume{Size: 20}, &Volume{Size: 10}))
	// Output:
	// [size: Invalid value: null: field is immutable]
}
