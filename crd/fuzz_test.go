package crd_test

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/crd"
)

// FuzzValidate decodes any definition, defaults and validates it (as
// created, and as an update of the seed), and makes the Definition of any
// it accepts: none may panic, and an accepted one must give a Definition.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(widgets))
	f.Add([]byte(`{"spec":{"versions":[{"name":"v1","storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}},"selectableFields":[{"jsonPath":".a"},{"jsonPath":".a.b"},{"jsonPath":"."},{"jsonPath":".["}]}]}}`))
	f.Add([]byte(`{"spec":{"conversion":{"strategy":"Webhook","webhook":{"clientConfig":{"service":{"name":"","namespace":"","path":"//"}}}}}}`))
	f.Add([]byte(`{"spec":{"versions":[{"name":"v1","storage":true,"schema":{"openAPIV3Schema":"x"}},{"name":"v1","schema":{"openAPIV3Schema":{}}}]}}`))
	var seed crd.CustomResourceDefinition
	if err := json.Unmarshal([]byte(widgets), &seed); err != nil {
		f.Fatal(err)
	}
	crd.SetDefaults(&seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		var c crd.CustomResourceDefinition
		if json.Unmarshal(data, &c) != nil {
			return
		}
		crd.SetDefaults(&c)
		created := crd.Validate(&c, nil)
		_ = crd.Validate(&c, &seed)
		_ = crd.ValidateStatus(&c)
		for _, e := range created {
			_ = e.Error()
		}
		if len(created) == 0 {
			if _, err := crd.Definition(&c); err != nil {
				t.Fatalf("an accepted definition has no Definition: %v", err)
			}
		}
	})
}
