package watch

// The tree is the cache's unexported machinery; its tests are white-box so
// they can check its invariants after every operation.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkTree fails the test unless t is a well-formed tree: keys strictly
// increase, every leaf is at one depth, each node's size and least keys are
// right, and every node but the root holds minEntries to maxEntries.
func checkTree(tb testing.TB, t tree) {
	tb.Helper()
	if t.root == nil {
		return
	}
	leafDepth := -1
	var last *string
	var walk func(n *node, depth int, isRoot bool) int
	walk = func(n *node, depth int, isRoot bool) int {
		if e := n.entries(); e > maxEntries || !isRoot && e < minEntries || isRoot && e == 0 {
			tb.Fatalf("node at depth %d holds %d entries", depth, e)
		}
		if n.leaf() {
			if leafDepth < 0 {
				leafDepth = depth
			} else if depth != leafDepth {
				tb.Fatalf("leaves at depths %d and %d", leafDepth, depth)
			}
			for _, it := range n.items {
				if last != nil && *last >= it.Key {
					tb.Fatalf("key %q after %q", it.Key, *last)
				}
				last = &it.Key
			}
			if n.size != len(n.items) {
				tb.Fatalf("leaf size %d, holds %d", n.size, len(n.items))
			}
			return n.size
		}
		if isRoot && len(n.kids) < 2 {
			tb.Fatalf("inner root with %d children", len(n.kids))
		}
		if len(n.firsts) != len(n.kids) || n.items != nil {
			tb.Fatalf("inner node with %d children, %d first keys, %d items", len(n.kids), len(n.firsts), len(n.items))
		}
		size := 0
		for i, k := range n.kids {
			if k.first() != n.firsts[i] {
				tb.Fatalf("first key of child %d is %q, parent says %q", i, k.first(), n.firsts[i])
			}
			size += walk(k, depth+1, false)
		}
		if n.size != size {
			tb.Fatalf("inner size %d, children hold %d", n.size, size)
		}
		return size
	}
	walk(t.root, 0, true)
}

// model is what a tree should hold: a map and its sorted keys.
type model struct {
	items map[string]*Item
	keys  []string
}

func newModel() *model { return &model{items: map[string]*Item{}} }

func (m *model) set(it *Item) *Item {
	prev := m.items[it.Key]
	if prev == nil {
		i, _ := slices.BinarySearch(m.keys, it.Key)
		m.keys = slices.Insert(m.keys, i, it.Key)
	}
	m.items[it.Key] = it
	return prev
}

func (m *model) delete(key string) *Item {
	prev := m.items[key]
	if prev != nil {
		i, _ := slices.BinarySearch(m.keys, key)
		m.keys = slices.Delete(m.keys, i, i+1)
		delete(m.items, key)
	}
	return prev
}

func (m *model) clone() *model {
	c := newModel()
	for k, it := range m.items {
		c.items[k] = it
	}
	c.keys = slices.Clone(m.keys)
	return c
}

func (m *model) rank(key string) int {
	i, _ := slices.BinarySearch(m.keys, key)
	return i
}

// checkMatches fails the test unless t holds exactly what m does, read
// every way the cache reads it.
func checkMatches(tb testing.TB, t tree, m *model, probes []string) {
	tb.Helper()
	checkTree(tb, t)
	if t.Len() != len(m.keys) {
		tb.Fatalf("Len = %d, want %d", t.Len(), len(m.keys))
	}
	var got []string
	t.Ascend("", func(it *Item) bool {
		if m.items[it.Key] != it {
			tb.Fatalf("item %q is not the model's", it.Key)
		}
		got = append(got, it.Key)
		return true
	})
	if !slices.Equal(got, m.keys) {
		tb.Fatalf("Ascend = %q, want %q", got, m.keys)
	}
	for _, p := range probes {
		if it := t.Get(p); it != m.items[p] {
			tb.Fatalf("Get(%q) = %v, want %v", p, it, m.items[p])
		}
		if r, want := t.Rank(p), m.rank(p); r != want {
			tb.Fatalf("Rank(%q) = %d, want %d", p, r, want)
		}
		want := 0
		for _, k := range m.keys {
			if k < p || strings.HasPrefix(k, p) {
				want++
			}
		}
		if r := t.RankAfter(p); r != want {
			tb.Fatalf("RankAfter(%q) = %d, want %d", p, r, want)
		}
		// Ascend from p, stopping after three.
		var from []string
		t.Ascend(p, func(it *Item) bool {
			from = append(from, it.Key)
			return len(from) < 3
		})
		i := m.rank(p)
		if want := m.keys[i:min(i+3, len(m.keys))]; !slices.Equal(from, want) {
			tb.Fatalf("Ascend(%q) = %q, want %q", p, from, want)
		}
	}
}

func item(key string, rev int64) *Item { return &Item{Key: key, Revision: rev} }

