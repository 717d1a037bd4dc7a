package jsonread_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/jsonread"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// known is codec's UnmarshalKnownJSON's options: what a Decoder is to
// decode as.
var known = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
	jsonv2.RejectUnknownMembers(true), jsonv2.MatchCaseInsensitiveNames(false), jsontext.AllowDuplicateNames(false))

func fallback(data []byte, v any) error { return jsonv2.Unmarshal(data, v, known) }

type Inner struct {
	S  string            `json:"s,omitempty"`
	I  int               `json:"i"`
	P  *int32            `json:"p"`
	M  map[string]string `json:"m"`
	R  *Inner            `json:"r,omitempty"`
	T  kapi.Time         `json:"t"`
	TP *kapi.Time        `json:"tp"`
}

type Embedded struct {
	E     string `json:"e"`
	Inner string `json:"inner"` // shallower than all.Inner's fields: wins
}

type Label string

type all struct {
	Embedded `json:",inline"`

	B        bool    `json:"b"`
	I8       int8    `json:"i8"`
	I16      int16   `json:"i16"`
	I32      int32   `json:"i32"`
	I64      int64   `json:"i64"`
	U8       uint8   `json:"u8"`
	U16      uint16  `json:"u16"`
	U32      uint32  `json:"u32"`
	U64      uint64  `json:"u64"`
	F32      float32 `json:"f32"`
	F64      float64 `json:"f64"`
	S        string  `json:"s"`
	L        Label   `json:"l"`
	Untagged string
	//lint:ignore U1000 a field the decoders must leave alone
	unexported string
	Skip       string            `json:"-"`
	PS         *string           `json:"ps"`
	PPI        **int             `json:"ppi"`
	SS         []string          `json:"ss"`
	SI         []Inner           `json:"si"`
	SP         []*Inner          `json:"sp"`
	SSS        [][]string        `json:"sss"`
	Bytes      []byte            `json:"bytes"`
	Arr        [2]int            `json:"arr"`
	M          map[string]string `json:"m"`
	MI         map[string]int    `json:"mi"`
	ML         map[Label]Inner   `json:"ml"`
	MN         map[int]string    `json:"mn"`
	Any        any               `json:"any"`
	Num        json.Number       `json:"num"`
	In         Inner             `json:"in"`
	T          kapi.Time         `json:"t"`
	MT         kapi.MicroTime    `json:"mt"`
	FV         kapi.FieldsV1     `json:"fv"`
	FVP        *kapi.FieldsV1    `json:"fvp"`
	Raw        json.RawMessage   `json:"raw"`
	Dur        jsonDuration      `json:"dur"`
}

// jsonDuration decodes itself from text.
type jsonDuration struct{ s string }

func (d *jsonDuration) UnmarshalText(b []byte) error { d.s = string(b); return nil }

// tagged has a field json/v2 reads by an option encoding/json has not;
// quoted one read from a string: both are left to json/v2 whole.
type tagged struct {
	A string `json:"a,format:x"`
}

type quoted struct {
	Q int `json:"q,string"`
}

var types = []reflect.Type{
	reflect.TypeFor[all](),
	reflect.TypeFor[Inner](),
	reflect.TypeFor[widgetapi.Widget](),
	reflect.TypeFor[[]int](),
	reflect.TypeFor[map[string]string](),
}

const widgetJSON = `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w2","namespace":"default","uid":"3401c667-b1c0-434a-913f-06e3e675bf0e","generation":1,"creationTimestamp":"2026-11-25T16:53:02Z","labels":{"app":"loadtest","shard":"2","team":"platform","tier":"backend"},"managedFields":[{"manager":"curl","operation":"Update","apiVersion":"example.com/v1","time":"2026-11-25T16:53:02Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:shard":{},"f:team":{},"f:tier":{}}},"f:spec":{".":{},"f:color":{},"f:ports":{".":{},"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}},"k:{\"name\":\"metrics\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}},"f:replicas":{},"f:selector":{".":{},"f:app":{},"f:tier":{}},"f:size":{}}}}]},"spec":{"color":"Red","replicas":3,"size":7,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}],"selector":{"app":"loadtest","tier":"backend"}},"status":{}}`

