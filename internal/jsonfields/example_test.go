package jsonfields_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/kapi-dev/kapi/internal/jsonfields"
)

type Meta struct {
	Name string `json:"name"`
}

type Widget struct {
	*Meta
	Color    string `json:"color"`
	Replicas int32  `json:"replicas,omitempty,string"`
	//lint:ignore U1000 unexported on purpose: the example shows Of skipping it
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

type Loopy *Loopy

func ExampleDeref() {
	fmt.Println(jsonfields.Deref(reflect.TypeFor[**Widget](), nil))
	fmt.Println(jsonfields.Deref(reflect.TypeFor[Loopy](), nil))
	// Output:
	// jsonfields_test.Widget true
	// jsonfields_test.Loopy false
}

func ExampleDecodesItself() {
	fmt.Println(jsonfields.DecodesItself(reflect.TypeFor[json.RawMessage]()))
	fmt.Println(jsonfields.DecodesItself(reflect.TypeFor[Widget]()))
	// Output:
	// true
	// false
}

func ExampleImplements() {
	// time.Time's UnmarshalJSON has a pointer receiver: encoding/json finds
	// it on a time.Time it can address.
	fmt.Println(jsonfields.Implements(reflect.TypeFor[time.Time](), reflect.TypeFor[json.Unmarshaler]()))
	// Output:
	// true
}

func ExampleMapKeyDecodes() {
	for _, k := range []reflect.Type{reflect.TypeFor[int8](), reflect.TypeFor[time.Time](), reflect.TypeFor[float64]()} {
		fmt.Println(k, jsonfields.MapKeyDecodes(k), jsonfields.MapKeyEncodes(k))
	}
	// Output:
	// int8 true true
	// time.Time true true
	// float64 false false
}
