package schema_test

import (
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

// FuzzParse reads schema documents: Parse never panics, and neither do
// Check, Prune, SetDefaults, Validate and ValidateUpdate of what it
// accepts, on any object.
func FuzzParse(f *testing.F) {
	f.Add([]byte(widgetSchema), []byte(`{"spec":{"color":"red","ports":[{"port":1},{"port":1}]}}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}}}`), []byte(`{"a":1.5}`))
	f.Add([]byte(`{"type":"object","additionalProperties":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}`),
		[]byte(`{"a":{"apiVersion":1,"metadata":{"name":"..","x":1}}}`))
	f.Add([]byte(`{"type":"array","items":[{"type":"string"}],"x-kubernetes-list-type":"map","default":[null]}`), []byte(`[null,1]`))
	f.Add([]byte(`{"type":"integer","multipleOf":0,"minimum":1e300,"format":"int32","enum":[1,"a",null],"not":{"type":"integer"}}`), []byte(`1e300`))
	f.Fuzz(func(t *testing.T, doc, object []byte) {
		s, err := schema.Parse(doc)
		if err != nil {
			return
		}
		s.Check("openAPIV3Schema")
		obj, err := schema.DecodeJSON(object)
		if err != nil {
			return
		}
		old, _ := schema.DecodeJSON(object)
		s.Prune(obj)
		s.PrunedDefaults().SetDefaults(obj)
		s.Validate(obj)
		s.ValidateUpdate(obj, old)
		s.ValidateUpdate(obj, obj)
		s.ValidFieldPath(string(object))
	})
}
