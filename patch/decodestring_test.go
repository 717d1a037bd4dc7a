package patch

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"testing"
)

// TestInternValue holds internValue's boxes (boxAt: one allocation for
// the value, its bytes and its box) to what boxing the string or the
// json.Number gives, after a collection too, for values kept in their
// slot and values that replaced them.
func TestInternValue(t *testing.T) {
	var lits []string
	for i := range 3000 { // more than internedValues holds: slots replaced
		lits = append(lits, fmt.Sprint(i), fmt.Sprint(-i*7919), fmt.Sprintf("v-%d", i))
	}
	lits = append(lits, "", "0123456789abcdef0123456789abcdef") // maxInternedKey
	type boxed struct {
		got, want any
	}
	var all []boxed
	for _, lit := range lits {
		all = append(all, boxed{internValue([]byte(lit), false), lit})
		if lit != "" && lit[0] != 'v' && len(lit) < 19 {
			all = append(all, boxed{internValue([]byte(lit), true), json.Number(lit)})
		}
	}
	runtime.GC()
	for _, b := range all {
		if b.got != b.want {
			t.Fatalf("internValue: %#v, want %#v", b.got, b.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { internValue([]byte("not-interned-before"), false) }); n != 0 {
		t.Errorf("an interned value made again: %v allocations, want 0", n)
	}
	buf, next := make([]byte, 0, 20), int64(1e12)
	if n := testing.AllocsPerRun(100, func() { // a number never read before
		next++
		internValue(strconv.AppendInt(buf[:0], next, 10), true)
	}); n != 1 {
		t.Errorf("a value read once: %v allocations, want 1", n)
	}
}
