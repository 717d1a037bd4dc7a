package deepequal_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/deepcopy"
	"github.com/kapi-dev/kapi/internal/deepequal"
)

type node struct {
	Name     string
	Children []*node
	Parent   *node
}

type inner struct {
	Tags  []string
	Attrs map[string]string
	N     *int
}

// scalars holds every kind of scalar, and the kinds compared by a word
// (chan, unsafe pointer), which Values reads from memory where it can.
type scalars struct {
	I8    int8
	I16   int16
	U     uint
	U16   uint16
	U32   uint32
	U64   uint64
	Ptr   uintptr
	F32   float32
	C64   complex64
	C128  complex128
	B     bool
	Bytes [3]byte
	Ch    chan int
	Raw   unsafe.Pointer
	Named labels
	Ints  map[string]int
}

type labels map[string]string

type sample struct {
	kapi.ObjectMeta
	Scalars  scalars
	Scalarss []scalars
	Plain    inner
	Ptr      *inner
	List     []inner
	ByName   map[string]inner
	ByPtr    map[string]*inner
	Counts   map[int]int
	Array    [2]inner
	Any      any
	Anys     []any
	Tree     *node
	Bytes    []byte
	Float    float64
	Fn       func()
	PtrPtr   **string
	Managed  []kapi.ManagedFieldsEntry
}

var sharedWord int

// fill sets v from a small domain (two strings, two numbers, short lists),
// so that two values filled apart are often equal in part, and sometimes
// whole.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString([]string{"a", "b"}[rng.IntN(2)])
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(rng.Int64N(2) << rng.IntN(v.Type().Bits())) // 0, or one bit anywhere
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(rng.Uint64N(2) << rng.IntN(v.Type().Bits()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 1, math.NaN(), math.Copysign(0, -1)}[rng.IntN(4)])
	case reflect.Complex64, reflect.Complex128:
		v.SetComplex(complex([]float64{0, 1, math.NaN(), math.Copysign(0, -1)}[rng.IntN(4)], 0))
	case reflect.Chan:
		if rng.IntN(2) == 0 {
			v.Set(reflect.MakeChan(v.Type(), 0))
		}
	case reflect.UnsafePointer:
		if rng.IntN(2) == 0 {
			v.SetPointer(unsafe.Pointer(&sharedWord))
		}
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Pointer:
		if depth > 5 || rng.IntN(3) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 5 || rng.IntN(3) == 0 {
			return
		}
		n := rng.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if depth > 5 || rng.IntN(3) == 0 {
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
		switch rng.IntN(4) {
		case 1:
			v.Set(reflect.ValueOf(map[string]any{"a": []any{"b", float64(rng.IntN(2))}}))
		case 2:
			v.Set(reflect.ValueOf(&inner{Tags: []string{"x"}}))
		case 3:
			v.Set(reflect.ValueOf(rng.IntN(2)))
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(rng, v.Index(i), depth+1)
		}
	case reflect.Func:
		if rng.IntN(2) == 0 {
			v.Set(reflect.ValueOf(func() {}))
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[kapi.Time]() {
			v.Set(reflect.ValueOf(kapi.NewTime(kapi.Now().Truncate(time.Second).Add(-time.Duration(rng.IntN(2)) * time.Second))))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(rng, v.Field(i), depth+1)
			}
		}
	}
}

// check compares Values with reflect.DeepEqual on a and b, and on each of
// their fields.
func check[T any](t *testing.T, seed uint64, a, b *T) {
	t.Helper()
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	if got, want := deepequal.Values(va, vb), reflect.DeepEqual(a, b); got != want { // addressable: as of pointers
		t.Fatalf("seed %d: Values says %v, reflect.DeepEqual %v:\n%#v\n%#v", seed, got, want, a, b)
	}
	for i := range va.NumField() {
		fa, fb := va.Field(i), vb.Field(i)
		if !fa.CanInterface() {
			continue
		}
		if got, want := deepequal.Values(fa, fb), reflect.DeepEqual(fa.Addr().Interface(), fb.Addr().Interface()); got != want {
			t.Fatalf("seed %d: field %s: Values says %v, reflect.DeepEqual %v:\n%#v\n%#v", seed, va.Type().Field(i).Name, got, want, fa, fb)
		}
	}
}

