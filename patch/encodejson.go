package patch

import (
	"encoding/json"
	"slices"
)

// encodeJSON is json.Marshal of a decoded value, byte for byte (keys
// sorted, strings escaped as encoding/json escapes them), without its
// reflection over maps: Apply and strategic merge write their result so.
// A value of any other type is written by json.Marshal.
func encodeJSON(v any) ([]byte, error) {
	var arr [64]string
	e := jsonEncoder{keys: arr[:0]}
	return e.append(make([]byte, 0, 1024), v)
}

// jsonEncoder is encodeJSON's walk: keys is a stack of the objects' keys
// being sorted, shared by the levels of nesting, rather than a slice made
// per object.
type jsonEncoder struct {
	keys []string
}

func (e *jsonEncoder) append(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return appendScalarJSON(b, v), nil
	case json.Number:
		if validNumber(string(x)) {
			return append(b, x...), nil
		}
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		base := len(e.keys)
		for k := range x {
			e.keys = append(e.keys, k)
		}
		keys := e.keys[base:]
		slices.Sort(keys)
		b = append(b, '{')
		for i := range keys {
			k := e.keys[base+i] // e.keys may grow (and move) below
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			var err error
			if b, err = e.append(b, x[k]); err != nil {
				return b, err
			}
		}
		clear(e.keys[base:])
		e.keys = e.keys[:base]
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, item := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = e.append(b, item); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, out...), nil
}
