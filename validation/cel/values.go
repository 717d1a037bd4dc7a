package cel

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/kapi-dev/kapi/schema"
)

// The values a rule sees are views of the object held without a Go type
// (map[string]any, []any, string, int64, float64, bool, nil), converted
// member by member as the rule reads them, the way kube-apiserver's
// UnstructuredToVal does: what a value is comes from its schema, not its
// Go type, so a number under type: number is a double even when it was
// written 1, a date-time string a timestamp, and a list-type set or map
// compares ignoring order.

// toVal is v under s as a rule sees it.
func (c *compiled) toVal(v any, s *schema.Schema) ref.Val {
	if v == nil {
		if s.Nullable {
			return types.NullValue
		}
		return types.NewErr("invalid data, got null for schema with nullable=false")
	}
	if s.IntOrString {
		switch v := v.(type) {
		case string:
			return types.String(v)
		case int64:
			return types.Int(v)
		}
		return types.NewErr("invalid data, expected XIntOrString value to be either a string or integer")
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return types.NewErr("invalid data, expected a map for the provided schema with type=object")
		}
		if s.EmbeddedResource {
			s = c.withMeta(s)
		}
		return &objectVal{c: c, m: m, s: s, object: s.EmbeddedResource || s.Properties != nil}
	case "array":
		l, ok := v.([]any)
		if !ok {
			return types.NewErr("invalid data, expected an array for the provided schema with type=array")
		}
		if s.Items == nil {
			return types.NewErr("invalid array type, expected Items with a non-empty Schema")
		}
		list := &listVal{c: c, l: l, items: s.Items}
		if s.ListType != nil {
			switch *s.ListType {
			case schema.ListSet:
				list.set = true
			case schema.ListMap:
				list.keys = escapeAll(s.ListMapKeys)
			}
		}
		return list
	case "string":
		str, ok := v.(string)
		if !ok {
			return types.NewErr("invalid data, expected string, got %T", v)
		}
		switch s.Format {
		case "duration":
			d, err := parseDuration(str)
			if err != nil {
				return types.NewErr("Invalid duration %s: %v", str, err)
			}
			return types.Duration{Duration: d}
		case "date":
			d, err := time.Parse(time.DateOnly, str)
			if err != nil {
				return types.NewErr("Invalid date formatted string %s: %v", str, err)
			}
			return types.Timestamp{Time: d}
		case "date-time":
			d, err := parseDateTime(str)
			if err != nil {
				return types.NewErr("Invalid date-time formatted string %s: %v", str, err)
			}
			return types.Timestamp{Time: d}
		case "byte":
			// As kube-openapi's Base64 reads it: the URL alphabet.
			b, err := base64.URLEncoding.DecodeString(str)
			if err != nil {
				return types.NewErr("Invalid byte formatted string %s: %v", str, err)
			}
			return types.Bytes(b)
		}
		return types.String(str)
	case "number":
		switch v := v.(type) {
		case int64:
			return types.Double(v)
		case float64:
			return types.Double(v)
		}
		return types.NewErr("invalid data, expected float, got %T", v)
	case "integer":
		if i, ok := v.(int64); ok {
			return types.Int(i)
		}
		return types.NewErr("invalid data, expected int, got %T", v)
	case "boolean":
		if b, ok := v.(bool); ok {
			return types.Bool(b)
		}
		return types.NewErr("invalid data, expected bool, got %T", v)
	}
	if s.PreservesUnknownFields() {
		return &preservedVal{v: v}
	}
	return types.NewErr("invalid type, expected object, array, number, integer, boolean or string, or no type with x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields is true, got %s", s.Type)
}

func escapeAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if e, ok := escape(n); ok {
			out[i] = e
		}
	}
	return out
}

// objectVal is an object: one with properties (or an embedded resource),
// read by escaped field name, or a map of additionalProperties, read by
// key. It is a map to CEL at run time, as in kube-apiserver, while the
// type checker sees an object type with its declared fields.
type objectVal struct {
	c      *compiled
	m      map[string]any
	s      *schema.Schema
	object bool
}

