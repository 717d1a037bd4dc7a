package jsonskip_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		end       int // -1: invalid in both modes
		exactEnd  int // -1: invalid in Exact only, where end is not -1
	}{
		{"object", `{"a":[1,2,{"b":null}],"c":"d"} tail`, 30, 30},
		{"spaced", ` { "a" : [ true , false ] } `, 27, 27},
		{"number then garbage", `12x`, 2, 2},
		{"negative exponent", `-0.5e-3,`, 7, 7},
		{"empty containers", `[{},[]]`, 7, 7},
		{"leading zero", `01`, 1, 1},
		{"bare minus", `-`, -1, -1},
		{"unterminated", `{"a":1`, -1, -1},
		{"trailing comma", `[1,]`, -1, -1},
		{"missing colon", `{"a" 1}`, -1, -1},
		{"control character", "\"a\x01\"", -1, -1},
		{"bad escape", `"\x"`, -1, -1},
		{"lone surrogate", `"\ud800"`, 8, -1},
		{"invalid UTF-8", "\"\xff\"", 3, -1},
		{"escaped backslash before u", `"\\ud800"`, 9, 9},
		{"literal prefix", `tru`, -1, -1},
		{"too deep", strings.Repeat("[", jsonskip.MaxDepth+1) + strings.Repeat("]", jsonskip.MaxDepth+1), -1, -1},
		{"deepest", strings.Repeat("[", jsonskip.MaxDepth) + strings.Repeat("]", jsonskip.MaxDepth), 2 * jsonskip.MaxDepth, 2 * jsonskip.MaxDepth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []struct {
				s    jsonskip.Strings
				want int
			}{{jsonskip.AnyText, tc.end}, {jsonskip.Exact, min(tc.end, tc.exactEnd)}} {
				end, ok := jsonskip.Value([]byte(tc.doc), 0, 0, mode.s)
				if ok != (mode.want >= 0) || ok && end != mode.want {
					t.Errorf("Value(%.40q, %v) = %d, %v; want end %d", tc.doc, mode.s, end, ok, mode.want)
				}
			}
		})
	}
}

// FuzzValue: Value in AnyText mode accepts what encoding/json's decoder
// reads as one value and ends where it ends; Exact accepts a part of that,
// of valid UTF-8.
func FuzzValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}],"c":"d"}`, ` [ 1e5 , -0 , "\u00e9" ] `, `"\ud83d\ude00"`, `12 3`, `{"a":`, "\"\xff\"", `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end, ok := jsonskip.Value(b, 0, 0, jsonskip.AnyText)
		dec := json.NewDecoder(bytes.NewReader(b))
		var raw json.RawMessage
		wantOK := dec.Decode(&raw) == nil
		if ok != wantOK || ok && int64(end) != dec.InputOffset() {
			t.Fatalf("Value(%q) = %d, %v; encoding/json: %v at %d", b, end, ok, wantOK, dec.InputOffset())
		}
		exactEnd, exactOK := jsonskip.Value(b, 0, 0, jsonskip.Exact)
		if exactOK && (!ok || exactEnd != end || !utf8.Valid(b[:end])) {
			t.Fatalf("Value(%q, Exact) = %d, true; AnyText %d, %v", b, exactEnd, end, ok)
		}
	})
}

func BenchmarkValue(b *testing.B) {
	doc := []byte(`{"metadata":{"name":"w","namespace":"default","labels":{"app":"web","tier":"front"},` +
		`"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"example.com/v1","time":"2024-05-01T12:00:00Z",` +
		`"fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:color":{},"f:size":{}}}}]},` +
		`"spec":{"color":"red","size":12,"ports":[{"name":"http","port":80},{"name":"https","port":443}]}}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if end, ok := jsonskip.Value(doc, 0, 0, jsonskip.AnyText); !ok || end != len(doc) {
			b.Fatal(end, ok)
		}
	}
}

func TestUnescape(t *testing.T) {
	want := map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
	for e := range 256 {
		c, ok := jsonskip.Unescape(byte(e))
		if w, known := want[byte(e)]; ok != known || c != w {
			t.Errorf("Unescape(%q) = %q, %v; want %q, %v", byte(e), c, ok, w, known)
		}
	}
}
