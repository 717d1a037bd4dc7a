package codec_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi"
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
		for _, offer := range []codec.Offer{
			{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadata}, Protobuf: true},
			{Views: []codec.View{codec.ViewObject, codec.ViewMetadataList}},
		} {
			target, err := codec.Negotiate(accept, offer)
			if (target.Format == nil) == (err == nil) {
				t.Fatalf("Negotiate(%q) = %v, %v: want exactly one of a target and an error", accept, target, err)
			}
			if err == nil && target.View != codec.ViewObject && target.Version == "" {
				t.Fatalf("Negotiate(%q) = %v: a view without a version", accept, target)
			}
		}
	})
}

// FuzzYAMLOut checks the YAML kapi writes: any JSON document, written as
// YAML and read back, is the same value.
func FuzzYAMLOut(f *testing.F) {
	for _, s := range []string{
		`{"a":"true","b":"1.5","c":"x: y","d":"- a","e":"#c","f":"","g":" lead","h":"a\nb","i":"~","j":"null","k":"0x1F","l":"@x","m":"é"}`,
		`[[],{},[[1]],{"a":{"b":[{"c":null}]}}]`, `"yes"`, `-0.0`, `1e300`, `{"":1,"-":2,"?":3,":":4}`,
	} {
		f.Add([]byte(s))
	}
	yaml := codec.ByMediaType(codec.MediaTypeYAML)
	f.Fuzz(func(t *testing.T, doc []byte) {
		var v any
		if json.Unmarshal(doc, &v) != nil {
			return // not JSON, or numbers beyond float64 (kapi never writes them)
		}
		out, err := yaml.AppendBody(nil, kapi.TypeMeta{}, doc)
		if err != nil {
			t.Fatalf("YAML of %s: %v", doc, err)
		}
		back, _, err := yaml.ToJSON(out)
		if err != nil {
			t.Fatalf("YAML %q of %s does not read back: %v", out, doc, err)
		}
		if !sameJSON(t, back, doc) {
			t.Fatalf("YAML %q of %s reads back as %s", out, doc, back)
		}
	})
}

// FuzzProtobufBody feeds request bodies to the protobuf decoder: the
// envelope, then the message. It must never panic, and a body it accepts
// must encode back to one that decodes to the same object.
func FuzzProtobufBody(f *testing.F) {
	pb := codec.ByMediaType(codec.MediaTypeProtobuf)
	w := newBenchWidget(1)
	element, _ := pb.Marshal(w)
	body, _ := pb.AppendBody(nil, w.TypeMeta, element)
	list, _ := pb.AppendList(nil, kapi.TypeMeta{Kind: "WidgetList", APIVersion: "example.com/v1"}, kapi.ListMeta{ResourceVersion: "3"}, [][]byte{element})
	for _, seed := range [][]byte{body, list, []byte("k8s\x00"), []byte("k8s\x00\x0a\x00\x12\x00"), []byte("k8s"), nil} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got benchWidget
		if err := pb.Unmarshal(data, &got); err != nil {
			return
		}
		element, err := pb.Marshal(&got)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", data, err)
		}
		again, err := pb.AppendBody(nil, got.TypeMeta, element)
		if err != nil {
			t.Fatal(err)
		}
		var back benchWidget
		if err := pb.Unmarshal(again, &back); err != nil {
			t.Fatalf("re-encoding of %q does not decode: %v", data, err)
		}
		if a, b := mustJSON(t, &got), mustJSON(t, &back); string(a) != string(b) {
			t.Fatalf("round trip of %q: %s then %s", data, a, b)
		}
	})
}

// FuzzYAMLToJSONFastPath checks YAMLToJSON's fast path for JSON bodies
// against the YAML reader it skips: whatever the fast path takes, the YAML
// path takes too, and the two documents are the same tokens in the same
// order (duplicate keys included, strings decoded, numbers as written).
func FuzzYAMLToJSONFastPath(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"example.dev/v1","kind":"Widget","metadata":{"name":"w","labels":{"a":"b"}},"spec":{"size":12,"ports":[{"port":80}]}}`,
		`{"a":1,"a":2}`, `{"a":{"b":1},"a":[1]}`, `"\ud83d\ude00"`, `"\uD800"`, `"\u00e9 é 😀"`, `"\/"`, `"\b\f\n\r\t\u0000\u0085"`, "{\"a\"\n:1}", "\t{}", "{}\n\t",
		"\"\x7f\"", "\"\u0085\u2028\ufeff\"", `[1e400,-1e-400,1.0,-0,0.5e+3,18446744073709551616,123456789012345678901234567890]`,
		"{\t\"a\"\r\n:\ttrue , \"b\":[ null,false ]}", `[[[[]]]]`, `{}`, `null`, `3`, `"x"`, ` {"a" : "b"} `,
		`{"<&>":"<&>"}`, `{"a":"b: c"}`, `{"#":"# x"}`, `["- a","? b","!c","&d","*e","%f","@g"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !codec.PlainJSON(data) {
			return
		}
		viaYAML, err := codec.YAMLToJSONAsYAML(data)
		if err != nil {
			t.Fatalf("%q: taken as plain JSON, but the YAML path rejects it: %v", data, err)
		}
		fast, err := codec.YAMLToJSON(data)
		if err != nil || !bytes.Equal(fast, data) {
			t.Fatalf("YAMLToJSON(%q) = %q, %v: want the body as it is", data, fast, err)
		}
		want, got := jsonTokens(t, viaYAML), jsonTokens(t, data)
		if !slices.Equal(want, got) {
			t.Fatalf("%q: as JSON %q, as YAML %q (%q)", data, got, want, viaYAML)
		}
	})
}

// jsonTokens is a JSON document as its tokens, each printed with its type.
func jsonTokens(t *testing.T, doc []byte) []string {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var out []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		out = append(out, fmt.Sprintf("%T %v", tok, tok))
	}
}
