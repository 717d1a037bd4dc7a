package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// A Configuration is an apply configuration read once: a server both
// decodes it into its Go type, to check it, and merges it (ApplyMerged).
// It is never changed, so one may be applied again (a write retried).
type Configuration struct {
	tree  map[string]any // without metadata.managedFields
	plain bool           // every value of tree says what the document said as written (jsonReader.respelled)
	// shape is what toSet makes of tree depends on, in any schema, as
	// the reader wrote it while reading the document (shapePlace); nil
	// if it did not. It spares appliedSetOf a walk of tree.
	shape []byte
}

// ParseConfiguration reads config, an apply configuration in JSON:
// ErrMalformed if it is not a JSON object.
func ParseConfiguration(config []byte) (*Configuration, error) {
	buf := shapeBuffers.Get().(*[]byte)
	defer shapeBuffers.Put(buf)
	d := jsonReader{data: config, unmanaged: true, shape: (*buf)[:0], trees: true}
	tree, err := readUnmanaged(&d)
	if err != nil {
		return nil, fmt.Errorf("%w: apply configuration: %v", ErrMalformed, err)
	}
	if tree == nil {
		return nil, fmt.Errorf("%w: apply configuration must be an object", ErrMalformed)
	}
	c := &Configuration{tree: tree, plain: !d.respelled}
	if d.shape != nil {
		*buf = d.shape
		if len(d.shape) <= maxShapeKey {
			c.shape = keptShape(d.shape)
		}
	}
	return c, nil
}

// configShapes are the shapes of the configurations read lately, by a
// hash of their bytes: a client's configurations have one shape, read
// again at every apply.
var configShapes [64]atomic.Pointer[[]byte]

// keptShape is shape, or the equal one kept in configShapes: a
// configuration's shape is only read (a key of appliedSets), so one may
// serve every configuration of that shape, where a copy of it was an
// allocation of every configuration.
func keptShape(shape []byte) []byte {
	h := maphash.Bytes(configTreeSeed, shape)
	slot := &configShapes[h%uint64(len(configShapes))]
	if p := slot.Load(); p != nil && bytes.Equal(*p, shape) {
		return *p
	}
	kept := bytes.Clone(shape)
	slot.Store(&kept)
	return kept
}

// Decode sets dst, a pointer to a new struct, to what decoding the
// configuration's JSON into it with encoding/json gives, when that JSON
// has a member named exactly as each field of dst's type it sets and
// nothing else to check, from what ParseConfiguration read: the document
// is not read a second time. ok false for a document it does not take on
// (a member the type does not name exactly, a name held twice, an escape,
// a number not written as canonicalNumbers writes it, a null in a list or a map
// value, managedFields) or a type that decodes a value itself (but the
// time types) or in its own way (a json:",string" field, []byte,
// float32, an interface): dst is then part written, for the caller to
// drop and decode the document as it does any.
func (c *Configuration) Decode(dst any) (ok bool) {
	d := reflect.ValueOf(dst)
	if !c.plain || d.Kind() != reflect.Pointer || d.IsNil() || d.Elem().Kind() != reflect.Struct {
		return false
	}
	return fillValue(d.Elem(), c.tree)
}

var (
	stringMapType = reflect.TypeFor[map[string]string]()
	// unmarshalerFromType is json/v2's method, which codec's decoder
	// also calls.
	unmarshalerFromType = reflect.TypeFor[interface {
		UnmarshalJSONFrom(*jsontext.Decoder) error
	}]()
	selfDecoders sync.Map // reflect.Type → bool (decodesItself)
)

// decodesItself says whether a decoder hands t's JSON to its own method
// (json.Unmarshaler, encoding.TextUnmarshaler, json/v2's): what it makes
// of it fillValue cannot tell but for the time types.
func decodesItself(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Interface:
	default:
		if t.PkgPath() == "" { // a predeclared or unnamed type: no methods, and none on its pointer
			return false
		}
	}
	if self, ok := selfDecoders.Load(t); ok {
		return self.(bool)
	}
	self := jsonfields.DecodesItself(t) || jsonfields.Implements(t, unmarshalerFromType)
	selfDecoders.Store(t, self)
	return self
}

