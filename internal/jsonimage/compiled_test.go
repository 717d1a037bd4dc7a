package jsonimage_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/fuzzfill"
	"github.com/kapi-dev/kapi/internal/jsonimage"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// OracleEmbedded is embedded under a JSON name: a field, not inlined.
type OracleEmbedded struct {
	At   kapi.Time `json:"at"`
	Tags []string  `json:"tags,omitempty"`
}

type (
	oracleLabels map[string]string
	oracleString string
)

// oracleShapes has the shapes imageSample lacks: maps of other keys and
// values, arrays and pointers of times and floats, named maps and strings,
// nested containers, a struct embedded under a name.
type oracleShapes struct {
	OracleEmbedded `json:"embedded"`
	imagePromoted

	Named     oracleLabels                `json:"named,omitempty"`
	NamedStr  oracleString                `json:"namedStr"`
	ByInt     map[int]imageInner          `json:"byInt,omitempty"`
	ByName    map[string]*kapi.MicroTime  `json:"byName"`
	ByKey     map[oracleString]kapi.Time  `json:"byKey,omitempty"`
	ListMap   map[string][]string         `json:"listMap,omitempty"`
	Arr       [3]*float64                 `json:"arr"`
	ArrTimes  [2]*kapi.MicroTime          `json:"arrTimes"`
	F32       float32                     `json:"f32,omitempty"`
	F32Ptr    *float32                    `json:"f32Ptr,omitempty"`
	PtrTime   **kapi.Time                 `json:"ptrTime"`
	PtrSlice  *[]kapi.Time                `json:"ptrSlice,omitempty"`
	PtrMap    *map[string]string          `json:"ptrMap"`
	Fields    []kapi.FieldsV1             `json:"fields"`
	FieldsPtr *kapi.FieldsV1              // untagged: named FieldsPtr
	Matrix    [][]kapi.Time               `json:"matrix,omitempty"`
	Nested    []map[string]*imageInner    `json:"nested"`
	Node      imageNode                   `json:"node"`
	Edges     *edges                      `json:"edges,omitempty"`
	Pair      struct{ A, B int }          `json:"pair,omitzero"`
	Quoted    float64                     `json:"quoted,string,omitempty"`
	Empty     map[string]struct{}         `json:"empty,omitempty"`
	Deep      map[string]map[string]int64 `json:"deep"`
}

// compareWalks fails if the compiled Image of T and the reflective walk it
// replaced (the oracle) tell a value of T apart: whether its image is told,
// the image, whether it is the value itself, what Is and New say; or if
// the compiled walk changes the value. It reports what the oracle said.
func compareWalks[T any](t *testing.T, data []byte) (told, changed bool) {
	t.Helper()
	typ := reflect.TypeFor[T]()
	im, oracle := jsonimage.New(typ), jsonimage.NewOracle(typ)
	if im == nil || oracle == nil {
		t.Fatalf("%v: Image %v, oracle %v", typ, im != nil, oracle != nil)
	}
	v, again := new(T), new(T)
	fuzzfill.New(data, &choices).Fill(reflect.ValueOf(v).Elem())
	fuzzfill.New(data, &choices).Fill(reflect.ValueOf(again).Elem())
	compareAt(t, im, oracle, reflect.ValueOf(v).Elem())
	// A value that cannot be addressed is imaged from a copy.
	compareAt(t, im, oracle, reflect.ValueOf(*v))
	if !reflect.DeepEqual(v, again) {
		t.Fatalf("%v: the compiled walk changed the value it read:\n%#v\nwas\n%#v", typ, v, again)
	}
	img, ok := oracle.Of(reflect.ValueOf(v).Elem())
	return ok, ok && !isItself(img, reflect.ValueOf(v).Elem())
}

// compareAt compares the compiled walk with the oracle on v.
func compareAt(t *testing.T, im *jsonimage.Image, oracle *jsonimage.Oracle, v reflect.Value) {
	t.Helper()
	want, wantOK := oracle.Of(v)
	got, ok := im.Of(v)
	if ok != wantOK {
		t.Fatalf("%v: Of told %v, the oracle %v, of %#v", v.Type(), ok, wantOK, v.Interface())
	}
	if ok {
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Fatalf("%v: Of's image differs from the oracle's:\ngot  %#v\nwant %#v\nof   %#v", v.Type(), got.Interface(), want.Interface(), v.Interface())
		}
		if isItself(got, v) != isItself(want, v) {
			t.Fatalf("%v: Of's image is the value itself: %v, the oracle's: %v", v.Type(), isItself(got, v), isItself(want, v))
		}
	}
	if is, wantIs := im.Is(v), oracle.Is(v); is != wantIs {
		t.Fatalf("%v: Is %v, the oracle %v, of %#v", v.Type(), is, wantIs, v.Interface())
	}
	p, newOK := im.New(v)
	if newOK != wantOK {
		t.Fatalf("%v: New told %v, the oracle %v", v.Type(), newOK, wantOK)
	}
	if newOK && (v.CanAddr() && p.Pointer() == v.Addr().Pointer() || !reflect.DeepEqual(p.Elem().Interface(), want.Interface())) {
		t.Fatalf("%v: New = %#v, want a new value of %#v", v.Type(), p.Elem().Interface(), want.Interface())
	}
}

