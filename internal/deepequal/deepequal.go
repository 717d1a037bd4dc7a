package deepequal

import (
	"bytes"
	"maps"
	"reflect"
	"sync"
	"unsafe"
)

// Values says whether a and b, of one type, are deeply equal, as
// reflect.DeepEqual says of pointers to them when both are addressable (a
// value is equal to itself, even a NaN), and of a.Interface() and
// b.Interface() otherwise. Values of a type that may hold a cycle (see the
// package's doc) must be valid for Interface.
func Values(a, b reflect.Value) bool {
	t := a.Type()
	if b.Type() != t {
		return false // as reflect.DeepEqual; and b's memory is not laid out as a's plan reads it
	}
	addressed := a.CanAddr() && b.CanAddr()
	p := planOf(t)
	if addressed {
		pa, pb := unsafe.Pointer(a.UnsafeAddr()), unsafe.Pointer(b.UnsafeAddr())
		if pa == pb || p.at(pa, pb, 0) {
			return true
		}
	} else if p.eq(a, b, 0) {
		return true
	}
	if !p.cyclic || !a.CanInterface() || !b.CanInterface() {
		return false
	}
	if addressed {
		return reflect.DeepEqual(a.Addr().Interface(), b.Addr().Interface())
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// maxDepth is how many pointers, slices, maps and interfaces deep eq
// goes before it says unequal (and Values asks reflect.DeepEqual): past
// it, a value of a type that holds itself may be a cycle.
const maxDepth = 100

type plan struct {
	typ  reflect.Type
	kind reflect.Kind
	size uintptr
	// cyclic says the type holds itself or an interface: values may hold
	// a cycle, or more depth than eq goes.
	cyclic bool
	elem   *plan   // a pointer's, slice's, array's or map's element
	fields []field // a struct's, by index
	// strings and bytes are a map[string]string and a []byte, compared
	// without reflection.
	strings, bytes bool
}

var plans sync.Map // reflect.Type → *plan

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	pl := planner{seen: map[reflect.Type]*plan{}, building: map[reflect.Type]bool{}}
	p := pl.plan(t)
	if pl.cyclic {
		for _, q := range pl.seen {
			q.cyclic = true
		}
	}
	plans.Store(t, p)
	return p
}

type field struct {
	*plan
	offset uintptr
}

type planner struct {
	seen     map[reflect.Type]*plan
	building map[reflect.Type]bool // below itself, a type holds itself
	cyclic   bool
}

func (pl *planner) plan(t reflect.Type) *plan {
	if p, ok := pl.seen[t]; ok {
		pl.cyclic = pl.cyclic || pl.building[t]
		return p
	}
	p := &plan{typ: t, kind: t.Kind(), size: t.Size()}
	pl.seen[t], pl.building[t] = p, true
	defer delete(pl.building, t)
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		p.elem = pl.plan(t.Elem())
		p.strings = t == reflect.TypeFor[map[string]string]()
		p.bytes = t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
	case reflect.Interface:
		pl.cyclic = true
	case reflect.Struct:
		p.fields = make([]field, t.NumField())
		for i := range t.NumField() {
			f := t.Field(i)
			p.fields[i] = field{pl.plan(f.Type), f.Offset}
		}
	}
	return p
}

