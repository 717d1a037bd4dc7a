package jsonfields_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonfields"
)

type Inner struct {
	A int `json:"a"`
	B int
}

type Deep struct{ Inner }

type Ptr struct {
	P int `json:"p"`
	Q int
}

type PtrToInner struct{ *Inner }

type TaggedX struct {
	Y int `json:"X"`
}

type Untagged1 struct{ X int }

type Untagged2 struct{ X int }

type Leaf struct{ L int }

type Twice1 struct{ Leaf }

type Twice2 struct{ Leaf }

type inner struct {
	E int `json:"e"`
}

type hidden int

type IntPtr *int

type Loop struct {
	*Loop
	V int
}

// want is a field Of should list; owner nil means the case's own type.
type want struct {
	name                                          string
	index                                         []int
	owner                                         reflect.Type
	tagged, optional, omitEmpty, omitZero, quoted bool
}

var intType = reflect.TypeFor[int]()

// tiedTags has two fields tagged "a" at one depth, which go vet would
// rightly reject in a type declaration.
var tiedTags = reflect.StructOf([]reflect.StructField{
	{Name: "A", Type: intType, Tag: `json:"a"`},
	{Name: "B", Type: intType, Tag: `json:"a"`},
	{Name: "C", Type: intType},
})

var ofCases = []struct {
	name string
	typ  reflect.Type
	want []want
}{
	{"exported fields by tag or Go name", reflect.TypeFor[struct {
		A int `json:"a"`
		B string
		c int
		D bool `json:"d,omitempty"`
	}](), []want{
		{name: "a", index: []int{0}, tagged: true},
		{name: "B", index: []int{1}},
		{name: "d", index: []int{3}, tagged: true, omitEmpty: true},
	}},
	{"json dash", reflect.TypeFor[struct {
		A int `json:"-"`
		//lint:ignore SA5008 encoding/json names this field "-"; the case checks Of does too
		B int `json:"-,"`
		C int
	}](), []want{
		{name: "-", index: []int{1}, tagged: true},
		{name: "C", index: []int{2}},
	}},
	{"invalid tag name", reflect.TypeFor[struct {
		//lint:ignore SA5008 an invalid name on purpose: encoding/json then uses the Go name, and so must Of
		A int `json:"it's"`
		B int `json:",omitempty"`
	}](), []want{
		{name: "A", index: []int{0}},
		{name: "B", index: []int{1}, omitEmpty: true},
	}},
	{"promotion", reflect.TypeFor[struct {
		Inner
		C int `json:"c"`
	}](), []want{
		{name: "a", index: []int{0, 0}, owner: reflect.TypeFor[Inner](), tagged: true},
		{name: "B", index: []int{0, 1}, owner: reflect.TypeFor[Inner]()},
		{name: "c", index: []int{1}, tagged: true},
	}},
	{"shallower wins", reflect.TypeFor[struct {
		Deep
		A int `json:"a"`
		B string
	}](), []want{
		{name: "a", index: []int{1}, tagged: true},
		{name: "B", index: []int{2}},
	}},
	{"tagged wins at equal depth", reflect.TypeFor[struct {
		Untagged1
		TaggedX
	}](), []want{
		{name: "X", index: []int{1, 0}, owner: reflect.TypeFor[TaggedX](), tagged: true},
	}},
	{"tie of untagged fields drops the name", reflect.TypeFor[struct {
		Untagged1
		Untagged2
		C int
	}](), []want{
		{name: "C", index: []int{2}},
	}},
	{"tie of tagged fields drops the name", tiedTags, []want{
		{name: "C", index: []int{2}},
	}},
	{"same struct embedded twice at one depth", reflect.TypeFor[struct {
		Twice1
		Twice2
		C int
	}](), []want{
		{name: "C", index: []int{2}},
	}},
	{"embedded struct with a json name", reflect.TypeFor[struct {
		Inner `json:"inner,omitzero"`
	}](), []want{
		{name: "inner", index: []int{0}, tagged: true, omitZero: true},
	}},
	{"embedded pointer makes fields optional", reflect.TypeFor[struct {
		*Ptr
		C int
	}](), []want{
		{name: "p", index: []int{0, 0}, owner: reflect.TypeFor[Ptr](), tagged: true, optional: true},
		{name: "Q", index: []int{0, 1}, owner: reflect.TypeFor[Ptr](), optional: true},
		{name: "C", index: []int{1}},
	}},
	{"optional through a deeper pointer", reflect.TypeFor[struct {
		PtrToInner
	}](), []want{
		{name: "a", index: []int{0, 0, 0}, owner: reflect.TypeFor[Inner](), tagged: true, optional: true},
		{name: "B", index: []int{0, 0, 1}, owner: reflect.TypeFor[Inner](), optional: true},
	}},
	{"unexported embedded struct promotes exported fields", reflect.TypeFor[struct {
		inner
		hidden
	}](), []want{
		{name: "e", index: []int{0, 0}, owner: reflect.TypeFor[inner](), tagged: true},
	}},
	{"embedded struct refers to itself", reflect.TypeFor[Loop](), []want{
		{name: "V", index: []int{1}},
	}},
	{"options", reflect.TypeFor[struct {
		A int    `json:"a,omitempty"`
		B string `json:"b,omitzero"`
		C int64  `json:"c,string"`
		D *bool  `json:"d,string"`
		//lint:ignore SA5008 ,string on a slice on purpose: encoding/json ignores it there, and so must Of
		E []int   `json:"e,string"`
		F float64 `json:",string"`
		G string  `json:"g,omitempty,string"`
		H IntPtr  `json:"h,string"`
		I uint8   `json:"i,omitempty,omitzero"`
	}](), []want{
		{name: "a", index: []int{0}, tagged: true, omitEmpty: true},
		{name: "b", index: []int{1}, tagged: true, omitZero: true},
		{name: "c", index: []int{2}, tagged: true, quoted: true},
		{name: "d", index: []int{3}, tagged: true, quoted: true},
		{name: "e", index: []int{4}, tagged: true},
		{name: "F", index: []int{5}, quoted: true},
		{name: "g", index: []int{6}, tagged: true, omitEmpty: true, quoted: true},
		{name: "h", index: []int{7}, tagged: true},
		{name: "i", index: []int{8}, tagged: true, omitEmpty: true, omitZero: true},
	}},
}

