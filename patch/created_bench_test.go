package patch

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// createdDoc is a widget as a server stores it on create, about 1 KiB:
// metadata the server set, labels and annotations, a spec with ports
// keyed by name, tags and a selector; %d makes each one's name and uid its
// own, as each create's are.
const createdDoc = `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"widget-%05d","namespace":"default","uid":"6f1c8a52-3b1e-4c8e-9a55-%012d","resourceVersion":"%d","generation":1,"creationTimestamp":"2025-06-01T12:00:00Z","labels":{"app.kubernetes.io/component":"frontend","app.kubernetes.io/name":"shop","app.kubernetes.io/part-of":"storefront","tier":"web","shard":"%d"},"annotations":{"example.com/owner":"team-storefront","example.com/revision":"42","example.com/description":"the storefront's web tier, served behind the edge proxy"},"finalizers":["example.com/cleanup"]},"spec":{"replicas":3,"color":"blue","ports":[{"name":"http","protocol":"TCP","port":8080},{"name":"metrics","protocol":"TCP","port":9090},{"name":"dns","protocol":"UDP","port":53}],"tags":["a","b"],"args":["--listen=:8080","--metrics=:9090"],"selector":{"app.kubernetes.io/name":"shop","tier":"web"},"template":{"image":"registry.example.com/storefront/web:1.42.0"}}}`

// createdDocs are n creates of one shape by one client: other names,
// uids and values.
func createdDocs(n int) [][]byte {
	docs := make([][]byte, n)
	for i := range docs {
		docs[i] = fmt.Appendf(nil, createdDoc, i, i, 1000+i, i%16)
	}
	return docs
}

// BenchmarkCreatedStored is the managedFields entry of a create, written
// from the stored document: "same" creates one shape with other values
// (the usual load), "shape" only its key, "new" a shape not seen lately
// each time (a label key of its own): what a cache of shapes costs when
// it misses.
func BenchmarkCreatedStored(b *testing.B) {
	s, err := SchemaOf(reflect.TypeFor[storedWidget]())
	if err != nil {
		b.Fatal(err)
	}
	ignore := []string{"status"}
	run := func(b *testing.B, docs [][]byte) {
		b.SetBytes(int64(len(docs[0])))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, ok := s.createdStored(docs[i%len(docs)], ignore); !ok {
				b.Fatal("not read as written")
			}
			i++
		}
	}
	b.Run("same", func(b *testing.B) { run(b, createdDocs(256)) })
	b.Run("shape", func(b *testing.B) { // what "same" costs above a map's look-up
		docs := createdDocs(256)
		b.SetBytes(int64(len(docs[0])))
		b.ReportAllocs()
		var arr [2048]byte
		i := 0
		for b.Loop() {
			if _, ok := appendCreatedShape(arr[:0], docs[i%len(docs)], ignore); !ok {
				b.Fatal("no shape")
			}
			i++
		}
	})
	b.Run("new", func(b *testing.B) {
		docs := createdDocs(1024)
		for i, d := range docs {
			docs[i] = []byte(strings.Replace(string(d), `"tier":"web","shard"`, fmt.Sprintf(`"tier":"web","k%d":"v","shard"`, i), 1))
		}
		run(b, docs)
	})
}