var _ traits.Mapper = (*objectVal)(nil)

// member is the schema of member k, false if a rule cannot see it.
func (o *objectVal) member(k string) (*schema.Schema, bool) {
	if o.s.Properties != nil || o.s.EmbeddedResource {
		sub, ok := o.s.Properties[k]
		return sub, ok
	}
	if o.s.AdditionalProperties != nil {
		return o.s.AdditionalProperties, true
	}
	return nil, false
}

func (o *objectVal) ConvertToNative(t reflect.Type) (any, error) {
	if t.Kind() == reflect.Map {
		return o.m, nil
	}
	return nil, fmt.Errorf("type conversion error from '%s' to '%s'", o.Type(), t)
}

func (o *objectVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return o
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", o.Type(), t.TypeName())
}

func (o *objectVal) Equal(other ref.Val) ref.Val {
	om, ok := other.(traits.Mapper)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if o.Size() != om.Size() {
		return types.False
	}
	for k, v := range o.m {
		if _, ok := o.member(k); ok {
			mine, found := o.Find(types.String(k))
			theirs, oFound := om.Find(types.String(k))
			if found != oFound {
				return types.False
			}
			if !found {
				continue
			}
			if eq := mine.Equal(theirs); eq != types.True {
				return eq
			}
			continue
		}
		oo, ok := other.(*objectVal)
		if !ok {
			return types.MaybeNoSuchOverloadErr(other)
		}
		if ov, ok := oo.m[k]; ok && !reflect.DeepEqual(v, ov) {
			return types.False
		}
	}
	return types.True
}

func (o *objectVal) Type() ref.Type { return types.MapType }
func (o *objectVal) Value() any     { return o.m }

func (o *objectVal) Contains(key ref.Val) ref.Val {
	v, found := o.Find(key)
	if v != nil && types.IsUnknownOrError(v) {
		return v
	}
	return types.Bool(found)
}

func (o *objectVal) Get(key ref.Val) ref.Val {
	if v, found := o.Find(key); found {
		return v
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

func (o *objectVal) Iterator() traits.Iterator {
	keys := make([]ref.Val, 0, len(o.m))
	for k := range o.m {
		if _, ok := o.member(k); ok {
			if o.object {
				if e, ok := escape(k); ok {
					k = e
				}
			}
			keys = append(keys, types.String(k))
		}
	}
	return &iterator{vals: keys}
}

func (o *objectVal) Size() ref.Val { return types.Int(len(o.m)) }

func (o *objectVal) Find(key ref.Val) (ref.Val, bool) {
	ks, ok := key.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(key), true
	}
	k := string(ks)
	if o.object {
		if k, ok = unescape(k); !ok {
			return nil, false
		}
	}
	v, ok := o.m[k]
	if !ok || (o.object && v == nil) {
		return nil, false
	}
	sub, ok := o.member(k)
	if !ok {
		return nil, false
	}
	return o.c.toVal(v, sub), true
}

// listVal is a list; a list-type set or map one compares ignoring order
// and concatenates as a union, as in kube-apiserver.
type listVal struct {
	c     *compiled
	l     []any
	items *schema.Schema
	set   bool
	keys  []string // escaped list-map keys
}

var _ traits.Lister = (*listVal)(nil)

func (l *listVal) ConvertToNative(t reflect.Type) (any, error) {
	if t.Kind() == reflect.Slice {
		if l.items.Type == "string" {
			out := make([]string, 0, len(l.l))
			for _, e := range l.l {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("expected all elements to be of type string, but got %T", e)
				}
				out = append(out, s)
			}
			return out, nil
		}
		return l.l, nil
	}
	return nil, fmt.Errorf("type conversion error from '%s' to '%s'", l.Type(), t)
}

