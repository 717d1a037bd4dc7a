package codec_test

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
)

type Widget struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	Spec            WidgetSpec   `json:"spec"`
	Status          WidgetStatus `json:"status,omitempty"`
}

type WidgetSpec struct {
	Color    string            `json:"color,omitempty"`
	Replicas *int32            `json:"replicas,omitempty"`
	Ports    []WidgetPort      `json:"ports,omitempty"`
	Selector map[string]string `json:"selector,omitempty"`
}

type WidgetPort struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

type WidgetStatus struct {
	Conditions []kapi.Condition `json:"conditions,omitempty"`
}

// Zoo has a field of each shape CheckJSONFields knows.
type Zoo struct {
	*ZooEmbedded `json:",inline"`
	Pointer      *ZooInner           `json:"p,omitempty"`
	Struct       ZooInner            `json:"s"`
	Map          map[string]ZooInner `json:"m,omitempty"`
	IntKeys      map[int]string      `json:"ik,omitempty"`
	List         []*ZooInner         `json:"l,omitempty"`
	Array        [2]ZooInner         `json:"arr"`
	Any          any                 `json:"any,omitempty"`
	AnyMap       map[string]any      `json:"anymap,omitempty"`
	Raw          json.RawMessage     `json:"raw,omitempty"`
	Bytes        []byte              `json:"bytes,omitempty"`
	Time         kapi.Time           `json:"t"`
	Strings      []string            `json:"strs,omitempty"`
	Self         *Zoo                `json:"self,omitempty"`
	Untagged     string
	Hidden       string `json:"-"`
	//lint:ignore U1000 unexported on purpose: the codec must skip it
	unexported string
}

type ZooEmbedded struct {
	Embedded string `json:"e,omitempty"`
}

type ZooInner struct {
	A      string `json:"a,omitempty"`
	Quoted *int64 `json:"q,string,omitempty"`
	Nums   []int  `json:"n,omitempty"`
}

// Numbers has fields whose repeated values tell which one was decoded.
type Numbers struct {
	N    json.Number `json:"n,omitempty"`
	F    float32     `json:"f,omitempty"`
	List []Numbers   `json:"l,omitempty"`
	Kid  *Numbers    `json:"k,omitempty"`
}

var (
	widgetType  = reflect.TypeFor[Widget]()
	zooType     = reflect.TypeFor[Zoo]()
	numbersType = reflect.TypeFor[Numbers]()
)

