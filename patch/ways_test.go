package patch

import "testing"

type wayEntryOf struct {
	key string
	wayStamp
}

// TestWays: a set keeps as many keys as it has ways, each found; a key
// stored again takes its own way; one more key replaces the oldest stored.
func TestWays(t *testing.T) {
	var w ways[wayEntryOf, *wayEntryOf]
	put := func(key string) *wayEntryOf {
		e := &wayEntryOf{key: key}
		w.store(e, func(old *wayEntryOf) bool { return old.key == key })
		return e
	}
	get := func(key string) *wayEntryOf {
		return w.find(func(e *wayEntryOf) bool { return e.key == key })
	}
	keys := []string{"a", "b", "c", "d"}
	if len(keys) != cacheWays {
		t.Fatalf("the test fills %d ways of %d", len(keys), cacheWays)
	}
	for _, k := range keys {
		put(k)
	}
	for _, k := range keys {
		if get(k) == nil {
			t.Errorf("%s not found in a set of %d ways holding %d keys", k, cacheWays, len(keys))
		}
	}
	again := put("b") // in b's way: a, the oldest, stays
	if get("b") != again {
		t.Error("b stored again is not the entry found")
	}
	for _, k := range []string{"a", "c", "d"} {
		if get(k) == nil {
			t.Errorf("%s lost when b was stored again", k)
		}
	}
	put("e")
	if get("a") != nil {
		t.Error("a, the oldest stored, kept when e came")
	}
	for _, k := range []string{"b", "c", "d", "e"} {
		if get(k) == nil {
			t.Errorf("%s lost when e came in place of a", k)
		}
	}
	if get("f") != nil {
		t.Error("f found, never stored")
	}
}
