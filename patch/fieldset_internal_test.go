package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"testing"

	"github.com/kapi-dev/kapi"
)

// TestAppendJSONString: field names are quoted byte for byte as
// encoding/json quotes them, on the fast path and off it.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "f:spec", `k:{"name":"a"}`, `k:{"a":"\\\""}`, "v:<b>&", "a\\b", "\x00\x1f\x7f", "é", "\u2028", "\xff", "i:3", "."} {
		b := appendJSONString([]byte("x"), s)
		want, _ := json.Marshal(s)
		if string(b) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want x%s", s, b, want)
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
		b := appendElementJSON(nil, e)
		want, _ := json.Marshal("f:" + name)
		if string(b) != string(want) {
			t.Errorf("field %q: written %s, want %s", name, b, want)
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

// marshalByTree is FieldsV1 written from the set's tree, as MarshalJSON
// wrote it before it wrote the sorted paths.
func marshalByTree(s fieldSet) []byte {
	var b bytes.Buffer
	var write func(n *setNode, self bool)
	write = func(n *setNode, self bool) {
		b.WriteByte('{')
		first := true
		if self && n.member && len(n.children) > 0 {
			b.WriteString(`".":{}`)
			first = false
		}
		for _, c := range n.children {
			if !first {
				b.WriteByte(',')
			}
			first = false
			name, _ := json.Marshal(c.elem.form())
			b.Write(name)
			b.WriteByte(':')
			write(c, true)
		}
		b.WriteByte('}')
	}
	write(s.tree(), false)
	return b.Bytes()
}

// FuzzFieldSetJSON: a FieldsV1 read and written again is written as the
// set's tree writes it, and reads back as the same set.
func FuzzFieldSetJSON(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"f:a":{}}`, `{"f:metadata":{"f:labels":{".":{},"f:a":{}},"f:name":{}},"f:spec":{".":{},"f:x":{}}}`,
		`{"f:spec":{"f:ports":{"k:{\"name\":\"a\",\"port\":1}":{".":{},"f:name":{}},"k:{\"name\":\"b\"}":{}},"f:tags":{"v:\"x\"":{},"v:1":{},"v:true":{},"v:null":{}}}}`,
		`{"f:a<&>":{"f:\"q\"":{}},"f:b:c":{},"i:3":{"f:z":{}},"k:{\"n\":1.5}":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		set, err := parseFieldSet(raw)
		if err != nil {
			return
		}
		got, _ := set.MarshalJSON()
		if want := marshalByTree(set); !bytes.Equal(got, want) {
			t.Fatalf("FieldsV1 %s written as\n%s\nwant\n%s", raw, got, want)
		}
		again, err := parseFieldSet(got)
		if err != nil {
			t.Fatalf("written FieldsV1 %s does not read: %v", got, err)
		}
		if len(again) != len(set) || len(again.minus(set)) != 0 {
			t.Fatalf("FieldsV1 %s reads back as another set: %s", raw, got)
		}
	})
}

// TestManagerID: a manager's id is the JSON of its entry without time and
// fields (and apiVersion for Apply), as json.Marshal writes it.
func TestManagerID(t *testing.T) {
	for _, m := range []fieldManager{
		{}, {name: "kubectl", operation: OperationUpdate, apiVersion: "example.com/v1"},
		{name: "a<b>&\"c\\", operation: OperationApply, apiVersion: "v1", subresource: "status"},
		{name: "é\u2028\xff", operation: "x", subresource: "scale"}, {apiVersion: "v1"},
	} {
		if got, want := m.id(), marshaledID(m); got != want {
			t.Errorf("id %s, want %s", got, want)
		}
	}
}

// marshaledID is m's id as json.Marshal writes its entry.
func marshaledID(m fieldManager) string {
	e := kapi.ManagedFieldsEntry{Manager: m.name, Operation: m.operation, APIVersion: m.apiVersion, Subresource: m.subresource}
	if m.operation == OperationApply {
		e.APIVersion = ""
	}
	want, _ := json.Marshal(e)
	return string(want)
}

// TestManagerIDsKept: ids kept by their keys' hash (managerIDs) are the
// ids of the keys asked for, for random managers asked for by turns,
// many more than the slots, many of them alike but for a field, and
// whose strings run into each other ("ab"+"c" against "a"+"bc").
func TestManagerIDsKept(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	pick := func(s ...string) string { return s[r.Intn(len(s))] }
	for range 20000 {
		m := fieldManager{
			name:        pick("a", "ab", "abc", "kubectl", "kubectl-client-side-apply", "x\"y", ""),
			operation:   pick(OperationApply, OperationUpdate, "c", "bc"),
			apiVersion:  pick("v1", "example.com/v1", "example.com/v2", "", "c"),
			subresource: pick("", "status", "scale", "c"),
		}
		if got, want := m.id(), marshaledID(m); got != want {
			t.Fatalf("id %s, want %s", got, want)
		}
	}
}

// TestRecentParsed: a FieldsV1 read through recentParsed reads as
// parseFieldSet reads it, written as kapi writes it or otherwise, read
// again and again among others that may share its slot; and once a set
// is remembered for its encoding (as appliedSetOf remembers an apply's),
// reading that encoding gives that set, not one read before it.
func TestRecentParsed(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var raws [][]byte
	for i := range 200 {
		set := fieldSet{}
		for j := range 1 + r.Intn(4) {
			set.insert(fieldPath{fieldElement("spec"), fieldElement(fmt.Sprint("f", (i+j)%7, "-", r.Intn(3)))})
		}
		raw, _ := set.MarshalJSON()
		raws = append(raws, raw)
		if r.Intn(3) == 0 { // written otherwise: spaced out
			raws = append(raws, bytes.ReplaceAll(raw, []byte(":"), []byte(": ")))
		}
	}
	for range 5000 {
		raw := raws[r.Intn(len(raws))]
		got, err := parseFieldSetCached(raw)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := parseFieldSet(raw)
		if !got.set.equal(want) {
			t.Fatalf("%s read as %v, want %v", raw, got.set, want)
		}
	}
	raw := raws[0]
	if _, err := parseFieldSetCached(raw); err != nil {
		t.Fatal(err)
	}
	set, _ := parseFieldSet(raw)
	kept := &parsedSet{set: set, encoded: raw}
	rememberParsed(kept)
	if got, _ := parseFieldSetCached(raw); got != kept {
		t.Fatal("a remembered set's encoding reads as another set")
	}
}

// TestManagerSlotsSpread: managers alike but for a byte's high bits
// ("mgr-1" and "mgr-q") fall in slots of managerIDs apart about as often
// as any two do. Slots picked by the hash's low bits put every such pair
// in one slot, where each evicts the other's id at every write.
func TestManagerSlotsSpread(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const pairs = 1000
	same := 0
	for range pairs {
		a := []byte(fmt.Sprint("mgr-", r.Intn(1000000)))
		b := bytes.Clone(a)
		for i, c := range b {
			if c >= '0' && c <= '9' {
				b[i] = c + 0x40 // '1' → 'q': the low six bits kept
			}
		}
		ka := managerKey{string(a), OperationUpdate, "v1", ""}
		kb := managerKey{string(b), OperationUpdate, "v1", ""}
		if managerSlot(&ka) == managerSlot(&kb) {
			same++
		}
	}
	// By chance, pairs/64 ≈ 16; a tenth of the pairs is far above.
	if same > pairs/10 {
		t.Errorf("of %d managers alike but for high bits, %d share a slot with their twin", pairs, same)
	}
}
