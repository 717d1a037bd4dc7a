package codec

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadAlike holds readAlike to the scan it replaced (readAlikeBefore,
// byte by byte), on valid JSON, as readAlike's callers give it.
func FuzzReadAlike(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"example.dev/v1","kind":"Widget","metadata":{"name":"w","labels":{"a":"b"}},"spec":{"size":12,"ports":[{"port":80}]}}`,
		`"\ud83d\ude00"`, `"\uD800"`, `"\u00e9 é 😀"`, `"\/"`, "{\"a\"\n:1}", "\t{}", "{}\n\t", "\"\x7f\"", "\"\u0085\u2028\ufeff\"",
		`[1e400,-1e-400,1.0,-0,0.5e+3,18446744073709551616,123456789012345678901234567890]`, `"\"\\"`, `{"` + strings.Repeat("k", 1001) + `":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		if got, want := readAlike(data), readAlikeBefore(data); got != want {
			t.Fatalf("readAlike(%q) = %v, the scan before said %v", data, got, want)
		}
	})
}

// readAlikeBefore is readAlike before its tables: plainJSON of data known to be valid JSON: whether the YAML
// reader takes it for the same document. encoding/json takes invalid UTF-8
// and escapes of lone surrogates where json/v2 does not; the scan says no
// to both.
func readAlikeBefore(data []byte) bool {
	depth := 0
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c == '"': // valid JSON: the string is closed, escapes complete
			start := i
			for i++; data[i] != '"'; {
				switch c := data[i]; {
				case c == '\\':
					if data[i+1] == '/' || data[i+1] == 'u' && data[i+2]|0x20 == 'd' && data[i+3] >= '8' {
						return false // \/, or \uD800-\uDFFF (digits 8, 9 and every letter are >= '8')
					}
					i += 2
				case c < utf8.RuneSelf:
					if c == 0x7f {
						return false // JSON lets DEL through raw, YAML does not
					}
					i++
				default:
					r, n := utf8.DecodeRune(data[i:])
					if n == 1 || !(r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd && r != 0xfeff) ||
						r == 0x2028 || r == 0x2029 { // YAML's line separators: folded in a quoted scalar
						return false
					}
					i += n
				}
			}
			i++
			// A key: YAML wants it no longer than 1024 characters and on
			// the line of its colon.
			j, lines := i, false
			for ; j < len(data) && isJSONSpace(data[j]); j++ {
				lines = lines || data[j] == '\n' || data[j] == '\r'
			}
			if j < len(data) && data[j] == ':' && (lines || i-start > 1000) {
				return false
			}
		case c == '\t' && depth == 0:
			return false // YAML takes no tab before or after the document's first line
		case c == '{' || c == '[':
			if depth++; depth > 1000 {
				return false
			}
			i++
		case c == '}' || c == ']':
			depth--
			i++
		case c == '-' || c >= '0' && c <= '9':
			j, float := i, false
			for ; j < len(data) && strings.IndexByte("+-.eE0123456789", data[j]) >= 0; j++ {
				float = float || data[j] == 'e' || data[j] == 'E'
			}
			if float || j-i > 15 {
				if _, err := strconv.ParseFloat(string(data[i:j]), 64); err != nil {
					return false
				}
			}
			i = j
		default: // whitespace, punctuation, true, false, null
			i++
		}
	}
	return true
}

// BenchmarkReadAlike scans the load harness's apply body, as
// YAMLToJSONOfJSON does every apply's, beside the scan before.
func BenchmarkReadAlike(b *testing.B) {
	body := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-00003","namespace":"write","labels":{"app":"loadtest","tier":"backend","team":"platform","shard":"7"}},"spec":{"color":"Red","replicas":3,"size":1234,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}],"selector":{"app":"loadtest","tier":"backend"}}}`)
	for name, scan := range map[string]func([]byte) bool{"tables": readAlike, "before": readAlikeBefore} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !scan(body) {
					b.Fatal("not alike")
				}
			}
		})
	}
}
