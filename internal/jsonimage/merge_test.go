package jsonimage_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/fuzzfill"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonimage"
	"github.com/kapi-dev/kapi/internal/test/race"
	"github.com/kapi-dev/kapi/patch"
)

// mergeSample adds to imageSample what only patches tell apart.
type mergeSample struct {
	imageSample
	Replaced   imageInner         `json:"replaced" patchStrategy:"replace"`
	Count      *int32             `json:"count,omitempty"`
	Name       *string            `json:"name"`
	Ints       []int64            `json:"ints"`
	Floats     map[string]float32 `json:"floats,omitempty"`
	Unsigned   uint16             `json:"unsigned"`
	Keyed      []kapi.Condition   `json:"keyed,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	StringPtrs map[string]*string `json:"stringPtrs,omitempty"`
	Merged     []string           `json:"merged,omitempty" patchStrategy:"merge"`
}

// patchWriter writes a patch of a type from fuzz input: the type's fields
// and others, in the type's kinds of values and others, spelled as
// clients spell them and otherwise.
type patchWriter struct {
	f     *fuzzfill.Filler
	b     bytes.Buffer
	depth int
}

var (
	patchScalars = []string{`null`, `""`, `"a"`, `"é"`, `"\u00e9"`, `"\ud800"`, `"2026-01-02T03:04:05Z"`, `0`, `-0`, `1`, `-1`, `7`, `01`, `1.0`, `1.5`, `1e2`,
		`255`, `256`, `-129`, `65536`, `9007199254740993`, `9223372036854775807`, `9223372036854775808`, `18446744073709551615`, `true`, `false`}
	patchNames = []string{"zzz", "$patch", "$retainKeys", "$setElementOrder/tags", "$deleteFromPrimitiveList/tags", "", "a", "b", "name"}
)

func (w *patchWriter) value(t reflect.Type) {
	w.depth++
	defer func() { w.depth-- }()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch c := w.f.Byte() % 8; {
	case c == 0 || w.depth > 5:
		w.b.WriteString(patchScalars[int(w.f.Byte())%len(patchScalars)])
	case c == 1:
		w.array(t)
	case c == 2:
		w.b.WriteString("{}")
	case t.Kind() == reflect.Struct:
		w.object(t)
	case t.Kind() == reflect.Map:
		w.mapObject(t)
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		w.array(t)
	default:
		w.b.WriteString(patchScalars[int(w.f.Byte())%len(patchScalars)])
	}
}

func (w *patchWriter) array(t reflect.Type) {
	elem := reflect.TypeFor[string]()
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		elem = t.Elem()
	}
	w.b.WriteByte('[')
	for i := range int(w.f.Byte() % 4) {
		if i > 0 {
			w.b.WriteByte(',')
		}
		w.value(elem)
	}
	w.b.WriteByte(']')
}

func (w *patchWriter) name(s string) {
	switch w.f.Byte() % 16 {
	case 0:
		s = strings.ToUpper(s[:min(1, len(s))]) + s[min(1, len(s)):] // another spelling
	case 1:
		if s != "" {
			fmt.Fprintf(&w.b, `"\u%04x%s":`, s[0], s[1:]) // escaped
			return
		}
	case 2:
		s = patchNames[int(w.f.Byte())%len(patchNames)]
	}
	fmt.Fprintf(&w.b, "%q:", s)
}

func (w *patchWriter) object(t reflect.Type) {
	fields := jsonfields.Of(t)
	if len(fields) == 0 {
		fields = []jsonfields.Field{{Name: "zzz", Type: reflect.TypeFor[string]()}}
	}
	w.b.WriteByte('{')
	for i := range int(w.f.Byte()%4) + 1 {
		if i > 0 {
			w.b.WriteByte(',')
		}
		f := fields[int(w.f.Byte())%len(fields)]
		w.name(f.Name)
		w.value(f.Type)
	}
	w.b.WriteByte('}')
}

func (w *patchWriter) mapObject(t reflect.Type) {
	w.b.WriteByte('{')
	for i := range int(w.f.Byte() % 4) {
		if i > 0 {
			w.b.WriteByte(',')
		}
		w.name(patchNames[int(w.f.Byte())%len(patchNames)])
		w.value(t.Elem())
	}
	w.b.WriteByte('}')
}

// checkMerge fails if Mergeable says a patch can be decoded into a copy of
// a value of T when that differs from decoding the merge of the value's
// JSON with it, as a merge and as a strategic merge patch. It returns how
// many of the two were decoded so and matched.
func checkMerge[T any](t *testing.T, m *jsonimage.Merger, schema *patch.Schema, data []byte) (matched int) {
	t.Helper()
	f := fuzzfill.New(data, &choices)
	v := new(T)
	f.Fill(reflect.ValueOf(v).Elem())
	original, err := json.Marshal(v)
	if err != nil || codec.UnmarshalJSON(original, new(T)) != nil {
		return 0 // not what a store holds
	}
	w := &patchWriter{f: f}
	w.object(reflect.TypeFor[T]())
	doc := w.b.Bytes()
	for _, typ := range []patch.Type{patch.MergePatch, patch.StrategicMergePatch} {
		if !m.Mergeable(doc, typ == patch.StrategicMergePatch) {
			continue
		}
		// A value that is its own image, as a decoded object is.
		decoded := new(T)
		_ = codec.UnmarshalJSON(original, decoded)
		if err := codec.UnmarshalJSON(doc, decoded); err != nil {
			continue // left to merging, which says what is wrong
		}
		merged, err := schema.Patch(typ, original, doc)
		if err != nil {
			t.Fatalf("%s %s of %s: decoded into the object, but merging fails: %v", typ, doc, original, err)
		}
		want := new(T)
		if err := codec.UnmarshalJSON(merged, want); err != nil {
			t.Fatalf("%s %s of %s: decoded into the object, but its merge %s does not decode: %v", typ, doc, original, merged, err)
		}
		if !reflect.DeepEqual(decoded, want) {
			got, _ := json.Marshal(decoded)
			t.Fatalf("%s %s of %s:\ndecoded into the object %s\nmerged and decoded     %s\n(%#v)\n(%#v)", typ, doc, original, got, merged, decoded, want)
		}
		matched++
	}
	return matched
}

func newMergers(t testing.TB) (sample, widget *jsonimage.Merger, sampleSchema, widgetSchema *patch.Schema) {
	sample, widget = jsonimage.NewMerger(reflect.TypeFor[mergeSample]()), jsonimage.NewMerger(reflect.TypeFor[widgetapi.Widget]())
	if sample == nil || widget == nil {
		t.Fatal("no Merger for the sample or Widget")
	}
	var err error
	if sampleSchema, err = patch.SchemaOf(reflect.TypeFor[mergeSample]()); err != nil {
		t.Fatal(err)
	}
	if widgetSchema, err = patch.SchemaOf(reflect.TypeFor[widgetapi.Widget]()); err != nil {
		t.Fatal(err)
	}
	return sample, widget, sampleSchema, widgetSchema
}

func FuzzMerge(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11"))
	f.Add([]byte("kapi merges a patch into a widget and a sample"))
	sample, widget, sampleSchema, widgetSchema := newMergers(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkMerge[mergeSample](t, sample, sampleSchema, data)
		checkMerge[widgetapi.Widget](t, widget, widgetSchema, data)
	})
}

// TestMergeRandom runs the fuzz target's check on many patches and fails
// if too few were mergeable to mean something.
func TestMergeRandom(t *testing.T) {
	sample, widget, sampleSchema, widgetSchema := newMergers(t)
	var matched [2]int
	data := make([]byte, 512)
	n := race.Cases(20000)
	for i := range n {
		fuzzfill.Input(data, uint64(i), 17)
		matched[0] += checkMerge[mergeSample](t, sample, sampleSchema, data)
		matched[1] += checkMerge[widgetapi.Widget](t, widget, widgetSchema, data)
	}
	t.Logf("of %d patches of each type, as merge and strategic merge patches, decoded into the object and matched: %v", n, matched)
	for k, m := range matched {
		if m < n/50 {
			t.Errorf("type %d: %d patches matched: too few to test anything", k, m)
		}
	}
}

// Patches as clients send them, and some that must be left to merging.
func TestMergeable(t *testing.T) {
	_, widget, _, _ := newMergers(t)
	for _, tc := range []struct {
		patch           string
		merge, strategc bool
	}{
		{`{"spec":{"size":3}}`, true, true},
		{`{"metadata":{"labels":{"a":"b","c":null}}}`, false, false}, // null in a map keeps a zero value when decoded
		{`{"metadata":{"labels":{"a":"b"}}}`, true, true},
		{`{"metadata":{"labels":null}}`, true, true},
		{`{"metadata":{"finalizers":["a"]}}`, true, false}, // a list: strategic merges some
		{`{"spec":{"color":null}}`, false, false},          // a string: merging deletes it, decoding keeps it
		{`{"spec":{"size":1.0}}`, false, false},
		{`{"spec":{"size":-0}}`, false, false},
		{`{"Spec":{"size":3}}`, false, false},
		{`{"spec":{"size":3},"spec":{"size":4}}`, false, false},
		{`{"sp\u0065c":{"size":3}}`, false, false},
		{`{"spec":{"$patch":"replace"}}`, false, false},
		{`{"metadata":{"creationTimestamp":"2026-01-02T03:04:05Z"}}`, false, false}, // a time decodes itself
		{`{"metadata":{"managedFields":[]}}`, false, false},
		{`{"spec":{"size":3}} {}`, false, false},
		{`{"spec":{"size":3}`, false, false},
		{`[]`, false, false},
		{`null`, false, false},
		{` {"spec" : {"size" : 3}} `, true, true},
		{`{"metadata":{"labels":{"a":"1","a":"2"}}}`, false, false}, // a name twice in a map
		{`{"metadata":{"labels":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9","j":"10"}}}`, true, true},
		{`{"metadata":{"labels":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9","a":"10"}}}`, false, false},
		{`{"metadata":{"labels":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9","i":"10"}}}`, false, false},
		{`{"spec":{"size":3,}}`, false, false},
		{`{"metadata":{"finalizers":["a",]}}`, false, false},
		{`{"metadata":{"finalizers":["a" "b"]}}`, false, false},
		{`{"spec":{"size":3}}x`, false, false},
		{`{"spec":{"size":3} "status":{}}`, false, false},
		{`{"metadata":{"labels":{"a":nul}}}`, false, false},
		{`{"metadata":{"labels":{"a":"\ud83d\ude00"}}}`, false, false}, // a surrogate pair: left to merging
		{`{"metadata":{"labels":{"a":"\u00e9\n"}}}`, true, true},
		{`{"metadata":{"labels":{"a":"` + "\xff" + `"}}}`, false, false}, // not UTF-8
		{`{"spec":{"size":3`, false, false},
		{`{"spec":{"size":-}}`, false, false},
		{`{"spec":{"size":10}}`, true, true}, // a zero, not first
		{`{"spec":{"size":-100}}`, true, true},
		{`{"\u0073pec":{"size":3}}`, false, false},               // an escape first in the name
		{`{"metadata":{"labels":{"\u0061":"b"}}}`, false, false}, // a map's key too
		{`{"spec":true}`, false, false},                          // a literal for a struct
		{`{"metadata":{"labels":false}}`, false, false},
	} {
		if got := widget.Mergeable([]byte(tc.patch), false); got != tc.merge {
			t.Errorf("merge patch %s: Mergeable %v, want %v", tc.patch, got, tc.merge)
		}
		if got := widget.Mergeable([]byte(tc.patch), true); got != tc.strategc {
			t.Errorf("strategic merge patch %s: Mergeable %v, want %v", tc.patch, got, tc.strategc)
		}
	}
}

func BenchmarkMergeable(b *testing.B) {
	m := jsonimage.NewMerger(reflect.TypeFor[widgetapi.Widget]())
	doc := []byte(`{"spec":{"size":12345}}`)
	b.ReportAllocs()
	for b.Loop() {
		if !m.Mergeable(doc, false) {
			b.Fatal("not mergeable")
		}
	}
}

type loopList []loopList

type loopMap map[string]loopMap

type recursive struct {
	Next  *recursive           `json:"next,omitempty"`
	List  loopList             `json:"list,omitempty"`
	Map   loopMap              `json:"map,omitempty"`
	Items []recursive          `json:"items,omitempty"`
	ByKey map[string]string    `json:"byKey,omitempty"`
	Deep  map[string]*string   `json:"deep,omitempty"`
	Self  map[string]recursive `json:"self,omitempty"`
}

// Recursive types are compiled once, and what recurses through a map or a
// list is left to merging.
func TestNewMergerRecursive(t *testing.T) {
	m := jsonimage.NewMerger(reflect.TypeFor[recursive]())
	if m == nil {
		t.Fatal("no Merger")
	}
	for _, tc := range []struct {
		patch string
		want  bool
	}{
		{`{"next":{"next":{"byKey":{"a":"b"}}}}`, true},
		{`{"next":null}`, true},
		{`{"list":[]}`, false},
		{`{"map":{}}`, false},
		{`{"items":[]}`, false},
		{`{"deep":{"a":"b"}}`, false},
		{`{"self":{}}`, false},
		{`{"next":` + strings.Repeat(`{"next":`, 70) + `null` + strings.Repeat(`}`, 71), false}, // deeper than a Merger reads
	} {
		if got := m.Mergeable([]byte(tc.patch), false); got != tc.want {
			t.Errorf("%s: Mergeable %v, want %v", tc.patch, got, tc.want)
		}
	}
	if jsonimage.NewMerger(reflect.TypeFor[loopList]()) != nil || jsonimage.NewMerger(reflect.TypeFor[string]()) != nil {
		t.Error("a Merger of a type that is not a struct")
	}
}

// Literals are read whole, and only where the type has a scalar; a map
// whose keys are not plain strings is left to merging.
func TestMergeableLiteralsAndKeys(t *testing.T) {
	type flags struct {
		On   bool `json:"on"`
		Size int  `json:"size"`
	}
	m := jsonimage.NewMerger(reflect.TypeFor[flags]())
	sample, _, _, _ := newMergers(t)
	for _, tc := range []struct {
		m     *jsonimage.Merger
		patch string
		want  bool
	}{
		{m, `{"on":false,"size":1}`, true},
		{m, `{"on":true,"size":1}`, true},
		{m, `{"on":fals,"size":1}`, false},
		{m, `{"on":truee}`, false},
		{sample, `{"byNumber":{"1":"a"}}`, false}, // map[int]string
		{sample, `{"labels":{"1":"a"}}`, true},
	} {
		if got := tc.m.Mergeable([]byte(tc.patch), false); got != tc.want {
			t.Errorf("%s: Mergeable %v, want %v", tc.patch, got, tc.want)
		}
	}
}

// A strategic merge reads the whole object through int64s and float64s: a
// type that may hold a number neither keeps (an unsigned integer beyond
// int64, a json.Number, a type writing itself) is left to it.
func TestMergerStrategicNumbers(t *testing.T) {
	type big struct {
		Size int64   `json:"size"`
		U    *uint64 `json:"u,omitempty"`
	}
	type number struct {
		Size int64       `json:"size"`
		N    json.Number `json:"n,omitempty"`
	}
	type plain struct {
		Size  int64      `json:"size"`
		Small uint32     `json:"small"`
		Ratio float32    `json:"ratio"`
		At    *kapi.Time `json:"at,omitempty"`
	}
	for _, tc := range []struct {
		name      string
		m         *jsonimage.Merger
		strategic bool
	}{
		{"uint64", jsonimage.NewMerger(reflect.TypeFor[big]()), false},
		{"json.Number", jsonimage.NewMerger(reflect.TypeFor[number]()), false},
		{"int64, uint32, float32 and times", jsonimage.NewMerger(reflect.TypeFor[plain]()), true},
	} {
		if !tc.m.Mergeable([]byte(`{"size":1}`), false) {
			t.Errorf("%s: a merge patch is not mergeable", tc.name)
		}
		if got := tc.m.Mergeable([]byte(`{"size":1}`), true); got != tc.strategic {
			t.Errorf("%s: a strategic merge patch mergeable %v, want %v", tc.name, got, tc.strategic)
		}
	}
}
