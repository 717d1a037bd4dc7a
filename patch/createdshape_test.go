package patch

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonskip"
)

// createdCold is createdStored of doc with nothing cached: the entry
// written from the document.
func createdCold(s *Schema, doc []byte, ignore []string) ([]byte, bool) {
	createdShapes.m = nil
	return s.createdStored(doc, ignore)
}

// createdWarm is createdStored of doc after a create of warm (in schema
// warmSchema, with warmIgnore ignored), which a key that leaves out what
// tells them apart would answer for doc.
func createdWarm(s *Schema, doc []byte, ignore []string, warmSchema *Schema, warm []byte, warmIgnore []string) ([]byte, bool) {
	createdShapes.m = nil
	warmSchema.createdStored(warm, warmIgnore)
	return s.createdStored(doc, ignore)
}

// scalarTokens are what a document's scalars, and names, are replaced by
// in a variant: other values of each kind, escapes, names of the schema,
// containers, and scalars validStored refuses.
var scalarTokens = []string{
	`"a"`, `"b"`, `""`, `"http"`, `"dns"`, `"TCP"`, `"UDP"`, `"<&>"`, `"é"`, `"\u0061"`, `"h\u0074tp"`, `"a\"b"`,
	`1`, `53`, `80`, `2.5`, `-1`, `1e3`, `0`, `-0`, `true`, `false`, `null`, `{}`, `[]`, `{"a":1}`, `["a"]`, `[null]`,
	`"name"`, `"protocol"`, `"port"`, `"color"`, `"tags"`, `"labels"`, `"metadata"`, `"spec"`, `"status"`, `"managedFields"`, `"unknown"`, `"n\u0061me"`,
	`"\ud800"`, "\"\x01\"", "\"\xff\"", `"\x"`, `"a`, `01`, `1.`, `1e`, `-`, `+1`, `tru`, `nul`, `falsy`,
}

// sameKindTokens are valid strings and numbers: a variant with one in
// place of a value is of the same shape, one in place of a name or a list
// item's key is not.
var sameKindTokens = [2][]string{
	{`"a"`, `"b"`, `""`, `"http"`, `"dns"`, `"TCP"`, `"<&>"`, `"é"`, `"\u0061"`, `"a\"b"`, `"name"`, `"x:y"`},
	{`1`, `53`, `80`, `2.5`, `-1`, `1e3`, `0`, `-0`, `1E+2`, `12345678901234567890`},
}

// token is a string, number or literal of a document; value says it is
// the value of a member outside any array (not a name, not in a list),
// which the key writes by its kind only.
type token struct {
	start, end int
	value      bool
}

// tokens are doc's tokens, read loosely: a variant need not be valid
// JSON.
func tokens(doc []byte) []token {
	var out []token
	arrays := 0
	for i := 0; i < len(doc); {
		start := i
		switch c := doc[i]; {
		case c == '"':
			i = stringEnd(doc, i)
		case c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z':
			for i < len(doc) && (doc[i] == '-' || doc[i] == '+' || doc[i] == '.' || doc[i] >= '0' && doc[i] <= '9' || doc[i] >= 'a' && doc[i] <= 'z' || doc[i] >= 'A' && doc[i] <= 'Z') {
				i++
			}
		default:
			switch c {
			case '[':
				arrays++
			case ']':
				arrays--
			}
			i++
			continue
		}
		name := jsonskip.Space(doc, i) < len(doc) && doc[jsonskip.Space(doc, i)] == ':'
		out = append(out, token{start, i, arrays == 0 && !name})
	}
	return out
}

// variant is doc with one to three of its tokens replaced: a value by
// another of its kind (which keeps its shape), or any token (a value, a
// name, a list item's key) by one of scalarTokens, or by itself with an
// escape.
func variant(r *rand.Rand, doc []byte) []byte {
	out := doc
	for n := 1 + r.Intn(3); n > 0; n-- {
		toks := tokens(out)
		if r.Intn(2) == 0 {
			toks = slices.DeleteFunc(toks, func(t token) bool { return !t.value })
		}
		if len(toks) == 0 {
			return out
		}
		tk := toks[r.Intn(len(toks))]
		old := out[tk.start:tk.end]
		tok := scalarTokens[r.Intn(len(scalarTokens))]
		switch r.Intn(4) {
		case 0: // the same string, escaped
			if len(old) > 2 && old[0] == '"' && old[1] >= 'a' && old[1] <= 'z' {
				tok = fmt.Sprintf(`"\u%04x%s`, old[1], old[2:])
			}
		case 1, 2: // another of its kind
			if old[0] == '"' {
				tok = sameKindTokens[0][r.Intn(len(sameKindTokens[0]))]
			} else if old[0] == '-' || old[0] >= '0' && old[0] <= '9' {
				tok = sameKindTokens[1][r.Intn(len(sameKindTokens[1]))]
			}
		}
		next := append([]byte{}, out[:tk.start]...)
		next = append(next, tok...)
		out = append(next, out[tk.end:]...)
	}
	return out
}

