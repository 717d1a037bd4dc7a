package schema_test

import (
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/schema"
)

// widgetSchema is the openAPIV3Schema of a CustomResourceDefinition
// version.
const widgetSchema = `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["color"],
      "properties": {
        "color": {"type": "string", "enum": ["red", "green", "blue"]},
        "replicas": {"type": "integer", "minimum": 0, "default": 1},
        "ports": {
          "type": "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["port"],
          "items": {"type": "object", "required": ["port"], "properties": {
            "port": {"type": "integer"},
            "protocol": {"type": "string", "default": "TCP"}
          }}
        }
      }
    }
  }
}`

func ExampleParse() {
	s, err := schema.Parse([]byte(widgetSchema))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Properties["spec"].Properties["color"].Enum)
	_, err = schema.Parse([]byte(`{"type": "object", "propertes": {}}`))
	fmt.Println(err)
	// Output:
	// [red green blue]
	// unknown field "propertes"
}

func ExampleSchema_Check() {
	s, _ := schema.Parse([]byte(`{"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}}`))
	for _, e := range s.Check("spec.versions[0].schema.openAPIV3Schema") {
		fmt.Println(e)
	}
	// Output:
	// spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields
}

func ExampleSchema_Validate() {
	s, _ := schema.Parse([]byte(widgetSchema))
	obj, _ := schema.DecodeJSON([]byte(`{"spec": {"color": "purple", "replicas": -1, "ports": [{"port": 80}, {"port": 80}]}}`))
	for _, e := range s.Validate(obj) {
		fmt.Printf("%s: %s\n", e.Type, e)
	}
	// Output:
	// FieldValueNotSupported: spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"
	// FieldValueDuplicate: spec.ports[1]: Duplicate value: {"port":80}
	// FieldValueInvalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0
}

func ExampleSchema_Prune() {
	s, _ := schema.Parse([]byte(widgetSchema))
	obj, _ := schema.DecodeJSON([]byte(`{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
		"spec": {"color": "red", "colour": "red", "ports": [{"port": 80, "name": "http"}]}}`))
	for _, path := range s.Prune(obj) {
		fmt.Printf("unknown field %q\n", path)
	}
	b, _ := json.Marshal(obj)
	fmt.Println(string(b))
	// Output:
	// unknown field "spec.colour"
	// unknown field "spec.ports[0].name"
	// {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","ports":[{"port":80}]}}
}

func ExampleSchema_SetDefaults() {
	s, _ := schema.Parse([]byte(widgetSchema))
	defaults := s.PrunedDefaults() // once, when the schema is served
	obj, _ := schema.DecodeJSON([]byte(`{"spec": {"color": "red", "ports": [{"port": 80}]}}`))
	defaults.SetDefaults(obj)
	b, _ := json.Marshal(obj)
	fmt.Println(string(b))
	// Output:
	// {"spec":{"color":"red","ports":[{"port":80,"protocol":"TCP"}],"replicas":1}}
}

func ExampleSchema_ListStrategy() {
	s, _ := schema.Parse([]byte(widgetSchema))
	listType, keys := s.At("spec", "ports").ListStrategy()
	fmt.Println(listType, keys)
	fmt.Println(s.At("spec").MapStrategy())
	// Output:
	// map [port]
	// granular
}
