package patch

import (
	"encoding/json"
	"math/rand"
	"testing"
)

// TestEqualValuesScalars holds equalValues' shortcuts for strings and
// numbers written alike to compareValues, the order it stands in for:
// equal exactly when they compare as 0, for values of every kind a tree
// holds, numbers spelled alike and otherwise.
func TestEqualValuesScalars(t *testing.T) {
	values := []any{
		nil, true, false, "", "a", "b", "1", "ab",
		json.Number("0"), json.Number("1"), json.Number("1.0"), json.Number("10"), json.Number("1e1"),
		json.Number("-0"), json.Number("0.5"), json.Number("5e-1"), json.Number("123456789012345678901"),
		json.Number("123456789012345678901.0"), []any{"a"}, map[string]any{"a": "b"},
	}
	rng := rand.New(rand.NewSource(1))
	for range 2000 {
		a, b := values[rng.Intn(len(values))], values[rng.Intn(len(values))]
		if got, want := equalValues(a, b), compareValues(a, b) == 0; got != want {
			t.Fatalf("equalValues(%#v, %#v) = %v, compareValues says %v", a, b, got, want)
		}
	}
}
