package patch

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/internal/jsonimage"
	"github.com/kapi-dev/kapi/internal/jsonwrite"
)

// A live object is read as a tree: what decodeUnmanaged makes of its JSON.
// A server holds the object as a Go value too, and the tree of a Go value
// is built from it by a plan compiled once per type (typedTree), without
// writing its JSON and reading it back: the same maps, lists, strings and
// numbers (a number as the reader canonicalizes what json.Marshal writes),
// metadata.managedFields left out.
//
// The plan takes on what it can tell json.Marshal's answer of: structs by
// jsonfields' listing (omitempty, omitzero, embedding), strings of valid
// UTF-8, bools, integers, pointers, nil interfaces, slices but []byte,
// maps with string keys, and kapi's times. Anything else (a float, a
// []byte, an array, a value of an interface, a type with its own
// MarshalJSON or MarshalText, a `json:",string"` field, a string
// json.Marshal would respell, a value nested deeper than maxDepth) makes
// the build give up, and the caller reads the JSON instead.

// treeFunc builds the tree of v, depth values down; ok false to give up.
type treeFunc func(v reflect.Value, depth int) (any, bool)

// treePlan is the compiled plan of one type, nil fn if no value of the
// type can be built.
type treePlan struct{ fn treeFunc }

// treePlans are the plans of the types seen: reflect.Type → *treePlan.
var treePlans sync.Map

