package schemadiff_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/race"
)

// source is where generators take their choices: fuzz bytes or a seeded
// random source.
type source interface {
	// intn returns a number in [0, n).
	intn(n int) int
}

type bytesSource struct{ b []byte }

func (s *bytesSource) intn(n int) int {
	if n <= 1 {
		return 0
	}
	if len(s.b) == 0 {
		return 0
	}
	v := int(s.b[0])
	s.b = s.b[1:]
	return v % n
}

type randSource struct{ r *rand.Rand }

func (s randSource) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return s.r.IntN(n)
}

// conforming is a source whose values follow the schema: the right
// types, enum values, required members, no unknown fields, so that
// objects are mostly valid and defaulting and pruning of known fields are
// what is compared.
type conforming struct{ source }

func isConforming(src source) bool {
	_, ok := src.(conforming)
	return ok
}

func chance(src source, percent int) bool { return src.intn(100) < percent }

func pick[T any](src source, l ...T) T { return l[src.intn(len(l))] }

var (
	names    = []string{"a", "b", "name", "port", "items", "spec", "metadata", "kind", "x-y"}
	patterns = []string{"^[a-z]+$", "^a", "[0-9]", "^$", "^.{2,4}$"}
	formats  = []string{"date-time", "date", "ipv4", "ipv6", "cidr", "uuid", "byte", "hostname", "int32", "int64", "float", "double", "email", "duration", "bogus", "k8s-short-name"}
	strs     = []string{"", "a", "ab", "abc", "A", "10.0.0.1", "2024-01-02", "2024-01-02T03:04:05Z", "x y", "äöü", "::1", "aGk="}
)

// genRoot makes a CRD root schema whose spec is generated.
func genRoot(src source) map[string]any {
	root := map[string]any{"type": "object", "properties": map[string]any{
		"apiVersion": map[string]any{"type": "string"},
		"kind":       map[string]any{"type": "string"},
		"metadata":   map[string]any{"type": "object"},
		"spec":       genNode(src, 3),
	}}
	if chance(src, 10) {
		root["properties"].(map[string]any)["status"] = genNode(src, 2)
	}
	if chance(src, 5) {
		root["required"] = []any{"spec"}
	}
	return root
}