func (l *listVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.ListType:
		return l
	case types.TypeType:
		return types.ListType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", l.Type(), t.TypeName())
}

func (l *listVal) elems() []ref.Val {
	out := make([]ref.Val, len(l.l))
	for i, e := range l.l {
		out[i] = l.c.toVal(e, l.items)
	}
	return out
}

func (l *listVal) Equal(other ref.Val) ref.Val {
	ol, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if types.Int(len(l.l)) != ol.Size() {
		return types.False
	}
	switch {
	case l.set:
		return setEqual(l.elems(), ol)
	case l.keys != nil:
		return mapListEqual(l.elems(), ol, l.keys)
	}
	for i := range l.l {
		if eq := l.Get(types.Int(i)).Equal(ol.Get(types.Int(i))); eq != types.True {
			return eq
		}
	}
	return types.True
}

func (l *listVal) Type() ref.Type { return types.ListType }
func (l *listVal) Value() any     { return l.l }

func (l *listVal) Add(other ref.Val) ref.Val {
	ol, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	switch {
	case l.set:
		return addToSet(l.elems(), ol)
	case l.keys != nil:
		return addToMapList(l.elems(), ol, l.keys)
	}
	out := l.elems()
	for it := ol.Iterator(); it.HasNext() == types.True; {
		out = append(out, it.Next())
	}
	return types.NewRefValList(types.DefaultTypeAdapter, out)
}

func (l *listVal) Contains(v ref.Val) ref.Val {
	if types.IsUnknownOrError(v) {
		return v
	}
	var err ref.Val
	for _, e := range l.l {
		eq := l.c.toVal(e, l.items).Equal(v)
		b, ok := eq.(types.Bool)
		if !ok && err == nil {
			err = types.MaybeNoSuchOverloadErr(eq)
		}
		if b == types.True {
			return types.True
		}
	}
	if err != nil {
		return err
	}
	return types.False
}

func (l *listVal) Get(idx ref.Val) ref.Val {
	i, ok := idx.(types.Int)
	if !ok {
		return types.ValOrErr(idx, "unsupported index: %v", idx)
	}
	if i < 0 || int(i) >= len(l.l) {
		return types.NewErr("index out of bounds: %v", idx)
	}
	return l.c.toVal(l.l[i], l.items)
}

func (l *listVal) Iterator() traits.Iterator { return &iterator{vals: l.elems()} }
func (l *listVal) Size() ref.Val             { return types.Int(len(l.l)) }

type iterator struct {
	vals []ref.Val
	i    int
}

func (it *iterator) HasNext() ref.Val { return types.Bool(it.i < len(it.vals)) }
func (it *iterator) Next() ref.Val {
	if it.i >= len(it.vals) {
		return nil
	}
	v := it.vals[it.i]
	it.i++
	return v
}
func (it *iterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion on iterators not supported")
}
func (it *iterator) ConvertToType(ref.Type) ref.Val { return types.NewErr("no such overload") }
func (it *iterator) Equal(ref.Val) ref.Val          { return types.NewErr("no such overload") }
func (it *iterator) Type() ref.Type                 { return types.IteratorType }
func (it *iterator) Value() any                     { return nil }

// preservedVal is a value under x-kubernetes-preserve-unknown-fields with
// no type: a rule can compare it, nothing more.
type preservedVal struct{ v any }

func (p *preservedVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion to '%s' not supported for values preserved by x-kubernetes-preserve-unknown-fields", t)
}
func (p *preservedVal) ConvertToType(t ref.Type) ref.Val {
	return types.NewErr("type conversion to '%s' not supported for values preserved by x-kubernetes-preserve-unknown-fields", t.TypeName())
}
func (p *preservedVal) Equal(other ref.Val) ref.Val {
	return types.Bool(reflect.DeepEqual(p.v, other.Value()))
}
func (p *preservedVal) Type() ref.Type { return types.UnknownType }
func (p *preservedVal) Value() any     { return p.v }