func TestCheckJSONFields(t *testing.T) {
	for _, tc := range []struct {
		name       string
		typ        reflect.Type // Widget if nil
		doc        string
		duplicates []string
		unknown    []string
		cleaned    string // "" for none
	}{
		{name: "clean", doc: widgetJSON},
		{
			name:    "unknown top-level",
			doc:     `{"apiVersion":"example.com/v1","kind":"Widget","extra":{"a":[1,2]},"spec":{"color":"red"}}`,
			unknown: []string{"extra"},
			cleaned: `{"apiVersion":"example.com/v1","kind":"Widget","spec":{"color":"red"}}`,
		},
		{
			name:    "unknown nested",
			doc:     `{"spec":{"color":"red","bogus":true}}`,
			unknown: []string{"spec.bogus"},
			cleaned: `{"spec":{"color":"red"}}`,
		},
		{
			name:    "unknown in a list item",
			doc:     `{"spec":{"ports":[{"name":"http","port":80},{"name":"https","port":443,"extra":1}]}}`,
			unknown: []string{"spec.ports[1].extra"},
			cleaned: `{"spec":{"ports":[{"name":"http","port":80},{"name":"https","port":443}]}}`,
		},
		{
			name:    "unknown in a condition",
			doc:     `{"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2024-01-02T03:04:05Z","reason":"r","message":"m","bogus":1}]}}`,
			unknown: []string{"status.conditions[0].bogus"},
			cleaned: `{"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2024-01-02T03:04:05Z","reason":"r","message":"m"}]}}`,
		},
		{
			name:    "case differs",
			doc:     `{"Spec":{"color":"red"},"spec":{"Color":"blue","color":"green"}}`,
			unknown: []string{"Spec", "spec.Color"},
			cleaned: `{"spec":{"color":"green"}}`,
		},
		{
			name:       "duplicate top-level",
			doc:        `{"kind":"Gadget","apiVersion":"v1","kind":"Widget"}`,
			duplicates: []string{"kind"},
		},
		{
			name:       "duplicate nested",
			doc:        `{"spec":{"color":"red","replicas":1,"color":"blue"}}`,
			duplicates: []string{"spec.color"},
		},
		{
			name:       "duplicates and unknown fields, each in document order",
			doc:        `{"extra":1,"spec":{"color":"a","bogus":2,"color":"b"},"kind":"W","kind":"W","spec":{"x":1}}`,
			duplicates: []string{"spec.color", "kind", "spec"},
			unknown:    []string{"extra", "spec.bogus", "spec.x"},
			cleaned:    `{"spec":{"color":"a","color":"b"},"kind":"W","kind":"W","spec":{}}`,
		},
		{
			name:    "unknown twice is reported once",
			doc:     `{"extra":1,"extra":2,"kind":"W"}`,
			unknown: []string{"extra"},
			cleaned: `{"kind":"W"}`,
		},
		{
			name:    "unknown in metadata, any label",
			doc:     `{"metadata":{"name":"a","labels":{"Anything":"goes","bogus":"too"},"bogus":1}}`,
			unknown: []string{"metadata.bogus"},
			cleaned: `{"metadata":{"name":"a","labels":{"Anything":"goes","bogus":"too"}}}`,
		},
		{
			name:       "duplicate label",
			doc:        `{"metadata":{"labels":{"app":"a","tier":"web","app":"b"}}}`,
			duplicates: []string{"metadata.labels.app"},
		},
		{
			name:       "duplicate map key in spec",
			doc:        `{"spec":{"selector":{"app":"a","app":"b"}}}`,
			duplicates: []string{"spec.selector.app"},
		},
		{
			name:       "escaped names are the same name",
			doc:        `{"sp\u0065c":{"color":"red"},"spec":{"color":"blue"}}`,
			duplicates: []string{"spec"},
		},
		{
			name:    "large numbers kept exactly",
			doc:     `{"metadata":{"generation":9007199254740993,"bogus":1.0000000000000000001e400}}`,
			unknown: []string{"metadata.bogus"},
			cleaned: `{"metadata":{"generation":9007199254740993}}`,
		},
		{
			name:       "large number repeated",
			doc:        `{"metadata":{"generation":1,"generation":9007199254740993}}`,
			duplicates: []string{"metadata.generation"},
		},
		{
			name:       "repeated objects merge",
			doc:        `{"spec":{"color":"red","replicas":1},"spec":{"replicas":2}}`,
			duplicates: []string{"spec"},
		},
		{
			name:       "null after a string is a no-op",
			doc:        `{"spec":{"color":"red","color":null}}`,
			duplicates: []string{"spec.color"},
		},
		{
			name:       "null after a pointer clears it",
			doc:        `{"spec":{"replicas":3,"replicas":null}}`,
			duplicates: []string{"spec.replicas"},
		},
		{
			name:       "repeated list decodes into the earlier items",
			doc:        `{"spec":{"ports":[{"name":"a","port":1},{"name":"x","port":2}],"ports":[{"name":"b"}]}}`,
			duplicates: []string{"spec.ports"},
		},
		{
			name:       "repeated value that fails to decode still fails",
			doc:        `{"spec":{"replicas":"three","replicas":3}}`,
			duplicates: []string{"spec.replicas"},
		},
		{
			name: "values that decode themselves are not looked into",
			doc:  `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{},"f:spec":{},"Bogus":1}}]}}`,
		},
		{
			name: "wrong kind of value is left to the decoder",
			doc:  `{"spec":[{"bogus":1}],"status":"x"}`,
		},
		{
			name:    "whitespace",
			doc:     " {\n \"spec\" : { \"color\" : \"red\" , \"Bogus\" : [ 1 , 2 ] } } \n",
			unknown: []string{"spec.Bogus"},
			cleaned: " {\n \"spec\" : { \"color\" : \"red\" } } \n",
		},
		{
			name:    "map of structs",
			typ:     zooType,
			doc:     `{"m":{"k":{"a":"x","extra":1},"k.2":{"b":2}}}`,
			unknown: []string{"m.k.extra", "m.k.2.b"},
			cleaned: `{"m":{"k":{"a":"x"},"k.2":{}}}`,
		},
		{
			name:       "interface values: duplicates, no unknown fields",
			typ:        zooType,
			doc:        `{"any":{"x":[{"y":1,"y":2}],"Z":1},"anymap":{"a":{"b":1,"b":2},"a":3}}`,
			duplicates: []string{"any.x[0].y", "anymap.a.b", "anymap.a"},
		},
		{
			name:    "promoted through a pointer, untagged, hidden, unexported",
			typ:     zooType,
			doc:     `{"e":"x","Untagged":"u","untagged":"v","Hidden":1,"-":2,"unexported":3}`,
			unknown: []string{"untagged", "Hidden", "-", "unexported"},
			cleaned: `{"e":"x","Untagged":"u"}`,
		},
		{
			name:    "array elements beyond its length are not decoded",
			typ:     zooType,
			doc:     `{"arr":[{"a":"1"},{"a":"2","x":1},{"bogus":3}]}`,
			unknown: []string{"arr[1].x"},
			cleaned: `{"arr":[{"a":"1"},{"a":"2"},{"bogus":3}]}`,
		},
		{
			name:       "quoted numbers",
			typ:        zooType,
			doc:        `{"s":{"q":"1","q":"9007199254740993"}}`,
			duplicates: []string{"s.q"},
		},
		{
			name:       "recursive type",
			typ:        zooType,
			doc:        `{"self":{"self":{"self":{"s":{"a":"x","a":"y","b":1}}}}}`,
			duplicates: []string{"self.self.self.s.a"},
			unknown:    []string{"self.self.self.s.b"},
			cleaned:    `{"self":{"self":{"self":{"s":{"a":"x","a":"y"}}}}}`,
		},
		{
			name:       "dropped value that fails to decode still fails",
			typ:        zooType,
			doc:        `{"p":{"q":"x","b":1},"p":null}`,
			duplicates: []string{"p"},
			unknown:    []string{"p.b"},
			cleaned:    `{"p":{"q":"x"},"p":null}`,
		},
		{
			name:       "dropped value with unknown fields only",
			typ:        zooType,
			doc:        `{"p":{"Q":"x"},"p":null}`,
			duplicates: []string{"p"},
			unknown:    []string{"p.Q"},
			cleaned:    `{"p":{},"p":null}`,
		},
		{
			name:       "dropped value that fails to decode and has duplicates",
			typ:        zooType,
			doc:        `{"m":{"k":{"q":"x","a":"1","a":"2"},"k":{}}}`,
			duplicates: []string{"m.k.a", "m.k"},
		},
		{
			name:       "list item hidden by a shorter list fails to decode",
			typ:        zooType,
			doc:        `{"l":[{"a":"1"},{"q":"x"}],"l":[{"a":"2"}],"arr":[{"a":"1"},{"q":"y"}],"arr":[{"a":"2"}]}`,
			duplicates: []string{"l", "arr"},
		},
		{
			name:       "slice of scalars repeated",
			typ:        zooType,
			doc:        `{"strs":["a","b","c"],"strs":["x",null]}`,
			duplicates: []string{"strs"},
		},
		{
			name:       "integer map keys",
			typ:        zooType,
			doc:        `{"ik":{"1":"a","01":"b","1":"c"}}`,
			duplicates: []string{"ik.1"},
		},
		{
			name:       "json.Number: the last one wins",
			typ:        numbersType,
			doc:        `{"n":1,"n":2}`,
			duplicates: []string{"n"},
		},
		{
			name:       "json.Number: the last one wins with unknown fields around",
			typ:        numbersType,
			doc:        `{"n":1,"N":3,"n":2}`,
			duplicates: []string{"n"},
			unknown:    []string{"N"},
			cleaned:    `{"n":1,"n":2}`,
		},
		{
			name:       "an earlier value that fails to decode fails",
			typ:        numbersType,
			doc:        `{"f":3.402823475e38,"f":1}`,
			duplicates: []string{"f"},
		},
		{
			name:    "unknown first, with the comma after it",
			typ:     numbersType,
			doc:     `{"x":1,"n":2}`,
			unknown: []string{"x"},
			cleaned: `{"n":2}`,
		},
		{
			name:    "unknown last, with the comma before it",
			typ:     numbersType,
			doc:     `{"n":2, "x":1 }`,
			unknown: []string{"x"},
			cleaned: `{"n":2 }`,
		},
		{
			name:    "runs of unknown fields",
			typ:     numbersType,
			doc:     `{"a":1,"b":2,"n":1,"c":3,"d":4,"f":1,"e":5}`,
			unknown: []string{"a", "b", "c", "d", "e"},
			cleaned: `{"n":1,"f":1}`,
		},
		{
			name:    "only unknown fields",
			typ:     numbersType,
			doc:     `{ "a" : 1 , "b" : {"n":1} }`,
			unknown: []string{"a", "b"},
			cleaned: `{  }`,
		},
		{
			name:    "unknown fields in nested objects and lists",
			typ:     numbersType,
			doc:     `{"l":[{"x":1},{"n":1,"x":2},{"x":3,"f":1}],"k":{"n":1,"Bogus":2},"n":3}`,
			unknown: []string{"l[0].x", "l[1].x", "l[2].x", "k.Bogus"},
			cleaned: `{"l":[{},{"n":1},{"f":1}],"k":{"n":1},"n":3}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ := tc.typ
			if typ == nil {
				typ = widgetType
			}
			report, cleaned, err := codec.CheckJSONFields([]byte(tc.doc), typ)
			if err != nil {
				t.Fatalf("CheckJSONFields: %v", err)
			}
			if !slices.Equal(report.Duplicates, tc.duplicates) || !slices.Equal(report.Unknown, tc.unknown) {
				t.Errorf("report = %q, %q; want %q, %q", report.Duplicates, report.Unknown, tc.duplicates, tc.unknown)
			}
			if report.Empty() != (tc.duplicates == nil && tc.unknown == nil) {
				t.Errorf("Empty() = %v", report.Empty())
			}
			if tc.cleaned == "" && cleaned != nil || tc.cleaned != "" && string(cleaned) != tc.cleaned {
				t.Errorf("cleaned = %#q; want %#q", cleaned, tc.cleaned)
			}
			checkDecodesAsKube(t, typ, []byte(tc.doc), cleaned)
		})
	}
}

// checkDecodesAsKube checks that decoding cleaned (or data, if nil) with
// encoding/json gives what kube-apiserver gives for data.
func checkDecodesAsKube(t *testing.T, typ reflect.Type, data, cleaned []byte) {
	t.Helper()
	body := data
	if cleaned != nil {
		body = cleaned
	}
	got, want := reflect.New(typ), reflect.New(typ)
	gotErr := json.Unmarshal(body, got.Interface())
	wantErr := json.Unmarshal(asKube(typ, data), want.Interface())
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("decoding %#q: %v; kube-apiserver would decode %#q: %v", body, gotErr, data, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got.Interface(), want.Interface()) {
		t.Fatalf("decoding %#q gives\n%+v\nkube-apiserver would decode %#q as\n%+v", body, got.Elem(), data, want.Elem())
	}
}

func TestCheckJSONFieldsDecodesAsKube(t *testing.T) {
	doc := `{"kind":"Gadget","Kind":"Thing","kind":"Widget",
		"metadata":{"name":"w","labels":{"a":"1","a":"2"}},
		"spec":{"color":"red","Color":"blue","bogus":1,"ports":[{"name":"http","Port":8080,"port":80}]},
		"spec":{"replicas":2}}`
	_, cleaned, err := codec.CheckJSONFields([]byte(doc), widgetType)
	if err != nil {
		t.Fatal(err)
	}
	var got Widget
	if err := json.Unmarshal(cleaned, &got); err != nil {
		t.Fatal(err)
	}
	two := int32(2)
	want := Widget{
		TypeMeta:   kapi.TypeMeta{Kind: "Widget"},
		ObjectMeta: kapi.ObjectMeta{Name: "w", Labels: map[string]string{"a": "2"}},
		Spec:       WidgetSpec{Color: "red", Replicas: &two, Ports: []WidgetPort{{Name: "http", Port: 80}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded cleaned = %+v; want %+v", got, want)
	}
	var plain Widget
	if err := json.Unmarshal([]byte(doc), &plain); err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(plain, want) {
		t.Errorf("encoding/json decodes the document as kube-apiserver does; the test shows nothing")
	}
}

func TestCheckJSONFieldsEmbedding(t *testing.T) {
	type inner struct {
		Deep string `json:"deep"`
	}
	type left struct {
		Name   string `json:"name"`
		Both   string
		Tagged string `json:"tagged"`
		inner
	}
	type Right struct {
		Name   string `json:"name"`
		Both   string
		Tagged string
		Deep   string `json:"deep"`
	}
	type clash struct {
		left
		*Right `json:",inline"`
		Own    string `json:"own"`
	}
	for _, tc := range []struct {
		doc     string
		unknown []string
	}{
		{`{"own":"o","tagged":"t","deep":"d"}`, nil},           // tagged beats untagged; shallower wins
		{`{"name":"n","Both":"b"}`, []string{"name", "Both"}},  // a tie drops the name
		{`{"inner":{},"Name":"n"}`, []string{"inner", "Name"}}, // no field is named either
	} {
		report, _, err := codec.CheckJSONFields([]byte(tc.doc), reflect.TypeFor[*clash]())
		if err != nil || !slices.Equal(report.Unknown, tc.unknown) || report.Duplicates != nil {
			t.Errorf("CheckJSONFields(%s) = %+v, %v; want unknown %q", tc.doc, report, err, tc.unknown)
		}
		// encoding/json agrees: what is unknown is not decoded.
		var v clash
		if err := json.Unmarshal([]byte(tc.doc), &v); err != nil {
			t.Fatal(err)
		}
		if tc.unknown != nil && !reflect.DeepEqual(v, clash{}) {
			t.Errorf("encoding/json decodes %s as %+v", tc.doc, v)
		}
	}
}

func TestCheckJSONFieldsSyntax(t *testing.T) {
	for _, doc := range []string{
		``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `[1,]`, `{"a":1}{}`, `{"a":1} x`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":.5}`, `{"a":tru}`, `{"a":nul}`, `{"a":"\x"}`,
		`{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":"unterminated}`, `{"a" 1}`, `{a:1}`, `{"spec":{"color":"red"}`,
		`{"spec":{"ports":[{"name":"a"}}}`, `{"metadata":{"labels":{"a":"b",}}}`,
	} {
		if _, _, err := codec.CheckJSONFields([]byte(doc), widgetType); err == nil {
			t.Errorf("CheckJSONFields(%#q): no error", doc)
		}
		if json.Valid([]byte(doc)) {
			t.Errorf("json.Valid(%#q)", doc)
		}
	}
	for _, doc := range []string{`{}`, " {}\n", `null`, `[]`, `"x"`, `-0.5e+10`, `{"kind":"\u00e9\ud83d\ude00\ud800"}`, "{\"kind\":\"\xff\"}"} {
		report, cleaned, err := codec.CheckJSONFields([]byte(doc), widgetType)
		if err != nil || cleaned != nil || !report.Empty() {
			t.Errorf("CheckJSONFields(%#q) = %+v, %q, %v", doc, report, cleaned, err)
		}
	}
}

func TestCheckJSONFieldsDepth(t *testing.T) {
	nested := func(depth int) []byte {
		// The object is one level, the arrays in it the others.
		return []byte(`{"any":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`)
	}
	for _, typ := range []reflect.Type{zooType, widgetType} { // checked, and skipped as unknown
		if _, _, err := codec.CheckJSONFields(nested(10000), typ); err != nil {
			t.Errorf("%v, depth 10000: %v", typ, err)
		}
		if _, _, err := codec.CheckJSONFields(nested(10001), typ); err == nil {
			t.Errorf("%v, depth 10001: no error", typ)
		}
	}
	if !json.Valid(nested(10000)) || json.Valid(nested(10001)) {
		t.Errorf("encoding/json's limit is not 10000")
	}
	deep := []byte(`{"any":` + strings.Repeat(`{"a":`, 9998) + `1` + strings.Repeat(`}`, 9998) + `,"any":1}`)
	report, cleaned, err := codec.CheckJSONFields(deep, zooType)
	if err != nil || !slices.Equal(report.Duplicates, []string{"any"}) || cleaned != nil {
		t.Errorf("deep duplicate: %+v, %.40q, %v", report, cleaned, err)
	}
	checkDecodesAsKube(t, zooType, deep, cleaned)
}

func TestCheckJSONFieldsReportLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"kind":"W"`)
	for i := range 150 {
		fmt.Fprintf(&b, `,"x%d":1,"kind":"W"`, i)
	}
	b.WriteString(`}`)
	report, cleaned, err := codec.CheckJSONFields([]byte(b.String()), widgetType)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(report.Unknown) + len(report.Duplicates); n != 100 || len(report.Duplicates) != 1 {
		t.Errorf("reported %d unknown and %d duplicate fields; want 100 in all, the duplicate once", len(report.Unknown), len(report.Duplicates))
	}
	// The unknown fields past the limit are cut out too.
	if want := `{"kind":"W"` + strings.Repeat(`,"kind":"W"`, 150) + `}`; string(cleaned) != want {
		t.Errorf("cleaned = %.80q", cleaned)
	}
}

// TestCheckJSONFieldsHostile feeds bodies of 3 MiB built to make the check
// costly: repeated names under long paths, in maps, interface values and
// recursive types. Each must allocate little, and report little.
func TestCheckJSONFieldsHostile(t *testing.T) {
	const size = 3 << 20
	longKey := strings.Repeat("K", 1<<20)
	repeat := func(head, member, tail string) []byte {
		n := (size - len(head) - len(tail)) / len(member)
		return []byte(head + strings.Repeat(member, n) + tail)
	}
	var distinct strings.Builder // 100 names repeated under a key of 2 MiB
	distinct.WriteString(`{"anymap":{"` + strings.Repeat("K", 2<<20) + `":{"a":0`)
	for i := range 100 {
		fmt.Fprintf(&distinct, `,"a%d":1,"a%d":1`, i, i)
	}
	distinct.WriteString(`}}}`)
	var wide strings.Builder // many keys in one interface value
	wide.WriteString(`{"any":{"k":0`)
	for i := 0; wide.Len() < size; i++ {
		fmt.Fprintf(&wide, `,"k%d":1`, i)
	}
	wide.WriteString(`,"k0":2}}`)
	const depth = 9990
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		doc  []byte
	}{
		{"map[string]any: a long key, then one name repeated", zooType, repeat(`{"anymap":{"`+longKey+`":{"x":1`, `,"x":1`, `}}}`)},
		{"any: a long key, then one name repeated", zooType, repeat(`{"any":{"`+longKey+`":[{"x":1`, `,"x":1`, `}]}}`)},
		{"recursive struct: deep, then one unknown name repeated", zooType,
			repeat(strings.Repeat(`{"self":`, depth)+`{"y":1`, `,"y":1`, `}`+strings.Repeat(`}`, depth))},
		{"recursive map: deep, then one name repeated", oddType,
			repeat(`{"sm":`+strings.Repeat(`{"m":`, depth)+`{"x":{}`, `,"x":{}`, `}`+strings.Repeat(`}`, depth)+`}`)},
		{"recursive slice: a long key, then one unknown name repeated", oddType,
			repeat(`{"r":{"byName":{"`+longKey+`":{"kids":[{"x":1`, `,"x":1`, `}]}}}}`)},
		{"100 distinct names repeated under a long key", zooType, []byte(distinct.String())},
		{"many keys in an interface value", zooType, []byte(wide.String())},
		{"unknown and known fields in turn", numbersType, repeat(`{"n":1`, `,"x":1,"n":1`, `}`)},
		{"many list items and an unknown field", widgetType, repeat(`{"bogus":1,"spec":{"ports":[{}`, `,{}`, `]}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			report, cleaned, err := codec.CheckJSONFields(tc.doc, tc.typ)
			runtime.ReadMemStats(&after)
			if err != nil || report.Empty() {
				t.Fatalf("CheckJSONFields = %v, %v", report.Empty(), err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			if alloc > 64<<20 {
				t.Errorf("CheckJSONFields of %d bytes allocated %d MiB", len(tc.doc), alloc>>20)
			}
			t.Logf("%d bytes: allocated %.1f MiB, reported %d paths", len(tc.doc), float64(alloc)/(1<<20), len(report.Duplicates)+len(report.Unknown))
			reported := 0
			for _, p := range slices.Concat(report.Duplicates, report.Unknown) {
				reported += len(p)
				if len(p) > 1024 {
					t.Errorf("path of %d bytes", len(p))
				}
			}
			if reported > 100<<10 {
				t.Errorf("report of %d bytes", reported)
			}
			if cleaned != nil && !json.Valid(cleaned) {
				t.Errorf("cleaned is not JSON")
			}
		})
	}
}

