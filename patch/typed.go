package patch

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/deepcopy"
	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// A Merged is the object an apply made, without its managedFields.
type Merged struct {
	obj          any            // the merged object; nil while typed's is not made
	live, config map[string]any // what it was merged from
	typed        *typedResult   // a typed apply's result (see typedapply.go), or nil
}

// JSON is the merged object's JSON.
func (m *Merged) JSON() ([]byte, error) {
	if m.obj == nil && m.typed != nil {
		// The tree the typed apply did not make: the whole-tree path's.
		live, err := m.typed.schema.liveTree(nil, m.typed.live)
		if err != nil {
			return nil, err
		}
		m.obj, m.live = live, live
		if !m.typed.unchanged {
			m.obj, _ = merge(live, true, without(m.config, m.typed.ignore), true, m.typed.schema)
		}
	}
	out, err := encodeJSON(m.obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotApplicable, err)
	}
	return out, nil
}

// Decode sets dst, a pointer to a new struct (as the caller's type makes
// it), to what decoding JSON into it gives, without encoding or decoding:
// it copies each part of the merged object from live or config, pointers
// to values of dst's type that are what decoding the live object and the
// configuration gave (live nil on create), where that part of their JSON is
// the merged one's. The usual apply takes spec from the configuration and
// metadata and status from the live object, member by member. ok false
// when a part came from neither whole, or its type may hold what its JSON
// does not say (a json.RawMessage, a type that decodes itself): dst is then
// part written, for the caller to drop, and decoding JSON is the answer.
//
// What comes from live is copied, sharing nothing with it; what comes
// from config is moved, as it is: the caller gives config up.
func (m *Merged) Decode(dst, live, config any) (ok bool) {
	if m.typed != nil {
		return m.typed.decode(dst, live, config)
	}
	obj, isMap := m.obj.(map[string]any)
	d := reflect.ValueOf(dst)
	if !isMap || d.Kind() != reflect.Pointer || d.IsNil() || d.Elem().Kind() != reflect.Struct {
		return false
	}
	t := d.Type()
	var srcs [2]typedSource
	for i, s := range [2]struct {
		v    any
		tree map[string]any
	}{{config, m.config}, {live, m.live}} {
		v := reflect.ValueOf(s.v)
		if s.v == nil || v.Type() != t || v.IsNil() {
			continue
		}
		srcs[i] = typedSource{tree: s.tree, val: v.Elem(), move: i == 0}
	}
	return fillTyped(d.Elem(), structPlanOf(t.Elem()), obj, srcs)
}

// typedSource is a Go value and the JSON object it was decoded from.
type typedSource struct {
	tree map[string]any // nil: none
	val  reflect.Value
	move bool // its parts are dst's to keep, not to copy
}

// fillTyped sets the fields of dst, a zero struct, named by obj's members.
func fillTyped(dst reflect.Value, p *structPlan, obj map[string]any, srcs [2]typedSource) bool {
	if p == nil {
		return false
	}
members:
	for name, v := range obj {
		f, ok := p.fields[name]
		if !ok {
			return false // unknown, or a name decoding matches otherwise
		}
		if f.copyable {
			for _, s := range srcs {
				if sv, ok := s.tree[name]; ok && equalValues(v, sv) {
					if s.move {
						dst.FieldByIndex(f.index).Set(s.val.FieldByIndex(f.index))
					} else {
						deepcopy.Set(dst.FieldByIndex(f.index), s.val.FieldByIndex(f.index))
					}
					continue members
				}
			}
		}
		sub, isObject := v.(map[string]any)
		if f.sub == nil || !isObject {
			return false
		}
		var subSrcs [2]typedSource
		for i, s := range srcs {
			if tree, ok := s.tree[name].(map[string]any); ok {
				subSrcs[i] = typedSource{tree: tree, val: s.val.FieldByIndex(f.index), move: s.move}
			}
		}
		if !fillTyped(dst.FieldByIndex(f.index), f.sub, sub, subSrcs) {
			return false
		}
	}
	return true
}

// structPlan is what fillTyped needs of a struct type: its fields by
// JSON name.
type structPlan struct {
	fields map[string]*fieldPlan
}

type fieldPlan struct {
	index []int
	// copyable: decoding equal JSON values into the field gives equal
	// values, so one decoded from an equal value may be copied.
	copyable bool
	sub      *structPlan // a struct by value: filled member by member when no source has it whole
	quoted   bool        // json:",string"
}

var structPlans sync.Map // reflect.Type → *structPlan (nil: not filled)

// structPlanOf is t's plan, nil for a struct that decodes itself or whose
// fields are promoted through a pointer.
func structPlanOf(t reflect.Type) *structPlan {
	if p, ok := structPlans.Load(t); ok {
		return p.(*structPlan)
	}
	var p *structPlan
	if t.Kind() == reflect.Struct && !jsonfields.DecodesItself(t) {
		p = &structPlan{fields: map[string]*fieldPlan{}}
		for _, f := range jsonfields.Of(t) {
			if f.Optional {
				p = nil
				break
			}
			fp := &fieldPlan{index: f.Index, copyable: copyable(f.Type, map[reflect.Type]bool{}), quoted: f.Quoted}
			if f.Type.Kind() == reflect.Struct {
				fp.sub = structPlanOf(f.Type)
			}
			p.fields[f.Name] = fp
		}
	}
	structPlans.Store(t, p)
	return p
}

// timeTypes decode themselves from a JSON string or null, into what the
// string says and nothing else.
var timeTypes = map[reflect.Type]bool{
	reflect.TypeFor[kapi.Time]():      true,
	reflect.TypeFor[kapi.MicroTime](): true,
	reflect.TypeFor[time.Time]():      true,
}

// copyable says whether decoding equal JSON values into values of t gives
// equal values: what t holds is what the JSON says, not how it spells it
// (a json.RawMessage keeps the spelling). seen holds the types being
// looked at, taken to be copyable until found otherwise.
func copyable(t reflect.Type, seen map[reflect.Type]bool) bool {
	if timeTypes[t] {
		return true
	}
	if jsonfields.DecodesItself(t) {
		return false
	}
	if seen[t] {
		return true
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float64, // not float32: its JSON read as a float64 and written back may round otherwise
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return copyable(t.Elem(), seen)
	case reflect.Map:
		return copyable(t.Key(), seen) && copyable(t.Elem(), seen)
	case reflect.Struct:
		for _, f := range jsonfields.Of(t) {
			if f.Optional || !copyable(f.Type, seen) {
				return false
			}
		}
		return true
	}
	return false
}