func TestOf(t *testing.T) {
	for _, c := range ofCases {
		t.Run(c.name, func(t *testing.T) {
			fields := jsonfields.Of(c.typ)
			var got []want
			for _, f := range fields {
				owner := f.Owner
				if owner == c.typ {
					owner = nil
				}
				got = append(got, want{
					name: f.Name, index: f.Index, owner: owner, tagged: f.Tagged, optional: f.Optional,
					omitEmpty: f.OmitEmpty, omitZero: f.OmitZero, quoted: f.Quoted,
				})
				if sf := f.Owner.Field(f.Index[len(f.Index)-1]); sf.Name != f.StructField.Name || sf.Type != f.Type {
					t.Errorf("field %s: StructField %s %v, Type %v; its owner has %s %v there", f.Name, f.StructField.Name, f.StructField.Type, f.Type, sf.Name, sf.Type)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Of:\n got %+v\nwant %+v", got, c.want)
			}
			checkEncodingJSON(t, c.typ, fields)
		})
	}
}

// checkEncodingJSON compares fields with what encoding/json does with
// values of type typ: which keys it writes and in what order, what value
// each key carries, which keys an empty value leaves out, and that it
// decodes what it wrote.
func checkEncodingJSON(t *testing.T, typ reflect.Type, fields []jsonfields.Field) {
	t.Helper()
	full := reflect.New(typ)
	n := 0
	fill(full.Elem(), &n, 0)
	data, err := json.Marshal(full.Interface())
	if err != nil {
		t.Fatal(err)
	}
	keys, values := members(t, data)
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	if !slices.Equal(keys, names) {
		t.Errorf("encoding/json writes %s: keys %q, Of has %q", data, keys, names)
	}
	for i, f := range fields {
		if i >= len(values) {
			break
		}
		v, err := json.Marshal(full.Elem().FieldByIndex(f.Index).Interface())
		if err != nil {
			t.Fatal(err)
		}
		if f.Quoted {
			v, _ = json.Marshal(string(v))
		}
		if !bytes.Equal(values[i], v) {
			t.Errorf("encoding/json writes %s for %s, Of's field (Index %v, Quoted %v) holds %s", values[i], f.Name, f.Index, f.Quoted, v)
		}
	}

	decoded := reflect.New(typ)
	if err := json.Unmarshal(data, decoded.Interface()); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	if again, _ := json.Marshal(decoded.Interface()); !bytes.Equal(again, data) {
		t.Errorf("encoding/json decodes %s and writes it back as %s", data, again)
	}

	empty, err := json.Marshal(reflect.New(typ).Interface())
	if err != nil {
		t.Fatal(err)
	}
	keys, _ = members(t, empty)
	names = nil
	for _, f := range fields {
		if !f.OmitEmpty && !f.OmitZero && !f.Optional {
			names = append(names, f.Name)
		}
	}
	if !slices.Equal(keys, names) {
		t.Errorf("encoding/json writes an empty value as %s: keys %q, Of's fields not omitted %q", empty, keys, names)
	}
}

// fill gives every settable number, string and bool below v a value of its
// own, and allocates pointers (but for a few levels of a type referring to
// itself).
func fill(v reflect.Value, n *int, depth int) {
	if !v.CanSet() && v.Kind() != reflect.Struct {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 3 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n, depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n, depth)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n, depth)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		*n++
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		*n++
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		*n++
		v.SetFloat(float64(*n) + 0.5)
	case reflect.String:
		*n++
		v.SetString("s" + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	}
}