func checkType[T any](t *testing.T, seed uint64) (equal int) {
	a, b := new(T), new(T)
	fill(rand.New(rand.NewPCG(seed, 1)), reflect.ValueOf(a).Elem(), 0)
	fill(rand.New(rand.NewPCG(seed/2, 1)), reflect.ValueOf(b).Elem(), 0) // every other pair filled alike
	check(t, seed, a, b)
	c := new(T)
	deepcopy.Set(reflect.ValueOf(c).Elem(), reflect.ValueOf(a).Elem())
	check(t, seed, a, c)
	check(t, seed, a, a)
	// Not addressable: as reflect.DeepEqual of the values (a NaN differs
	// from itself).
	va := reflect.ValueOf(*a)
	if got, want := deepequal.Values(va, va), reflect.DeepEqual(*a, *a); got != want {
		t.Fatalf("seed %d: unaddressable: Values says %v, reflect.DeepEqual %v", seed, got, want)
	}
	if reflect.DeepEqual(a, c) {
		equal++
	}
	return equal
}

// TestOneField holds Values to reflect.DeepEqual's answer on two values
// alike but for one scalar, which may differ in a single bit anywhere in
// its memory.
func TestOneField(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for seed := range uint64(3000) {
		a, b := new(sample), new(sample)
		fill(rng, reflect.ValueOf(a).Elem(), 0)
		deepcopy.Set(reflect.ValueOf(b).Elem(), reflect.ValueOf(a).Elem())
		sb := reflect.ValueOf(&b.Scalars).Elem()
		fill(rng, sb.Field(rng.IntN(sb.NumField())), 0)
		check(t, seed, a, b)
		check(t, seed, &a.Scalars, &b.Scalars)
	}
}

// TestValues holds Values to reflect.DeepEqual's answer on random values
// of types with every kind in them, equal, equal in part, copies of each
// other and the same.
func TestValues(t *testing.T) {
	equal := 0
	for seed := range uint64(3000) {
		equal += checkType[sample](t, seed)
		equal += checkType[widgetapi.Widget](t, seed)
	}
	if equal < 1000 {
		t.Fatalf("only %d of the copies were equal: the test compares too little that is", equal)
	}
}

// A cycle, which only reflect.DeepEqual's record of pointers ends, is
// compared as it compares it.
func TestCycle(t *testing.T) {
	cycle := func(name string) *node {
		n := &node{Name: name}
		n.Children = []*node{{Name: "child", Parent: n}}
		return n
	}
	for _, c := range []struct{ a, b *node }{
		{cycle("x"), cycle("x")},
		{cycle("x"), cycle("y")},
	} {
		a, b := reflect.ValueOf(c.a).Elem(), reflect.ValueOf(c.b).Elem()
		if got, want := deepequal.Values(a, b), reflect.DeepEqual(c.a, c.b); got != want {
			t.Errorf("%s, %s: Values says %v, reflect.DeepEqual %v", c.a.Name, c.b.Name, got, want)
		}
	}
}

// Unexported fields are compared too, as reflect.DeepEqual compares them.
func TestUnexported(t *testing.T) {
	type withHidden struct {
		N      int
		hidden []string
	}
	for _, c := range []struct{ a, b withHidden }{
		{withHidden{hidden: []string{"a"}}, withHidden{hidden: []string{"a"}}},
		{withHidden{hidden: []string{"a"}}, withHidden{hidden: []string{"b"}}},
		{withHidden{hidden: []string{}}, withHidden{}},
	} {
		if got, want := deepequal.Values(reflect.ValueOf(&c.a).Elem(), reflect.ValueOf(&c.b).Elem()), reflect.DeepEqual(c.a, c.b); got != want {
			t.Errorf("%#v, %#v: Values says %v, reflect.DeepEqual %v", c.a, c.b, got, want)
		}
	}
}

// Values of two types are unequal, as reflect.DeepEqual says, even where
// the first's plan would read more memory than the second holds.
func TestTypes(t *testing.T) {
	type small struct{ A int8 }
	type large struct {
		A int8
		S string
	}
	a, b := &small{}, &large{}
	if deepequal.Values(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()) || deepequal.Values(reflect.ValueOf(b).Elem(), reflect.ValueOf(a).Elem()) {
		t.Fatal("Values says a small and a large are equal")
	}
}

func BenchmarkValues(b *testing.B) {
	w1, w2 := new(widgetapi.Widget), new(widgetapi.Widget)
	fill(rand.New(rand.NewPCG(7, 1)), reflect.ValueOf(w1).Elem(), 0)
	deepcopy.Set(reflect.ValueOf(w2).Elem(), reflect.ValueOf(w1).Elem())
	b.Run("deepequal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			deepequal.Values(reflect.ValueOf(w1).Elem(), reflect.ValueOf(w2).Elem())
		}
	})
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			reflect.DeepEqual(w1, w2)
		}
	})
}
