package codec_test

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/codec"
)

func FuzzYAMLToJSON(f *testing.F) {
	for _, s := range []string{
		"a: 1\nb: [x, y]\n", `{"spec":{"color":"red"}}`, "- 1\n- 2.5\n- true\n- null\n",
		"a: &x [1]\nb: *x\n", "1: one\n", "{", "a: b: c", "t: 2024-01-01T00:00:00Z\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := codec.YAMLToJSON(data)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("YAMLToJSON(%q) = %q: not JSON", data, out)
		}
	})
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/json;q=0.9,application/cbor", "application/json;as=Table;v=v1;g=meta.k8s.io", "a/b;q=x", ";;,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		format, err := codec.Negotiate(accept)
		if (format == nil) == (err == nil) {
			t.Fatalf("Negotiate(%q) = %v, %v: want exactly one of a format and an error", accept, format, err)
		}
	})
}