// members returns the keys of a JSON object, in order, and their values.
func members(t *testing.T, data []byte) (keys []string, values []json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			t.Fatal(err)
		}
		keys, values = append(keys, key.(string)), append(values, value)
	}
	return keys, values
}

func TestOfNotAStruct(t *testing.T) {
	for _, typ := range []reflect.Type{nil, intType, reflect.TypeFor[*Inner](), reflect.TypeFor[map[string]int]()} {
		if fields := jsonfields.Of(typ); fields != nil {
			t.Errorf("Of(%v) = %+v, want nil", typ, fields)
		}
	}
}

func TestNamed(t *testing.T) {
	type withStatus struct {
		*Ptr
		Untagged1
		Untagged2
		Status int `json:"status,omitempty"`
		Dash   int `json:"-"`
	}
	typ := reflect.TypeFor[withStatus]()
	for _, c := range []struct {
		name, field string
		typ         reflect.Type
		index       []int // nil: not found
	}{
		{"top-level", "status", typ, []int{3}},
		{"promoted", "p", typ, []int{0, 0}},
		{"name differs in case", "Status", typ, nil},
		{"name dropped by a tie", "X", typ, nil},
		{"json dash", "Dash", typ, nil},
		{"json dash by name", "-", typ, nil},
		{"not a struct", "status", reflect.TypeFor[*withStatus](), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, ok := jsonfields.Named(c.typ, c.field)
			if ok != (c.index != nil) || !slices.Equal(f.Index, c.index) {
				t.Errorf("Named(%v, %q) = %v, %v; want index %v", c.typ, c.field, f.Index, ok, c.index)
			}
			if ok && f.Name != c.field {
				t.Errorf("Named(%v, %q) has name %q", c.typ, c.field, f.Name)
			}
		})
	}
}
