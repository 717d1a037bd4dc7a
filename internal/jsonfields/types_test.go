package jsonfields_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonfields"
)

type (
	valueText   struct{ s string }
	pointerText struct{ s string }
	readOnly    struct{ s string }
	writeOnly   struct{ s string }
	selfDecoder struct{ V int }
	P           *P
	A           *B
	B           *A
)

func (k valueText) MarshalText() ([]byte, error)       { return []byte(k.s), nil }
func (k *valueText) UnmarshalText(b []byte) error      { k.s = string(b); return nil }
func (k *pointerText) MarshalText() ([]byte, error)    { return []byte(k.s), nil }
func (k *pointerText) UnmarshalText(b []byte) error    { k.s = string(b); return nil }
func (k *readOnly) UnmarshalText(b []byte) error       { k.s = string(b); return nil }
func (k writeOnly) MarshalText() ([]byte, error)       { return []byte(k.s), nil }
func (d *selfDecoder) UnmarshalJSON(data []byte) error { d.V = len(data); return nil }

// TestMapKeys checks the map key rules against what encoding/json does.
func TestMapKeys(t *testing.T) {
	for _, key := range []reflect.Type{
		reflect.TypeFor[string](), reflect.TypeFor[int8](), reflect.TypeFor[uintptr](), reflect.TypeFor[float64](),
		reflect.TypeFor[bool](), reflect.TypeFor[valueText](), reflect.TypeFor[pointerText](),
		reflect.TypeFor[readOnly](), reflect.TypeFor[writeOnly](), reflect.TypeFor[[2]int](),
	} {
		m := reflect.MakeMap(reflect.MapOf(key, reflect.TypeFor[int]()))
		m.SetMapIndex(reflect.Zero(key), reflect.ValueOf(1))
		_, err := json.Marshal(m.Interface())
		if encodes := err == nil; jsonfields.MapKeyEncodes(key) != encodes {
			t.Errorf("MapKeyEncodes(%v) = %v; encoding/json: %v", key, !encodes, err)
		}
		err = json.Unmarshal([]byte(`{"1":1}`), reflect.New(m.Type()).Interface())
		if decodes := err == nil; jsonfields.MapKeyDecodes(key) != decodes {
			t.Errorf("MapKeyDecodes(%v) = %v; encoding/json: %v", key, !decodes, err)
		}
	}
}

func TestDecodesItself(t *testing.T) {
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[selfDecoder]():     true, // through *T, as encoding/json finds it
		reflect.TypeFor[*selfDecoder]():    true,
		reflect.TypeFor[readOnly]():        true,
		reflect.TypeFor[writeOnly]():       false,
		reflect.TypeFor[json.RawMessage](): true,
		reflect.TypeFor[**selfDecoder]():   false, // encoding/json follows the pointers first
		reflect.TypeFor[map[string]int]():  false,
		reflect.TypeFor[struct{ V int }](): false,
	} {
		if got := jsonfields.DecodesItself(typ); got != want {
			t.Errorf("DecodesItself(%v) = %v, want %v", typ, got, want)
		}
	}
}

func TestDeref(t *testing.T) {
	decodes := jsonfields.DecodesItself
	for _, c := range []struct {
		typ    reflect.Type
		stop   func(reflect.Type) bool
		target reflect.Type
		ok     bool
	}{
		{reflect.TypeFor[int](), nil, reflect.TypeFor[int](), true},
		{reflect.TypeFor[***int](), nil, reflect.TypeFor[int](), true},
		{reflect.TypeFor[**selfDecoder](), decodes, reflect.TypeFor[*selfDecoder](), true},
		{reflect.TypeFor[**selfDecoder](), nil, reflect.TypeFor[selfDecoder](), true},
		{reflect.TypeFor[P](), nil, reflect.TypeFor[P](), false},
		{reflect.TypeFor[*A](), decodes, nil, false},
	} {
		target, ok := jsonfields.Deref(c.typ, c.stop)
		if ok != c.ok || ok && target != c.target {
			t.Errorf("Deref(%v) = %v, %v; want %v, %v", c.typ, target, ok, c.target, c.ok)
		}
	}
}
