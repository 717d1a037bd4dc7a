package listcache

import "testing"

// Kept lists share one budget per server: a list that does not fit is not
// kept, and lists whose collection has changed give their bytes back when
// another needs them.
func TestListBudget(t *testing.T) {
	var budget Budget
	var a, b Bodies
	changeA, changeB := int64(1), int64(1)
	budget.Add(&a, func() int64 { return changeA })
	budget.Add(&b, func() int64 { return changeB })
	big := make([]byte, BodyMax)
	fill := func(l *Bodies, prefix string, change int64) bool {
		t.Helper()
		_, keep := l.Get(prefix, change, 1) // a first sighting, or the second of one not kept
		if !keep {
			if _, keep = l.Get(prefix, change, 1); !keep {
				t.Fatalf("%s: the second sighting says not to keep", prefix)
			}
		}
		l.Keep(prefix, change, 1, big)
		data, _ := l.Get(prefix, change, 1)
		return data != nil
	}
	for i, p := range []string{"/a/1", "/a/2", "/a/3", "/a/4"} {
		if !fill(&a, p, changeA) {
			t.Fatalf("list %d not kept with the budget at %d", i, budget.bytes)
		}
	}
	if fill(&b, "/b/1", changeB) {
		t.Fatalf("a list beyond the budget was kept (%d bytes)", budget.bytes)
	}
	changeA = 2 // a's lists are stale now
	if !fill(&b, "/b/1", changeB) {
		t.Fatalf("a list was not kept after the stale ones went (%d bytes)", budget.bytes)
	}
	if budget.bytes != BodyMax {
		t.Errorf("budget holds %d bytes, want %d", budget.bytes, BodyMax)
	}
	// A list of another state replaces the one kept, bytes and all.
	b.Get("/b/1", 2, 1)
	if budget.bytes != 0 {
		t.Errorf("budget holds %d bytes after the list changed, want 0", budget.bytes)
	}
	if l := Join([][]byte{make([]byte, BodyMax)}, 1, "", ",", "x"); l != nil {
		t.Errorf("Join made %d bytes, more than a list kept holds", len(l))
	}
	if got := string(Join([][]byte{[]byte("a"), nil, []byte("b"), []byte("c"), []byte("d"), nil}, 3, "<", ",", ">")); got != "<ab>,<cd>" {
		t.Errorf("Join = %q", got)
	}
}