// eq is reflect.DeepEqual's deepValueEqual of two values of p's type,
// without its record of visited pointers: it gives up, unequal, past
// maxDepth.
func (p *plan) eq(a, b reflect.Value, depth int) bool {
	switch p.kind {
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	case reflect.Struct:
		for i, f := range p.fields {
			if !f.eq(a.Field(i), b.Field(i), depth) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !p.elem.eq(a.Index(i), b.Index(i), depth) {
				return false
			}
		}
		return true
	case reflect.Func:
		return a.IsNil() && b.IsNil()
	case reflect.Chan, reflect.UnsafePointer:
		return a.UnsafePointer() == b.UnsafePointer()
	}
	// What refers to other values.
	if depth++; depth > maxDepth {
		return false
	}
	switch p.kind {
	case reflect.Pointer:
		if a.UnsafePointer() == b.UnsafePointer() {
			return true
		}
		if a.IsNil() || b.IsNil() {
			return false
		}
		return p.elem.eq(a.Elem(), b.Elem(), depth)
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		if a.UnsafePointer() == b.UnsafePointer() {
			return true
		}
		if p.bytes {
			return bytes.Equal(a.Bytes(), b.Bytes())
		}
		for i := range a.Len() {
			if !p.elem.eq(a.Index(i), b.Index(i), depth) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		if a.UnsafePointer() == b.UnsafePointer() {
			return true
		}
		if p.strings && a.CanInterface() && b.CanInterface() {
			return maps.Equal(a.Interface().(map[string]string), b.Interface().(map[string]string))
		}
		for it := a.MapRange(); it.Next(); {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !p.elem.eq(it.Value(), bv, depth) {
				return false
			}
		}
		return true
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		ae, be := a.Elem(), b.Elem()
		if ae.Type() != be.Type() {
			return false
		}
		return planOf(ae.Type()).eq(ae, be, depth)
	}
	return false
}

// at is eq of the values at a and b, addressed: it reads their memory
// as their type lays it out, rather than through reflect.Value's checks
// (a field's flags, a pointer type's lookup for Addr), which were most
// of a comparison's cost. What only reflection reads (a map other than
// map[string]string, an interface) it hands to eq.
func (p *plan) at(a, b unsafe.Pointer, depth int) bool {
	switch p.kind {
	case reflect.String:
		return *(*string)(a) == *(*string)(b)
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		switch p.size {
		case 1:
			return *(*uint8)(a) == *(*uint8)(b)
		case 2:
			return *(*uint16)(a) == *(*uint16)(b)
		case 4:
			return *(*uint32)(a) == *(*uint32)(b)
		}
		return *(*uint64)(a) == *(*uint64)(b)
	case reflect.Float32:
		return *(*float32)(a) == *(*float32)(b)
	case reflect.Float64:
		return *(*float64)(a) == *(*float64)(b)
	case reflect.Complex64:
		return *(*complex64)(a) == *(*complex64)(b)
	case reflect.Complex128:
		return *(*complex128)(a) == *(*complex128)(b)
	case reflect.Struct:
		for _, f := range p.fields {
			if !f.at(unsafe.Add(a, f.offset), unsafe.Add(b, f.offset), depth) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range uintptr(p.typ.Len()) {
			if !p.elem.at(unsafe.Add(a, i*p.elem.size), unsafe.Add(b, i*p.elem.size), depth) {
				return false
			}
		}
		return true
	case reflect.Func:
		return *(*unsafe.Pointer)(a) == nil && *(*unsafe.Pointer)(b) == nil
	case reflect.Chan, reflect.UnsafePointer:
		return *(*unsafe.Pointer)(a) == *(*unsafe.Pointer)(b)
	}
	if depth++; depth > maxDepth {
		return false
	}
	switch p.kind {
	case reflect.Pointer:
		pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if pa == pb {
			return true
		}
		if pa == nil || pb == nil {
			return false
		}
		return p.elem.at(pa, pb, depth)
	case reflect.Slice:
		sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
		if (sa.data == nil) != (sb.data == nil) || sa.len != sb.len {
			return false
		}
		if sa.data == sb.data {
			return true
		}
		if p.bytes {
			return bytes.Equal(unsafe.Slice((*byte)(sa.data), sa.len), unsafe.Slice((*byte)(sb.data), sb.len))
		}
		for i := range uintptr(sa.len) {
			if !p.elem.at(unsafe.Add(sa.data, i*p.elem.size), unsafe.Add(sb.data, i*p.elem.size), depth) {
				return false
			}
		}
		return true
	case reflect.Map:
		if p.strings {
			ma, mb := *(*map[string]string)(a), *(*map[string]string)(b)
			if (ma == nil) != (mb == nil) || len(ma) != len(mb) {
				return false
			}
			return *(*unsafe.Pointer)(a) == *(*unsafe.Pointer)(b) || maps.Equal(ma, mb)
		}
	}
	// A map or an interface: eq reads them, as values that may be read
	// (reflect.NewAt's are not read-only, as an unexported field's are).
	return p.eq(reflect.NewAt(p.typ, a).Elem(), reflect.NewAt(p.typ, b).Elem(), depth-1)
}

// sliceHeader is a slice's layout in memory.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}
