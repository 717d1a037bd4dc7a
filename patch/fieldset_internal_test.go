package patch

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

// TestWriteJSONString: field names are quoted byte for byte as
// encoding/json quotes them, on the fast path and off it.
func TestWriteJSONString(t *testing.T) {
	for _, s := range []string{"", "f:spec", `k:{"name":"a"}`, "v:<b>&", "a\\b", "\x00\x1f\x7f", "é", "\u2028", "\xff", "i:3", "."} {
		var b bytes.Buffer
		writeJSONString(&b, s)
		want, _ := json.Marshal(s)
		if b.String() != string(want) {
			t.Errorf("writeJSONString(%q) = %s, want %s", s, b.Bytes(), want)
		}
	}
}

// TestAppendScalarJSON: list items are named byte for byte as json.Marshal
// writes their values, on the fast path and off it.
func TestAppendScalarJSON(t *testing.T) {
	for _, v := range []any{nil, true, false, "", "a", "<b>&", "é", "\u2028", "\xff", "a\"b\\c",
		json.Number("0"), json.Number("-12"), json.Number("1.5e3"), json.Number(""), json.Number("1x"), json.Number("-"),
		[]any{"a", json.Number("1")}, map[string]any{"b": nil, "a": true}} {
		got := appendScalarJSON([]byte("x"), v)
		want, err := json.Marshal(v)
		if err != nil {
			want = []byte("null")
		}
		if string(got) != "x"+string(want) {
			t.Errorf("appendScalarJSON(%#v) = %s, want x%s", v, got, want)
		}
	}
}

// TestElementForms: a field's FieldsV1 form, key and identity are those of
// the string it no longer carries.
func TestElementForms(t *testing.T) {
	for _, name := range []string{"spec", "", "a:b", "k:{\"x\":1}", "<&>"} {
		e := fieldElement(name)
		if e.form() != "f:"+name || e.formLen() != len("f:"+name) {
			t.Errorf("field %q: form %q", name, e.form())
		}
		var b bytes.Buffer
		writeElementJSON(&b, e)
		want, _ := json.Marshal("f:" + name)
		if b.String() != string(want) {
			t.Errorf("field %q: written %s, want %s", name, b.Bytes(), want)
		}
		if k := (fieldPath{e}).key(); k != strconv.Itoa(len(name)+2)+":f:"+name {
			t.Errorf("field %q: key %q", name, k)
		}
	}
	ids := map[string]pathElement{}
	for _, e := range []pathElement{fieldElement("a"), fieldElement("k:{\"a\":1}"), fieldElement("f:a"),
		keyElement([]keyField{{"a", json.Number("1")}}), valueElement("a"), valueElement(json.Number("1"))} {
		if o, ok := ids[e.id()]; ok {
			t.Errorf("%v and %v share the id %q", o, e, e.id())
		}
		ids[e.id()] = e
	}
}
