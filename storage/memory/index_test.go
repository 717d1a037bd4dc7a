package memory

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"unsafe"
)

// The index must list exactly its keys in order from any start, through
// block splits and emptied blocks.
func TestKeyIndexAgainstSortedKeys(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	ix := newKeyIndex()
	want := map[string]bool{}
	check := func(step int) {
		t.Helper()
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, start := range []string{"", keys[0], fmt.Sprintf("k%05d", r.Intn(20000)), "zzz"} {
			var got []string
			for rec := range ix.from(start) {
				got = append(got, rec.key)
			}
			i, _ := slices.BinarySearch(keys, start)
			if !slices.Equal(got, keys[i:]) && !(len(got) == 0 && len(keys[i:]) == 0) {
				t.Fatalf("step %d, from %q: %d keys, want %d", step, start, len(got), len(keys[i:]))
			}
		}
		for _, blk := range ix.blocks {
			if len(blk) == 0 || len(blk) > blockMax {
				t.Fatalf("step %d: a block of %d", step, len(blk))
			}
		}
	}
	for step := range 30000 {
		k := fmt.Sprintf("k%05d", r.Intn(20000))
		switch {
		case want[k] && r.Intn(3) == 0:
			ix.delete(k)
			delete(want, k)
		case !want[k]:
			ix.put(&record{key: k})
			want[k] = true
		}
		if ix.get(k) == nil != !want[k] {
			t.Fatalf("step %d: get(%q)", step, k)
		}
		if step%5000 == 4999 {
			check(step)
		}
	}
	for k := range want { // empty it again
		ix.delete(k)
	}
	if len(ix.blocks) != 0 {
		t.Fatalf("%d blocks left", len(ix.blocks))
	}
}

// A record is one allocation of 64 bytes: a key written once (most keys)
// keeps its one version in it, and older versions only behind a pointer.
func TestRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(record{}); n > 64 {
		t.Fatalf("a record is %d bytes, want at most 64 (a size class up costs every key)", n)
	}
}
