package watch

// A cache's state is a persistent B+tree of items in key order: a change
// copies the path from the root to the leaf it touches and shares the rest,
// so every published version stays valid and unchanged for the readers
// that still hold it, and none of them needs a lock. Each node counts the
// items under it, so the rank of a key (and with it a list's remaining
// count) costs O(log n).

// Node fan-out. 32 keeps the tree shallow (four levels hold a million
// items) and a path copy small (a few hundred bytes a level).
const (
	maxEntries = 32
	minEntries = maxEntries / 2 // every node but the root holds at least this many
)

// tree is one immutable version of a set of items ordered by key. The zero
// value is the empty tree.
type tree struct{ root *node }

// node is a leaf, which holds items, or an inner node, which holds children
// and the least key under each. It is never modified once a tree that
// reaches it has been returned.
type node struct {
	size   int      // items under the node
	items  []*Item  // a leaf's items, in key order
	kids   []*node  // an inner node's children, in key order
	firsts []string // firsts[i] is the least key under kids[i]
}

func newLeaf(items []*Item) *node { return &node{size: len(items), items: items} }

func newInner(kids []*node, firsts []string) *node {
	n := &node{kids: kids, firsts: firsts}
	for _, k := range kids {
		n.size += k.size
	}
	return n
}

func (n *node) leaf() bool { return n.kids == nil }

// entries is how many items (leaf) or children (inner) the node holds.
func (n *node) entries() int {
	if n.leaf() {
		return len(n.items)
	}
	return len(n.kids)
}

func (n *node) first() string {
	if n.leaf() {
		return n.items[0].Key
	}
	return n.firsts[0]
}

