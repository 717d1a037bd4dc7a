package cel_test

import (
	"os"
	"testing"

	"github.com/kapi-dev/kapi/validation/cel"
)

// BenchmarkCompileRules is the work of serving a Gateway API HTTPRoute
// definition: checking its rules as a CRD is checked, and compiling them.
func BenchmarkCompileRules(b *testing.B) {
	data, err := os.ReadFile("../../schema/testdata/httproute.schema.json")
	if err != nil {
		b.Fatal(err)
	}
	s := mustSchema(b, string(data))
	engine, err := cel.New()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("CheckRules", func(b *testing.B) {
		for b.Loop() {
			if errs := engine.CheckRules(s, "spec.validation.openAPIV3Schema"); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
	b.Run("CompileRules", func(b *testing.B) {
		for b.Loop() {
			engine.CompileRules(s)
		}
	})
}