var (
	kapiTimeType      = reflect.TypeFor[kapi.Time]()
	kapiMicroTimeType = reflect.TypeFor[kapi.MicroTime]()
	jsonNumberType    = reflect.TypeFor[json.Number]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// typedTree is the tree of obj, a pointer to a struct, as decodeUnmanaged
// reads json.Marshal(obj); ok false where the plan gives up.
func typedTree(obj any) (map[string]any, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	v = v.Elem()
	t := v.Type()
	p, ok := treePlans.Load(t)
	if !ok {
		c := treeCompiler{seen: map[treeKey]*treePlan{}}
		p, _ = treePlans.LoadOrStore(t, c.compile(t, treeRoot))
	}
	fn := p.(*treePlan).fn
	if fn == nil {
		return nil, false
	}
	tree, ok := fn(v, 0)
	if !ok {
		return nil, false
	}
	m, ok := tree.(map[string]any)
	return m, ok
}

type treeKey struct {
	t    reflect.Type
	mode treeMode
}

// treeMode says where a value is: the root's metadata leaves out its
// managedFields, as decodeUnmanaged does.
type treeMode uint8

const (
	treeValue treeMode = iota
	treeRoot
	treeMetadata // the root's metadata
)

type treeCompiler struct {
	seen map[treeKey]*treePlan
}

func (c *treeCompiler) compile(t reflect.Type, mode treeMode) *treePlan {
	k := treeKey{t, mode}
	if p, ok := c.seen[k]; ok {
		return p // compiled, or being compiled: a recursive type calls it through p
	}
	p := &treePlan{}
	c.seen[k] = p
	p.fn = c.compileNew(t, mode)
	return p
}

// call is a treeFunc calling p's, which may not be compiled yet.
func (p *treePlan) call(v reflect.Value, depth int) (any, bool) {
	if p.fn == nil {
		return nil, false
	}
	return p.fn(v, depth)
}

func (c *treeCompiler) compileNew(t reflect.Type, mode treeMode) treeFunc {
	switch t {
	case kapiTimeType:
		return timeTree(time.RFC3339)
	case kapiMicroTimeType:
		return timeTree(kapi.RFC3339Micro)
	case jsonNumberType:
		return nil
	}
	if t.Kind() == reflect.Pointer {
		// nil is null; else what it points to writes itself, by its
		// MarshalJSON if it has one (left to the JSON then).
		elem := c.compile(t.Elem(), mode)
		return func(v reflect.Value, depth int) (any, bool) {
			if v.IsNil() {
				return nil, true
			}
			return elem.call(v.Elem(), depth+1)
		}
	}
	if jsonfields.Implements(t, jsonMarshalerType) || jsonfields.Implements(t, textMarshalerType) {
		return nil
	}
	if mode != treeValue && t.Kind() != reflect.Struct {
		return nil // an object or its metadata that is not a struct: read as JSON
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(v reflect.Value, _ int) (any, bool) { return v.Bool(), true }
	case reflect.String:
		return func(v reflect.Value, _ int) (any, bool) {
			s := v.String()
			return stringTree(s), utf8.ValidString(s) // else json.Marshal respells it
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value, _ int) (any, bool) {
			var arr [24]byte
			return numberTree(strconv.AppendInt(arr[:0], v.Int(), 10)), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(v reflect.Value, _ int) (any, bool) {
			var arr [24]byte
			return numberTree(strconv.AppendUint(arr[:0], v.Uint(), 10)), true
		}
	case reflect.Interface:
		return func(v reflect.Value, _ int) (any, bool) { return nil, v.IsNil() }
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64, or a list when its items write themselves
		}
		elem := c.compile(t.Elem(), treeValue)
		return func(v reflect.Value, depth int) (any, bool) {
			if v.IsNil() {
				return nil, true
			}
			if depth >= maxDepth {
				return nil, false
			}
			out := make([]any, v.Len())
			for i := range out {
				var ok bool
				if out[i], ok = elem.call(v.Index(i), depth+1); !ok {
					return nil, false
				}
			}
			return out, true
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil
		}
		if t == stringMapType {
			return stringMapTree
		}
		elem := c.compile(t.Elem(), treeValue)
		return func(v reflect.Value, depth int) (any, bool) {
			if v.IsNil() {
				return nil, true
			}
			if depth >= maxDepth {
				return nil, false
			}
			out := make(map[string]any, v.Len())
			for it := v.MapRange(); it.Next(); {
				k := it.Key().String()
				item, ok := elem.call(it.Value(), depth+1)
				if !ok || !utf8.ValidString(k) {
					return nil, false
				}
				out[k] = item
			}
			return out, true
		}
	case reflect.Struct:
		return c.compileStruct(t, mode)
	}
	return nil // floats, arrays, complex numbers, channels, functions
}

// treeField is the plan of one field of a struct.
type treeField struct {
	index []int
	name  string
	omit  func(reflect.Value) bool
	plan  *treePlan
}

func (c *treeCompiler) compileStruct(t reflect.Type, mode treeMode) treeFunc {
	var fields []treeField
	for _, f := range jsonfields.Of(t) {
		if f.Quoted {
			return nil
		}
		if mode == treeMetadata && f.Name == "managedFields" {
			continue
		}
		fm := treeValue
		if mode == treeRoot && f.Name == "metadata" {
			fm = treeMetadata
		}
		fields = append(fields, treeField{index: f.Index, name: f.Name, omit: jsonwrite.Omitter(f), plan: c.compile(f.Type, fm)})
	}
	return func(v reflect.Value, depth int) (any, bool) {
		if depth >= maxDepth {
			return nil, false
		}
		out := make(map[string]any, len(fields))
		for i := range fields {
			f := &fields[i]
			fv, found := jsonwrite.FieldOf(v, f.index)
			if !found || f.omit != nil && f.omit(fv) {
				continue
			}
			item, ok := f.plan.call(fv, depth+1)
			if !ok {
				return nil, false
			}
			out[f.name] = item
		}
		return out, true
	}
}

// stringMapTree is the tree of a map[string]string (labels, annotations,
// selectors), without reflection over it.
func stringMapTree(v reflect.Value, _ int) (any, bool) {
	if v.IsNil() {
		return nil, true
	}
	m := v.Interface().(map[string]string)
	out := make(map[string]any, len(m))
	for k, s := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(s) {
			return nil, false
		}
		out[k] = stringTree(s)
	}
	return out, true
}

// stringTree is s boxed, a short one as the reader boxes it: made once
// while it stays in internedValues.
func stringTree(s string) any {
	if len(s) > maxInternedKey {
		return s
	}
	return internValue(unsafe.Slice(unsafe.StringData(s), len(s)), false)
}

// timeTree is the tree of a kapi time written in layout: null when zero,
// else its string in UTC (jsonwrite.AppendTime).
func timeTree(layout string) treeFunc {
	return func(v reflect.Value, _ int) (any, bool) {
		t := jsonimage.TimeOf(v)
		if t.IsZero() {
			return nil, true
		}
		var arr [40]byte
		b := t.UTC().AppendFormat(arr[:0], layout)
		if len(b) <= maxInternedKey {
			return internValue(b, false), true
		}
		return string(b), true
	}
}
