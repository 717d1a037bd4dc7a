// Package deepcopy copies Go values all the way down, by reflection, for
// the types a server is given at run time.
package deepcopy

import (
	"maps"
	"reflect"
	"sync"
)

// Set sets dst to a copy of src that shares nothing changeable with it:
// maps, slices, pointers and what interfaces hold are copied all the way
// down; strings, immutable, are shared, and so is what unexported fields
// hold (time.Time's location) but for the exported fields of an unexported
// struct embedded by value. dst must be settable and of src's type.
//
// A value is copied whole first, and then only what holds references is
// walked: a string or a number is never looked at one by one.
func Set(dst, src reflect.Value) {
	dst.Set(src)
	planOf(src.Type()).fix(dst)
}

// plan is how to replace, in a shallow copy of a value of one type, what
// it shares with the original.
type plan struct {
	kind   reflect.Kind
	refs   bool    // values hold references: fix has work to do
	fields []int   // a struct's exported fields whose values hold references
	elem   *plan   // a pointer's, slice's, array's or map's element
	field  []*plan // by index, for fields
	// strings: a map[string]string, cloned without reflection.
	strings bool
}

var plans sync.Map // reflect.Type → *plan

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p := newPlanner().plan(t)
	plans.Store(t, p)
	return p
}

type planner struct {
	seen map[reflect.Type]*plan
}

func newPlanner() *planner { return &planner{seen: map[reflect.Type]*plan{}} }

func (pl *planner) plan(t reflect.Type) *plan {
	if p, ok := pl.seen[t]; ok {
		return p // recursive: refs is true, as a recursive type has a pointer, slice or map
	}
	p := &plan{kind: t.Kind()}
	pl.seen[t] = p
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		p.refs = true
		p.elem = pl.plan(t.Elem())
		p.strings = t == reflect.TypeFor[map[string]string]()
	case reflect.Interface:
		p.refs = true
	case reflect.Array:
		p.elem = pl.plan(t.Elem())
		p.refs = p.elem.refs
	case reflect.Struct:
		p.refs = true // while its fields are planned: see above
		p.field = make([]*plan, t.NumField())
		refs := false
		for i := range t.NumField() {
			// An unexported struct embedded by value is walked too: its
			// exported fields are the struct's own in JSON (decoding sets
			// them), and reflection may set them.
			f := t.Field(i)
			if !f.IsExported() && !(f.Anonymous && f.Type.Kind() == reflect.Struct) {
				continue
			}
			if fp := pl.plan(f.Type); fp.refs {
				p.fields = append(p.fields, i)
				p.field[i] = fp
				refs = true
			}
		}
		p.refs = refs
	}
	return p
}

// fix replaces what v, a shallow copy, shares with the value it copies.
func (p *plan) fix(v reflect.Value) {
	if !p.refs {
		return
	}
	switch p.kind {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(v.Elem())
		p.elem.fix(c.Elem())
		v.Set(c)
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		if p.elem.refs {
			for i := range c.Len() {
				p.elem.fix(c.Index(i))
			}
		}
		v.Set(c)
	case reflect.Map:
		if v.IsNil() {
			return
		}
		if p.strings {
			v.Set(reflect.ValueOf(maps.Clone(v.Interface().(map[string]string))))
			return
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		var e reflect.Value
		if p.elem.refs {
			e = reflect.New(v.Type().Elem()).Elem()
		}
		for it := v.MapRange(); it.Next(); {
			if !p.elem.refs {
				c.SetMapIndex(it.Key(), it.Value())
				continue
			}
			e.Set(it.Value())
			p.elem.fix(e)
			c.SetMapIndex(it.Key(), e)
		}
		v.Set(c)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		Set(c, v.Elem())
		v.Set(c)
	case reflect.Array:
		for i := range v.Len() {
			p.elem.fix(v.Index(i))
		}
	case reflect.Struct:
		for _, i := range p.fields {
			p.field[i].fix(v.Field(i))
		}
	}
}