// isItself says whether img is v itself, not a value made of it.
func isItself(img, v reflect.Value) bool {
	if !v.CanAddr() {
		return img.CanAddr() == v.CanAddr() && reflect.DeepEqual(img.Interface(), v.Interface())
	}
	return img.CanAddr() && img.Addr().Pointer() == v.Addr().Pointer()
}

// TestImageMatchesReflectiveWalk holds the compiled walk to the reflective
// one it replaced, on random values of every shape the tests know, and
// fails if too few were told and changed to mean something.
func TestImageMatchesReflectiveWalk(t *testing.T) {
	checks := []struct {
		name    string
		compare func(*testing.T, []byte) (bool, bool)
		same    bool // every image told is the value itself
	}{
		{"sample", compareWalks[imageSample], false},
		{"shapes", compareWalks[oracleShapes], false},
		{"widget", compareWalks[widgetapi.Widget], false},
		{"node", compareWalks[imageNode], false},
		{"edges", compareWalks[edges], false},
		{"times", compareWalks[[]kapi.Time], false},
		{"time pointer", compareWalks[*kapi.Time], false},
		{"pointer to pointer", compareWalks[**kapi.MicroTime], false},
		{"map of times", compareWalks[map[string]kapi.MicroTime], false},
		{"array of floats", compareWalks[[3]*float64], true},
		{"float", compareWalks[float32], true},
		{"labels", compareWalks[map[string]string], true},
	}
	data := make([]byte, 512)
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			told, changed, n := 0, 0, race.Cases(1500)
			for i := range n {
				fuzzfill.Input(data, uint64(i), 29)
				ok, ch := c.compare(t, data)
				if ok {
					told++
				}
				if ch {
					changed++
				}
			}
			t.Logf("told %d of %d images, of which %d changed", told, n, changed)
			if told < n/10 || changed < n/30 && !c.same {
				t.Errorf("told %d of %d images, %d of them changed: too few to test anything", told, n, changed)
			}
		})
	}
}

// FuzzImageMatchesReflectiveWalk is TestImageMatchesReflectiveWalk's
// check under the fuzzer.
func FuzzImageMatchesReflectiveWalk(f *testing.F) {
	f.Add([]byte("compiled image of the shapes"))
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWalks[oracleShapes](t, data)
		compareWalks[imageSample](t, data)
	})
}

// TestImageMatchesReflectiveWalkInDepth compares the two walks on chains
// around maxDepth (1000) deep, where a value is left to decoding, and on
// a cycle.
func TestImageMatchesReflectiveWalkInDepth(t *testing.T) {
	fraction := kapi.Time{Time: time.Unix(1700000000, 500)}
	edgesChain := func(n int) *edges {
		e := &edges{At: &fraction}
		for range n {
			e = &edges{Next: e}
		}
		return e
	}
	nodeChain := func(n int) *imageNode {
		e := &imageNode{Name: "leaf", Children: []*imageNode{}}
		for range n {
			e = &imageNode{Children: []*imageNode{e}}
		}
		return e
	}
	edgesImage, edgesOracle := jsonimage.New(reflect.TypeFor[edges]()), jsonimage.NewOracle(reflect.TypeFor[edges]())
	nodeImage, nodeOracle := jsonimage.New(reflect.TypeFor[imageNode]()), jsonimage.NewOracle(reflect.TypeFor[imageNode]())
	for _, n := range []int{0, 1, 2, 330, 331, 332, 333, 334, 497, 498, 499, 500, 501, 997, 998, 999, 1000, 1001, 1002} {
		compareAt(t, edgesImage, edgesOracle, reflect.ValueOf(edgesChain(n)).Elem())
		compareAt(t, nodeImage, nodeOracle, reflect.ValueOf(nodeChain(n)).Elem())
	}
	cycle := &edges{At: &fraction}
	cycle.Next = cycle
	compareAt(t, edgesImage, edgesOracle, reflect.ValueOf(cycle).Elem())
}
