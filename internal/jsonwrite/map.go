package jsonwrite

import (
	"cmp"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// smallMap is how many entries a map may have for its keys to be sorted
// in an array on the stack.
const smallMap = 16

var stringMapType = reflect.TypeFor[map[string]string]()

func (c *compiler) compileMap(t reflect.Type) (appendFunc, bool) {
	keyText := keyTexter(t.Key())
	if keyText == nil {
		return fallBack, false
	}
	elem, _ := c.compile(t.Elem())
	generic := mapAppender(t, keyText, elem)
	if t != stringMapType {
		return generic, true
	}
	// Labels, annotations and selectors: no reflection.
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		if !v.CanInterface() {
			return generic(b, v, depth)
		}
		return appendStringMap(b, v.Interface().(map[string]string))
	}, true
}

// keyTexter returns what encoding/json writes for a map key of type k
// (its resolveKeyName), or nil for a key that writes itself: a key of a
// string kind is itself, an integer its decimal digits.
func keyTexter(k reflect.Type) func(reflect.Value) string {
	switch k.Kind() {
	case reflect.String:
		return reflect.Value.String
	}
	if k.Implements(textType) {
		return nil
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value) string { return strconv.FormatInt(v.Int(), 10) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(v reflect.Value) string { return strconv.FormatUint(v.Uint(), 10) }
	}
	return nil
}

// mapEntry is an entry of a map: its key's text, and where its value's
// JSON was written.
type mapEntry struct {
	key        string
	start, end int
}

// mapAppender writes a map of type t as a JSON object, its entries sorted
// by their keys' text. The values are written in the map's order past the
// end of b, then copied in the keys' order, then moved back over the
// first copy: so no value is copied out of the map nor boxed.
func mapAppender(t reflect.Type, keyText func(reflect.Value) string, elem appendFunc) appendFunc {
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		switch {
		case v.IsNil():
			return append(b, "null"...), true
		case v.Len() == 0:
			return append(b, "{}"...), true
		case depth >= maxDepth:
			return b, false
		}
		var small [smallMap]mapEntry
		entries := small[:0]
		key, value := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		scratch := len(b)
		var ok bool
		for it := v.MapRange(); it.Next(); {
			key.SetIterKey(it)
			value.SetIterValue(it)
			start := len(b)
			if b, ok = elem(b, value, depth+1); !ok {
				return b, false
			}
			entries = append(entries, mapEntry{key: keyText(key), start: start, end: len(b)})
		}
		slices.SortFunc(entries, func(x, y mapEntry) int { return strings.Compare(x.key, y.key) })
		end := len(b)
		b = append(b, '{')
		for i, e := range entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendString(b, e.key, true), ':')
			b = append(b, b[e.start:e.end]...)
		}
		b = append(b, '}')
		n := copy(b[scratch:], b[end:])
		return b[:scratch+n], true
	}
}

type stringPair struct{ key, value string }

// appendStringMap writes a map[string]string, sorted by key.
func appendStringMap(b []byte, m map[string]string) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	var small [smallMap]stringPair
	pairs := small[:0]
	for k, s := range m {
		pairs = append(pairs, stringPair{k, s})
	}
	slices.SortFunc(pairs, func(x, y stringPair) int { return cmp.Compare(x.key, y.key) })
	b = append(b, '{')
	for i, p := range pairs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, p.key, true), ':')
		b = appendString(b, p.value, true)
	}
	return append(b, '}'), true
}
