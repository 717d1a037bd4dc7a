package patch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var decodeSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.0`, `1e3`, `-12.5E-3`, `123456789012345678`,
	`1234567890123456789`, `99999999999999999999`, `1e400`, `""`, `"a\"b\\c\/d\b\f\n\r\t"`,
	`"\u00e9\u4e16"`, `"\ud83d\ude00"`, `"\udc00"`, `"é世界"`, "\"\xff\"", "\"a\x01\"",
	`{"a":1,"a":2}`, `{"metadata":{"name":"w","labels":{"x":"y"}},"spec":{"ports":[{"port":80},{"port":81.5}]}}`,
	` { "a" : [ 1 , 2 ] } `, `{"a":1} x`, `{"a":1}{}`, `{"a":}`, `{"a" 1}`, `[1,]`, `{,}`, `01`, `-`, `1.`, `.5`,
	`1e`, `tru`, `nul`, `"abc`, `{"a":1`, `[`, ``, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat("}", 100),
	`{"metadata":{"name":"a","managedFields":[{"manager":"m","fieldsV1":{"f:spec":{".":{},"f:a":{}}}}],"labels":{}},"spec":{}}`,
	`{"metadata":{"managedFields":{"a":[1,"x\u00e9",true,null]},"managedFields":2}}`, `{"metadata":{"managedFields":[}}`,
	`{"metadata":{"managedFields":"\ud800"}}`, `{"metadata":[{"managedFields":1}],"x":{"metadata":{"managedFields":1}}}`,
	`{"metadata":{"a":1},"metadata":{"managedFields":1,"b":2}}`, `{"metadata":1,"metadata":{"managedFields":1}}`,
	`{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"ports":[{"port":1,"name":"a"},{"port":2}],"tags":["a","b"],"any":{"x":[1]}}}`,
	`{"spec":{"ports":[{"port":1},{"port":1}],"tags":["a","a"]}}`, `{"spec":{"ports":[{"name":"x"}]}}`, `{"spec":{"tags":[{}]}}`,
	`{"spec":{"bogus":1}}`, `{"metadata":{"labels":{"x":1}}}`, `{"metadata":[]}`,
}

// validThing is a schema for checking valid against explain.
type validThing struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Ports []struct {
			Name string `json:"name"`
			Port int    `json:"port"`
		} `json:"ports" patchStrategy:"merge" patchMergeKey:"port"`
		Tags []string `json:"tags" listType:"set"`
		Any  any      `json:"any"`
	} `json:"spec"`
}

// TestDecodeJSONMatchesEncodingJSON checks the one-pass reader against
// encoding/json on the seeds; FuzzDecodeJSON goes on from there.
func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecodeJSON(t, []byte(s))
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeJSON(t, b) })
}

func checkDecodeJSON(t *testing.T, b []byte) {
	t.Helper()
	got, err := decodeJSON(b)
	want, wantErr := decodeJSONStd(b)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%q: error %v, encoding/json's %v", b, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: %#v, encoding/json's %#v", b, got, want)
	}

	if got != nil {
		s, err := SchemaOf(reflect.TypeFor[validThing]())
		if err != nil {
			t.Fatal(err)
		}
		for _, dup := range []bool{false, true} {
			if ok, why := valid(got, s, dup), explain(got, s, nil, dup); ok != (why == nil) {
				t.Fatalf("%q: valid says %v, explain %v", b, ok, why)
			}
		}
	}

	gotm, err := decodeUnmanaged(b)
	wantm, wantErr := decodeJSONStd(b)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%q unmanaged: error %v, encoding/json's %v", b, err, wantErr)
	}
	m, _ := wantm.(map[string]any)
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	if !reflect.DeepEqual(gotm, m) {
		t.Fatalf("%q unmanaged: %#v, encoding/json's %#v", b, gotm, m)
	}
}

func BenchmarkDecodeJSON(b *testing.B) {
	doc := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-1","namespace":"default","uid":"6f1c8a52-3b1e-4c8e-9a55-0d2f6b7e9c11","resourceVersion":"123456","generation":4,"creationTimestamp":"2025-06-01T12:00:00Z","labels":{"app.kubernetes.io/component":"frontend","app.kubernetes.io/name":"shop","tier":"web"},"annotations":{"example.com/owner":"team-storefront","example.com/revision":"42"}},"spec":{"color":"blue","replicas":3,"size":12,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"},{"name":"dns","port":53,"protocol":"UDP"}],"selector":{"app.kubernetes.io/name":"shop"}},"status":{"replicas":0}}`)
	for _, c := range []struct {
		name string
		fn   func([]byte) (any, error)
	}{{"reader", decodeJSON}, {"encoding-json", decodeJSONStd}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.fn(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzEncodeJSON: a decoded value is written back byte for byte as
// json.Marshal writes it, and fails where json.Marshal fails.
func FuzzEncodeJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s, "")
	}
	f.Add(`{"b":[1,{"<a>":"&"}],"a":null,"c":{}}`, "\xff")
	f.Add(`[]`, "1x")
	f.Fuzz(func(t *testing.T, doc, extra string) {
		v, err := decodeJSON([]byte(doc))
		if err != nil {
			return
		}
		for _, w := range []any{v, map[string]any{extra: v, "n": json.Number(extra)}, []any{v, extra, map[string]any(nil), []any(nil)}} {
			got, gotErr := encodeJSON(w)
			want, wantErr := json.Marshal(w)
			if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("encodeJSON(%#v): error %v, json.Marshal's %v", w, gotErr, wantErr)
			}
			if gotErr == nil && string(got) != string(want) {
				t.Fatalf("encodeJSON(%#v) = %s, want %s", w, got, want)
			}
		}
	})
}

// FuzzCheckValue: checkValue accepts what value accepts in discard mode,
// and ends where it ends.
func FuzzCheckValue(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s), 0)
	}
	f.Add([]byte(strings.Repeat("[", 99)+strings.Repeat("]", 99)), maxDepth-100)
	f.Add([]byte(strings.Repeat("[", 101)+strings.Repeat("]", 101)), maxDepth-100)
	f.Add([]byte(strings.Repeat(`{"a":`, 70)+"1"+strings.Repeat("}", 70)), maxDepth-70)
	f.Fuzz(func(t *testing.T, b []byte, depth int) {
		if depth < 0 || depth > maxDepth {
			return
		}
		want := jsonReader{data: b, discard: true}
		_, wantOK := want.value(depth)
		got := jsonReader{data: b}
		gotOK := got.checkValue(depth)
		if gotOK != wantOK || gotOK && got.i != want.i {
			t.Fatalf("%q at depth %d: checkValue %v ending at %d, value %v ending at %d", b, depth, gotOK, got.i, wantOK, want.i)
		}
	})
}
