package schema_test

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

// BenchmarkHTTPRoute is the schema engine's work on one write of a
// Gateway API HTTPRoute (a 1.5 KiB object under a 120 KiB schema with
// list-map keys and nested defaults): prune, default and validate a
// freshly decoded object, and each step alone.
func BenchmarkHTTPRoute(b *testing.B) {
	s, obj := httpRoute(b)
	data, _ := json.Marshal(obj)
	defaults := s.PrunedDefaults()
	fresh := func() any {
		v, err := schema.DecodeJSON(data)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fresh()
		}
	})
	b.Run("decode+prune+default+validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v := fresh()
			s.Prune(v)
			defaults.SetDefaults(v)
			if errs := s.Validate(v); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
	pruned := fresh()
	s.Prune(pruned)
	defaults.SetDefaults(pruned)
	b.Run("validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Validate(pruned)
		}
	})
	b.Run("prune", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Prune(pruned)
		}
	})
	b.Run("default", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			defaults.SetDefaults(pruned)
		}
	})
}
