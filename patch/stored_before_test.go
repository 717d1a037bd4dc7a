package patch

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// compareStoredBefore is compareStored as it was before it read the old
// document once, checking its schema there, and new only where it differs
// from old: FuzzCompareStoredAsBefore and TestCompareStoredAsBefore hold
// the two to one result, and to giving up on the same documents.
func compareStoredBefore(old, new []byte, s *Schema) (c comparison, ok bool) {
	old, new = trimSpace(old), trimSpace(new)
	if s == nil || s.Kind != Struct || isLeaf(s) || len(old) == 0 || len(new) == 0 || old[0] != '{' || new[0] != '{' {
		return c, false // not a document liveObject reads
	}
	c = comparison{added: fieldSet{}, modified: fieldSet{}, removed: fieldSet{}}
	path := make(fieldPath, 0, pathDepth)
	if !c.storedBefore(old, new, s, path, 0, levelRoot) {
		return c, false
	}
	return c, true
}

// storedBefore is stored as it was: it compares two values as written, both present: l and r are the
// value's bytes, without surrounding space.
func (c *comparison) storedBefore(l, r []byte, s *Schema, path fieldPath, depth, level int) bool {
	trusted := level != levelRoot // a member of an object split already
	if bytes.Equal(l, r) {
		d := jsonReader{data: r, discard: true, trusted: trusted}
		if !d.validStored(s, depth, level, nil) {
			return false
		}
		d.space()
		return d.i == len(d.data) // nothing changed in it
	}
	if level != levelRoot && (s.anyValue() || s.Kind == Scalar) && plainScalar(l) && plainScalar(r) {
		// Written apart, two plain scalars are two values: decoding them
		// to say so was a fifth of comparing an update's documents.
		c.modified.insert(c.clone(path))
		return true
	}
	if s != nil && s.Kind == Deduced && len(l) > 0 && len(r) > 0 && l[0] == '{' && r[0] == '{' {
		s = deducedObject
	}
	if s == nil || (s.Kind != Struct && s.Kind != Map) || isLeaf(s) || len(l) == 0 || len(r) == 0 || l[0] != '{' || r[0] != '{' {
		return c.decoded(l, r, s, path, depth, level)
	}
	var lbuf, rbuf [16]storedMember
	lm, lok := storedMembers(l, depth, lbuf[:0], trusted)
	rm, rok := storedMembers(r, depth, rbuf[:0], trusted)
	if !lok || !rok {
		return c.decoded(l, r, s, path, depth, level)
	}
	if level == levelMetadata {
		lm, rm = withoutManagedFields(lm), withoutManagedFields(rm)
	}
	if len(lm) == 0 && len(rm) == 0 {
		return c.decoded(l, r, s, path, depth, level)
	}
	var matched uint64 // of lm
	next := 0          // where the next key is looked for first: both are usually in one order
	for _, m := range rm {
		cs := s.Field(string(m.key))
		if cs == nil {
			return false // not of the schema: liveObject's error
		}
		i := findMember(lm, m.key, next)
		childLevel := levelOther
		if level == levelRoot && string(m.key) == "metadata" {
			childLevel = levelMetadata
		}
		if i < 0 {
			if !c.decodedSide(nil, m.value, cs, append(path, fieldElement(string(m.key))), depth+1, childLevel) {
				return false
			}
			continue
		}
		matched |= 1 << i
		next = i + 1
		if bytes.Equal(lm[i].value, m.value) {
			d := jsonReader{data: m.value, discard: true, trusted: true}
			if !d.validStored(cs, depth+1, childLevel, nil) {
				return false
			}
			continue
		}
		if !c.storedBefore(lm[i].value, m.value, cs, append(path, fieldElement(string(m.key))), depth+1, childLevel) {
			return false
		}
	}
	for i, m := range lm {
		if matched&(1<<i) != 0 {
			continue
		}
		cs := s.Field(string(m.key))
		if cs == nil {
			return false
		}
		childLevel := levelOther
		if level == levelRoot && string(m.key) == "metadata" {
			childLevel = levelMetadata
		}
		if !c.decodedSide(m.value, nil, cs, append(path, fieldElement(string(m.key))), depth+1, childLevel) {
			return false
		}
	}
	return true
}

// sameComparison says whether compareStored and compareStoredBefore agree
// on old and new; what, if not.
func sameComparison(old, new []byte, s *Schema) (string, bool) {
	got, gotOK := compareStored(old, new, s)
	want, wantOK := compareStoredBefore(old, new, s)
	if gotOK != wantOK {
		return fmt.Sprintf("ok %v, before %v", gotOK, wantOK), false
	}
	if !gotOK {
		return "", true
	}
	if diff := comparisonDiff(got, want); diff != "" {
		return diff + " (want: before)", false
	}
	return "", true
}