// seeds are documents of each kind the Decoder reads, or leaves.
var seeds = []string{
	widgetJSON,
	`{"metadata":{"name":"x","creationTimestamp":null,"labels":{}},"spec":{"color":"Blue","replicas":null,"ports":[]},"status":{"conditions":[{"type":"Ready","lastTransitionTime":"2025-01-01T00:00:00+02:00"}]}}`,
	` { "b" : true , "i8" : -128 , "i16" : 32767 , "i32" : -2147483648 , "i64" : 9223372036854775807 } `,
	`{"u8":255,"u16":65535,"u32":4294967295,"u64":18446744073709551615,"f32":3.4e38,"f64":-1.5e-300}`,
	`{"i8":128}`, `{"u8":-0}`, `{"i64":-0}`, `{"i32":1.0}`, `{"i32":1e2}`, `{"i32":01}`, `{"f32":1e39}`, `{"f64":1e400}`,
	`{"s":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00","l":"é€😀"}`, `{"s":"\ud83d"}`, `{"s":"\udc00x"}`, "{\"s\":\"\xff\"}", `{"s":"` + "\x01" + `"}`,
	`{"Untagged":"u","unexported":"x"}`, `{"untagged":"u"}`, `{"Skip":"x"}`, `{"-":"x"}`,
	`{"ps":"p","ppi":7,"ss":["a","b",null],"si":[{"i":1},{"s":"x","m":{"k":"v"}}],"sp":[null,{"i":2}],"sss":[[],["x"],null]}`,
	`{"ps":null,"ppi":null,"ss":null,"si":null,"m":null,"mi":null}`,
	`{"ss":[],"m":{},"mi":{"a":1,"b":-2},"ml":{"k":{"i":3}},"mn":{"1":"one"}}`,
	`{"m":{"a":"1","a":"2"}}`, `{"mi":{"a":1,"a":1}}`, `{"b":true,"b":false}`, `{"e":"1","e":"2"}`, `{"inner":"x"}`, `{"zzz":1}`, `{"B":true}`,
	`{"m":{"a":null}}`, `{"mi":{"a":null}}`, `{"ml":{"a":null}}`,
	`{"bytes":"aGVsbG8=","arr":[1,2],"any":{"x":[1,"y",null,true]},"num":12.5,"raw":{"a" : [1]},"dur":"3s"}`,
	`{"any":{"x":1,"x":2}}`, `{"raw":{"a":1,"a":2}}`, `{"fv":{"f:a":{},"f:a":{}}}`,
	`{"in":{"r":{"r":{"i":1,"t":"2024-02-29T23:59:59.5Z"}}},"t":"2024-05-01T12:00:00Z","mt":"2024-05-01T12:00:00.123456789Z","fv":{"f:x" : {}},"fvp":{"f:y":{}}}`,
	`{"t":null,"mt":"","fv":null,"fvp":null}`, `{"t":"9999-12-31T23:00:00-02:00"}`, `{"t":"bad"}`, `{"t":1}`, `{"in":{"tp":null}}`, `{"in":{"tp":"2024-05-01T12:00:00Z"}}`,
	`{"b":"true"}`, `{"s":1}`, `{"ss":"x"}`, `{"m":[]}`, `{"in":[]}`, `{"i64":"1"}`,
	`{"s":"x"} x`, `{"s":"x"`, `{"s":"x",}`, `{,}`, `{"s" "x"}`, `[1,2,3]`, `[1,]`, `[]`, `null`, ``, `{}`, ` {} `,
	`{"a":"x"}`,
	`[` + strings.Repeat(`1,`, 600) + `2]`,
	`{"in":` + strings.Repeat(`{"r":`, 1200) + `{}` + strings.Repeat(`}`, 1200) + `}`,
}