func TestCheckJSONFieldsLongPaths(t *testing.T) {
	key := strings.Repeat("é", 1000) // 2000 bytes, two a rune
	doc := `{"anymap":{"` + key + `":{"a1":1,"a1":1,"a2":1,"a2":1}}}`
	report, _, err := codec.CheckJSONFields([]byte(doc), zooType)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Duplicates) != 2 {
		t.Fatalf("duplicates %d, want 2: distinct paths stay distinct when cut", len(report.Duplicates))
	}
	for i, p := range report.Duplicates {
		start, end := "anymap.é", fmt.Sprintf("é.a%d", i+1)
		if len(p) > 1024 || !utf8.ValidString(p) || !strings.HasPrefix(p, start) || !strings.HasSuffix(p, end) || !strings.Contains(p, "é...é") {
			t.Errorf("path %q (%d bytes): want at most 1024 bytes of UTF-8, %q...%q", p, len(p), start, end)
		}
	}
	short := `{"anymap":{"` + strings.Repeat("k", 1015) + `":{"a":1,"a":1}}}` // a path of 1024 bytes
	if report, _, _ := codec.CheckJSONFields([]byte(short), zooType); len(report.Duplicates) != 1 || len(report.Duplicates[0]) != 1024 || strings.Contains(report.Duplicates[0], "...") {
		t.Errorf("a path of 1024 bytes was cut: %+v", report)
	}
}

