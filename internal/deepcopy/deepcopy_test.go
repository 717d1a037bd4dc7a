package deepcopy_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/deepcopy"
)

type node struct {
	Name     string
	Children []*node
	Parent   *node `json:"-"` // a cycle would not end; left nil
}

type inner struct {
	Tags  []string
	Attrs map[string]string
	N     *int
}

// promoted is embedded unexported: its fields are sample's in JSON.
type promoted struct {
	Tags  map[string]string
	Items []string
	Note  *string
}

type sample struct {
	kapi.ObjectMeta
	promoted
	Plain    inner
	Ptr      *inner
	List     []inner
	ByName   map[string]inner
	ByPtr    map[string]*inner
	Counts   map[string]int
	Array    [2]inner
	Numbers  [3]int
	Any      any
	Anys     []any
	Tree     *node
	Bytes    []byte
	hidden   []string // shared, as unexported fields are
	Strings  map[string]string
	PtrPtr   **string
	Interval float64
}

// fill sets every exported field of v reachable without a cycle to a
// value from rng, with nil and empty ones among them.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprint(rng.IntN(100)))
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(rng.Int64N(100))
	case reflect.Uint8:
		v.SetUint(uint64(rng.IntN(256)))
	case reflect.Float64:
		v.SetFloat(rng.Float64())
	case reflect.Pointer:
		if depth > 4 || rng.IntN(4) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 4 || rng.IntN(4) == 0 {
			return
		}
		n := rng.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if depth > 4 || rng.IntN(4) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range rng.IntN(3) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(rng, k, depth+1)
			fill(rng, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		switch rng.IntN(3) {
		case 1:
			v.Set(reflect.ValueOf(map[string]any{"a": []any{"b", 1.5}}))
		case 2:
			v.Set(reflect.ValueOf(&inner{Tags: []string{"x"}}))
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(rng, v.Index(i), depth+1)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[kapi.Time]() {
			v.Set(reflect.ValueOf(kapi.Time{Time: kapi.Now().Time}))
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct {
				fill(rng, v.Field(i), depth+1)
			}
		}
	}
}

// scribble changes everything of v a copy could share: every string and
// number, every map entry, every element, through every pointer and
// interface.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1000)
	case reflect.Uint8:
		v.SetUint(v.Uint() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 1000)
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		switch e := v.Elem().Interface().(type) {
		case map[string]any:
			e["scribbled"] = true
			e["a"].([]any)[0] = "scribbled"
		case *inner:
			scribble(reflect.ValueOf(e))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			scribble(e)
			v.SetMapIndex(k, e)
		}
		v.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct {
				scribble(v.Field(i))
			}
		}
	}
}

func checkCopy[T any](t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	src := new(T)
	fill(rng, reflect.ValueOf(src).Elem(), 0)
	before, err := json.Marshal(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := new(T)
	deepcopy.Set(reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem())
	if !reflect.DeepEqual(dst, src) {
		t.Fatalf("seed %d: copy differs:\n%#v\n%#v", seed, dst, src)
	}
	scribble(reflect.ValueOf(dst).Elem())
	if after, _ := json.Marshal(src); string(after) != string(before) {
		t.Fatalf("seed %d: changing the copy changed the original:\n%s\nwas\n%s", seed, after, before)
	}
}

func TestSet(t *testing.T) {
	for seed := range uint64(2000) {
		checkCopy[sample](t, seed)
		checkCopy[widgetapi.Widget](t, seed)
	}
}

// Unexported fields are shared, as they were: only exported ones can be
// set through reflection.
func TestSetSharesUnexported(t *testing.T) {
	src := sample{hidden: []string{"a"}}
	var dst sample
	deepcopy.Set(reflect.ValueOf(&dst).Elem(), reflect.ValueOf(src))
	if &dst.hidden[0] != &src.hidden[0] {
		t.Error("an unexported slice was copied")
	}
}

func BenchmarkSet(b *testing.B) {
	var w widgetapi.Widget
	if err := json.Unmarshal([]byte(`{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w2","namespace":"default","uid":"3401c667-b1c0-434a-913f-06e3e675bf0e","generation":1,"creationTimestamp":"2026-11-25T16:53:02Z","labels":{"app":"loadtest","shard":"2","team":"platform","tier":"backend"},"managedFields":[{"manager":"curl","operation":"Update","apiVersion":"example.com/v1","time":"2026-11-25T16:53:02Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:color":{}}}}]},"spec":{"color":"Red","replicas":3,"size":7,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}],"selector":{"app":"loadtest","tier":"backend"}},"status":{}}`), &w); err != nil {
		b.Fatal(err)
	}
	src := reflect.ValueOf(&w).Elem()
	b.ReportAllocs()
	for b.Loop() {
		deepcopy.Set(reflect.New(src.Type()).Elem(), src)
	}
}
