package patch

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// readFresh is what ParseConfiguration reads of doc without the trees
// kept (configTrees): the reader before them, the oracle.
func readFresh(doc []byte) (tree map[string]any, shape []byte, plain bool, err error) {
	d := jsonReader{data: doc, unmanaged: true, shape: []byte{}}
	tree, err = readUnmanaged(&d)
	if err == nil && tree == nil {
		err = ErrMalformed // not an object
	}
	if len(d.shape) > maxShapeKey {
		d.shape = nil // as ParseConfiguration keeps it
	}
	return tree, d.shape, !d.respelled, err
}

// TestConfigTreesRandom holds ParseConfiguration with its kept trees to the
// reader without them: random objects, each embedded where a value is read
// in other ways (the root's metadata, which loses its managedFields; a
// list's item, whose scalars the shape writes; deeper), read again and
// again, with escapes, duplicate names and managedFields among them; each
// configuration applied before the next is read, so that a kept tree
// changed by an apply shows. It fails too if nothing is ever kept.
func TestConfigTreesRandom(t *testing.T) {
	read, shared, n := 0, 0, 0
	eachRandomObject(t, 11, race.Cases(1000), func(s *Schema, m map[string]any) {
		if n++; n%8 != 0 {
			return
		}
		body, err := encodeJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		docs := []string{
			string(body),
			fmt.Sprintf(`{"metadata":%s,"spec":{"a":%s}}`, body, body),
			fmt.Sprintf(`{"spec":{"l":[%s,%s,{"x":%s}]},"metadata":{"name":"n","managedFields":[{"manager":"m"}],"labels":%s}}`, body, body, body, body),
			fmt.Sprintf(`{"metadata":{"name":"a\u0062","x":%s,"x":%s},"status":[[%s]]}`, body, body, body),
		}
		for round := range 2 {
			for _, doc := range docs {
				want, wantShape, wantPlain, wantErr := readFresh([]byte(doc))
				c, err := ParseConfiguration([]byte(doc))
				if (err != nil) != (wantErr != nil) {
					t.Fatalf("%s: error %v, want %v", doc, err, wantErr)
				}
				if err != nil {
					continue
				}
				read++
				if !reflect.DeepEqual(c.tree, want) || !bytes.Equal(c.shape, wantShape) || c.plain != wantPlain {
					t.Fatalf("round %d, %.500s:\ntree %.500v shape %.500q plain %v\nwant %.500v shape %.500q plain %v", round, doc, c.tree, c.shape, c.plain, want, wantShape, wantPlain)
				}
				again, _ := ParseConfiguration([]byte(doc))
				if sub, ok := again.tree["metadata"].(map[string]any); ok && len(sub) > 0 && sameMap(sub, c.tree["metadata"].(map[string]any)) {
					shared++
				}
				opts := ApplyOptions{Manager: "m", APIVersion: "example.com/v1", Force: true, Now: kapi.Now(), Ignore: []string{"status"}}
				if merged, _, err := s.ApplyMerged(nil, c, nil, opts); err == nil {
					_, _ = merged.JSON()
				}
			}
		}
	})
	t.Logf("%d configurations read, %d shared their metadata with the one read before", read, shared)
	if shared < read/10 {
		t.Errorf("%d of %d configurations shared their metadata with the one read before", shared, read)
	}
}

// FuzzConfigTrees holds ParseConfiguration, read twice (the second time
// from the trees kept the first, the document embedded twice so that its
// values are read twice within it too), to the reader without kept trees.
func FuzzConfigTrees(f *testing.F) {
	f.Add([]byte(`{"a":{"b":[1,{"c":"d"}]}}`))
	f.Add([]byte(`{"metadata":{"managedFields":[],"labels":{"x":"y"}},"spec":[{"k":"\u0041"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, doc := range [][]byte{data, fmt.Appendf(nil, `{"metadata":%s,"spec":[%s,{"x":%s}]}`, data, data, data)} {
			want, wantShape, wantPlain, wantErr := readFresh(doc)
			for range 3 {
				c, err := ParseConfiguration(doc)
				if (err != nil) != (wantErr != nil) {
					t.Fatalf("%q: error %v, want %v", doc, err, wantErr)
				}
				if err == nil && (!reflect.DeepEqual(c.tree, want) || !bytes.Equal(c.shape, wantShape) || c.plain != wantPlain) {
					t.Fatalf("%q: tree %v shape %q plain %v, want %v shape %q plain %v", doc, c.tree, c.shape, c.plain, want, wantShape, wantPlain)
				}
			}
		}
	})
}

// TestConfigTreesAlike: values kept whose first configTreeKey bytes are
// alike, read at one place (one set of configTrees), are each found as
// themselves.
func TestConfigTreesAlike(t *testing.T) {
	pad := strings.Repeat("x", configTreeKey)
	var docs []string
	for i := range cacheWays {
		docs = append(docs, fmt.Sprintf(`{"spec":{"pad":%q,"n":%d}}`, pad, i))
	}
	kept := map[string]map[string]any{}
	for round := range 3 { // kept the second time read, found the third
		for _, doc := range docs {
			c, err := ParseConfiguration([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			want, wantShape, _, _ := readFresh([]byte(doc))
			if !reflect.DeepEqual(c.tree, want) || !bytes.Equal(c.shape, wantShape) {
				t.Fatalf("round %d, %s: tree %v shape %q, want %v shape %q", round, doc, c.tree, c.shape, want, wantShape)
			}
			spec := c.tree["spec"].(map[string]any)
			if round == 2 && !sameMap(spec, kept[doc]) {
				t.Errorf("%s: its spec was not the one kept", doc)
			}
			kept[doc] = spec
		}
	}
}

// TestConfigTreesShared: configurations read at once share kept trees and
// neither reading, applying nor decoding one writes them (go test -race finds a
// write, such as a delete of the metadata's managedFields that is not
// there).
func TestConfigTreesShared(t *testing.T) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"apiVersion":"v1","kind":"K","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"color":"red","ports":[{"name":"p","port":1}]}}`)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				c, err := ParseConfiguration(doc)
				if err != nil {
					t.Error(err)
					return
				}
				if _, _, err := s.ApplyMerged(nil, c, nil, ApplyOptions{Manager: "m", APIVersion: "v1", Now: kapi.Now()}); err != nil {
					t.Error(err)
					return
				}
				if _, err := encodeJSON(c.tree); err != nil {
					t.Error(err)
					return
				}
				w := new(storedWidget)
				if !c.Decode(w) || w.Labels["x"] != "y" {
					t.Errorf("Decode: %v", w.Labels)
					return
				}
				w.Labels["x"] = "z" // the decoded value is the caller's (decodedCopies)
			}
		})
	}
	wg.Wait()
}

// BenchmarkParseConfigurationDeep reads a configuration 1,000 levels deep
// around a 1 MiB string: where each level looked for its value's end
// through the whole rest of the document, it read the string once per
// level (0.42 s an op; 10 ms once the look stops at maxConfigTree bytes).
func BenchmarkParseConfigurationDeep(b *testing.B) {
	const depth = 1000
	doc := []byte(`{"spec":`)
	doc = append(doc, bytes.Repeat([]byte("["), depth)...)
	doc = append(doc, '"')
	doc = append(doc, bytes.Repeat([]byte("x"), 1<<20)...)
	doc = append(doc, '"')
	doc = append(doc, bytes.Repeat([]byte("]"), depth)...)
	doc = append(doc, '}')
	for b.Loop() {
		if _, err := ParseConfiguration(doc); err != nil {
			b.Fatal(err)
		}
	}
}