func TestCheckJSONFieldsConcurrent(t *testing.T) {
	type fresh struct {
		Spec struct {
			Color string `json:"color"`
		} `json:"spec"`
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				report, cleaned, err := codec.CheckJSONFields([]byte(`{"spec":{"color":"a","bogus":1}}`), reflect.TypeFor[fresh]())
				if err != nil || !slices.Equal(report.Unknown, []string{"spec.bogus"}) || string(cleaned) != `{"spec":{"color":"a"}}` {
					t.Errorf("CheckJSONFields = %+v, %s, %v", report, cleaned, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func ExampleCheckJSONFields() {
	type Spec struct {
		Color string `json:"color"`
	}
	type Widget struct {
		Spec Spec `json:"spec"`
	}
	body := []byte(`{"spec":{"color":"red","Color":"blue","size":3,"color":"green"}}`)
	report, cleaned, err := codec.CheckJSONFields(body, reflect.TypeFor[Widget]())
	if err != nil {
		panic(err)
	}
	for _, path := range report.Duplicates {
		fmt.Printf("duplicate field %q\n", path)
	}
	for _, path := range report.Unknown {
		fmt.Printf("unknown field %q\n", path)
	}
	fmt.Println(string(cleaned))
	var w Widget
	if err := json.Unmarshal(cleaned, &w); err != nil {
		panic(err)
	}
	fmt.Println(w.Spec.Color)
	// Output:
	// duplicate field "spec.color"
	// unknown field "spec.Color"
	// unknown field "spec.size"
	// {"spec":{"color":"red","color":"green"}}
	// green
}

// widgetJSON is a Widget of about 1 KiB with nothing wrong in it.
const widgetJSON = `{
  "apiVersion": "example.com/v1",
  "kind": "Widget",
  "metadata": {
    "name": "frontend",
    "namespace": "default",
    "uid": "6f1c7a52-3c1e-4b8e-9f5a-0d2d3c4b5a69",
    "resourceVersion": "123456",
    "generation": 3,
    "creationTimestamp": "2024-05-01T12:00:00Z",
    "labels": {"app": "frontend", "tier": "web", "team": "storefront"},
    "annotations": {"example.com/owner": "storefront@example.com", "example.com/revision": "42"},
    "finalizers": ["example.com/cleanup"],
    "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "example.com/v1",
      "time": "2024-05-01T12:00:00Z", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": {"f:color": {}, "f:replicas": {}, "f:ports": {}}}}]
  },
  "spec": {
    "color": "blue",
    "replicas": 3,
    "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}, {"name": "metrics", "port": 9090}],
    "selector": {"app": "frontend", "tier": "web"}
  },
  "status": {
    "conditions": [
      {"type": "Ready", "status": "True", "observedGeneration": 3, "lastTransitionTime": "2024-05-01T12:01:00Z",
       "reason": "AllReplicasReady", "message": "3 of 3 replicas are ready"},
      {"type": "Progressing", "status": "False", "observedGeneration": 3, "lastTransitionTime": "2024-05-01T12:01:00Z",
       "reason": "Complete", "message": "rollout complete"}
    ]
  }
}`

func BenchmarkCheckJSONFields(b *testing.B) {
	data := []byte(widgetJSON)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		report, cleaned, err := codec.CheckJSONFields(data, widgetType)
		if err != nil || !report.Empty() || cleaned != nil {
			b.Fatal(report, err)
		}
	}
}

func FuzzCheckJSONFields(f *testing.F) {
	for _, s := range []string{
		widgetJSON,
		`{"spec":{"color":"a","bogus":2,"color":"b"},"Spec":1,"spec":{"ports":[{"name":"x","port":1},{"Name":"y"}]}}`,
		`{"spec":{"ports":[{"name":"a","port":1},{"name":"x"}],"ports":[{"name":"b"}],"ports":[null,{"port":2},{}]}}`,
		`{"spec":{"replicas":1,"replicas":null,"replicas":"x"},"metadata":{"labels":{"a":"1","a":null}}}`,
		`{"metadata":{"creationTimestamp":"2024-01-01T00:00:00Z","creationTimestamp":null,"generation":9007199254740993}}`,
		`{"p":{"a":"x"},"p":null,"p":{"q":"5"},"m":{"k":{"a":"1"},"k":{"n":[1]},"k":null},"l":[{"a":"1"},null],"l":[{"n":[2]}]}`,
		`{"arr":[{"a":"1"},{"a":"2"}],"arr":[{"n":[1]}],"arr":null,"ik":{"1":"a","01":"b"},"bytes":"aGk=","bytes":[1,2]}`,
		`{"any":{"a":{"b":1,"b":[1,{"c":2,"c":3}]}},"anymap":{"x":1,"x":{"y":2}},"raw":{"a":1, "a" : 2},"raw":[ 1 ]}`,
		`{"e":"1","Untagged":"u","UNTAGGED":"v","self":{"self":{"s":{"a":"1","a":"2"}},"self":{"e":"x"}},"t":null,"t":"2024-01-01T00:00:00Z"}`,
		`{"s":{"q":"1","q":1},"strs":["a","b"],"strs":[null],"arr":[{},{},{}]}`,
		`{"sp\u0065c":{"c\u006Flor":"\ud83d\ude00"},"spec":{"color":"\u00e9"}}`,
		`[1,{"a":2}]`, `{"a":[`, ``, `{"spec":{"ports":[{"port":1e1000}]}}`,
		`{"n":1,"n":"2","N":3,"f":3.402823475e38,"f":1,"l":[{"n":1,"x":1},{"x":2}],"k":{"k":{"x":1}},"k":null}`,
		` { "x" : 1 , "n" : 2 , "y" : { } } `,
		`{"Spec":{"color":"red"}}`, `{"spec":{"color":"a","color":"b"}}`, // one problem each
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range []reflect.Type{widgetType, zooType, numbersType} {
			checkFields(t, typ, data)
		}
	})
}

// checkFields checks what CheckJSONFields says of data against encoding/json
// and against itself, and that decoding its cleaned document gives what
// kube-apiserver decodes.
func checkFields(t *testing.T, typ reflect.Type, data []byte) {
	t.Helper()
	report, cleaned, err := codec.CheckJSONFields(data, typ)
	if codec.UnmarshalKnownJSON(data, reflect.New(typ).Interface()) == nil && (err != nil || !report.Empty()) {
		t.Fatalf("UnmarshalKnownJSON(%#q) decoded what CheckJSONFields says %+v, %v of", data, report, err)
	}
	if (err == nil) != json.Valid(data) {
		t.Fatalf("CheckJSONFields(%#q): error %v; json.Valid says %v", data, err, json.Valid(data))
	}
	if err != nil {
		return
	}
	entries := len(report.Unknown) + len(report.Duplicates)
	if cleaned != nil && entries == 0 || len(report.Unknown) > 0 && cleaned == nil {
		t.Fatalf("CheckJSONFields(%#q) = %+v with cleaned %#q", data, report, cleaned)
	}
	if entries > 100 {
		t.Fatalf("CheckJSONFields(%#q): %d entries", data, entries)
	}
	for _, list := range [][]string{report.Duplicates, report.Unknown} {
		for i, p := range list {
			if len(p) > 1024 || !utf8.ValidString(p) || slices.Contains(list[:i], p) {
				t.Fatalf("CheckJSONFields(%#q): path %.80q: too long, not UTF-8 or reported twice", data, p)
			}
		}
	}
	if cleaned != nil {
		if !json.Valid(cleaned) {
			t.Fatalf("CheckJSONFields(%#q): cleaned %#q is not JSON", data, cleaned)
		}
		again, twice, err := codec.CheckJSONFields(cleaned, typ)
		if err != nil || len(again.Unknown) > 0 || twice != nil {
			t.Fatalf("CheckJSONFields(%#q): cleaned %#q has %+v, %v", data, cleaned, again, err)
		}
		// Only unknown fields were cut: the duplicates are all still there.
		if entries < 100 && !slices.Equal(again.Duplicates, report.Duplicates) {
			t.Fatalf("CheckJSONFields(%#q): duplicates %q; in cleaned %#q, %q", data, report.Duplicates, cleaned, again.Duplicates)
		}
	}
	checkDecodesAsKube(t, typ, data, cleaned)
}

// OddRec has fields of the types whose decoding has corners: pointers to
// pointers, maps with integer and text keys, arrays, interfaces, quoted
// scalars, values that decode themselves.
type OddRec struct {
	Name   string                    `json:"name,omitempty"`
	Kids   []OddRec                  `json:"kids,omitempty"`
	ByName map[string]*OddRec        `json:"byName,omitempty"`
	Next   **OddRec                  `json:"next,omitempty"`
	Arr    [2]*OddRec                `json:"arr"`
	IK     map[int8]OddRec           `json:"ik,omitempty"`
	UK     map[uint]string           `json:"uk,omitempty"`
	TK     map[OddKey]OddRec         `json:"tk,omitempty"`
	Str    fmt.Stringer              `json:"str,omitempty"`
	AnyL   []any                     `json:"anyl,omitempty"`
	AnyM   map[string][]any          `json:"anym,omitempty"`
	Q      int                       `json:"q,string,omitempty"`
	QP     *bool                     `json:"qp,string,omitempty"`
	QS     string                    `json:"qs,string,omitempty"`
	F      float32                   `json:"f,omitempty"`
	U8     uint8                     `json:"u8,omitempty"`
	B      [3]byte                   `json:"b3"`
	Raw    json.RawMessage           `json:"raw,omitempty"`
	Num    json.Number               `json:"num,omitempty"`
	PA     *[]int                    `json:"pa,omitempty"`
	MM     map[string]map[string]int `json:"mm,omitempty"`
}

// OddKey is a map key that decodes itself.
type OddKey struct{ s string }

func (k *OddKey) UnmarshalText(b []byte) error { k.s = string(b); return nil }
func (k OddKey) MarshalText() ([]byte, error)  { return []byte(k.s), nil }

// OddSelfSlice and OddSelfMap are recursive without a struct.
type (
	OddSelfSlice []OddSelfSlice
	OddSelfMap   map[string]OddSelfMap
)

type Odd struct {
	R  OddRec       `json:"r"`
	SS OddSelfSlice `json:"ss,omitempty"`
	SM OddSelfMap   `json:"sm,omitempty"`
}

var oddType = reflect.TypeFor[Odd]()

func FuzzCheckJSONFieldsOddTypes(f *testing.F) {
	for _, s := range []string{
		`{"r":{"name":"a","name":"b","kids":[{"name":"x","zz":1}],"kids":[{"kids":[]}]}}`,
		`{"r":{"ik":{"1":{"name":"a"},"01":{"name":"b"},"1":{"q":"3"}},"uk":{"1":"a","1":"b"}}}`,
		`{"r":{"tk":{"a":{"name":"x"},"a":{"kids":[{}]}},"str":null,"str":null}}`,
		`{"r":{"next":{"name":"a"},"next":null,"next":{"kids":[{"name":"q","name":"r"}]}}}`,
		`{"r":{"arr":[{"name":"1"},{"name":"2"},{"name":"3"}],"arr":[{"zz":1}]}}`,
		`{"r":{"anyl":[{"a":1,"a":2},[{"b":1,"b":{}}]],"anym":{"k":[{"x":1,"x":2}],"k":[]}}}`,
		`{"r":{"q":"1","q":"2","qp":"true","qp":null,"qs":"\"x\"","qs":"\"y\""}}`,
		`{"r":{"f":1e39,"f":1,"u8":300,"u8":1,"b3":[1,2,3,4],"b3":[1]}}`,
		`{"r":{"raw":{"a":1,"a":2},"num":1,"num":"2","pa":[1],"pa":null,"pa":[2,3]}}`,
		`{"ss":[[],[[]]],"ss":[[[]]],"sm":{"a":{"b":{}},"a":{"c":{},"c":{"d":{}}}}}`,
		`{"r":{"mm":{"a":{"x":1,"x":2},"a":{"y":1}},"mm":null,"mm":{"b":{}}}}`,
		`{"r":{"name":"\ud800","name":"\udc00\ud800"},"r":{"n\u0061me":"x"}}`,
		"{\"r\":{\"byName\":{\"\xff\":{},\"\xfe\":{},\"\ufffd\":{\"name\":\"x\"}}}}",
		`{"r":{"q":1,"q":"1"}}`, `{"r":{"kids":{}}}`, `{"r":{"kids":[1],"kids":[{"name":"a"}]}}`,
		`{"r":{"Name":"x","num":1,"NUM":2,"num":3},"R":{},"r":{"kids":[{"Kids":[]}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFields(t, oddType, data)
	})
}

// asKube rewrites data so that encoding/json decodes it into a typ as
// kube-apiserver (sigs.k8s.io/json, case-sensitive) does: it drops members
// whose names are not exactly those of fields, and keeps everything else,
// repeated members too. Written apart from CheckJSONFields, to test it.
func asKube(typ reflect.Type, data []byte) []byte {
	data = bytes.TrimSpace(data)
	for typ.Kind() == reflect.Pointer && !decodesItself(typ) {
		typ = typ.Elem()
	}
	if len(data) == 0 || decodesItself(typ) {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []byte
	switch {
	case data[0] == '{' && (typ.Kind() == reflect.Struct || typ.Kind() == reflect.Map):
		var fields map[string]reflect.Type
		if typ.Kind() == reflect.Struct {
			fields = jsonNames(typ)
		}
		dec.Token()
		out = append(out, '{')
		for dec.More() {
			tok, _ := dec.Token()
			name, _ := tok.(string)
			var value json.RawMessage
			if dec.Decode(&value) != nil {
				return data
			}
			ft := fields[name]
			if typ.Kind() == reflect.Map {
				ft = typ.Elem()
			} else if ft == nil {
				continue
			}
			if len(out) > 1 {
				out = append(out, ',')
			}
			key, _ := json.Marshal(name)
			out = append(append(out, key...), ':')
			out = append(out, asKube(ft, value)...)
		}
		return append(out, '}')
	case data[0] == '[' && (typ.Kind() == reflect.Slice && typ.Elem().Kind() != reflect.Uint8 || typ.Kind() == reflect.Array):
		dec.Token()
		out = append(out, '[')
		for dec.More() {
			var value json.RawMessage
			if dec.Decode(&value) != nil {
				return data
			}
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, asKube(typ.Elem(), value)...)
		}
		return append(out, ']')
	}
	return data
}

func decodesItself(t reflect.Type) bool {
	for _, i := range []reflect.Type{reflect.TypeFor[json.Unmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler]()} {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// jsonNames maps the JSON names of a struct's fields to their types, for
// structs without clashing names.
func jsonNames(t reflect.Type) map[string]reflect.Type {
	names := map[string]reflect.Type{}
	tagName := func(f reflect.StructField) (string, bool) {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		return name, tag != "-"
	}
	promoted := func(f reflect.StructField) bool {
		name, ok := tagName(f)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		return f.Anonymous && ok && name == "" && ft.Kind() == reflect.Struct
	}
fields:
	for _, f := range reflect.VisibleFields(t) {
		name, ok := tagName(f)
		if !f.IsExported() || !ok || promoted(f) {
			continue
		}
		outer := t
		for _, i := range f.Index[:len(f.Index)-1] {
			embedded := outer.Field(i)
			if !promoted(embedded) {
				continue fields
			}
			if outer = embedded.Type; outer.Kind() == reflect.Pointer {
				outer = outer.Elem()
			}
		}
		if name == "" {
			name = f.Name
		}
		names[name] = f.Type
	}
	return names
}

// TestCheckJSONFieldsAnyFields: a type that decodes itself is looked into
// when it is an AnyFields, for repeated fields only (kube-apiserver's
// strict decoding of a custom resource: duplicate field "spec.name"); any
// other Unmarshaler stays a leaf.
func TestCheckJSONFieldsAnyFields(t *testing.T) {
	data := []byte(`{"kind":"W","spec":{"name":"a","name":"b","x":{"y":1,"y":2}},"other":[{"z":1,"z":1}]}`)
	report, cleaned, err := codec.CheckJSONFields(data, reflect.TypeFor[document]())
	if err != nil || cleaned != nil || !reflect.DeepEqual(report, codec.FieldReport{Duplicates: []string{"spec.name", "spec.x.y", "other[0].z"}}) {
		t.Errorf("AnyFields: %+v %s %v", report, cleaned, err)
	}
	report, _, err = codec.CheckJSONFields(data, reflect.TypeFor[json.RawMessage]())
	if err != nil || !report.Empty() {
		t.Errorf("a json.Unmarshaler that is not an AnyFields: %+v %v", report, err)
	}
}
