package jsonwrite_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/fuzzfill"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonwrite"
)

// sampleNode is recursive.
type sampleNode struct {
	Name     string        `json:"name,omitempty"`
	Children []*sampleNode `json:"children,omitempty"`
}

type sampleInner struct {
	Tags  []string          `json:"tags,omitempty"`
	Attrs map[string]string `json:"attrs,omitempty"`
	At    *kapi.Time        `json:"at,omitempty"`
}

type samplePromoted struct {
	Promoted []int `json:"promoted,omitempty"`
	Shadowed int   `json:"shadowed"` // hidden by sample's own
}

// SampleOptional is embedded by pointer: its fields are left out when the
// pointer is nil.
type SampleOptional struct {
	Optional string `json:"optional"`
	Level    int
}

type color string

type namedBytes []byte

// zeroer is zero by its method, on a pointer receiver.
type zeroer struct{ N int }

func (z *zeroer) IsZero() bool { return z.N%2 == 0 }

// sample has a field of every shape an Encoder writes, and some it leaves
// to json.Marshal where it cannot do without.
type sample struct {
	kapi.TypeMeta `json:",inline"`
	Meta          kapi.ObjectMeta `json:"metadata"`
	samplePromoted
	*SampleOptional

	At           kapi.Time             `json:"at"`
	AtPtr        *kapi.Time            `json:"atPtr,omitempty"`
	AtZero       kapi.Time             `json:"atZero,omitzero"`
	Micro        kapi.MicroTime        `json:"micro"`
	MicroPtr     *kapi.MicroTime       `json:"microPtr"`
	MicroZeroPtr *kapi.MicroTime       `json:",omitzero"`
	Times        [2]kapi.Time          `json:"times"`
	TimeMap      map[string]*kapi.Time `json:"timeMap,omitempty"`
	Conds        []kapi.Condition      `json:"conditions,omitempty"`

	Strings      []string          `json:"strings"`
	StringsEmpty []string          `json:"stringsEmpty,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Counts       map[string]int    `json:"counts"`
	ByNumber     map[int]string    `json:"byNumber,omitempty"`
	ByUint       map[uint16]bool   `json:"byUint"`
	ByColor      map[color]*int    `json:"byColor"`
	Pointers     []*int32          `json:"pointers"`
	SlicePtr     *[]string         `json:"slicePtr"`
	PtrPtr       **string          `json:"ptrPtr"`
	Bytes        []byte            `json:"bytes,omitempty"`
	BytesAlways  []byte            `json:"bytesAlways"`
	NamedBytes   namedBytes        `json:"namedBytes"`
	ByteArray    [3]byte           `json:"byteArray"`
	NoArray      [0]string         `json:"noArray,omitempty"`

	Float       float64 `json:"float,omitempty"`
	Float32     float32 `json:"float32"`
	FloatZero   float64 `json:"floatZero,omitzero"`
	Quoted      int64   `json:"quoted,string"`
	QuotedText  string  `json:"quotedText,string,omitempty"`
	QuotedPtr   *bool   `json:"quotedPtr,string"`
	QuotedFloat float32 `json:"quotedFloat,string"`
	QuotedUint  *uint   `json:"quotedUint,omitempty,string"`
	//lint:ignore SA5008 ,string on a slice on purpose: encoding/json ignores it there, and so must the encoder
	NotQuoted []int   `json:"notQuoted,string"`
	Flag      bool    `json:"flag,omitempty"`
	Small     uint8   `json:"small"`
	Skipped   int     `json:",omitzero"`
	Pointer   uintptr `json:"pointer,omitempty"`
	Shadowed  string  `json:"shadowed"`
	Escaped   string  `json:"x<y&z>"`
	//lint:ignore SA5008 encoding/json names this field "-"; the encoder must too
	Dash   int `json:"-,"`
	Hidden int `json:"-"`
	//lint:ignore SA5008 an invalid name on purpose: encoding/json then uses the Go name, and so must the encoder
	BadName int      `json:"a\"b"`
	Zeroer  zeroer   `json:"zeroer,omitzero"`
	Nothing struct{} `json:"nothing"`
	//lint:ignore U1000 unexported on purpose: the encoder must skip it
	hidden int

	Inner      sampleInner            `json:"inner"`
	InnerPtr   *sampleInner           `json:"innerPtr,omitempty"`
	InnerMap   map[string]sampleInner `json:"innerMap"`
	InnerList  []sampleInner          `json:"innerList"`
	Tree       *sampleNode            `json:"tree,omitempty"`
	Fields     *kapi.FieldsV1         `json:"fields,omitempty"`
	FieldsList []kapi.FieldsV1        `json:"fieldsList"`
}

// oddSample has the shapes an Encoder leaves to json.Marshal but for
// some values: it writes this type's values only where they avoid them.
type oddSample struct {
	Number  json.Number     `json:"number,omitempty"`
	Stamp   *time.Time      `json:"stamp,omitempty"`
	Raw     json.RawMessage `json:"raw,omitempty"`
	Chan    chan int        `json:",omitzero"`
	Func    func()          `json:",omitzero"`
	Float   float64         `json:"float"`
	Float32 float32         `json:"float32"`
	Node    *sampleNode     `json:"node"`
}

// checkLendEnd fails if LendEnd, for a field of rv (a struct, or a
// pointer to one, which the Encoder writes as want), writes other than want
// or says the field's value ends where it does not: just past the field's
// name and its JSON, before a comma or the closing brace. It checks the
// field "metadata" where there is one, and one field more picked by data.
func checkLendEnd(t *testing.T, enc *jsonwrite.Encoder, rv reflect.Value, want, data []byte) {
	t.Helper()
	sv := rv
	if sv.Kind() == reflect.Pointer {
		if sv.IsNil() {
			return
		}
		sv = sv.Elem()
	}
	fields := jsonfields.Of(sv.Type())
	pick := len(data)
	for _, c := range data[:min(len(data), 4)] {
		pick = pick*31 + int(c)
	}
	for i, f := range fields {
		if f.Name != "metadata" && i != pick%len(fields) {
			continue
		}
		b, buf, end, ok := enc.LendEnd(rv, i)
		if !ok || !bytes.Equal(b, want) {
			t.Fatalf("LendEnd(%d) wrote %s (%v), want %s", i, b, ok, want)
		}
		buf.Return()
		if end < 0 { // said only of a field left out
			var members map[string]json.RawMessage
			if json.Unmarshal(want, &members) == nil && members[f.Name] != nil {
				t.Fatalf("LendEnd(%d) did not say where %s ends in %s", i, f.Name, want)
			}
			continue
		}
		if f.Quoted {
			continue
		}
		fv, _ := jsonwrite.FieldOf(sv, f.Index)
		member, err := json.Marshal(map[string]any{f.Name: fv.Interface()})
		if err != nil {
			t.Fatal(err)
		}
		member = member[1 : len(member)-1] // "name":value
		if end >= len(want) || want[end] != ',' && want[end] != '}' || !bytes.HasSuffix(want[:end], member) {
			t.Fatalf("LendEnd(%d): the field %s ends at %d in %s, want it just past %s", i, f.Name, end, want, member)
		}
	}
}

// choices are values that encoding/json writes in every way it can,
// and some that it refuses.
var choices = fuzzfill.Choices{
	Strings: []string{"", "a", "é", "a<b&c>", "line\nbreak", "\u2028", "\u2029x", "b", "c",
		`say "hi"`, `back\slash`, "\x00\x01\x1f\x7f", "\t\r\b\f", "日本語", "</script>", "😀", "ab"},
	BadStrings: []string{"\xff", "x\xe2\x82", "\xed\xa0\x80", "a\xc0\xafb"},
	Raw: [][]byte{nil, []byte(`{}`), []byte(`{"f:a":{},"k:{\"name\":\"x y\"}":{}}`), []byte(`{"f:a":{".":{},"f:b":{}}}`),
		[]byte(`{ "f:a": {} }`), []byte(`{"f:<":{}}`), []byte(`null`), []byte(`{"f:é":{}}`), []byte(`[1,-0.5E+2,true,false,null,"\/\u00e9"]`),
		[]byte(`{`), []byte(`{"a":01}`), []byte(`[1,]`), []byte{}, []byte(`{"a":"\u00zz"}`), []byte(`{"a":1}x`), []byte(`tru`), []byte(`"\q"`), []byte(`1.`), []byte(`-`)},
	Floats:  []float64{0, math.Copysign(0, -1), 1.5, -2.25, 1e300, 0.1, 1e21, 1e20, 1e-6, 1e-7, 123456789.125, 5e-324, 3.4e38, 1.0000001e-6, -9.999999e20},
	Odd:     true,
	Numbers: []string{"", "12", "-1.5e3", "0x1", "bad"},
}

// checkAppend fails if the Encoder of T writes a value otherwise than
// json.Marshal does, addressable or not, or writes one json.Marshal
// refuses. It returns whether the Encoder wrote the value.
func checkAppend[T any](t *testing.T, enc *jsonwrite.Encoder, data []byte) bool {
	t.Helper()
	v := new(T)
	fuzzfill.New(data, &choices).Fill(reflect.ValueOf(v).Elem())
	want, err := json.Marshal(v)
	const prefix = "prefix:"
	wrote := 0
	for _, rv := range []reflect.Value{reflect.ValueOf(v).Elem(), reflect.ValueOf(*v)} {
		got, ok := enc.Append([]byte(prefix), rv)
		if !ok {
			if string(got) != prefix {
				t.Fatalf("Append fell back but changed the buffer to %q", got)
			}
			continue
		}
		wrote++
		if err != nil {
			t.Fatalf("Append wrote %s of a value json.Marshal refuses: %v", got, err)
		}
		if !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("Append wrote\n%s\njson.Marshal\n%s", got[len(prefix):], want)
		}
		if m, ok := enc.Marshal(rv); !ok || !bytes.Equal(m, want) {
			t.Fatalf("Marshal wrote %s (%v), want %s", m, ok, want)
		}
		checkLendEnd(t, enc, rv, want, data)
	}
	if wrote == 1 {
		t.Fatalf("Append wrote the value only when addressable, or only when not")
	}
	return wrote == 2
}

func FuzzAppend(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Add([]byte("kapi writes a widget, a sample and its odd shapes"))
	encoders := newEncoders(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, check := range checks {
			check.fn(t, encoders[check.name], data)
		}
	})
}

// checks are the types written by FuzzAppend and TestAppendRandomValues,
// with how many values of 3000 random ones each must have written.
var checks = []struct {
	name    string
	typ     reflect.Type
	fn      func(*testing.T, *jsonwrite.Encoder, []byte) bool
	atLeast int
}{
	{"sample", reflect.TypeFor[sample](), checkAppend[sample], 300},
	{"widget", reflect.TypeFor[widgetapi.Widget](), checkAppend[widgetapi.Widget], 1500},
	{"odd", reflect.TypeFor[oddSample](), checkAppend[oddSample], 300},
	{"*widget", reflect.TypeFor[*widgetapi.Widget](), checkAppend[*widgetapi.Widget], 1500},
}

func newEncoders(tb testing.TB) map[string]*jsonwrite.Encoder {
	encoders := map[string]*jsonwrite.Encoder{}
	for _, c := range checks {
		if encoders[c.name] = jsonwrite.New(c.typ); encoders[c.name] == nil {
			tb.Fatalf("no Encoder for %s", c.name)
		}
	}
	return encoders
}

// TestAppendRandomValues runs the fuzz target's check on many values and
// fails if too few were written to mean something.
func TestAppendRandomValues(t *testing.T) {
	encoders := newEncoders(t)
	wrote := make([]int, len(checks))
	data := make([]byte, 1024)
	const values = 3000
	for i := range values {
		fuzzfill.Input(data, uint64(i), 17)
		for k, check := range checks {
			if check.fn(t, encoders[check.name], data) {
				wrote[k]++
			}
		}
	}
	for k, check := range checks {
		t.Logf("%s: wrote %d of %d values", check.name, wrote[k], values)
		if wrote[k] < check.atLeast {
			t.Errorf("%s: wrote %d of %d values, want at least %d", check.name, wrote[k], values, check.atLeast)
		}
	}
}

func TestNew(t *testing.T) {
	type withChan struct{ C chan int }
	type withTime struct {
		T time.Time `json:"t"`
	}
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		want bool
	}{
		{"sample", reflect.TypeFor[sample](), true},
		{"widget", reflect.TypeFor[widgetapi.Widget](), true},
		{"pointer to widget", reflect.TypeFor[*widgetapi.Widget](), true},
		{"kapi.Time", reflect.TypeFor[kapi.Time](), true},
		{"interface", reflect.TypeFor[any](), false},
		{"a map of any", reflect.TypeFor[map[string]any](), false},
		{"an interface left out when nil", reflect.TypeFor[struct {
			V any `json:",omitempty"`
		}](), false},
		{"time.Time", reflect.TypeFor[time.Time](), false},
		{"a struct that always holds a time.Time", reflect.TypeFor[withTime](), false},
		{"a pointer to one, which may be nil", reflect.TypeFor[*withTime](), true},
		{"raw message", reflect.TypeFor[json.RawMessage](), false},
		{"json.Number", reflect.TypeFor[json.Number](), false},
		{"a channel written always", reflect.TypeFor[withChan](), false},
		{"float keys", reflect.TypeFor[map[float64]string](), false},
		{"text keys", reflect.TypeFor[map[kapi.Time]string](), false},
		{"complex", reflect.TypeFor[complex128](), false},
	} {
		if got := jsonwrite.New(tc.typ) != nil; got != tc.want {
			t.Errorf("%s: New != nil is %v, want %v", tc.name, got, tc.want)
		}
	}
}

type hiddenEmbedded struct {
	Visible string            `json:"visible"`
	Labels  map[string]string `json:"labels"`
}

// embedsHidden embeds, by pointer, a struct of an unexported type, whose
// fields encoding/json still writes.
type embedsHidden struct {
	*hiddenEmbedded
	Own int `json:"own"`
}

// Values found by review: written as json.Marshal writes them, or left
// to it.
func TestAppendEdges(t *testing.T) {
	cycle := &sampleNode{Name: "loop"}
	cycle.Children = []*sampleNode{cycle}
	deep := &sampleNode{}
	for range 2000 {
		deep = &sampleNode{Children: []*sampleNode{deep}}
	}
	deepRaw := strings.Repeat("[", 1500) + strings.Repeat("]", 1500)
	for _, tc := range []struct {
		name  string
		v     any
		wrote bool
	}{
		{"a cycle, which json.Marshal refuses", cycle, false},
		{"a tree deeper than json.Marshal looks for cycles", deep, false},
		{"NaN", oddSample{Float: math.NaN()}, false},
		{"a float32 at the cutoff", oddSample{Float32: 1e21}, true},
		{"a float32 just under it", oddSample{Float32: math.Nextafter32(1e21, 0)}, true},
		{"a float32 small", oddSample{Float32: 1e-7}, true},
		{"a number", oddSample{Number: "12"}, false},
		{"a zero time", kapi.Time{}, true},
		{"a time in year 10000", kapi.Time{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, true},
		{"a micro time with nanoseconds", kapi.MicroTime{Time: time.Unix(1, 123456789)}, true},
		{"a field set nested deeper than looked into", kapi.FieldsV1{Raw: []byte(deepRaw)}, false},
		{"a field set with an escape", kapi.FieldsV1{Raw: []byte(`{"\u003c":{}}`)}, true},
		{"an empty field set, which json.Marshal refuses", kapi.FieldsV1{Raw: []byte{}}, false},
		{"labels past the stack", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "g": "7", "h": "8", "i": "9", "j": "10", "k": "11", "l": "12", "m": "13", "n": "14", "o": "15", "p": "16", "q": "17"}, true},
		{"keys in byte order", map[string]int{"b": 1, "a": 2, "B": 3, "é": 4, "a<": 5}, true},
		{"an embedded pointer to an unexported type", embedsHidden{hiddenEmbedded: &hiddenEmbedded{Visible: "v", Labels: map[string]string{"b": "1", "a": "2"}}}, true},
		{"a nil one", embedsHidden{Own: 1}, true},
		{"a nil pointer", (*embedsHidden)(nil), true},
		{"integer keys in text order", map[int8]int{-1: 1, 10: 2, 9: 3, -128: 4}, true},
	} {
		want, err := json.Marshal(tc.v)
		rv := reflect.ValueOf(tc.v)
		enc := jsonwrite.New(rv.Type())
		if enc == nil {
			t.Errorf("%s: no Encoder", tc.name)
			continue
		}
		got, ok := enc.Append(nil, rv)
		if ok != tc.wrote {
			t.Errorf("%s: wrote %v, want %v", tc.name, ok, tc.wrote)
		}
		if ok && (err != nil || !bytes.Equal(got, want)) {
			t.Errorf("%s: wrote %s, json.Marshal %s (%v)", tc.name, got, want, err)
		}
	}
}
