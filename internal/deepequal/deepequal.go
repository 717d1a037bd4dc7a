package deepequal

import (
	"bytes"
	"maps"
	"reflect"
	"sync"
)

// Values says whether a and b, of one type, are deeply equal, as
// reflect.DeepEqual says of pointers to them when both are addressable (a
// value is equal to itself, even a NaN), and of a.Interface() and
// b.Interface() otherwise. Values of a type that may hold a cycle (see the
// package's doc) must be valid for Interface.
func Values(a, b reflect.Value) bool {
	addressed := a.CanAddr() && b.CanAddr()
	if addressed && a.Addr().UnsafePointer() == b.Addr().UnsafePointer() {
		return true
	}
	p := planOf(a.Type())
	if p.eq(a, b, 0) {
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
	kind reflect.Kind
	// cyclic says the type holds itself or an interface: values may hold
	// a cycle, or more depth than eq goes.
	cyclic bool
	elem   *plan   // a pointer's, slice's, array's or map's element
	fields []*plan // a struct's, by index
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
	p := &plan{kind: t.Kind()}
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
		p.fields = make([]*plan, t.NumField())
		for i := range t.NumField() {
			p.fields[i] = pl.plan(t.Field(i).Type)
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