// fillValue sets dst, a zero value, to v, a value of a plain document
// (Configuration.plain), as decoding its JSON sets it; ok false where it
// does not know it would. What it does with a value depends on the type
// only, so each type's filler is compiled once (fillerOf): the questions
// fillValue asks of a type (its kind, whether it decodes itself, its
// fields) are asked once, not at every value of every configuration.
func fillValue(dst reflect.Value, v any) bool {
	return (*fillerOf(dst.Type()))(dst, v)
}

// A filler is fillValue for the values of one type.
type filler func(dst reflect.Value, v any) bool

// fillers are the compiled fillers by type: reflect.Type → *filler.
var fillers sync.Map

// fillerOf returns t's filler, compiling it the first time. A filler is
// held by pointer, so that a type reached again while it is compiled (a
// recursive type) calls the filler it will be; the fillers compiled are
// kept only once all are, so that none is called before it is made.
func fillerOf(t reflect.Type) *filler {
	if f, ok := fillers.Load(t); ok {
		return f.(*filler)
	}
	compiling := map[reflect.Type]*filler{}
	f := compileFiller(t, compiling)
	for ct, cf := range compiling {
		fillers.LoadOrStore(ct, cf)
	}
	return f
}

func compileFiller(t reflect.Type, compiling map[reflect.Type]*filler) *filler {
	if f, ok := fillers.Load(t); ok {
		return f.(*filler)
	}
	if f := compiling[t]; f != nil {
		return f
	}
	f := new(filler)
	compiling[t] = f
	*f = makeFiller(t, compiling)
	return f
}

// fieldFiller is a struct field's name and index and the filler of its
// type.
type fieldFiller struct {
	name  string
	index []int
	fill  *filler
}

