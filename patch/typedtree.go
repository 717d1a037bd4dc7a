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
// hint is a tree built before (nil if none): where a map or list of v's
// tree is equal to the hint's at its place, the hint's is v's, not made
// again (see liveHints). b counts what is built.
type treeFunc func(v reflect.Value, depth int, hint any, b *treeBuild) (any, bool)

// treeBuild is what one build counts: the maps and lists of the tree.
type treeBuild struct{ nodes int }

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
// reads json.Marshal(obj); ok false where the plan gives up. Its maps
// and lists equal to hint's at their place are hint's (hint nil: none).
func typedTree(obj any, hint map[string]any) (map[string]any, treeBuild, bool) {
	var b treeBuild
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, b, false
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
		return nil, b, false
	}
	var h any
	if hint != nil {
		h = hint
	}
	tree, ok := fn(v, 0, h, &b)
	if !ok {
		return nil, b, false
	}
	m, ok := tree.(map[string]any)
	return m, b, ok
}

// sameTree says whether a, a tree just built, is b: the same scalar, or
// b's own map or list (a build that found them equal returned b's).
func sameTree(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && len(x) == len(y) && (len(x) == 0 || sameMap(x, y))
	case []any:
		y, ok := b.([]any)
		return ok && y != nil && len(x) == len(y) && (len(x) == 0 || sameList(x, y))
	}
	return a == b // a is a scalar: comparable
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
func (p *treePlan) call(v reflect.Value, depth int, hint any, b *treeBuild) (any, bool) {
	if p.fn == nil {
		return nil, false
	}
	return p.fn(v, depth, hint, b)
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
		return func(v reflect.Value, depth int, hint any, b *treeBuild) (any, bool) {
			if v.IsNil() {
				return nil, true
			}
			return elem.call(v.Elem(), depth+1, hint, b)
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
		return func(v reflect.Value, _ int, _ any, _ *treeBuild) (any, bool) { return v.Bool(), true }
	case reflect.String:
		return func(v reflect.Value, _ int, hint any, _ *treeBuild) (any, bool) {
			s := v.String()
			if h, ok := hint.(string); ok && h == s {
				return hint, true // the hint's strings are valid UTF-8
			}
			return stringTree(s), utf8.ValidString(s) // else json.Marshal respells it
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value, _ int, hint any, _ *treeBuild) (any, bool) {
			var arr [24]byte
			return hintedNumber(strconv.AppendInt(arr[:0], v.Int(), 10), hint), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(v reflect.Value, _ int, hint any, _ *treeBuild) (any, bool) {
			var arr [24]byte
			return hintedNumber(strconv.AppendUint(arr[:0], v.Uint(), 10), hint), true
		}
	case reflect.Interface:
		return func(v reflect.Value, _ int, _ any, _ *treeBuild) (any, bool) { return nil, v.IsNil() }
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64, or a list when its items write themselves
		}
		elem := c.compile(t.Elem(), treeValue)
		return func(v reflect.Value, depth int, hint any, b *treeBuild) (any, bool) {
			if v.IsNil() {
				return nil, true
			}
			if depth >= maxDepth {
				return nil, false
			}
			b.nodes++
			n := v.Len()
			hl, _ := hint.([]any)
			if len(hl) != n {
				hl = nil
			}
			var out []any // made at the first item that is not hl's
			if hl == nil {
				out = make([]any, n)
			}
			for i := range n {
				var h any
				if hl != nil {
					h = hl[i]
				}
				item, ok := elem.call(v.Index(i), depth+1, h, b)
				if !ok {
					return nil, false
				}
				if out == nil {
					if sameTree(item, h) {
						continue
					}
					out = make([]any, n)
					copy(out, hl[:i])
				}
				out[i] = item
			}
			if out == nil {
				return hint, true // hl as it is, not boxed again (an allocation)
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
		return func(v reflect.Value, depth int, hint any, b *treeBuild) (any, bool) {
			if v.IsNil() {
				return nil, true
			}
			if depth >= maxDepth {
				return nil, false
			}
			b.nodes++
			hm, _ := hint.(map[string]any)
			var arr [16]member
			members := arr[:0]
			if v.Len() > len(arr) {
				members = make([]member, 0, v.Len())
			}
			same := hm != nil && len(hm) == v.Len()
			for it := v.MapRange(); it.Next(); {
				k := it.Key().String()
				var h any
				var has bool
				if hm != nil {
					h, has = hm[k]
				}
				item, ok := elem.call(it.Value(), depth+1, h, b)
				if !ok || !utf8.ValidString(k) {
					return nil, false
				}
				same = same && has && sameTree(item, h)
				members = append(members, member{k, item})
			}
			if same {
				return hm, true
			}
			return membersMap(members), true
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
		fm, kept := memberMode(mode, f.Name)
		if !kept {
			continue
		}
		fields = append(fields, treeField{index: f.Index, name: f.Name, omit: jsonwrite.Omitter(f), plan: c.compile(f.Type, fm)})
	}
	return func(v reflect.Value, depth int, hint any, b *treeBuild) (any, bool) {
		if depth >= maxDepth {
			return nil, false
		}
		b.nodes++
		hm, _ := hint.(map[string]any)
		same := hm != nil
		// The members are gathered first and the map made at their
		// number: most of a type's fields are left out (omitempty), and
		// a map made for all of them (ObjectMeta's 16) is a large one.
		var arr [16]member
		members := arr[:0]
		if len(fields) > len(arr) {
			members = make([]member, 0, len(fields))
		}
		for i := range fields {
			f := &fields[i]
			fv, found := jsonwrite.FieldOf(v, f.index)
			if !found || f.omit != nil && f.omit(fv) {
				continue
			}
			var h any
			var has bool
			if hm != nil {
				h, has = hm[f.name]
			}
			item, ok := f.plan.call(fv, depth+1, h, b)
			if !ok {
				return nil, false
			}
			same = same && has && sameTree(item, h)
			members = append(members, member{f.name, item})
		}
		if same && len(members) == len(hm) {
			return hm, true
		}
		return membersMap(members), true
	}
}

// membersMap is the map of members, made at their number.
func membersMap(members []member) map[string]any {
	out := make(map[string]any, len(members))
	for _, m := range members {
		out[m.key] = m.val
	}
	return out
}

// stringMapTree is the tree of a map[string]string (labels, annotations,
// selectors), without reflection over it.
func stringMapTree(v reflect.Value, _ int, hint any, b *treeBuild) (any, bool) {
	if v.IsNil() {
		return nil, true
	}
	b.nodes++
	m := v.Interface().(map[string]string)
	if hm, _ := hint.(map[string]any); hm != nil && sameStrings(m, hm) {
		return hm, true // its keys and values are valid UTF-8: the hint's are
	}
	out := make(map[string]any, len(m))
	for k, s := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(s) {
			return nil, false
		}
		out[k] = stringTree(s)
	}
	return out, true
}

// hintedNumber is numberTree(lit), or hint when it is that number: the
// leaves of an object written again are mostly the hint's, and taking
// them costs a comparison where interning one costs hashing it.
func hintedNumber(lit []byte, hint any) any {
	if h, ok := hint.(json.Number); ok && len(lit) < 19 && string(h) == string(lit) {
		return hint // numberTree's own answer for a short literal
	}
	return numberTree(lit)
}

// stringTree is s boxed, a short one as the reader boxes it: made once
// while it stays in internedValues.
func stringTree(s string) any {
	if len(s) > maxInternedKey {
		return s
	}
	return internValue(unsafe.Slice(unsafe.StringData(s), len(s)), false)
}

// sameStrings says whether m's tree is the tree t.
func sameStrings(m map[string]string, t map[string]any) bool {
	if len(m) != len(t) {
		return false
	}
	for k, s := range m {
		if ts, ok := t[k].(string); !ok || ts != s {
			return false
		}
	}
	return true
}

// timeTree is the tree of a kapi time written in layout: null when zero,
// else its string in UTC (jsonwrite.AppendTime).
func timeTree(layout string) treeFunc {
	return func(v reflect.Value, _ int, hint any, _ *treeBuild) (any, bool) {
		t := jsonimage.TimeOf(v)
		if t.IsZero() {
			return nil, true
		}
		var arr [40]byte
		b := t.UTC().AppendFormat(arr[:0], layout)
		if h, ok := hint.(string); ok && h == string(b) {
			return hint, true
		}
		if len(b) <= maxInternedKey {
			return internValue(b, false), true
		}
		return string(b), true
	}
}
