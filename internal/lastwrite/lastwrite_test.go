package lastwrite

import (
	"fmt"
	"testing"
)

func TestRecord(t *testing.T) {
	var r Record
	r.Wrote("a", 5, nil)
	r.Wrote("a", 3, nil) // an older write answered later
	if got := r.At("a"); got != 5 {
		t.Fatalf("At(a) = %d, want 5", got)
	}
	if got := r.At("b"); got != 0 {
		t.Fatalf("At(b) = %d, want 0", got)
	}
	for i := range Max - 1 {
		r.Wrote(fmt.Sprint("k", i), int64(10+i), nil)
	}
	// Full: the keys the cache reached (revisions up to 100) make room.
	r.Wrote("new", 1<<20, func(rev int64) bool { return rev <= 100 })
	if r.At("a") != 0 || r.At("k0") != 0 || r.At("k90") != 0 || r.At("k91") == 0 || r.At("new") != 1<<20 {
		t.Fatalf("after making room: a %d k0 %d k90 %d k91 %d new %d", r.At("a"), r.At("k0"), r.At("k90"), r.At("k91"), r.At("new"))
	}
	// Full again, with nothing reached: all go.
	for i := range Max {
		r.Wrote(fmt.Sprint("m", i), int64(1<<21+i), func(int64) bool { return false })
	}
	if n := len(r.rev); n > Max {
		t.Fatalf("%d keys held, want at most %d", n, Max)
	}
}
