package codec_test

import (
	"errors"
	"testing"

	"github.com/kapi-dev/kapi/codec"
)

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		name, accept string
		want         string // media type, or "" for 406
	}{
		{"empty accepts anything", "", "application/json"},
		{"json", "application/json", "application/json"},
		{"wildcard", "*/*", "application/json"},
		{"type wildcard", "application/*", "application/json"},
		{"kubectl table list falls back to json", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", "application/json"},
		{"table only", "application/json;as=Table;v=v1;g=meta.k8s.io", ""},
		{"q=0 refuses", "application/json;q=0", ""},
		{"unknown", "application/nonsense", ""},
		{"charset is not a constraint", "application/json; charset=utf-8", "application/json"},
		{"bad q skipped", "application/json;q=abc,*/*;q=0.1", "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := codec.Negotiate(tc.accept)
			if tc.want == "" {
				if !errors.Is(err, codec.ErrNotAcceptable) {
					t.Fatalf("Negotiate(%q) = %v, %v; want ErrNotAcceptable", tc.accept, f, err)
				}
				return
			}
			if err != nil || f.MediaType != tc.want {
				t.Fatalf("Negotiate(%q) = %v, %v; want %s", tc.accept, f, err, tc.want)
			}
		})
	}
}

func TestForContentType(t *testing.T) {
	if f, err := codec.ForContentType("application/json; charset=utf-8"); err != nil || f.MediaType != "application/json" {
		t.Fatalf("ForContentType(json) = %v, %v", f, err)
	}
	for _, ct := range []string{"", "text/plain", "application/json-bogus", ";;"} {
		if _, err := codec.ForContentType(ct); !errors.Is(err, codec.ErrUnsupportedMediaType) {
			t.Errorf("ForContentType(%q) = %v; want ErrUnsupportedMediaType", ct, err)
		}
	}
}

func TestYAMLToJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a: 1\nb: [x, 2.5, true, null]\n", `{"a":1,"b":["x",2.5,true,null]}`},
		{`{"spec":{"color":"red"}}`, `{"spec":{"color":"red"}}`},
		{"metadata:\n  name: x\n  labels: {env: prod}\n", `{"metadata":{"labels":{"env":"prod"},"name":"x"}}`},
	} {
		got, err := codec.YAMLToJSON([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("YAMLToJSON(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := codec.YAMLToJSON([]byte("1: one\n")); err == nil {
		t.Error("a non-string key must be an error")
	}
}