// genNode makes a schema that is mostly structural.
func genNode(src source, depth int) map[string]any {
	kinds := []string{"string", "integer", "number", "boolean", "int-or-string", "preserve"}
	if depth > 0 {
		kinds = append(kinds, "object", "object", "map", "array", "array", "embedded")
	}
	s := map[string]any{}
	switch pick(src, kinds...) {
	case "string":
		s["type"] = "string"
		if chance(src, 20) {
			s["enum"] = []any{pick(src, strs...), pick(src, strs...)}
		}
		if chance(src, 20) {
			s["maxLength"] = src.intn(4)
		}
		if chance(src, 15) {
			s["minLength"] = src.intn(3)
		}
		if chance(src, 20) {
			s["pattern"] = pick(src, patterns...)
		}
		if chance(src, 20) {
			s["format"] = pick(src, formats...)
		}
	case "integer", "number":
		s["type"] = pick(src, "integer", "number")
		if chance(src, 25) {
			s["minimum"] = pick[any](src, 0, 1, -5, 0.5)
			s["exclusiveMinimum"] = chance(src, 30)
		}
		if chance(src, 25) {
			s["maximum"] = pick[any](src, 10, 100, 2.5, 1000000)
			s["exclusiveMaximum"] = chance(src, 30)
		}
		if chance(src, 15) {
			s["multipleOf"] = pick[any](src, 2, 3, 0.5, 0.1)
		}
		if chance(src, 15) {
			s["format"] = pick(src, formats...)
		}
		if chance(src, 10) {
			s["enum"] = []any{1, 2, 2.5}
		}
	case "boolean":
		s["type"] = "boolean"
	case "int-or-string":
		s["x-kubernetes-int-or-string"] = true
		if chance(src, 70) {
			s["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
		}
		if chance(src, 20) {
			s["pattern"] = pick(src, patterns...)
		}
	case "preserve":
		s["x-kubernetes-preserve-unknown-fields"] = true
		if chance(src, 40) {
			s["type"] = "object"
		}
	case "object":
		s["type"] = "object"
		props := map[string]any{}
		for range src.intn(4) {
			props[pick(src, names...)] = genNode(src, depth-1)
		}
		if len(props) > 0 {
			s["properties"] = props
		}
		if chance(src, 25) && len(props) > 0 {
			s["required"] = []any{pick(src, slices.Sorted(maps.Keys(props))...)}
		}
		if chance(src, 10) {
			s["x-kubernetes-preserve-unknown-fields"] = true
		}
		if chance(src, 10) {
			s["x-kubernetes-map-type"] = pick(src, "atomic", "granular")
		}
		if chance(src, 10) {
			s["maxProperties"] = src.intn(3)
		}
		if chance(src, 10) {
			s["minProperties"] = src.intn(3)
		}
	case "map":
		s["type"] = "object"
		s["additionalProperties"] = genNode(src, depth-1)
		if chance(src, 10) {
			s["maxProperties"] = 1 + src.intn(2)
		}
	case "array":
		s["type"] = "array"
		switch src.intn(4) {
		case 0:
			s["x-kubernetes-list-type"] = "set"
			s["items"] = map[string]any{"type": pick(src, "string", "integer", "number")}
		case 1:
			s["x-kubernetes-list-type"] = "map"
			keys := []any{"name"}
			props := map[string]any{"name": map[string]any{"type": "string"}, "port": map[string]any{"type": "integer"}, "v": genNode(src, depth-1)}
			if chance(src, 30) {
				keys = append(keys, "port")
			}
			s["x-kubernetes-list-map-keys"] = keys
			s["items"] = map[string]any{"type": "object", "required": keys, "properties": props}
		default:
			s["items"] = genNode(src, depth-1)
		}
		if chance(src, 20) {
			s["maxItems"] = src.intn(3)
		}
		if chance(src, 15) {
			s["minItems"] = src.intn(2)
		}
	case "embedded":
		s["type"] = "object"
		s["x-kubernetes-embedded-resource"] = true
		if chance(src, 60) {
			s["x-kubernetes-preserve-unknown-fields"] = true
		} else {
			s["properties"] = map[string]any{"spec": genNode(src, depth-1)}
		}
	}
	if chance(src, 10) {
		s["nullable"] = true
	}
	if chance(src, 10) {
		s["description"] = "generated"
	}
	if chance(src, 12) {
		s["default"] = genValue(src, s, 1)
	}
	if chance(src, 8) {
		junctor := pick(src, "allOf", "anyOf", "oneOf")
		var clauses []any
		for range 1 + src.intn(2) {
			clauses = append(clauses, genClause(src, s))
		}
		if _, ok := s[junctor]; !ok {
			s[junctor] = clauses
		}
	}
	if chance(src, 4) {
		s["not"] = genClause(src, s)
	}
	if chance(src, 3) {
		// Something a CRD refuses, for the check's messages.
		switch pick(src, "uniqueItems", "x-kubernetes-list-type", "type", "x-kubernetes-map-type", "additionalProperties") {
		case "uniqueItems":
			s["uniqueItems"] = true
		case "x-kubernetes-list-type":
			s["x-kubernetes-list-type"] = "bogus"
		case "type":
			s["type"] = "null"
		case "x-kubernetes-map-type":
			s["x-kubernetes-map-type"] = "atomic"
		case "additionalProperties":
			s["additionalProperties"] = false
		}
	}
	return s
}

// genClause makes an allOf/anyOf/oneOf/not clause that restricts what s
// specifies.
func genClause(src source, s map[string]any) map[string]any {
	c := map[string]any{}
	switch s["type"] {
	case "string":
		switch src.intn(3) {
		case 0:
			c["maxLength"] = src.intn(3)
		case 1:
			c["pattern"] = pick(src, patterns...)
		default:
			c["enum"] = []any{pick(src, strs...)}
		}
	case "integer", "number":
		if chance(src, 50) {
			c["minimum"] = src.intn(5)
		} else {
			c["maximum"] = src.intn(5)
		}
	case "object":
		if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 {
			c["required"] = []any{pick(src, slices.Sorted(maps.Keys(props))...)}
		} else {
			c["minProperties"] = 1
		}
	case "array":
		c["maxItems"] = src.intn(3)
	default:
		c["minLength"] = 1
	}
	return c
}

// genValue makes a value for a schema, most often of the right type.
func genValue(src source, s map[string]any, depth int) any {
	strict := isConforming(src)
	if s == nil || (!strict && chance(src, 8)) {
		return genAny(src, depth)
	}
	if !strict && chance(src, 4) {
		return nil
	}
	if enum, ok := s["enum"].([]any); ok && (strict || chance(src, 60)) {
		return enum[src.intn(len(enum))]
	}
	if s["x-kubernetes-int-or-string"] == true {
		if chance(src, 50) {
			return int64(src.intn(20))
		}
		return pick(src, strs...)
	}
	switch s["type"] {
	case "string":
		if strict {
			if sample, ok := formatSamples[s["format"]]; ok {
				return sample
			}
			if min, ok := s["minLength"].(float64); ok && min > 0 {
				return "abcdefgh"
			}
			return ""
		}
		return pick(src, strs...)
	case "integer":
		if strict {
			if min, ok := s["minimum"].(float64); ok {
				return int64(min) + 1
			}
			return int64(1)
		}
		return pick[any](src, int64(0), int64(1), int64(-3), int64(7), int64(10), int64(2147483648), 1.5)
	case "number":
		return pick[any](src, int64(0), 1.5, 2.5, -0.5, 1e6+0.5, int64(100))
	case "boolean":
		return chance(src, 50)
	case "array":
		items, _ := s["items"].(map[string]any)
		var l []any
		n := src.intn(4)
		if strict {
			n = 1 // items rarely differ in their keys or set values
		}
		for range n {
			l = append(l, genValue(src, items, depth+1))
		}
		if l == nil {
			l = []any{}
		}
		return l
	case "object", nil:
		m := map[string]any{}
		if s["x-kubernetes-embedded-resource"] == true {
			if chance(src, 80) {
				m["apiVersion"] = pick[any](src, "v1", "apps/v1", "", "a/b/c", int64(1))
			}
			if chance(src, 80) {
				m["kind"] = pick[any](src, "Pod", "pod_x", "", true)
			}
			if chance(src, 60) {
				m["metadata"] = pick[any](src, map[string]any{"name": "x"}, map[string]any{"name": "..", "labels": map[string]any{"a": "b"}},
					map[string]any{"bogus": int64(1), "namespace": "Bad"}, map[string]any{"generation": 1.5, "name": "y"}, "notanobject")
			}
		}
		required := map[string]bool{}
		if strict {
			if r, ok := s["required"].([]any); ok {
				for _, k := range r {
					required[k.(string)] = true
				}
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(props)) {
				if required[k] || chance(src, 70) {
					m[k] = genValue(src, props[k].(map[string]any), depth+1)
				}
			}
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			for range src.intn(3) {
				m[pick(src, names...)] = genValue(src, ap, depth+1)
			}
		}
		if !strict && chance(src, 15) {
			m["zz"] = genAny(src, depth+1)
		}
		return m
	}
	return genAny(src, depth)
}

// formatSamples are valid strings of formats.
var formatSamples = map[any]string{
	"byte": "aGk=", "date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "duration": "1h",
	"ipv4": "10.0.0.1", "ipv6": "::1", "cidr": "10.0.0.0/8", "uuid": "123e4567-e89b-12d3-a456-426614174000",
	"hostname": "example.com", "email": "a@example.com", "uri": "https://example.com",
}

// genAny makes any JSON value.
func genAny(src source, depth int) any {
	n := 7
	if depth > 4 {
		n = 5
	}
	switch src.intn(n) {
	case 0:
		return nil
	case 1:
		return chance(src, 50)
	case 2:
		return int64(src.intn(100) - 50)
	case 3:
		return pick[any](src, 0.5, 1e21, -2.25)
	case 4:
		return pick(src, strs...)
	case 5:
		return []any{genAny(src, depth+1)}
	default:
		return map[string]any{pick(src, names...): genAny(src, depth+1)}
	}
}

// genObject makes a whole object for a root schema.
func genObject(src source, root map[string]any) []byte {
	obj, _ := genValue(src, root, 0).(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	obj["apiVersion"] = "example.com/v1"
	obj["kind"] = "Widget"
	obj["metadata"] = map[string]any{"name": "w"}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return b
}

// compareGenerated compares the engines on one generated schema and some
// objects made for it.
func compareGenerated(t *testing.T, src source, objects int) {
	root := genRoot(src)
	schemaJSON, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	var list [][]byte
	for range objects {
		list = append(list, genObject(src, root))
	}
	compareSchema(t, schemaJSON, list)
}

func TestGenerated(t *testing.T) {
	n := 1500
	if testing.Short() || race.Enabled {
		n = 200
	}
	for seed := range n {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			compareGenerated(t, randSource{rand.New(rand.NewPCG(uint64(seed), 28))}, 8)
		})
	}
}

// FuzzEngines makes a schema and objects from the fuzz bytes and compares
// both engines on them.
func FuzzEngines(f *testing.F) {
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		f.Add(b)
	}
	// Inputs whose first byte is a multiple of 4 draw a schema from the
	// real CRDs (crdModules) instead of generating one.
	for seed := range 8 {
		f.Add([]byte{0, byte(seed), byte(seed * 37), 1, 2, 3, byte(seed), 250, 7})
	}
	realSchemas() // loaded before the inputs, so that none counts its time
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 && data[0]%4 == 0 {
			compareReal(t, &thinning{bytesSource{b: data[1:]}}, 3)
			return
		}
		compareGenerated(t, &bytesSource{b: data}, 3)
	})
}
