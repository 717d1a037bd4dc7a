package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// field returns the value at a path of map keys in a decoded JSON object, and
// whether every step existed.
func field(obj map[string]any, path ...string) (any, bool) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// str returns the string at path, or "" if it is absent or not a string.
func str(obj map[string]any, path ...string) string {
	v, _ := field(obj, path...)
	s, _ := v.(string)
	return s
}

// num returns the number at path as float64 (how encoding/json decodes it),
// and whether it is present and a number.
func num(obj map[string]any, path ...string) (float64, bool) {
	v, ok := field(obj, path...)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

// wantField fails the test unless the value at path equals want (numbers are
// compared as float64).
func wantField(t *testing.T, obj map[string]any, want any, path ...string) {
	t.Helper()
	got, ok := field(obj, path...)
	if !ok {
		t.Errorf("%v is missing; object: %v", path, obj)
		return
	}
	switch w := want.(type) {
	case int:
		n, isNum := num(obj, path...)
		if !isNum || n != float64(w) {
			t.Errorf("%v = %#v, want %v", path, got, w)
		}
	default:
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v = %#v, want %#v", path, got, want)
		}
	}
}

// writeFile writes content to a new file in the test's temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
