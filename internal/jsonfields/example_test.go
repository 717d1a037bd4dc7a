package jsonfields_test

import (
	"fmt"
	"reflect"

	"github.com/kapi-dev/kapi/internal/jsonfields"
)

type Meta struct {
	Name string `json:"name"`
}

type Widget struct {
	*Meta
	Color    string `json:"color"`
	Replicas int32  `json:"replicas,omitempty,string"`
	internal int
}

func ExampleOf() {
	for _, f := range jsonfields.Of(reflect.TypeFor[Widget]()) {
		fmt.Println(f.Name, f.Index, f.Optional, f.OmitEmpty, f.Quoted)
	}
	// Output:
	// name [0 0] true false false
	// color [1] false false false
	// replicas [2] false true true
}

func ExampleNamed() {
	f, ok := jsonfields.Named(reflect.TypeFor[Widget](), "color")
	fmt.Println(f.StructField.Name, f.Index, ok)
	_, ok = jsonfields.Named(reflect.TypeFor[Widget](), "internal")
	fmt.Println(ok)
	// Output:
	// Color [1] true
	// false
}
