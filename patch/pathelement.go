package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// pathElement is one step of a field path, in the four forms of Kubernetes'
// FieldsV1: a field name (f:), the keys of a map-list item (k:), the value
// of a set item (v:) or a list index (i:, read but never written).
type pathElement struct {
	kind  byte   // 'f', 'k', 'v' or 'i'
	field string // a field's name
	// str is an item's FieldsV1 form, which identifies it; a field's is
	// "f:" and its name, made only where it is written (a write walks
	// every field of its object, and most are never written out).
	str      string
	*itemKey // nil for a field: most elements, so kept out of line
}

// itemKey is what names a list item: its keys, its value or its index.
type itemKey struct {
	keys  []keyField // sorted by name, as Kubernetes sorts them
	value any
	index int
}

type keyField struct {
	name  string
	value any
}

func fieldElement(name string) pathElement {
	return pathElement{kind: 'f', field: name}
}

// same says whether e and o are the same element: a field by its name, an
// item by its FieldsV1 form (which starts with its kind).
func (e pathElement) same(o pathElement) bool {
	return e.kind == o.kind && e.field == o.field && e.str == o.str
}

// id is the element in one string for a map's key: a field's name, an
// item's FieldsV1 form, which never looks like a name (it has a ':').
// Names with a ':' are prefixed, so no two elements share an id.
func (e pathElement) id() string {
	if e.kind == 'f' && strings.IndexByte(e.field, ':') < 0 {
		return e.field
	}
	return e.form()
}

// form is the element's FieldsV1 form.
func (e pathElement) form() string {
	if e.kind == 'f' {
		return "f:" + e.field
	}
	return e.str
}

// formLen is len(e.form()), without making it.
func (e pathElement) formLen() int {
	if e.kind == 'f' {
		return 2 + len(e.field)
	}
	return len(e.str)
}

func keyElement(keys []keyField) pathElement {
	// Insertion sort: a list map has a key or two, and sort.Slice would
	// allocate for them on every item of every write.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j].name < keys[j-1].name; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	var arr [128]byte
	b := append(arr[:0], "k:{"...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k.name)
		b = append(b, ':')
		b = appendScalarJSON(b, k.value)
	}
	b = append(b, '}')
	return pathElement{kind: 'k', itemKey: &itemKey{keys: keys}, str: string(b)}
}

func valueElement(v any) pathElement {
	var arr [64]byte
	b := appendScalarJSON(append(arr[:0], "v:"...), v)
	return pathElement{kind: 'v', itemKey: &itemKey{value: v}, str: string(b)}
}

// appendScalarJSON appends v as json.Marshal writes it: strings, numbers,
// booleans and null here, without json.Marshal's allocations (a write
// names every list item it walks); anything else by json.Marshal.
func appendScalarJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return appendJSONString(b, x)
	case json.Number:
		if validNumber(string(x)) {
			return append(b, x...)
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, out...)
}

// validNumber says whether s is a JSON number, which json.Marshal writes
// as it is.
func validNumber(s string) bool {
	d := jsonReader{data: []byte(s), discard: true}
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return false
	}
	_, ok := d.number()
	return ok && d.i == len(s)
}

// appendJSONString appends s as encoding/json quotes it. Names and values
// are nearly always plain ASCII, which it writes as they are; anything
// else goes through json.Marshal.
// A '"' or '\\' (in every k: form) is escaped here too.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			name, _ := json.Marshal(s)
			return append(b, name...)
		}
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// plainJSON says whether encoding/json writes s between quotes as it is.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// String is the element as kube-apiserver prints it in a conflict:
// .name, [key="v",other=1], [="value"], [3].
func (e pathElement) String() string {
	switch e.kind {
	case 'f':
		return "." + e.field
	case 'k':
		parts := make([]string, len(e.keys))
		for i, k := range e.keys {
			parts[i] = k.name + "=" + valueString(k.value)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case 'v':
		return "[=" + valueString(e.value) + "]"
	}
	return "[" + strconv.Itoa(e.index) + "]"
}

// valueString prints a value as structured-merge-diff's value.ToString does.
func valueString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case json.Number:
		if i, ok := asInt(x); ok {
			return strconv.FormatInt(i, 10)
		}
		f, _ := x.Float64()
		return fmt.Sprint(f)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		parts := make([]string, len(x))
		for i, item := range x {
			parts[i] = valueString(item)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		var b strings.Builder
		for _, k := range sortedKeys(x) {
			b.WriteString(k + "=" + valueString(x[k]))
		}
		return b.String()
	}
	return fmt.Sprint(v)
}