// check decodes data into a value of t with a Decoder and tells the first
// difference from what codec's decoding of a request body makes of it: a
// document json/v2 decodes (by UnmarshalKnownJSON's options) is decoded
// to the same value, or left to it; one it refuses is left to it, unless
// codec's check finds nothing in it and encoding/json's rules (the
// fallback body decoding) decode it to the same value. decoded says
// whether the Decoder decoded it.
func check(t *testing.T, typ reflect.Type, data []byte) (decoded bool) {
	t.Helper()
	dec := jsonread.New(typ, fallback)
	if dec == nil {
		t.Fatalf("New(%v) = nil", typ)
	}
	got := reflect.New(typ)
	decoded = dec.Decode(data, got.Interface())
	want := reflect.New(typ)
	err := jsonv2.Unmarshal(data, want.Interface(), known)
	switch {
	case !decoded:
	case err == nil:
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("%v %q:\ndecoded %#v,\njson/v2 %#v", typ, data, got.Elem(), want.Elem())
		}
	default:
		report, _, cerr := codec.CheckJSONFields(data, typ)
		v1 := reflect.New(typ)
		uerr := codec.UnmarshalJSON(data, v1.Interface())
		if cerr != nil || !report.Empty() || uerr != nil || !reflect.DeepEqual(got.Interface(), v1.Interface()) {
			t.Errorf("%v %q: decoded %#v where json/v2 says %v (check: %+v, %v; encoding/json: %v, %#v)", typ, data, got.Elem(), err, report, cerr, uerr, v1.Elem())
		}
	}
	return decoded
}

func TestDecoderAgainstJSONv2(t *testing.T) {
	for _, typ := range types {
		for _, s := range seeds {
			check(t, typ, []byte(s))
		}
	}
}

// The bodies of common writes are decoded without falling back whole:
// a stored widget, a created one with null fields, every kind of field.
func TestDecoderDecodesCommonBodies(t *testing.T) {
	for _, s := range []string{seeds[0], seeds[1]} {
		if !check(t, reflect.TypeFor[widgetapi.Widget](), []byte(s)) {
			t.Errorf("left %s to json/v2", s)
		}
	}
	for _, i := range []int{2, 3, 12, 21, 22, 23, 33, 36, 37} {
		if !check(t, reflect.TypeFor[all](), []byte(seeds[i])) {
			t.Errorf("left %s to json/v2", seeds[i])
		}
	}
}

// New refuses what it would leave to the fallback whole.
func TestNewRefusesWhatItCannotRead(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[any](), reflect.TypeFor[[]byte](), reflect.TypeFor[json.Number](), reflect.TypeFor[tagged](), reflect.TypeFor[quoted](), reflect.TypeFor[map[int]string]()} {
		if jsonread.New(typ, fallback) != nil {
			t.Errorf("New(%v) is not nil", typ)
		}
	}
}

// A decoder is reused: strings it shares between documents stay theirs.
func TestDecoderStringsAreTheirs(t *testing.T) {
	dec := jsonread.New(reflect.TypeFor[Inner](), fallback)
	var a, b Inner
	if !dec.Decode([]byte(`{"s":"one","m":{"k":"v1"}}`), &a) || !dec.Decode([]byte(`{"s":"two","m":{"k":"v2"}}`), &b) {
		t.Fatal("not decoded")
	}
	if a.S != "one" || a.M["k"] != "v1" || b.S != "two" || b.M["k"] != "v2" {
		t.Errorf("decoded %+v and %+v", a, b)
	}
}

func FuzzDecoder(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range types {
			check(t, typ, []byte(s))
		}
	})
}