func TestTree(t *testing.T) {
	keys := func(n int) []string {
		var ks []string
		for i := range n {
			ks = append(ks, fmt.Sprintf("k%05d", i))
		}
		return ks
	}
	tests := []struct {
		name    string
		build   []string // built with buildTree
		set     []string // then set one by one
		deleted []string // then deleted one by one
	}{
		{name: "Empty"},
		{name: "One", set: []string{"a"}},
		{name: "OneDeleted", set: []string{"a"}, deleted: []string{"a"}},
		{name: "DeleteAbsent", set: []string{"a", "c"}, deleted: []string{"b", "", "d"}},
		{name: "Replace", set: []string{"a", "b", "a", "b"}},
		{name: "LeafSplits", set: keys(maxEntries + 1)},
		{name: "Descending", set: reversed(keys(5000))},
		{name: "Ascending", set: keys(5000)},
		{name: "DeleteAllAscending", set: keys(3000), deleted: keys(3000)},
		{name: "DeleteAllDescending", set: keys(3000), deleted: reversed(keys(3000))},
		{name: "Build", build: keys(10000)},
		{name: "BuildSmall", build: keys(maxEntries - 1)},
		{name: "BuildOneOver", build: keys(maxEntries + 1)},
		{name: "BuildThreeLevels", build: keys(maxEntries*maxEntries + 1)},
		{name: "BuildThenInsertBetween", build: keys(2000), set: []string{"k00000a", "k00999a", "k01999a", "a", "z"}},
		{name: "BuildThenDeleteEveryOther", build: keys(2000), deleted: everyOther(keys(2000))},
		{name: "BuildThenDeleteAll", build: keys(2000), deleted: keys(2000)},
		{name: "EmptyKey", set: []string{"", "a", "\xff", "\xff\xff"}, deleted: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel()
			var built []*Item
			for _, k := range tt.build {
				built = append(built, item(k, 1))
				m.set(built[len(built)-1])
			}
			tr := buildTree(built)
			probes := []string{"", "a", "k", "k0", "k00001", "k01000", "k1", "z", "\xff", "\xff\xff\xff"}
			checkMatches(t, tr, m, probes)
			for i, k := range tt.set {
				it := item(k, int64(i+2))
				var prev *Item
				tr, prev = tr.Set(it)
				if want := m.set(it); prev != want {
					t.Fatalf("Set(%q) replaced %v, want %v", k, prev, want)
				}
				if i%37 == 0 || tr.Len() < 3*maxEntries {
					checkTree(t, tr)
				}
			}
			checkMatches(t, tr, m, probes)
			for i, k := range tt.deleted {
				var prev *Item
				tr, prev = tr.Delete(k)
				if want := m.delete(k); prev != want {
					t.Fatalf("Delete(%q) = %v, want %v", k, prev, want)
				}
				if i%37 == 0 || tr.Len() < 3*maxEntries {
					checkTree(t, tr)
				}
			}
			checkMatches(t, tr, m, append(probes, tt.deleted...))
		})
	}
}

func reversed(s []string) []string {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

func everyOther(s []string) []string {
	var out []string
	for i := 0; i < len(s); i += 2 {
		out = append(out, s[i])
	}
	return out
}

// TestTreeRandom runs random sets and deletes against the tree and the
// model side by side, and checks that every earlier version is still
// exactly what it was when it was made.
func TestTreeRandom(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			keySpace := []int{50, 500, 5000}[seed%3]
			key := func() string { return fmt.Sprintf("ns%d/%04d", r.IntN(4), r.IntN(keySpace)) }
			type version struct {
				tree  tree
				model *model
			}
			var kept []version
			tr, m := tree{}, newModel()
			if seed%2 == 1 { // start from a relist
				for range keySpace {
					m.set(item(key(), 0))
				}
				var items []*Item
				for _, k := range m.keys {
					items = append(items, m.items[k])
				}
				tr = buildTree(items)
			}
			for op := range 4000 {
				k := key()
				if r.IntN(3) == 0 {
					var prev *Item
					tr, prev = tr.Delete(k)
					if want := m.delete(k); prev != want {
						t.Fatalf("op %d: Delete(%q) = %v, want %v", op, k, prev, want)
					}
				} else {
					it := item(k, int64(op))
					var prev *Item
					tr, prev = tr.Set(it)
					if want := m.set(it); prev != want {
						t.Fatalf("op %d: Set(%q) replaced %v, want %v", op, k, prev, want)
					}
				}
				if op%200 == 0 {
					checkMatches(t, tr, m, []string{k, key(), "ns1/", "ns2/00", "ns3/0499"})
					kept = append(kept, version{tr, m.clone()})
				}
			}
			checkMatches(t, tr, m, []string{"", "ns0/", "ns3/", "ns4/"})
			for i, v := range kept {
				t.Run(fmt.Sprint("version=", i), func(t *testing.T) {
					checkMatches(t, v.tree, v.model, []string{"", "ns0/", "ns1/0100", "ns2/"})
				})
			}
		})
	}
}

