package jsonfields

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// The functions below resolve dotted JSON paths ("spec.replicas") in Go
// types, once, for the fields a resource names at registration (field
// selectors, the scale subresource), and follow them in values on every
// request.

// StringGetter resolves a dotted JSON path in t to a function that reads
// the field's value of a *t (or t) as a field selector compares it: a
// string, boolean or integer formatted as Go formats it; an absent value (a
// nil pointer on the way) reads as "". The leaf of another kind is an
// error.
func StringGetter(t reflect.Type, path string) (func(obj any) string, error) {
	var steps [][]int
	for _, name := range strings.Split(path, ".") {
		t, _ = Deref(t, nil)
		if t.Kind() != reflect.Struct {
			return nil, fmt.Errorf("%s is not an object", name)
		}
		f, ok := Named(t, name)
		if !ok {
			return nil, fmt.Errorf("no field %q in %s", name, t)
		}
		steps, t = append(steps, f.Index), f.Type
	}
	leaf, _ := Deref(t, nil)
	var format func(reflect.Value) string
	switch leaf.Kind() {
	case reflect.String:
		format = reflect.Value.String
	case reflect.Bool:
		format = func(v reflect.Value) string { return strconv.FormatBool(v.Bool()) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		format = func(v reflect.Value) string { return strconv.FormatInt(v.Int(), 10) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		format = func(v reflect.Value) string { return strconv.FormatUint(v.Uint(), 10) }
	default:
		return nil, fmt.Errorf("a %s, not a string, boolean or integer", t)
	}
	return func(o any) string {
		v := reflect.ValueOf(o)
		for _, index := range steps {
			if v = derefValue(v); v.Kind() != reflect.Struct {
				return "" // a nil pointer on the way
			}
			var err error
			if v, err = v.FieldByIndexErr(index); err != nil {
				return "" // a nil embedded pointer on the way
			}
		}
		if v = derefValue(v); v.Kind() == reflect.Pointer {
			return "" // nil
		}
		return format(v)
	}, nil
}

// derefValue follows non-nil pointers, as far as jsonfields.Deref follows
// pointer types.
func derefValue(v reflect.Value) reflect.Value {
	for range MaxPointers {
		if v.Kind() != reflect.Pointer || v.IsNil() {
			break
		}
		v = v.Elem()
	}
	return v
}

// FieldIndex resolves a dotted JSON path in t to the index of its field,
// for FieldValue, and the field's type. Fields reached through pointers
// are marked by a -1 before the step. A field promoted through an
// embedded pointer (Field.Optional) is an error.
func FieldIndex(t reflect.Type, path string) (index []int, leaf reflect.Type, err error) {
	for _, name := range strings.Split(path, ".") {
		if t.Kind() == reflect.Pointer {
			index = append(index, -1)
		}
		t, _ = Deref(t, nil)
		if t.Kind() != reflect.Struct {
			return nil, nil, fmt.Errorf("%s is not an object", name)
		}
		f, ok := Named(t, name)
		if !ok || f.Optional {
			return nil, nil, fmt.Errorf("no field %q in %s", name, t)
		}
		index, t = append(index, f.Index...), f.Type
	}
	return index, t, nil
}

// FieldValue follows index (of FieldIndex) in v. To write (forWrite), it replaces each
// pointer on the way with a pointer to a copy, so that a shallow copy of an
// object can be changed without changing the original; to read, it returns
// an invalid Value at a nil pointer.
func FieldValue(v reflect.Value, index []int, forWrite bool) reflect.Value {
	for _, i := range index {
		if i == -1 {
			switch {
			case forWrite:
				c := reflect.New(v.Type().Elem())
				if !v.IsNil() {
					c.Elem().Set(v.Elem())
				}
				v.Set(c)
			case v.IsNil():
				return reflect.Value{}
			}
			v = v.Elem()
			continue
		}
		v = v.Field(i)
	}
	return v
}