// asInt reads a JSON number as Kubernetes does: an integer, or a float with
// no fraction, is an int64.
func asInt(n json.Number) (int64, bool) {
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err == nil && f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f), true
	}
	return 0, false
}

// compareValues orders values as structured-merge-diff does: numbers, then
// strings, booleans, lists, maps and null.
func compareValues(a, b any) int {
	rank := func(v any) int {
		switch v.(type) {
		case json.Number:
			return 0
		case string:
			return 1
		case bool:
			return 2
		case []any:
			return 3
		case map[string]any:
			return 4
		}
		return 5
	}
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return cmpInt(ra, rb)
	}
	switch x := a.(type) {
	case json.Number:
		y := b.(json.Number)
		xi, xok := asInt(x)
		yi, yok := asInt(y)
		if xok && yok {
			return cmpInt64(xi, yi)
		}
		xf, _ := x.Float64()
		yf, _ := y.Float64()
		switch {
		case xf < yf:
			return -1
		case xf > yf:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case []any:
		y := b.([]any)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := compareValues(x[i], y[i]); c != 0 {
				return c
			}
		}
		return cmpInt(len(x), len(y))
	case map[string]any:
		y := b.(map[string]any)
		xk, yk := sortedKeys(x), sortedKeys(y)
		for i := 0; i < len(xk) && i < len(yk); i++ {
			if c := strings.Compare(xk[i], yk[i]); c != 0 {
				return c
			}
			if c := compareValues(x[xk[i]], y[yk[i]]); c != 0 {
				return c
			}
		}
		return cmpInt(len(xk), len(yk))
	}
	return 0
}

func cmpInt(a, b int) int { return cmpInt64(int64(a), int64(b)) }

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compareElements orders path elements as Kubernetes sorts them in FieldsV1:
// fields, then keys, then values, then indexes.
func compareElements(a, b pathElement) int {
	if a.kind != b.kind {
		return cmpInt(elementRank(a.kind), elementRank(b.kind))
	}
	switch a.kind {
	case 'f':
		return strings.Compare(a.field, b.field)
	case 'k':
		for i := 0; i < len(a.keys) && i < len(b.keys); i++ {
			if c := strings.Compare(a.keys[i].name, b.keys[i].name); c != 0 {
				return c
			}
			if c := compareValues(a.keys[i].value, b.keys[i].value); c != 0 {
				return c
			}
		}
		return cmpInt(len(a.keys), len(b.keys))
	case 'v':
		return compareValues(a.value, b.value)
	}
	return cmpInt(a.index, b.index)
}

func elementRank(kind byte) int {
	return strings.IndexByte("fkvi", kind)
}

// parseElement reads one FieldsV1 key; errUnknownElement for a form it does
// not know, which Kubernetes skips.
func parseElement(s string) (pathElement, error) {
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return pathElement{}, errUnknownElement
	}
	switch kind {
	case "f":
		return fieldElement(rest), nil
	case "v":
		v, err := decodeJSON([]byte(rest))
		if err != nil {
			return pathElement{}, err
		}
		return valueElement(v), nil
	case "k":
		v, err := decodeJSON([]byte(rest))
		if err != nil {
			return pathElement{}, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return pathElement{}, fmt.Errorf("key %s is not an object", rest)
		}
		keys := make([]keyField, 0, len(m))
		for name, kv := range m {
			keys = append(keys, keyField{name, kv})
		}
		return keyElement(keys), nil
	case "i":
		i, err := strconv.Atoi(rest)
		if err != nil {
			return pathElement{}, err
		}
		return pathElement{kind: 'i', itemKey: &itemKey{index: i}, str: s}, nil
	}
	return pathElement{}, errUnknownElement
}

var errUnknownElement = errors.New("unknown path element")