// FuzzCompareStoredAsBefore: compareStored finds what it found before it
// read old once, on the same documents; where one gives up, so does the
// other.
func FuzzCompareStoredAsBefore(f *testing.F) {
	edits := [][2]string{
		{`"color":"blue"`, `"color":"red"`}, {`"replicas":3,`, ``}, {`"a":"1",`, `"a":"1","c":"3",`},
		{`{"name":"dns","protocol":"UDP","port":53}`, `{"name":"dns","protocol":"TCP","port":53}`},
		{`"generation":4`, `"generation":5`}, {`"generation":4`, `"generation":45`}, {`"replicas":3`, `"replicas":3.5`},
		{`"managedFields":[`, `"managedFields":[{},`}, {`"managedFields":[`, `"managedFields":[}`}, {`"spec":{`, `"spec":{"unknown":1,`},
		{`"labels":{"a":"1","b":"2"}`, `"labels":{"b":"2","a":"1"}`}, {`"labels":{"a":"1"`, `"labels":{"a":"1","a":"2"`},
		{`"color":"blue"`, `"color":"blue","color":"green"`}, {`"name":"w"`, `"na\u006de":"w"`}, {`"a":"1"`, `"\u0061":"1"`},
		{`"selector":{"app":"shop"}`, `"selector":{"app":{}}`}, {`"ports":[`, `"ports":[{"port":1},`}, {`"color":"blue"`, `"color":{}`},
		{`"extra":{"k":[1,2.5,null]}`, `"extra":{"k":[1,2.5,null]`}, {`"phase":"Running"`, `"phase":"Running" `}, {`"spec":{`, `"spec": {`},
		{`"status":{`, `"status":{"phase":"\u00e9",`}, {`"template":{"image":"i"}`, `"template":{"image":"i","x":1}`},
		{`,"managedFields":[{"manager":"m","operation":"Update","apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]`, ``},
	}
	for _, e := range edits {
		f.Add(storedSeed, strings.Replace(storedSeed, e[0], e[1], 1))
		f.Add(strings.Replace(storedSeed, e[0], e[1], 1), storedSeed)
		f.Add(strings.Replace(storedSeed, e[0], e[1], 1), strings.Replace(storedSeed, `"color":"blue"`, `"color":"red"`, 1))
	}
	f.Add(`{"metadata":{"managedFields":[]}}`, `{"metadata":{}}`)
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		f.Fatal(err)
	}
	deduced := withDeduced(s)
	f.Fuzz(func(t *testing.T, old, new string) {
		for _, s := range []*Schema{s, deduced} {
			if diff, ok := sameComparison([]byte(old), []byte(new), s); !ok {
				t.Fatalf("%s\n%s\n%s", old, new, diff)
			}
		}
	})
}

// TestCompareStoredAsBefore holds compareStored to compareStoredBefore on
// random pairs of documents, old with managedFields as a server stores it.
func TestCompareStoredAsBefore(t *testing.T) {
	managed := func(r *rand.Rand, oldV, _ any) {
		if _, ok := oldV.(map[string]any); ok && r.Intn(4) > 0 {
			setManagedFields(oldV, []any{map[string]any{"manager": "x", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}})
		}
	}
	randomStoredPairs(t, 2, managed, func(s *Schema, old, new []byte) bool {
		if diff, ok := sameComparison(old, new, s); !ok {
			t.Fatalf("%s\n%s\n%s", old, new, diff)
		}
		_, ok := compareStored(old, new, s)
		return ok
	})
}

// BenchmarkCompareStored compares an update's documents as a server
// writes them: old with its managedFields, new without, a spec field and
// the generation changed.
func BenchmarkCompareStored(b *testing.B) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		b.Fatal(err)
	}
	managed := `"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"example.com/v1","time":"2026-11-29T04:17:16Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:x":{}},"f:labels":{".":{},"f:a":{},"f:b":{}}},"f:spec":{".":{},"f:color":{},"f:ports":{".":{},"k:{\"name\":\"dns\",\"protocol\":\"UDP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}},"k:{\"name\":\"http\",\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}},"f:replicas":{},"f:selector":{".":{},"f:app":{}}}}}]`
	old := strings.Replace(storedSeed, `"managedFields":[{"manager":"m","operation":"Update","apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]`, managed, 1)
	new := strings.Replace(strings.Replace(storedSeed, `,"managedFields":[{"manager":"m","operation":"Update","apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]`, ``, 1), `"color":"blue"`, `"color":"red"`, 1)
	new = strings.Replace(new, `"generation":4`, `"generation":5`, 1)
	if old == storedSeed || len(new) >= len(storedSeed) {
		b.Fatal("the documents are not what the benchmark says")
	}
	for _, x := range []struct {
		name    string
		compare func(old, new []byte, s *Schema) (comparison, bool)
	}{{"now", compareStored}, {"before", compareStoredBefore}} {
		b.Run(x.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := x.compare([]byte(old), []byte(new), s); !ok {
					b.Fatal("gave up")
				}
			}
		})
	}
}