// FuzzTree decodes the input as operations on a tree and a model, three
// bytes each: a key (one of 2,048, so that operations meet), then whether to
// set or delete it (the low two bits: 0 deletes) and on how many keys from
// there (the other six, plus one), so that a short input still grows the
// tree to three levels. The version after each operation whose third byte
// has bit 2 set is kept, and checked at the end against the model as it was.
func FuzzTree(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 1, 1, 0, 2, 0})
	f.Add([]byte{0, 0, 0xfd, 1, 0, 0xfd, 2, 0, 0xff, 0, 10, 0x80, 3, 0, 0xfd})
	f.Add([]byte(strings.Repeat("\x01\x00\xfd\x00\x80\xfc\x02\x10\x01", 20)))
	probes := []string{"", "0000", "01", "0400", "07ff", "0800", "1"}
	f.Fuzz(func(t *testing.T, ops []byte) {
		tr, m := tree{}, newModel()
		var old tree
		var oldModel *model
		for i := 0; i+2 < len(ops); i += 3 {
			at := (int(ops[i])<<8 | int(ops[i+1])) % 2048
			del, n := ops[i+2]&3 == 0, int(ops[i+2]>>2)+1
			for k := at; k < min(at+n, 2048); k++ {
				key := fmt.Sprintf("%04x", k)
				if del {
					var prev *Item
					tr, prev = tr.Delete(key)
					if want := m.delete(key); prev != want {
						t.Fatalf("Delete(%q) = %v, want %v", key, prev, want)
					}
					continue
				}
				it := item(key, int64(i))
				var prev *Item
				tr, prev = tr.Set(it)
				if want := m.set(it); prev != want {
					t.Fatalf("Set(%q) replaced %v, want %v", key, prev, want)
				}
			}
			if tr.Len() <= 4*maxEntries { // later, checkMatches checks the whole tree once
				checkTree(t, tr)
			}
			if ops[i+2]&4 != 0 {
				old, oldModel = tr, m.clone()
			}
		}
		checkMatches(t, tr, m, probes)
		if oldModel != nil {
			checkMatches(t, old, oldModel, probes)
		}
	})
}

// BenchmarkTreeSet is one write's path copy in a cache of 100,000 items:
// a create (a new key after the others, as generated names make) and an
// update (a key in place).
func BenchmarkTreeSet(b *testing.B) {
	const n = 100000
	items := make([]*Item, n)
	for i := range items {
		items[i] = item(fmt.Sprintf("k%07d", i), int64(i+1))
	}
	b.Run("create", func(b *testing.B) {
		t := buildTree(items)
		i := n
		b.ReportAllocs()
		for b.Loop() {
			t, _ = t.Set(item(fmt.Sprintf("k%07d", i), int64(i+1)))
			i++
		}
	})
	b.Run("update", func(b *testing.B) {
		t := buildTree(items)
		it := item("k0050000", 1)
		b.ReportAllocs()
		for b.Loop() {
			t, _ = t.Set(it)
		}
	})
}

// TestTreeSharesLeastKeys checks that a write which changes no node's
// least key (an update in place, or a key added after a leaf's first)
// shares the least keys of every inner node it copies with the version
// before it, and that one which does change them copies them: the version
// before stays what it was either way.
func TestTreeSharesLeastKeys(t *testing.T) {
	// Added in order, the leaves and inner nodes are about half full:
	// there is room for a key in the middle without a split.
	var old tree
	m := newModel()
	for i := range 3000 {
		it := item(fmt.Sprintf("k%05d", 2*i), 1)
		old, _ = old.Set(it)
		m.set(it)
	}
	mid := old.root
	for depth := 0; !mid.leaf(); depth++ {
		if depth == 2 {
			t.Fatal("the tree is not three levels deep")
		}
		mid = mid.kids[len(mid.kids)/2]
	}
	if mid.entries() == maxEntries {
		t.Fatal("the middle leaf is full")
	}
	first := mid.items[0].Key
	// sharesPath says every inner node on key's path in b is a copy of
	// a's that shares its least keys.
	sharesPath := func(a, b tree, key string) bool {
		x, y := a.root, b.root
		for !x.leaf() {
			if x == y || &x.firsts[0] != &y.firsts[0] {
				return false
			}
			x, y = x.kids[x.child(key)], y.kids[y.child(key)]
		}
		return true
	}
	for _, tt := range []struct {
		name, key string
		shares    bool
	}{
		{"Update", first, true},
		{"UpdateLast", m.keys[len(m.keys)-1], true},
		{"AddAfterFirst", first + "a", true},
		{"AddFirstOfAll", "a", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr, _ := old.Set(item(tt.key, 2))
			checkTree(t, tr)
			if got := sharesPath(old, tr, tt.key); got != tt.shares {
				t.Errorf("Set(%q) shares the path's least keys: %v, want %v", tt.key, got, tt.shares)
			}
			checkMatches(t, old, m, []string{"", tt.key, first, "z"})
		})
	}
	t.Run("DeleteFirstOfLeaf", func(t *testing.T) {
		tr, prev := old.Delete(first)
		if prev == nil {
			t.Fatal("Delete found nothing")
		}
		checkTree(t, tr)
		if sharesPath(old, tr, first) {
			t.Error("Delete of a leaf's first key shares the path's least keys")
		}
		checkMatches(t, old, m, []string{"", first, "z"})
	})
}
