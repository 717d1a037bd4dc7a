package jsonimage_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/fuzzfill"
	"github.com/kapi-dev/kapi/internal/jsonimage"
)

// imageNode is recursive.
type imageNode struct {
	Name     string       `json:"name,omitempty"`
	Children []*imageNode `json:"children,omitempty"`
}

type imageInner struct {
	Tags  []string          `json:"tags,omitempty"`
	Attrs map[string]string `json:"attrs,omitempty"`
	At    *kapi.Time        `json:"at,omitempty"`
}

type imagePromoted struct {
	Promoted []int `json:"promoted,omitempty"`
}

// imageSample has a field of every shape Image tells the image of.
type imageSample struct {
	kapi.TypeMeta `json:",inline"`
	Meta          kapi.ObjectMeta `json:"metadata"`
	imagePromoted

	At       kapi.Time             `json:"at"`
	AtPtr    *kapi.Time            `json:"atPtr,omitempty"`
	Micro    kapi.MicroTime        `json:"micro"`
	MicroPtr *kapi.MicroTime       `json:"microPtr"`
	Times    [2]kapi.Time          `json:"times"`
	TimeMap  map[string]*kapi.Time `json:"timeMap,omitempty"`
	Conds    []kapi.Condition      `json:"conditions,omitempty"`

	Strings      []string          `json:"strings"`
	StringsEmpty []string          `json:"stringsEmpty,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Counts       map[string]int    `json:"counts"`
	ByNumber     map[int]string    `json:"byNumber,omitempty"`
	Pointers     []*int32          `json:"pointers"`
	SlicePtr     *[]string         `json:"slicePtr"`
	PtrPtr       **string          `json:"ptrPtr"`
	Bytes        []byte            `json:"bytes,omitempty"`
	BytesAlways  []byte            `json:"bytesAlways"`

	Float      float64 `json:"float,omitempty"`
	Float32    float32 `json:"float32"`
	Quoted     int64   `json:"quoted,string"`
	QuotedText string  `json:"quotedText,string,omitempty"`
	Flag       bool    `json:"flag,omitempty"`
	Small      uint8   `json:"small"`
	Skipped    int     `json:",omitzero"`

	Inner     imageInner            `json:"inner"`
	InnerPtr  *imageInner           `json:"innerPtr,omitempty"`
	InnerMap  map[string]imageInner `json:"innerMap"`
	InnerList []imageInner          `json:"innerList"`
	Tree      *imageNode            `json:"tree,omitempty"`
	Fields    *kapi.FieldsV1        `json:"fields,omitempty"`
}

// choices are the values whose images differ from them, and some that
// are plain.
var choices = fuzzfill.Choices{
	Strings:    []string{"", "a", "é", "a<b&c", "line\nbreak", "\u2028", "b", "c"},
	BadStrings: []string{"\xff", "x\xe2\x82"},
	Floats:     []float64{0, math.Copysign(0, -1), 1.5, -2.25, 1e300, 0.1},
	Raw:        [][]byte{nil, []byte(`{}`), []byte(`{"f:a":{},"k:{\"name\":\"x y\"}":{}}`), []byte(`{ "f:a": {} }`), []byte(`{"f:<":{}}`), []byte(`null`), []byte(`{"f:é":{}}`)},
}

// checkImage fails if the Image of T says a value's image is anything but
// what decoding its JSON gives, or changes the value it reads.
func checkImage[T any](t *testing.T, im *jsonimage.Image, data []byte) (ok, changed bool) {
	t.Helper()
	v, again := new(T), new(T)
	fuzzfill.New(data, &choices).Fill(reflect.ValueOf(v).Elem())
	fuzzfill.New(data, &choices).Fill(reflect.ValueOf(again).Elem())
	img, ok := im.Of(reflect.ValueOf(v).Elem())
	if !reflect.DeepEqual(v, again) {
		t.Fatalf("Of changed the value it read:\n%#v\nwas\n%#v", v, again)
	}
	// New is Of's image in a value of its own, not v's.
	if p, newOK := im.New(reflect.ValueOf(v).Elem()); newOK != ok || ok && (p.Pointer() == reflect.ValueOf(v).Pointer() || !reflect.DeepEqual(p.Elem().Interface(), img.Interface())) {
		t.Fatalf("New = %v, %v; want a new value of Of's image (told: %v)", p, newOK, ok)
	}
	value, err := json.Marshal(v)
	if !ok || err != nil {
		return false, false
	}
	decoded := new(T)
	if err := codec.UnmarshalJSON(value, decoded); err != nil {
		t.Fatalf("the image of a value whose JSON does not decode: %v\n%s", err, value)
	}
	if got := img.Interface(); !reflect.DeepEqual(got, *decoded) {
		t.Fatalf("image differs from the decoded JSON %s:\nimage   %#v\ndecoded %#v", value, got, *decoded)
	}
	// A decoded value is imaged alike (it is its own image but for a time
	// of year 1 that is not zero, which is written null the next time), and
	// one that is its own image encodes as the value it is: two values that
	// are their own images encode alike exactly when they are equal.
	value2, err := json.Marshal(decoded)
	if err != nil {
		t.Fatal(err)
	}
	again = new(T)
	if err := codec.UnmarshalJSON(value2, again); err != nil {
		t.Fatal(err)
	}
	if img2, ok := im.Of(reflect.ValueOf(decoded).Elem()); ok && !reflect.DeepEqual(img2.Interface(), *again) {
		t.Fatalf("the image of a decoded value differs from the decoding of its JSON %s", value2)
	}
	if im.Is(reflect.ValueOf(decoded).Elem()) {
		if value3, _ := json.Marshal(again); !reflect.DeepEqual(again, decoded) || string(value3) != string(value2) {
			t.Fatalf("a value that is its own image does not decode from its JSON %s", value2)
		}
	}
	return true, !reflect.DeepEqual(*v, *decoded)
}

func FuzzImage(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Add([]byte("kapi image of a widget, a sample and its times"))
	sample := jsonimage.New(reflect.TypeFor[imageSample]())
	widget := jsonimage.New(reflect.TypeFor[widgetapi.Widget]())
	shapes := jsonimage.New(reflect.TypeFor[oracleShapes]())
	f.Fuzz(func(t *testing.T, data []byte) {
		checkImage[imageSample](t, sample, data)
		checkImage[widgetapi.Widget](t, widget, data)
		checkImage[oracleShapes](t, shapes, data)
	})
}

// TestImageOfRandomValues runs the fuzz target's check on many values and
// fails if they were not both told and changed often enough to mean
// something.
func TestImageOfRandomValues(t *testing.T) {
	checks := []struct {
		name    string
		check   func(*testing.T, *jsonimage.Image, []byte) (bool, bool)
		image   *jsonimage.Image
		minTold int // of 3000: a type of many strings is told less often
	}{
		{"sample", checkImage[imageSample], jsonimage.New(reflect.TypeFor[imageSample]()), 300},
		{"widget", checkImage[widgetapi.Widget], jsonimage.New(reflect.TypeFor[widgetapi.Widget]()), 300},
		{"shapes", checkImage[oracleShapes], jsonimage.New(reflect.TypeFor[oracleShapes]()), 150},
	}
	for _, c := range checks {
		if c.image == nil {
			t.Fatalf("no Image for the %s", c.name)
		}
	}
	told, changed := make([]int, len(checks)), make([]int, len(checks))
	data := make([]byte, 512)
	for i := range 3000 {
		fuzzfill.Input(data, uint64(i), 16)
		for k, c := range checks {
			ok, ch := c.check(t, c.image, data)
			if ok {
				told[k]++
			}
			if ch {
				changed[k]++
			}
		}
	}
	t.Logf("told %v of 3000 images each, of which changed %v", told, changed)
	for k, c := range checks {
		if told[k] < c.minTold || changed[k] < 100 {
			t.Errorf("%s: told %d of 3000 images, %d of them changed: too few to test anything", c.name, told[k], changed[k])
		}
	}
}

func TestNewImage(t *testing.T) {
	type hidden struct {
		A string `json:"a"`
		//lint:ignore U1000 unexported on purpose: the image must skip it
		b string
	}
	type conflict struct {
		imagePromoted
		Promoted []int `json:"promoted"`
		Other    int
	}
	type byPointer struct {
		*imagePromoted
	}
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		want bool
	}{
		{"sample", reflect.TypeFor[imageSample](), true},
		{"widget", reflect.TypeFor[widgetapi.Widget](), true},
		{"recursive", reflect.TypeFor[imageNode](), true},
		{"interface", reflect.TypeFor[struct{ V any }](), false},
		{"map of any", reflect.TypeFor[struct{ V map[string]any }](), false},
		{"unexported", reflect.TypeFor[hidden](), false},
		{"skipped", reflect.TypeFor[struct {
			A string `json:"-"`
		}](), false},
		{"raw message", reflect.TypeFor[struct{ R json.RawMessage }](), false},
		{"time.Time", reflect.TypeFor[struct{ T time.Time }](), false},
		{"shadowed", reflect.TypeFor[conflict](), false}, // the embedded Promoted is lost
		{"embedded pointer", reflect.TypeFor[byPointer](), false},
		{"omitzero time", reflect.TypeFor[struct {
			T kapi.Time `json:",omitzero"`
		}](), false},
		{"float keys", reflect.TypeFor[map[float64]string](), false},
	} {
		if got := jsonimage.New(tc.typ) != nil; got != tc.want {
			t.Errorf("%s: NewImage != nil is %v, want %v", tc.name, got, tc.want)
		}
	}
}

// benchWidget is the widget of the load harness as a server decodes it.
const benchWidget = `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w2","namespace":"default","uid":"3401c667-b1c0-434a-913f-06e3e675bf0e","generation":1,"creationTimestamp":"2026-11-25T16:53:02Z","labels":{"app":"loadtest","shard":"2","team":"platform","tier":"backend"},"managedFields":[{"manager":"curl","operation":"Update","apiVersion":"example.com/v1","time":"2026-11-25T16:53:02Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:shard":{},"f:team":{},"f:tier":{}}},"f:spec":{".":{},"f:color":{},"f:ports":{".":{},"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}},"k:{\"name\":\"metrics\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}},"f:replicas":{},"f:selector":{".":{},"f:app":{},"f:tier":{}},"f:size":{}}}}]},"spec":{"color":"Red","replicas":3,"size":7,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}],"selector":{"app":"loadtest","tier":"backend"}},"status":{}}`

