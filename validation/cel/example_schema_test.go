package cel_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation/cel"
)

// The x-kubernetes-validations rules of a CustomResourceDefinition's
// schema: checked as kube-apiserver checks a CRD, then compiled once and
// run on each write.
func ExampleEngine_CompileRules() {
	s, err := schema.Parse([]byte(`{
	  "type": "object",
	  "properties": {
	    "spec": {
	      "type": "object",
	      "properties": {
	        "replicas": {"type": "integer"},
	        "maxReplicas": {"type": "integer"},
	        "class": {"type": "string", "maxLength": 32}
	      },
	      "x-kubernetes-validations": [
	        {"rule": "self.replicas <= self.maxReplicas", "messageExpression": "self.replicas > 10 ? 'far too many replicas' : 'replicas must not exceed maxReplicas'"},
	        {"rule": "self.class == oldSelf.class", "message": "class is immutable", "fieldPath": ".class", "reason": "FieldValueForbidden"}
	      ]
	    }
	  }
	}`))
	if err != nil {
		panic(err)
	}
	engine, err := cel.New()
	if err != nil {
		panic(err)
	}
	// What kube-apiserver refuses a CRD for: a misspelt field does not compile.
	bad, _ := schema.Parse([]byte(`{"type":"object","properties":{"n":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.m > 0"}]}`))
	for _, e := range engine.CheckRules(bad, "spec.validation.openAPIV3Schema") {
		fmt.Println(e.Field, "|", e.Detail)
	}
	fmt.Println(len(engine.CheckRules(s, "spec.validation.openAPIV3Schema")), "errors in the good schema")

	rules := engine.CompileRules(s)
	decode := func(text string) any { v, _ := schema.DecodeJSON([]byte(text)); return v }
	old := decode(`{"spec":{"replicas":1,"maxReplicas":3,"class":"gold"}}`)
	fmt.Println(rules.Validate(decode(`{"spec":{"replicas":5,"maxReplicas":3,"class":"gold"}}`), nil))
	fmt.Println(rules.Validate(decode(`{"spec":{"replicas":2,"maxReplicas":3,"class":"silver"}}`), old))
	// Output:
	// spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule | compilation failed: ERROR: <input>:1:5: undefined field 'm'
	//  | self.m > 0
	//  | ....^
	// 0 errors in the good schema
	// [spec: Invalid value: replicas must not exceed maxReplicas]
	// [spec.class: Forbidden: class is immutable]
}