func makeFiller(t reflect.Type, compiling map[reflect.Type]*filler) filler {
	if t.Kind() == reflect.Pointer {
		elem := compileFiller(t.Elem(), compiling)
		return func(dst reflect.Value, v any) bool {
			if v == nil {
				return true // null leaves a nil pointer
			}
			p := reflect.New(t.Elem())
			if !(*elem)(p.Elem(), v) {
				return false
			}
			dst.Set(p)
			return true
		}
	}
	if decodesItself(t) {
		if !timeTypes[t] {
			return func(reflect.Value, any) bool { return false }
		}
		return func(dst reflect.Value, v any) bool {
			s, isString := v.(string)
			switch {
			case v == nil:
				return true // the zero time, as null decodes
			case !isString:
				return false
			}
			u, ok := dst.Addr().Interface().(json.Unmarshaler)
			return ok && u.UnmarshalJSON(appendJSONString(nil, s)) == nil
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		p := structPlanOf(t)
		if p == nil {
			return func(_ reflect.Value, v any) bool { return v == nil } // null leaves a zero value as it is
		}
		fields := make(map[string]fieldFiller, len(p.fields))
		var list []fieldFiller
		for name, f := range p.fields {
			if !f.quoted {
				ff := fieldFiller{name: name, index: f.index, fill: compileFiller(t.FieldByIndex(f.index).Type, compiling)}
				fields[name] = ff
				list = append(list, ff)
			}
		}
		return func(dst reflect.Value, v any) bool {
			if v == nil {
				return true
			}
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if len(list) <= 2*len(m)+2 {
				// Ranging over a map costs some three times what looking
				// a name up in a small one does: when m names most of
				// the fields (a spec, a list's items), each field is
				// looked up in m, and a member no field names is one
				// not found.
				found := 0
				for _, f := range list {
					if member, has := m[f.name]; has {
						if !(*f.fill)(fieldOf(dst, f.index), member) {
							return false
						}
						found++
					}
				}
				return found == len(m)
			}
			for name, member := range m {
				f, ok := fields[name]
				if !ok || !(*f.fill)(fieldOf(dst, f.index), member) {
					return false
				}
			}
			return true
		}
	case reflect.Map:
		k := t.Key()
		if k.Kind() != reflect.String || decodesItself(k) {
			return func(_ reflect.Value, v any) bool { return v == nil }
		}
		if t == stringMapType { // labels, annotations, selectors: without reflection
			return func(dst reflect.Value, v any) bool {
				if v == nil {
					return true
				}
				m, ok := v.(map[string]any)
				if !ok {
					return false
				}
				out, ok := stringMapOf(m)
				if ok {
					dst.Set(reflect.ValueOf(out))
				}
				return ok
			}
		}
		elemFill := compileFiller(t.Elem(), compiling)
		return func(dst reflect.Value, v any) bool {
			if v == nil {
				return true
			}
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			out := reflect.MakeMapWithSize(t, len(m))
			elem := reflect.New(t.Elem()).Elem()
			for name, member := range m {
				elem.SetZero()
				if member == nil || !(*elemFill)(elem, member) {
					return false
				}
				out.SetMapIndex(reflect.ValueOf(name).Convert(k), elem)
			}
			dst.Set(out)
			return true
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return func(_ reflect.Value, v any) bool { return v == nil } // a []byte is base64
		}
		elemFill := compileFiller(t.Elem(), compiling)
		flat := flatType(t.Elem())
		return func(dst reflect.Value, v any) bool {
			if v == nil {
				return true
			}
			l, ok := v.([]any)
			if !ok {
				return false
			}
			out := reflect.MakeSlice(t, len(l), len(l))
			var at uintptr
			if flat && len(l) > 0 {
				at = uintptr(unsafe.Pointer(&l[0]))
				if c := decodedCopyOf(at, l, t); c != nil {
					reflect.Copy(out, c.(reflect.Value))
					dst.Set(out)
					return true
				}
			}
			for i, item := range l {
				if item == nil || !(*elemFill)(out.Index(i), item) {
					return false
				}
			}
			dst.Set(out)
			if at != 0 && len(l) <= maxDecodedCopy && decodedTwice(at) && treeBytes(l, maxConfigTree) >= 0 {
				kept := reflect.MakeSlice(t, len(l), len(l))
				reflect.Copy(kept, out)
				keepDecoded(at, &decodedCopy{tree: l, typ: t, out: kept})
			}
			return true
		}
	case reflect.String:
		return func(dst reflect.Value, v any) bool {
			s, ok := v.(string)
			if ok {
				dst.SetString(s)
			}
			return ok || v == nil
		}
	case reflect.Bool:
		return func(dst reflect.Value, v any) bool {
			b, ok := v.(bool)
			if ok {
				dst.SetBool(b)
			}
			return ok || v == nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst reflect.Value, v any) bool {
			if v == nil {
				return true
			}
			n, ok := v.(json.Number)
			i, err := strconv.ParseInt(string(n), 10, 64)
			if !ok || err != nil || dst.OverflowInt(i) {
				return false
			}
			dst.SetInt(i)
			return true
		}
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(dst reflect.Value, v any) bool {
			if v == nil {
				return true
			}
			n, ok := v.(json.Number)
			u, err := strconv.ParseUint(string(n), 10, 64)
			if !ok || err != nil || dst.OverflowUint(u) {
				return false
			}
			dst.SetUint(u)
			return true
		}
	case reflect.Float64:
		return func(dst reflect.Value, v any) bool {
			if v == nil {
				return true
			}
			n, ok := v.(json.Number)
			f, err := strconv.ParseFloat(string(n), 64)
			if !ok || err != nil {
				return false
			}
			dst.SetFloat(f)
			return true
		}
	}
	// float32, uint8 (a []byte's), interfaces, arrays, ...: null leaves
	// them zero, anything else is not known.
	return func(_ reflect.Value, v any) bool { return v == nil }
}

// fieldOf is dst.FieldByIndex(index) for a struct reached by value, which
// is what a plan's index is without a pointer (structPlanOf).
func fieldOf(dst reflect.Value, index []int) reflect.Value {
	if len(index) == 1 {
		return dst.Field(index[0])
	}
	return dst.FieldByIndex(index)
}

// A configuration's labels, selectors and lists of ports are mostly trees
// kept for their bytes (configTrees), decoded again at every apply: a map
// made member by member, each hashed and placed, a list item by item,
// each struct field by field, where a copy of the one made before copies
// its table or its items whole. decodedCopies keeps the value decoded
// from an object or a list decoded twice, by the tree's address: a
// map[string]string, or a slice of a flat type (flatType), whose copy
// shares nothing but strings. The tree is held, so that no other is made
// at its address while kept, and like every tree of a configuration it
// is never changed.
type decodedCopy struct {
	tree any          // map[string]any or []any
	typ  reflect.Type // of out
	out  any          // never handed out: copied. A map[string]string, or a reflect.Value of a slice
}

var (
	decodedCopies [256]atomic.Pointer[decodedCopy]
	decodedSeen   [256]atomic.Uintptr // the address of the tree last decoded by each slot
)

// decodedSlot is the slot of decodedCopies of a tree at address at.
func decodedSlot(at uintptr) int { return int((at * 0x9e3779b97f4a7c15) >> 56) } // the top 8 bits: one of 256

// decodedCopyOf is the value of type t kept for tree (at its address at),
// nil if none.
func decodedCopyOf(at uintptr, tree any, t reflect.Type) any {
	c := decodedCopies[decodedSlot(at)].Load()
	if c == nil || c.typ != t {
		return nil
	}
	switch tree := tree.(type) {
	case map[string]any:
		if m, ok := c.tree.(map[string]any); ok && sameMap(m, tree) {
			return c.out
		}
	case []any:
		if l, ok := c.tree.([]any); ok && sameList(l, tree) {
			return c.out
		}
	}
	return nil
}

// decodedTwice says whether the tree at address at was the last its slot
// of decodedCopies decoded: it is kept the second time, as configTrees
// keeps a value.
func decodedTwice(at uintptr) bool { return decodedSeen[decodedSlot(at)].Swap(at) == at }

// keepDecoded keeps c, of the tree at address at.
func keepDecoded(at uintptr, c *decodedCopy) { decodedCopies[decodedSlot(at)].Store(c) }

// stringMapOf is m, an object of a configuration, as a map[string]string;
// ok false if a member is not a string.
func stringMapOf(m map[string]any) (out map[string]string, ok bool) {
	at := uintptr(reflect.ValueOf(m).UnsafePointer())
	if c := decodedCopyOf(at, m, stringMapType); c != nil {
		return maps.Clone(c.(map[string]string)), true
	}
	out = make(map[string]string, len(m))
	size := 0
	for name, member := range m {
		if out[name], ok = member.(string); !ok {
			return nil, false
		}
		size += len(name) + len(out[name])
	}
	if len(m) > 0 && len(m) <= maxDecodedCopy && size <= maxConfigTree && decodedTwice(at) {
		keepDecoded(at, &decodedCopy{tree: m, typ: stringMapType, out: maps.Clone(out)})
	}
	return out, true
}

// flatType says whether a value of t holds nothing but booleans, numbers
// and strings (in structs and arrays): a copy of it shares nothing that
// may be changed.
func flatType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	case reflect.Array:
		return flatType(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !flatType(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// maxDecodedCopy bounds the items or members of a tree decodedCopies
// keeps, as treeBytes its strings: the trees decoded again are those
// configTrees keeps (at most maxConfigTree bytes), and decodedTwice, by
// address, also says yes for a tree allocated where one decoded before
// was, of any size.
const maxDecodedCopy = 256

// treeBytes is budget less the bytes of v's strings and keys, negative
// once they pass it.
func treeBytes(v any, budget int) int {
	switch v := v.(type) {
	case string:
		return budget - len(v)
	case json.Number:
		return budget - len(v)
	case []any:
		for _, item := range v {
			if budget = treeBytes(item, budget-1); budget < 0 {
				return budget
			}
		}
	case map[string]any:
		for k, item := range v {
			if budget = treeBytes(item, budget-len(k)); budget < 0 {
				return budget
			}
		}
	}
	return budget
}