// BenchmarkImage images a realistic widget: Is on one decoded, as an
// update's specChanged asks; New on one as a create offers it to the watch
// cache (its times now, to the second: its own image, copied); and New on
// one whose image differs (a time with a fraction, an empty slice under
// omitempty), made anew.
func BenchmarkImage(b *testing.B) {
	decoded := func(b *testing.B) *widgetapi.Widget {
		var w widgetapi.Widget
		if err := json.Unmarshal([]byte(benchWidget), &w); err != nil {
			b.Fatal(err)
		}
		return &w
	}
	im := jsonimage.New(reflect.TypeFor[widgetapi.Widget]())
	b.Run("Is", func(b *testing.B) {
		v := reflect.ValueOf(decoded(b)).Elem()
		b.ReportAllocs()
		for b.Loop() {
			if !im.Is(v) {
				b.Fatal("not its own image")
			}
		}
	})
	b.Run("New", func(b *testing.B) {
		w := decoded(b)
		w.CreationTimestamp = kapi.Now()
		now := kapi.Now()
		w.ManagedFields[0].Time = &now
		v := reflect.ValueOf(w).Elem()
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := im.New(v); !ok {
				b.Fatal("not told")
			}
		}
	})
	b.Run("New-changed", func(b *testing.B) {
		w := decoded(b)
		w.CreationTimestamp = kapi.Time{Time: time.Now()}
		w.Finalizers = []string{}
		v := reflect.ValueOf(w).Elem()
		if im.Is(v) {
			b.Fatal("its own image")
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := im.New(v); !ok {
				b.Fatal("not told")
			}
		}
	})
}