// widgetAllocs is what decoding widgetJSON allocates once its short
// strings are in the decoder's cache: the widget's maps, slices, longer
// strings and field set. json/v2 makes 23 of the same document.
const widgetAllocs = 12

func TestDecoderAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
	dec := jsonread.New(reflect.TypeFor[widgetapi.Widget](), fallback)
	data := []byte(widgetJSON)
	allocs := testing.AllocsPerRun(100, func() {
		if !dec.Decode(data, new(widgetapi.Widget)) {
			t.Fatal("not decoded")
		}
	})
	if allocs > widgetAllocs {
		t.Errorf("decoding a widget allocates %v times, want at most %d", allocs, widgetAllocs)
	}
}

// Label and annotation keys are prefixed names longer than the strings the
// decoder shares by default, repeated in every object: once read, decoding
// them again allocates only the widget and its two maps (two blocks
// each), not the keys.
func TestDecoderSharesLongKeys(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
	dec := jsonread.New(reflect.TypeFor[widgetapi.Widget](), fallback)
	data := []byte(`{"metadata":{"labels":{"app.kubernetes.io/name":"shop","app.kubernetes.io/component":"web"},"annotations":{"example.com/revision":"42"}}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if !dec.Decode(data, new(widgetapi.Widget)) {
			t.Fatal("not decoded")
		}
	})
	if allocs > 5 {
		t.Errorf("decoding two maps of long keys allocates %v times, want 5 (the widget and its maps)", allocs)
	}
}

// createBody is a widget as the load harness creates and replaces them.
const createBody = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-12","namespace":"loadtest-write","resourceVersion":"1234","labels":{"app":"loadtest","tier":"backend","team":"platform","shard":"4"}},"spec":{"color":"Red","replicas":3,"size":7,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}],"selector":{"app":"loadtest","tier":"backend"}}}`

// BenchmarkWidget decodes a stored widget and one as the load harness
// sends it, by json/v2 (as codec's UnmarshalKnownJSON did) and by a
// Decoder.
func BenchmarkWidget(b *testing.B) {
	for _, doc := range []struct{ name, json string }{{"stored", widgetJSON}, {"harness", createBody}} {
		data := []byte(doc.json)
		b.Run(doc.name+"/json.v2", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := jsonv2.Unmarshal(data, new(widgetapi.Widget), known); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(doc.name+"/Decoder", func(b *testing.B) {
			dec := jsonread.New(reflect.TypeFor[widgetapi.Widget](), fallback)
			b.ReportAllocs()
			for b.Loop() {
				if !dec.Decode(data, new(widgetapi.Widget)) {
					b.Fatal("not decoded")
				}
			}
		})
	}
}

// anyFields decodes itself from an object of any members, as a custom
// resource does (codec.AnyFields).
type anyFields struct{ raw string }

func (a *anyFields) UnmarshalJSON(b []byte) error { a.raw = string(b); return nil }
func (a *anyFields) AnyJSONFields()               {}

// A type of any fields is left to the fallback when a member name repeats
// anywhere in it (json/v2 refuses that: a custom resource's strict decoding
// error); other types that decode themselves get their value as it is.
func TestDecoderAnyFieldsRepeats(t *testing.T) {
	type holder struct {
		Spec anyFields       `json:"spec"`
		Raw  json.RawMessage `json:"raw"`
	}
	dec := jsonread.New(reflect.TypeFor[holder](), fallback)
	for doc, want := range map[string]bool{
		`{"spec":{"name":"a","x":{"name":"b"}}}`:    true,
		`{"spec":{"name":"a","name":"b"}}`:          false,
		`{"spec":{"x":{"n":1,"n":2}}}`:              false,
		`{"spec":{"name":"a"},"raw":{"a":1,"a":2}}`: true,
	} {
		var h holder
		if got := dec.Decode([]byte(doc), &h); got != want {
			t.Errorf("Decode(%s) = %v, want %v", doc, got, want)
		}
	}
}
