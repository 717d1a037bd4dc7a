package jsonread

import (
	"reflect"
	"strings"
	"unsafe"

	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// compilePointer: anything but null is read into a new value the pointer
// points to.
func (c *compiler) compilePointer(t reflect.Type) decodeFunc {
	elemType := t.Elem()
	elem, _ := c.compile(elemType)
	return func(d *decoder, p unsafe.Pointer) bool {
		if d.next() == 'n' {
			*(*unsafe.Pointer)(p) = nil
			return d.literal("null")
		}
		q := *(*unsafe.Pointer)(p)
		if q == nil {
			q = reflect.New(elemType).UnsafePointer()
			*(*unsafe.Pointer)(p) = q
		}
		return elem(d, q)
	}
}

// compileSlice: an array makes a new slice, empty (not nil) if it is.
func (c *compiler) compileSlice(t reflect.Type) decodeFunc {
	elem, _ := c.compile(t.Elem())
	size := t.Elem().Size()
	// The arrays a slice grows through, each allocated alone (reflect's
	// MakeSlice boxes the slice too): 4, 8, ... elements.
	var arrays [8]reflect.Type
	for i := range arrays {
		arrays[i] = reflect.ArrayOf(4<<i, t.Elem())
	}
	return func(d *decoder, p unsafe.Pointer) bool {
		h := (*sliceHeader)(p)
		k := 0 // arrays used
		return d.array(func() { *h = sliceHeader{data: zeroArray} }, func() bool {
			if h.len == h.cap {
				var grown reflect.Value // addressable, Copy's destination
				var data unsafe.Pointer
				if k < len(arrays) {
					a := reflect.New(arrays[k])
					grown, data = a.Elem(), a.UnsafePointer()
					k++
				} else {
					grown = reflect.MakeSlice(t, 2*h.cap, 2*h.cap)
					data = grown.UnsafePointer()
				}
				if h.len > 0 {
					reflect.Copy(grown, reflect.NewAt(t, p).Elem())
				}
				*h = sliceHeader{data: data, len: h.len, cap: grown.Len()}
			}
			h.len++
			return elem(d, unsafe.Add(h.data, uintptr(h.len-1)*size))
		})
	}
}

// sliceHeader is how a slice is laid out.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// zeroArray is where an empty slice points (not nil, as an empty JSON array
// decodes).
var zeroArray = unsafe.Pointer(new([0]byte))

// compileMap reads objects into maps with keys of a string kind (not
// decoding themselves).
func (c *compiler) compileMap(t reflect.Type) (decodeFunc, bool) {
	key := t.Key()
	if key.Kind() != reflect.String || jsonfields.DecodesItself(key) || key == numberType || key == v1NumberType {
		return fallBack(t), false
	}
	if t == stringMapType {
		return decodeStringMap, true
	}
	elemType := t.Elem()
	elem, _ := c.compile(elemType)
	return func(d *decoder, p unsafe.Pointer) bool {
		m := reflect.NewAt(t, p).Elem()
		return d.object(func() { m.Set(reflect.MakeMap(t)) }, func(name []byte) bool {
			v := reflect.New(elemType)
			if !elem(d, v.UnsafePointer()) {
				return false
			}
			n := m.Len()
			m.SetMapIndex(reflect.ValueOf(d.strings.key(name)).Convert(key), v.Elem())
			return m.Len() > n // else a repeated name
		})
	}, true
}

// decodeStringMap is a map[string]string's.
func decodeStringMap(d *decoder, p unsafe.Pointer) bool {
	mp := (*map[string]string)(p)
	return d.object(func() { *mp = map[string]string{} }, func(name []byte) bool {
		var v string
		if !decodeString(d, unsafe.Pointer(&v)) {
			return false
		}
		m := *mp
		n := len(m)
		m[d.strings.key(name)] = v
		return len(m) > n // else a repeated name
	})
}

// field is the plan for reading one member of an object into a struct.
type field struct {
	name   string
	offset uintptr
	fn     decodeFunc
}

// linearMax is how many fields a struct's names are looked for among one
// by one; more are found through a map.
const linearMax = 12

func (c *compiler) compileStruct(t reflect.Type) (decodeFunc, bool) {
	if !plainStruct(t, 0) {
		return fallBack(t), false
	}
	var plan []field
	byName := map[string]int{}
	for _, f := range jsonfields.Of(t) {
		if f.Quoted || f.Optional {
			return fallBack(t), false
		}
		offset := uintptr(0)
		ft := t
		for _, i := range f.Index {
			sf := ft.Field(i)
			offset += sf.Offset
			ft = sf.Type
		}
		fn, _ := c.compile(f.Type)
		byName[f.Name] = len(plan)
		plan = append(plan, field{name: f.Name, offset: offset, fn: fn})
	}
	if len(plan) <= linearMax {
		byName = nil
	}
	return func(d *decoder, p unsafe.Pointer) bool {
		var seen [2]uint64 // names met; a struct of more fields is refused below
		return d.object(nil, func(name []byte) bool {
			i := -1
			if byName != nil {
				if j, found := byName[string(name)]; found {
					i = j
				}
			} else {
				for j := range plan {
					if plan[j].name == string(name) {
						i = j
						break
					}
				}
			}
			if i < 0 || i >= 128 || seen[i/64]&(1<<(i%64)) != 0 {
				return false // unknown or repeated
			}
			seen[i/64] |= 1 << (i % 64)
			f := &plan[i]
			return f.fn(d, unsafe.Add(p, f.offset))
		})
	}, true
}

// plainStruct reports whether json/v2 reads struct t's fields as
// encoding/json does, by package jsonfields's listing: no tag holds a
// name or an option json/v2 reads differently, no unexported field is
// tagged, and its fields are promoted only through exported embedded
// structs (not pointers), which are plain too.
func plainStruct(t reflect.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, tagged := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.HasPrefix(name, "'") || name != "" && !jsonfields.ValidName(name) {
			return false // json/v2 names the field otherwise
		}
		for opts != "" {
			var o string
			o, opts, _ = strings.Cut(opts, ",")
			switch o {
			case "", "omitempty", "omitzero":
			case "inline":
				if !sf.Anonymous || name != "" {
					return false
				}
			default:
				return false
			}
		}
		if !sf.IsExported() {
			if tagged || sf.Anonymous {
				return false
			}
			continue
		}
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				if ft.Elem().Kind() == reflect.Struct {
					return false
				}
				continue
			}
			if ft.Kind() == reflect.Struct && !plainStruct(ft, depth+1) {
				return false
			}
		}
	}
	return true
}
