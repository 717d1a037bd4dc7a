package apiserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi/apiserver"
)

// TestOpenAPIV2 asks /openapi/v2 as kube-aggregator (JSON, then with the
// Etag it got), kubectl (protobuf under either name) and others do: each
// gets a valid Swagger 2.0 document, never an empty 200; what it cannot
// read is 406.
func TestOpenAPIV2(t *testing.T) {
	_, c := newTestServer(t)
	const pb = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	for _, tc := range []struct{ accept, want string }{
		{"application/json", "application/json"},
		{"", "application/json"},
		{"*/*", "application/json"},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", pb},
		{pb + ", application/json;q=0.5", pb},
		{"application/json;q=0.1, " + pb + ";q=0.9", pb},
		{"application/yaml", ""},
		{"application/json;q=0", ""},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			r := c.do(http.MethodGet, "/openapi/v2", nil, "Accept", tc.accept)
			if tc.want == "" {
				r.mustCode(t, http.StatusNotAcceptable)
				return
			}
			r.mustCode(t, http.StatusOK)
			if ct := r.Header.Get("Content-Type"); ct != tc.want {
				t.Fatalf("Content-Type %q, want %q", ct, tc.want)
			}
			if len(r.Body) == 0 {
				t.Fatal("empty body")
			}
			if tc.want == pb {
				if swagger := protoString(t, r.Body, 1); swagger != "2.0" {
					t.Fatalf("protobuf document's swagger field %q, want 2.0", swagger)
				}
				return
			}
			var doc struct {
				Swagger string `json:"swagger"`
				Info    struct{ Title, Version string }
				Paths   map[string]any `json:"paths"`
			}
			r.into(t, &doc)
			if doc.Swagger != "2.0" || doc.Info.Title == "" || doc.Info.Version == "" || doc.Paths == nil {
				t.Fatalf("document %s", r.Body)
			}
			etag := r.Header.Get("Etag")
			if etag == "" {
				t.Fatal("no Etag")
			}
			c.do(http.MethodGet, "/openapi/v2", nil, "Accept", tc.accept, "If-None-Match", etag).mustCode(t, http.StatusNotModified)
		})
	}
	var v any
	if err := json.Unmarshal(c.get("/openapi/v2").Body, &v); err != nil {
		t.Fatal(err)
	}
}

// protoString reads the string field num of a protobuf message.
func protoString(t *testing.T, b []byte, num protowire.Number) string {
	t.Helper()
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			t.Fatalf("bad protobuf: %v", protowire.ParseError(l))
		}
		b = b[l:]
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			t.Fatalf("bad protobuf: %v", protowire.ParseError(l))
		}
		if n == num && typ == protowire.BytesType {
			s, _ := protowire.ConsumeString(b)
			return s
		}
		b = b[l:]
	}
	return ""
}

// FuzzOpenAPIV2Accept: any Accept header gets a document it names, or
// 406; never an empty 200.
func FuzzOpenAPIV2Accept(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/json", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.5, application/json;q=0.4", "a/b;q=x", ";;,,"} {
		f.Add(s)
	}
	api, err := apiserver.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = api.Close() })
	f.Fuzz(func(t *testing.T, accept string) {
		r := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
		r.Header["Accept"] = []string{accept}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		switch ct := w.Header().Get("Content-Type"); {
		case w.Code == http.StatusNotAcceptable:
		case w.Code != http.StatusOK || w.Body.Len() == 0:
			t.Fatalf("Accept %q: HTTP %d, %d bytes", accept, w.Code, w.Body.Len())
		case ct != "application/json" && ct != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf":
			t.Fatalf("Accept %q: Content-Type %q", accept, ct)
		case !strings.Contains(strings.ToLower(accept), "json") && !strings.Contains(accept, "*") && !strings.Contains(strings.ToLower(accept), "protobuf") && strings.TrimSpace(accept) != "": // media types are case-insensitive
			t.Fatalf("Accept %q: answered %s", accept, ct)
		}
	})
}