// search returns the index of the first item of a leaf whose key is not
// before key, and whether that item's key is key.
func (n *node) search(key string) (int, bool) {
	lo, hi := 0, len(n.items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.items[m].Key < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(n.items) && n.items[lo].Key == key
}

// child returns the index of the child of an inner node whose range holds
// key: the last one whose least key is not after key, or the first.
func (n *node) child(key string) int {
	lo, hi := 1, len(n.firsts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.firsts[m] <= key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// Len is the number of items.
func (t tree) Len() int {
	if t.root == nil {
		return 0
	}
	return t.root.size
}

// Get returns the item with key, or nil.
func (t tree) Get(key string) *Item {
	n := t.root
	if n == nil {
		return nil
	}
	for !n.leaf() {
		n = n.kids[n.child(key)]
	}
	if i, ok := n.search(key); ok {
		return n.items[i]
	}
	return nil
}

// Rank is the number of items whose keys are before key.
func (t tree) Rank(key string) int {
	n := t.root
	if n == nil {
		return 0
	}
	r := 0
	for !n.leaf() {
		i := n.child(key)
		for _, k := range n.kids[:i] {
			r += k.size
		}
		n = n.kids[i]
	}
	i, _ := n.search(key)
	return r + i
}

// RankAfter is the number of items whose keys are before key or start with
// it: with Rank, how many keys there are under a prefix.
func (t tree) RankAfter(prefix string) int {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff { // the least string after every one with the prefix
			return t.Rank(prefix[:i] + string([]byte{prefix[i] + 1}))
		}
	}
	return t.Len()
}

// Ascend calls fn with each item whose key is not before from, in key
// order, until fn returns false.
func (t tree) Ascend(from string, fn func(*Item) bool) {
	if t.root != nil {
		t.root.ascend(from, fn)
	}
}

func (n *node) ascend(from string, fn func(*Item) bool) bool {
	if n.leaf() {
		i, _ := n.search(from)
		for _, it := range n.items[i:] {
			if !fn(it) {
				return false
			}
		}
		return true
	}
	i := n.child(from)
	if !n.kids[i].ascend(from, fn) {
		return false
	}
	for _, k := range n.kids[i+1:] {
		if !k.each(fn) {
			return false
		}
	}
	return true
}

func (n *node) each(fn func(*Item) bool) bool {
	for _, it := range n.items {
		if !fn(it) {
			return false
		}
	}
	for _, k := range n.kids {
		if !k.each(fn) {
			return false
		}
	}
	return true
}

// Set returns the tree with it in place of the item with the same key, or
// added, and the item it replaced (nil if none).
func (t tree) Set(it *Item) (tree, *Item) {
	if t.root == nil {
		return tree{newLeaf([]*Item{it})}, nil
	}
	n, split, prev := t.root.set(it)
	if split != nil {
		n = newInner([]*node{n, split}, []string{n.first(), split.first()})
	}
	return tree{n}, prev
}

// set returns the node with it set, split in two if it outgrew maxEntries.
func (n *node) set(it *Item) (_, split *node, prev *Item) {
	if n.leaf() {
		i, found := n.search(it.Key)
		if found {
			items := clone(n.items)
			prev, items[i] = items[i], it
			return newLeaf(items), nil, prev
		}
		items := make([]*Item, len(n.items)+1)
		copy(items, n.items[:i])
		items[i] = it
		copy(items[i+1:], n.items[i:])
		if len(items) <= maxEntries {
			return newLeaf(items), nil, nil
		}
		h := len(items) / 2
		return newLeaf(clone(items[:h])), newLeaf(clone(items[h:])), nil
	}
	i := n.child(it.Key)
	kid, kidSplit, prev := n.kids[i].set(it)
	var kids []*node
	var firsts []string
	if kidSplit == nil {
		kids, firsts = clone(n.kids), clone(n.firsts)
	} else {
		kids = make([]*node, len(n.kids)+1)
		copy(kids, n.kids[:i+1])
		copy(kids[i+2:], n.kids[i+1:])
		kids[i+1] = kidSplit
		firsts = make([]string, len(n.firsts)+1)
		copy(firsts, n.firsts[:i+1])
		copy(firsts[i+2:], n.firsts[i+1:])
		firsts[i+1] = kidSplit.first()
	}
	kids[i], firsts[i] = kid, kid.first()
	if len(kids) <= maxEntries {
		return newInner(kids, firsts), nil, prev
	}
	h := len(kids) / 2
	return newInner(clone(kids[:h]), clone(firsts[:h])), newInner(clone(kids[h:]), clone(firsts[h:])), prev
}

// Delete returns the tree without the item with key, and that item (nil,
// and the same tree, if there was none).
func (t tree) Delete(key string) (tree, *Item) {
	if t.root == nil {
		return t, nil
	}
	n, prev := t.root.delete(key)
	switch {
	case prev == nil:
		return t, nil
	case n.size == 0:
		return tree{}, prev
	case !n.leaf() && len(n.kids) == 1:
		n = n.kids[0] // the root's last two children merged
	}
	return tree{n}, prev
}

// delete returns the node without key; it may hold fewer than minEntries,
// which its parent mends.
func (n *node) delete(key string) (*node, *Item) {
	if n.leaf() {
		i, found := n.search(key)
		if !found {
			return n, nil
		}
		items := make([]*Item, len(n.items)-1)
		copy(items, n.items[:i])
		copy(items[i:], n.items[i+1:])
		return newLeaf(items), n.items[i]
	}
	i := n.child(key)
	kid, prev := n.kids[i].delete(key)
	if prev == nil {
		return n, nil
	}
	kids, firsts := clone(n.kids), clone(n.firsts)
	kids[i] = kid
	if kid.entries() >= minEntries || len(kids) == 1 {
		if kid.size > 0 {
			firsts[i] = kid.first()
		}
		return newInner(kids, firsts), prev
	}
	// The child is short: merge it with a neighbour, or if both do not fit
	// in one node, share their entries evenly.
	lo := max(i-1, 0)
	both := concat(kids[lo], kids[lo+1])
	if both.entries() <= maxEntries {
		kids = append(kids[:lo+1], kids[lo+2:]...)
		firsts = append(firsts[:lo+1], firsts[lo+2:]...)
		kids[lo], firsts[lo] = both, both.first()
		return newInner(clone(kids), clone(firsts)), prev
	}
	a, b := halve(both)
	kids[lo], kids[lo+1] = a, b
	firsts[lo], firsts[lo+1] = a.first(), b.first()
	return newInner(kids, firsts), prev
}

// concat is one node with the entries of a then b, siblings at one depth.
func concat(a, b *node) *node {
	if a.leaf() {
		return newLeaf(append(clone(a.items), b.items...))
	}
	return newInner(append(clone(a.kids), b.kids...), append(clone(a.firsts), b.firsts...))
}

// halve splits n's entries into two nodes of (nearly) equal length.
func halve(n *node) (*node, *node) {
	h := n.entries() / 2
	if n.leaf() {
		return newLeaf(clone(n.items[:h])), newLeaf(clone(n.items[h:]))
	}
	return newInner(clone(n.kids[:h]), clone(n.firsts[:h])), newInner(clone(n.kids[h:]), clone(n.firsts[h:]))
}

// buildTree makes a tree of items, which are in strictly increasing key
// order, in O(n): full nodes, level by level, as a relist wants.
func buildTree(items []*Item) tree {
	if len(items) == 0 {
		return tree{}
	}
	var level []*node
	runs(len(items), func(lo, hi int) { level = append(level, newLeaf(clone(items[lo:hi]))) })
	for len(level) > 1 {
		var up []*node
		runs(len(level), func(lo, hi int) {
			kids := clone(level[lo:hi])
			firsts := make([]string, len(kids))
			for i, k := range kids {
				firsts[i] = k.first()
			}
			up = append(up, newInner(kids, firsts))
		})
		level = up
	}
	return tree{level[0]}
}

// runs splits n entries into the fewest runs of at most maxEntries whose
// lengths differ by at most one, so each holds at least minEntries when
// there is more than one.
func runs(n int, fn func(lo, hi int)) {
	k := (n + maxEntries - 1) / maxEntries
	for j := range k {
		fn(j*n/k, (j+1)*n/k)
	}
}

// clone copies s into a slice of its exact length: nodes share no backing
// arrays, so a node that is replaced frees all of its memory.
func clone[S ~[]E, E any](s S) S { return append(S(make([]E, 0, len(s))), s...) }