var createdIgnores = [][]string{nil, {"status"}, {"spec", "metadata"}, {"spec"}}

// TestCreatedShapeCache: a create read through a cache warmed by a
// document a few tokens away (another value, name, list item key, escape,
// an invalid scalar; another ignore list, another schema) has the entry
// its own document makes. A key that leaves out anything that matters
// answers with the other's entry, at least now and then.
func TestCreatedShapeCache(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	atomicPorts, err := SchemaOf(reflect.TypeFor[storedWidget]()) // documents alike, entries not
	if err != nil {
		t.Fatal(err)
	}
	atomicPorts.Fields["spec"].Fields["ports"].ListType = ListAtomic
	defer func() { createdShapes.m = nil }()
	r := rand.New(rand.NewSource(4))
	seeds := [][]byte{[]byte(storedSeed), []byte(fmt.Sprintf(createdDoc, 1, 1, 1, 1))}
	hits := 0
	for i := 0; i < 6000; i++ {
		doc := seeds[r.Intn(len(seeds))]
		if r.Intn(2) == 0 {
			doc, _ = json.Marshal(randomValue(r, s, 0))
		}
		warm, warmIgnore, warmSchema := doc, createdIgnores[r.Intn(len(createdIgnores))], s
		ignore := warmIgnore
		if r.Intn(8) == 0 {
			ignore = createdIgnores[r.Intn(len(createdIgnores))]
		}
		if r.Intn(8) == 0 {
			warmSchema = atomicPorts
		}
		if r.Intn(8) > 0 {
			doc = variant(r, doc)
		}
		if r.Intn(2) == 0 {
			doc, warm = warm, doc
		}
		wantRaw, wantOK := createdCold(s, doc, ignore)
		gotRaw, gotOK := createdWarm(s, doc, ignore, warmSchema, warm, warmIgnore)
		if string(gotRaw) != string(wantRaw) || gotOK != wantOK {
			t.Fatalf("%s (ignoring %q)\nafter %s (ignoring %q, schema %p of %p):\n%s %v, want %s %v",
				doc, ignore, warm, warmIgnore, warmSchema, s, gotRaw, gotOK, wantRaw, wantOK)
		}
		if warmSchema == s && reflect.DeepEqual(ignore, warmIgnore) && string(doc) != string(warm) && sameShape(doc, warm, ignore) {
			hits++
		}
	}
	if hits < 500 {
		t.Errorf("only %d of 6000 documents answered by another's entry", hits)
	}
	t.Logf("%d of 6000 documents answered by another's entry", hits)
}

// sameShape says whether two documents are cached as one.
func sameShape(a, b []byte, ignore []string) bool {
	ka, aok := appendCreatedShape(nil, trimSpace(a), ignore)
	kb, bok := appendCreatedShape(nil, trimSpace(b), ignore)
	return aok && bok && string(ka) == string(kb)
}

// FuzzCreatedShapeCache is TestCreatedShapeCache on any two documents:
// doc, read after a create of warm, has the entry of its own.
func FuzzCreatedShapeCache(f *testing.F) {
	r := rand.New(rand.NewSource(5))
	for _, seed := range []string{storedSeed, fmt.Sprintf(createdDoc, 1, 1, 1, 1), `{"spec":{"ports":[{"name":"a"}],"color":"x"}}`} {
		for i := 0; i < 8; i++ {
			f.Add(seed, string(variant(r, []byte(seed))), "status", r.Intn(2) == 0)
		}
	}
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		f.Fatal(err)
	}
	atomicPorts, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		f.Fatal(err)
	}
	atomicPorts.Fields["spec"].Fields["ports"].ListType = ListAtomic
	f.Fuzz(func(t *testing.T, doc, warm, ignore string, other bool) {
		var ig []string
		if ignore != "" {
			ig = []string{ignore}
		}
		warmSchema := s
		if other {
			warmSchema = atomicPorts
		}
		wantRaw, wantOK := createdCold(s, []byte(doc), ig)
		gotRaw, gotOK := createdWarm(s, []byte(doc), ig, warmSchema, []byte(warm), ig)
		if string(gotRaw) != string(wantRaw) || gotOK != wantOK {
			t.Fatalf("after %q: %s %v, want %s %v", warm, gotRaw, gotOK, wantRaw, wantOK)
		}
	})
}
