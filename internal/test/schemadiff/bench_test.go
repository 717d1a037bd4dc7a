package schemadiff_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/schema"
)

// BenchmarkEngines is one write's schema work (prune, default, validate)
// on a Gateway API HTTPRoute, by each engine, from the same decoded
// object (a deep copy per operation, as neither may keep the input).
func BenchmarkEngines(b *testing.B) {
	schemaJSON, err := os.ReadFile("../../../schema/testdata/httproute.schema.json")
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile("../../../schema/testdata/httproute.json")
	if err != nil {
		b.Fatal(err)
	}
	obj, err := schema.DecodeJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	k, o := newKubeEngine(b, schemaJSON), newOurEngine(b, schemaJSON)
	if got, want := o.run(obj), k.run(obj); len(got.errors)+len(want.errors) > 0 {
		b.Fatalf("the object is invalid: %v %v", got.errors, want.errors)
	}
	b.Run("kapi", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			o.run(obj)
		}
	})
	b.Run("apiextensions-apiserver", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k.run(obj)
		}
	})
	b.Run("deepcopy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			runtime.DeepCopyJSONValue(obj)
		}
	})
}

// BenchmarkRules is one write's x-kubernetes-validations work on a
// Gateway API HTTPRoute (its rules compiled once beforehand): on create,
// and on an update that leaves the object as it was, by each engine.
func BenchmarkRules(b *testing.B) {
	schemaJSON, err := os.ReadFile("../../../schema/testdata/httproute.schema.json")
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile("../../../schema/testdata/httproute.json")
	if err != nil {
		b.Fatal(err)
	}
	obj, err := schema.DecodeJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	s, err := schema.Parse(schemaJSON)
	if err != nil {
		b.Fatal(err)
	}
	k := newKubeEngine(b, schemaJSON)
	obj = k.run(obj).object
	old := runtime.DeepCopyJSONValue(obj)
	set := celEngine.CompileRules(s)
	if got, want := ourText(set.Validate(obj, nil)), k.rules(obj, nil); len(got)+len(want) > 0 {
		b.Fatalf("the object fails rules: %v %v", got, want)
	}
	b.Run("create/kapi", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			set.Validate(obj, nil)
		}
	})
	b.Run("create/apiextensions-apiserver", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k.rules(obj, nil)
		}
	})
	b.Run("update/kapi", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			set.Validate(obj, old)
		}
	})
	b.Run("update/apiextensions-apiserver", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k.rules(obj, old)
		}
	})
}
