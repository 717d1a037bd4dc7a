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

// TestEqualValuesIntegers holds equalValues' shortcut for two integers
// written plainly (plainInteger) to compareValues, on random literals
// near and far from it: signs, leading zeros, zero and minus zero,
// fractions and exponents worth an integer, lengths about int64's.
func TestEqualValuesIntegers(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	literal := func() json.Number {
		digits := func(n int) string {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('0' + rng.Intn(10))
			}
			return string(b)
		}
		var s string
		switch rng.Intn(8) {
		case 0:
			s = []string{"0", "-0", "00", "-00", "0.0", "1", "1.0", "1e0", "10", "1e1", "-1", "-1.0", "007", "7"}[rng.Intn(14)]
		case 1:
			s = digits(17 + rng.Intn(4)) // about int64's length
		case 2:
			s = digits(1+rng.Intn(3)) + ".0"
		case 3:
			s = digits(1+rng.Intn(2)) + "e" + digits(1)
		default:
			s = digits(1 + rng.Intn(3))
		}
		if rng.Intn(3) == 0 {
			s = "-" + s
		}
		return json.Number(s)
	}
	plain := 0
	for range 200000 {
		a, b := literal(), literal()
		if got, want := equalValues(a, b), compareValues(a, b) == 0; got != want {
			t.Fatalf("equalValues(%q, %q) = %v, compareValues says %v", a, b, got, want)
		}
		if plainInteger(a) && plainInteger(b) {
			plain++
		}
	}
	if plain == 0 {
		t.Error("no two plain integers compared")
	}
}
