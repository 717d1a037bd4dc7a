package patch

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestWriteJSONString: field names are quoted byte for byte as
// encoding/json quotes them, on the fast path and off it.
func TestWriteJSONString(t *testing.T) {
	for _, s := range []string{"", "f:spec", `k:{"name":"a"}`, "v:<b>&", "a\\b", "\x00\x1f\x7f", "é", "\u2028", "\xff", "i:3", "."} {
		var b bytes.Buffer
		writeJSONString(&b, s)
		want, _ := json.Marshal(s)
		if b.String() != string(want) {
			t.Errorf("writeJSONString(%q) = %s, want %s", s, b.Bytes(), want)
		}
	}
}