type edges struct {
	At     *kapi.Time      `json:"at,omitempty"`
	Micro  *kapi.MicroTime `json:"micro,omitempty"`
	Ratio  float64         `json:"ratio"`
	Sparse float64         `json:"sparse,omitempty"`
	Next   *edges          `json:"next,omitempty"`
	AtPtr  **kapi.Time     `json:"atPtr,omitempty"`
}

// Values found by review: the image is what decoding gives, or is not told.
func TestImageOfEdges(t *testing.T) {
	im := jsonimage.New(reflect.TypeFor[edges]())
	yearOne := time.Date(1, 1, 1, 0, 0, 0, 500_000_500, time.UTC)
	cycle := &edges{}
	cycle.Next = cycle
	zero := &kapi.Time{}
	for _, tc := range []struct {
		name string
		v    edges
		told bool
	}{
		{"a time in year 1 with a fraction is written, not null", edges{At: &kapi.Time{Time: yearOne}, Micro: &kapi.MicroTime{Time: yearOne}}, true},
		{"a zero time is null", edges{At: &kapi.Time{}, Micro: &kapi.MicroTime{}}, true},
		{"a pointer to a pointer to a zero time is null", edges{AtPtr: &zero}, true},
		{"-0 is written -0, which DeepEqual finds equal to 0", edges{Ratio: math.Copysign(0, -1)}, false},
		{"-0 under omitempty is left out", edges{Sparse: math.Copysign(0, -1)}, true},
		{"a cycle of pointers", edges{Next: cycle}, false},
	} {
		img, ok := im.Of(reflect.ValueOf(&tc.v).Elem())
		if ok != tc.told {
			t.Errorf("%s: told %v, want %v", tc.name, ok, tc.told)
		}
		if !ok {
			continue
		}
		value, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		var decoded edges
		if err := codec.UnmarshalJSON(value, &decoded); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(img.Interface(), decoded) {
			t.Errorf("%s: image %+v, decoded %s as %+v", tc.name, img.Interface(), value, decoded)
		}
	}
}
