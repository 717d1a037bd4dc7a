package codec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"

	"github.com/kapi-dev/kapi/codec"
)

var (
	getOffer  = codec.Offer{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadata}, Protobuf: true}
	listOffer = codec.Offer{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadataList}, Protobuf: true}
	noProto   = codec.Offer{Views: []codec.View{codec.ViewObject, codec.ViewTable, codec.ViewMetadata}}
)

func TestNegotiate(t *testing.T) {
	const (
		table   = "application/json;as=Table;v=v1;g=meta.k8s.io"
		tableB1 = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"
	)
	for _, tc := range []struct {
		name, accept string
		offer        codec.Offer
		want         string // Content-Type, or "" for 406
	}{
		{"empty accepts anything", "", getOffer, "application/json"},
		{"json", "application/json", getOffer, "application/json"},
		{"wildcard", "*/*", getOffer, "application/json"},
		{"type wildcard", "application/*", getOffer, "application/json"},
		{"yaml", "application/yaml", getOffer, "application/yaml"},
		{"cbor", "application/cbor", getOffer, "application/cbor"},
		{"protobuf", "application/vnd.kubernetes.protobuf", getOffer, "application/vnd.kubernetes.protobuf"},
		{"typed clientset", "application/vnd.kubernetes.protobuf, */*", getOffer, "application/vnd.kubernetes.protobuf"},
		{"typed clientset, no protobuf mapping", "application/vnd.kubernetes.protobuf, */*", noProto, "application/json"},
		{"protobuf only, no mapping", "application/vnd.kubernetes.protobuf", noProto, ""},
		{"client-go preferring cbor", "application/json;q=0.9,application/cbor;q=1", getOffer, "application/cbor"},
		{"higher q wins whatever the order", "application/yaml;q=0.5,application/json", getOffer, "application/json"},
		{"equal q: first listed", "application/yaml,application/json", getOffer, "application/yaml"},
		{"kubectl get", table + "," + tableB1 + ",application/json", getOffer, "application/json;as=Table;g=meta.k8s.io;v=v1"},
		{"table v1beta1", tableB1, getOffer, "application/json;as=Table;g=meta.k8s.io;v=v1beta1"},
		{"table in yaml", "application/yaml;as=Table;v=v1;g=meta.k8s.io", getOffer, "application/yaml;as=Table;g=meta.k8s.io;v=v1"},
		{"no table in protobuf", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", getOffer, ""},
		{"table of another group", "application/json;as=Table;v=v1;g=example.com", getOffer, ""},
		{"table of another version", "application/json;as=Table;v=v2;g=meta.k8s.io", getOffer, ""},
		{"metadata client get", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json", getOffer,
			"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"},
		{"metadata in protobuf without a mapping for the type", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", noProto,
			"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"},
		{"metadata client list", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", listOffer,
			"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"},
		{"a metadata list is not a get's", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", getOffer, ""},
		{"metadata of one object is not a list's", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", listOffer, ""},
		{"unknown view", "application/json;as=Pod;g=meta.k8s.io;v=v1", getOffer, ""},
		{"unknown parameters are ignored, as kube-apiserver", "application/json;foo=bar;profile=x", getOffer, "application/json"},
		{"NaN q is no q", "application/json;q=NaN,application/yaml;q=0.1", getOffer, "application/yaml"},
		{"specific before wildcard at equal q", "*/*, application/vnd.kubernetes.protobuf", getOffer, "application/vnd.kubernetes.protobuf"},
		{"a lone star", "*", getOffer, "application/json"},
		{"stream=watch", "application/vnd.kubernetes.protobuf;stream=watch", getOffer, "application/vnd.kubernetes.protobuf"},
		{"json only", "application/yaml,application/json;q=0.5", codec.Offer{Views: []codec.View{codec.ViewObject}, JSONOnly: true}, "application/json"},
		{"watch: no yaml", "application/yaml", codec.Offer{Views: []codec.View{codec.ViewObject}, Watch: true}, ""},
		{"watch: yaml, else json", "application/yaml,application/json;q=0.5", codec.Offer{Views: []codec.View{codec.ViewObject}, Watch: true}, "application/json"},
		{"q=0 refuses", "application/json;q=0", getOffer, ""},
		{"unknown", "application/nonsense", getOffer, ""},
		{"charset is not a constraint", "application/json; charset=utf-8", getOffer, "application/json"},
		{"bad q skipped", "application/json;q=abc,*/*;q=0.1", getOffer, "application/json"},
		{"q above 1 skipped", "application/yaml;q=2,application/json;q=0.5", getOffer, "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := codec.Negotiate(tc.accept, tc.offer)
			if tc.want == "" {
				if !errors.Is(err, codec.ErrNotAcceptable) {
					t.Fatalf("Negotiate(%q) = %v, %v; want ErrNotAcceptable", tc.accept, target.ContentType(), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Negotiate(%q): %v; want %s", tc.accept, err, tc.want)
			}
			// The view is not in the Content-Type (kube-apiserver writes
			// the bare media type); the rows name it as an Accept would.
			got := target.ContentType()
			if strings.Contains(got, ";") {
				t.Errorf("Content-Type %q has parameters, want the bare media type", got)
			}
			if target.View != codec.ViewObject {
				got += ";as=" + target.View.String() + ";g=meta.k8s.io;v=" + target.Version
			}
			if got != tc.want {
				t.Fatalf("Negotiate(%q) = %s; want %s", tc.accept, got, tc.want)
			}
		})
	}
}

func TestForContentType(t *testing.T) {
	for ct, want := range map[string]string{
		"application/json; charset=utf-8":     "application/json",
		"application/yaml":                    "application/yaml",
		"application/vnd.kubernetes.protobuf": "application/vnd.kubernetes.protobuf",
		"application/cbor":                    "application/cbor",
	} {
		if f, err := codec.ForContentType(ct, true); err != nil || f.MediaType() != want {
			t.Errorf("ForContentType(%q) = %v, %v; want %s", ct, f, err, want)
		}
	}
	for _, ct := range []string{"", "text/plain", "application/json-bogus", ";;"} {
		if _, err := codec.ForContentType(ct, true); !errors.Is(err, codec.ErrUnsupportedMediaType) {
			t.Errorf("ForContentType(%q) = %v; want ErrUnsupportedMediaType", ct, err)
		}
	}
	// A type without a protobuf mapping takes no protobuf body.
	if _, err := codec.ForContentType("application/vnd.kubernetes.protobuf", false); !errors.Is(err, codec.ErrUnsupportedMediaType) {
		t.Errorf("ForContentType(protobuf) without a mapping = %v; want ErrUnsupportedMediaType", err)
	}
}

// The usual Content-Type, a media type of the table without parameters,
// is picked without parsing it, which allocates.
func TestForContentTypeAllocations(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := codec.ForContentType("application/json", true); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("ForContentType(application/json) allocates %v times, want 0", allocs)
	}
}

func TestYAMLToJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a: 1\nb: [x, 2.5, true, null]\n", `{"a":1,"b":["x",2.5,true,null]}`},
		{`{"spec":{"color":"red"}}`, `{"spec":{"color":"red"}}`},
		{"metadata:\n  name: x\n  labels: {env: prod}\n", `{"metadata":{"name":"x","labels":{"env":"prod"}}}`},
		{"", "null"},
		{"# only a comment\n", "null"},
		{"n: 12345678901234567890123\n", `{"n":12345678901234567890123}`}, // exact: the Go type decides
		{"n: 0x1F\nm: 0o17\nk: 1_000\n", `{"n":31,"m":15,"k":1000}`},
		{"f: 1e3\ng: .5\nh: -0.0\n", `{"f":1e3,"g":0.5,"h":-0.0}`},
		{"t: 2024-01-01T00:00:00Z\nd: 2024-01-01\n", `{"t":"2024-01-01T00:00:00Z","d":"2024-01-01"}`},
		{"s: 'true'\nq: \"1\"\n", `{"s":"true","q":"1"}`},
		{"yes: no\n", `{"yes":"no"}`},         // YAML 1.2: words are strings
		{"a: x\na: y\n", `{"a":"x","a":"y"}`}, // duplicates are the field check's to name
		{"a: &x [1, 2]\nb: *x\n", `{"a":[1,2],"b":[1,2]}`},
		{"u: \"\\u00e9\\t\"\n", `{"u":"é\t"}`},
	} {
		got, err := codec.YAMLToJSON([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("YAMLToJSON(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for name, in := range map[string]string{
		"null key":           "~: one\n",
		"signs":              "a: !!int -+5\n",
		"map key":            "? {a: 1}\n: x\n",
		"two documents":      "a: 1\n---\nb: 2\n",
		"infinity":           "a: .inf\n",
		"not a number":       "a: .nan\n",
		"merge key":          "a: &x {b: 1}\nc:\n  <<: *x\n",
		"syntax":             "a: [1, 2\n",
		"billion laughs":     billionLaughs(),
		"tab indentation":    "a:\n\tb: 1\n",
		"unterminated quote": "a: \"x\n",
	} {
		if got, err := codec.YAMLToJSON([]byte(in)); err == nil {
			t.Errorf("%s: YAMLToJSON(%q) = %.80s; want an error", name, in, got)
		}
	}
}

// billionLaughs is a small document whose aliases expand to 10^9 values.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	return b.String()
}

func TestFormatsRoundTrip(t *testing.T) {
	// A JSON element goes out in each textual format and comes back as the
	// same JSON value.
	element := []byte(`{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a","labels":{"b":"2","a":"1"},"creationTimestamp":"2024-01-01T00:00:00Z"},"spec":{"color":"red","replicas":3,"ratio":0.25,"on":true,"none":null,"big":9007199254740993,"text":"yes","num":"1"}}`)
	for _, mt := range []string{codec.MediaTypeJSON, codec.MediaTypeYAML} {
		f := codec.ByMediaType(mt)
		converted, err := f.Transcode(element)
		if err != nil {
			t.Fatalf("%s: Transcode: %v", mt, err)
		}
		body, err := f.AppendBody(nil, kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}, converted)
		if err != nil {
			t.Fatalf("%s: AppendBody: %v", mt, err)
		}
		back, ok, err := f.ToJSON(body)
		if err != nil || !ok {
			t.Fatalf("%s: ToJSON(%s) = %v, %v", mt, body, ok, err)
		}
		if !sameJSON(t, back, element) {
			t.Errorf("%s: round trip of %s\ngave %s\nvia %s", mt, element, back, body)
		}
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	for _, p := range []struct {
		data []byte
		v    *any
	}{{a, &va}, {b, &vb}} {
		d := json.NewDecoder(bytes.NewReader(p.data))
		d.UseNumber()
		if err := d.Decode(p.v); err != nil {
			t.Fatalf("not JSON: %s: %v", p.data, err)
		}
	}
	return reflect.DeepEqual(va, vb)
}

func TestYAMLOut(t *testing.T) {
	f := codec.ByMediaType(codec.MediaTypeYAML)
	got, err := f.AppendBody(nil, kapi.TypeMeta{}, []byte(`{"kind":"Widget","metadata":{"name":"a","labels":{"example.com/app":"x y","n":"1.5"}},"spec":{"text":"true","n":1.50,"list":[1,"x",{"b":2,"a":[]},[1,2]],"empty":{},"multi":"a\nb","html":"<&>","off":"Off","nil":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `kind: Widget
metadata:
  labels:
    example.com/app: "x y"
    "n": "1.5"
  name: a
spec:
  empty: {}
  html: "<&>"
  list:
  - 1
  - x
  - a: []
    b: 2
  - - 1
    - 2
  multi: "a\nb"
  "n": 1.50
  nil: null
  "off": "Off"
  text: "true"
`
	if string(got) != want {
		t.Errorf("YAML:\n%s\nwant:\n%s", got, want)
	}
	for _, doc := range []string{`"x"`, `1`, `null`, `[]`, `{}`, `[{"a":1}]`} {
		got, err := f.AppendBody(nil, kapi.TypeMeta{}, []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		back, _, err := f.ToJSON(got)
		if err != nil || !sameJSON(t, back, []byte(doc)) {
			t.Errorf("%s: YAML %q read back as %s, %v", doc, got, back, err)
		}
	}
}

// v1beta1's PartialObjectMetadataList numbers items 1 and metadata 2, the
// reverse of every other list.
func TestProtobufMetadataListV1beta1(t *testing.T) {
	type partial struct {
		kapi.TypeMeta   `json:",inline"`
		kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	}
	type v1beta1List struct {
		kapi.TypeMeta `json:",inline"`
		Items         []partial `json:"items" protobuf:"bytes,1,rep,name=items"`
		kapi.ListMeta `json:"metadata,omitempty" protobuf:"bytes,2,opt,name=metadata"`
	}
	pb := codec.ByMediaType(codec.MediaTypeProtobuf)
	element, err := pb.Marshal(&partial{ObjectMeta: kapi.ObjectMeta{Name: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := pb.AppendList(nil, kapi.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: "meta.k8s.io/v1beta1"},
		kapi.ListMeta{ResourceVersion: "7", Continue: "next"}, [][]byte{element, element})
	if err != nil {
		t.Fatal(err)
	}
	var got v1beta1List
	if err := pb.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 2 || got.Items[0].Name != "a" || got.ResourceVersion != "7" || got.Continue != "next" {
		t.Errorf("v1beta1 list read as %+v", got)
	}
}

// TestListBody: a list written piece by piece is the list AppendList
// assembles, of the length it announces, in every format but YAML.
func TestListBody(t *testing.T) {
	element := []byte(`{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a"}}`)
	big := bytes.Repeat([]byte("x"), 300) // a two-byte protobuf length
	for _, mt := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf, codec.MediaTypeCBOR} {
		f := codec.ByMediaType(mt)
		for _, tm := range []kapi.TypeMeta{
			{Kind: "WidgetList", APIVersion: "example.com/v1"},
			{Kind: "PartialObjectMetadataList", APIVersion: "meta.k8s.io/v1beta1"},
		} {
			for _, elements := range [][][]byte{nil, {element}, {element, big, element}} {
				name := fmt.Sprintf("%s/%s/%d", mt, tm.APIVersion, len(elements))
				t.Run(name, func(t *testing.T) {
					in := elements
					if f.FromJSON() && len(in) > 1 {
						in = [][]byte{element, element}
					}
					if mt == codec.MediaTypeCBOR {
						var err error
						if in, err = transcodeAll(f, in); err != nil {
							t.Fatal(err)
						}
					}
					meta := kapi.ListMeta{ResourceVersion: "7", Continue: "c"}
					want, err := f.AppendList([]byte("prefix"), tm, meta, in)
					if err != nil {
						t.Fatal(err)
					}
					b, err := f.ListBody(tm, meta, in)
					if err != nil {
						t.Fatal(err)
					}
					var got bytes.Buffer
					n, err := b.WriteTo(&got)
					if err != nil || n != int64(got.Len()) || b.Len() != got.Len() {
						t.Errorf("WriteTo wrote %d bytes (%v), Len %d, buffer %d", n, err, b.Len(), got.Len())
					}
					if !bytes.Equal(append([]byte("prefix"), got.Bytes()...), want) {
						t.Errorf("written\n%q\nassembled\n%q", got.Bytes(), want)
					}
					// The same elements cut in three pieces each, one of them
					// empty or nil, make the same body.
					var pieces [][]byte
					for i, e := range in {
						cut := len(e) / (i + 2)
						pieces = append(pieces, e[:cut], nil, e[cut:])
					}
					pb, err := f.ListBodyOfPieces(tm, meta, pieces, 3)
					if err != nil {
						t.Fatal(err)
					}
					got.Reset()
					if _, err := pb.WriteTo(&got); err != nil || pb.Len() != got.Len() || !bytes.Equal(append([]byte("prefix"), got.Bytes()...), want) {
						t.Errorf("from pieces (%v), Len %d:\n%q\nassembled\n%q", err, pb.Len(), got.Bytes(), want)
					}
					if appended := pb.AppendTo([]byte("prefix")); !bytes.Equal(appended, want) {
						t.Errorf("appended from pieces\n%q\nassembled\n%q", appended, want)
					}
				})
			}
		}
	}
	if _, err := codec.ByMediaType(codec.MediaTypeYAML).ListBody(kapi.TypeMeta{}, kapi.ListMeta{}, nil); err == nil {
		t.Error("a YAML list body was laid out")
	}
	// Only items joined in large slices are written as they are (see
	// httpbody.LargeWrites).
	tm := kapi.TypeMeta{Kind: "WidgetList", APIVersion: "example.com/v1"}
	f := codec.ByMediaType(codec.MediaTypeProtobuf)
	run := f.AppendListItemPrefix(nil, tm, 64<<10)
	run = append(run, make([]byte, 64<<10)...)
	for _, tc := range []struct {
		name  string
		body  func() (*codec.ListBody, error)
		large bool
	}{
		{"joined in large runs", func() (*codec.ListBody, error) { return f.ListBodyOfJoined(tm, kapi.ListMeta{}, [][]byte{run, run}, 2) }, true},
		{"joined in small runs", func() (*codec.ListBody, error) {
			return f.ListBodyOfJoined(tm, kapi.ListMeta{}, [][]byte{run[:3], run[:3]}, 2)
		}, false},
		{"elements", func() (*codec.ListBody, error) { return f.ListBody(tm, kapi.ListMeta{}, [][]byte{run, run}) }, false},
	} {
		if b, err := tc.body(); err != nil || b.LargeWrites() != tc.large {
			t.Errorf("%s: LargeWrites() = %v (%v), want %v", tc.name, b != nil && b.LargeWrites(), err, tc.large)
		}
	}
	if _, err := codec.JSON().ListBodyOfPieces(kapi.TypeMeta{}, kapi.ListMeta{}, make([][]byte, 4), 3); err == nil {
		t.Error("4 pieces made elements of 3")
	}
}

func transcodeAll(f *codec.Format, elements [][]byte) ([][]byte, error) {
	out := make([][]byte, len(elements))
	for i, e := range elements {
		var err error
		if out[i], err = f.Transcode(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TestAppendEventOfPieces: an event whose element comes in pieces is the
// event of the pieces joined, in every format that carries a watch.
func TestAppendEventOfPieces(t *testing.T) {
	element := []byte(`{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"a"}}`)
	tm := kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}
	for _, mt := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf, codec.MediaTypeCBOR} {
		f := codec.ByMediaType(mt)
		in := element
		if mt == codec.MediaTypeCBOR {
			var err error
			if in, err = f.Transcode(element); err != nil {
				t.Fatal(err)
			}
		}
		want, err := f.AppendEvent(nil, "ADDED", tm, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.AppendEvent(nil, "ADDED", tm, in[:10], nil, in[10:])
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: from pieces (%v)\n%q\nwant\n%q", mt, err, got, want)
		}
	}
}
