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

// A node and the array of its entries are one allocation, a block: a
// path copy allocates one block a level, where a node and its slice
// apart were two, a dozen allocations a write in a cache of a hundred
// thousand items. A block's array is the smallest of a few sizes (8, 16,
// 24 or 32 entries) that holds the node's entries, so a node holds room
// for at most 7 entries it does not use. A node's slices are as long as
// their capacity, so that no append can write into an array a published
// node holds.
//
// An inner node's least keys are an array of their own, which the copies
// of the node share until one of its least keys changes: a write that
// replaces an item (an update, the most common write) or adds one after a
// leaf's first changes no least key, so its path copy copies the children
// of each node on the path but none of their keys, half of an inner
// node's bytes and of the pointers the garbage collector must be told of
// as they are copied. Every other array belongs to one node only, so a
// node that is replaced frees it.

// newLeaf is a leaf of a copy of items, at most maxEntries of them.
func newLeaf(items []*Item) *node {
	n := leafBlock(len(items))
	copy(n.items, items)
	return n
}

// newInner is an inner node of copies of kids and firsts, at most
// maxEntries of them.
func newInner(kids []*node, firsts []string) *node {
	n := innerBlock(len(kids))
	copy(n.kids, kids)
	n.firsts = ownFirsts(firsts)
	for _, k := range kids {
		n.size += k.size
	}
	return n
}

// The blocks of leaves and inner nodes, by the entries they have room for.
type (
	leaf8 struct {
		n node
		a [8]*Item
	}
	leaf16 struct {
		n node
		a [16]*Item
	}
	leaf24 struct {
		n node
		a [24]*Item
	}
	leaf32 struct {
		n node
		a [maxEntries]*Item
	}
	inner8 struct {
		n node
		k [8]*node
	}
	inner16 struct {
		n node
		k [16]*node
	}
	inner24 struct {
		n node
		k [24]*node
	}
	inner32 struct {
		n node
		k [maxEntries]*node
	}
)

// leafBlock is a leaf of n entries to fill, and innerBlock an inner node
// of n (its size to count).
func leafBlock(n int) *node {
	var nd *node
	var items []*Item
	switch {
	case n <= 8:
		b := new(leaf8)
		nd, items = &b.n, b.a[:]
	case n <= 16:
		b := new(leaf16)
		nd, items = &b.n, b.a[:]
	case n <= 24:
		b := new(leaf24)
		nd, items = &b.n, b.a[:]
	default:
		b := new(leaf32)
		nd, items = &b.n, b.a[:]
	}
	nd.items, nd.size = items[:n:n], n
	return nd
}

func innerBlock(n int) *node {
	var nd *node
	var kids []*node
	switch {
	case n <= 8:
		b := new(inner8)
		nd, kids = &b.n, b.k[:]
	case n <= 16:
		b := new(inner16)
		nd, kids = &b.n, b.k[:]
	case n <= 24:
		b := new(inner24)
		nd, kids = &b.n, b.k[:]
	default:
		b := new(inner32)
		nd, kids = &b.n, b.k[:]
	}
	nd.kids = kids[:n:n]
	return nd
}

// clone is a copy of n, to change before it is published; an inner
// node's copy shares its least keys (see setFirst).
func (n *node) clone() *node {
	if n.leaf() {
		return newLeaf(n.items)
	}
	m := innerBlock(len(n.kids))
	copy(m.kids, n.kids)
	m.firsts = n.firsts
	m.size = n.size
	return m
}

// setFirst makes key the least key of child i of m, a clone not yet
// published, copying the least keys it shares only if that one changes.
func (m *node) setFirst(i int, key string) {
	if m.firsts[i] == key {
		return
	}
	m.firsts = ownFirsts(m.firsts)
	m.firsts[i] = key
}

// ownFirsts is a copy of firsts, as long as its capacity.
func ownFirsts(firsts []string) []string {
	c := make([]string, len(firsts))
	copy(c, firsts)
	return c
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
// The entries of a node that grows are gathered on the stack, then copied
// into the one or two blocks that hold them.
func (n *node) set(it *Item) (_, split *node, prev *Item) {
	if n.leaf() {
		i, found := n.search(it.Key)
		if found {
			m := n.clone()
			prev, m.items[i] = m.items[i], it
			return m, nil, prev
		}
		var buf [maxEntries + 1]*Item
		items := append(append(append(buf[:0], n.items[:i]...), it), n.items[i:]...)
		if len(items) <= maxEntries {
			return newLeaf(items), nil, nil
		}
		h := len(items) / 2
		return newLeaf(items[:h]), newLeaf(items[h:]), nil
	}
	i := n.child(it.Key)
	old := n.kids[i]
	kid, kidSplit, prev := old.set(it)
	if kidSplit == nil {
		m := n.clone()
		m.kids[i] = kid
		m.setFirst(i, kid.first())
		m.size += kid.size - old.size
		return m, nil, prev
	}
	var kidsBuf [maxEntries + 1]*node
	var firstsBuf [maxEntries + 1]string
	kids := append(append(append(kidsBuf[:0], n.kids[:i]...), kid, kidSplit), n.kids[i+1:]...)
	firsts := append(append(append(firstsBuf[:0], n.firsts[:i]...), kid.first(), kidSplit.first()), n.firsts[i+1:]...)
	if len(kids) <= maxEntries {
		return newInner(kids, firsts), nil, prev
	}
	h := len(kids) / 2
	return newInner(kids[:h], firsts[:h]), newInner(kids[h:], firsts[h:]), prev
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
		var buf [maxEntries]*Item
		return newLeaf(append(append(buf[:0], n.items[:i]...), n.items[i+1:]...)), n.items[i]
	}
	i := n.child(key)
	old := n.kids[i]
	kid, prev := old.delete(key)
	if prev == nil {
		return n, nil
	}
	if kid.entries() >= minEntries || len(n.kids) == 1 {
		m := n.clone()
		m.kids[i] = kid
		if kid.size > 0 {
			m.setFirst(i, kid.first())
		}
		m.size += kid.size - old.size
		return m, prev
	}
	// The child is short: merge it with a neighbour, or if both do not fit
	// in one node, share their entries evenly.
	lo := max(i-1, 0)
	a, b := n.kids[lo], n.kids[lo+1]
	if lo == i {
		a = kid
	} else {
		b = kid
	}
	a, b = rebalance(a, b)
	var kidsBuf [maxEntries]*node
	var firstsBuf [maxEntries]string
	kids := append(append(kidsBuf[:0], n.kids[:lo]...), a)
	firsts := append(append(firstsBuf[:0], n.firsts[:lo]...), a.first())
	if b != nil {
		kids, firsts = append(kids, b), append(firsts, b.first())
	}
	kids = append(kids, n.kids[lo+2:]...)
	firsts = append(firsts, n.firsts[lo+2:]...)
	return newInner(kids, firsts), prev
}

// rebalance is siblings a and b, at one depth, one of them short: one node
// of the entries of both (and a nil b) when they fit in one, else two that
// share them evenly.
func rebalance(a, b *node) (*node, *node) {
	total := a.entries() + b.entries()
	h := total
	if total > maxEntries {
		h = total / 2
	}
	if a.leaf() {
		var buf [2 * maxEntries]*Item
		items := append(append(buf[:0], a.items...), b.items...)
		if h == total {
			return newLeaf(items), nil
		}
		return newLeaf(items[:h]), newLeaf(items[h:])
	}
	var kidsBuf [2 * maxEntries]*node
	var firstsBuf [2 * maxEntries]string
	kids := append(append(kidsBuf[:0], a.kids...), b.kids...)
	firsts := append(append(firstsBuf[:0], a.firsts...), b.firsts...)
	if h == total {
		return newInner(kids, firsts), nil
	}
	return newInner(kids[:h], firsts[:h]), newInner(kids[h:], firsts[h:])
}

// buildTree makes a tree of items, which are in strictly increasing key
// order, in O(n): full nodes, level by level, as a relist wants.
func buildTree(items []*Item) tree {
	if len(items) == 0 {
		return tree{}
	}
	var level []*node
	runs(len(items), func(lo, hi int) { level = append(level, newLeaf(items[lo:hi])) })
	for len(level) > 1 {
		var up []*node
		runs(len(level), func(lo, hi int) {
			kids := level[lo:hi]
			var firsts [maxEntries]string
			for i, k := range kids {
				firsts[i] = k.first()
			}
			up = append(up, newInner(kids, firsts[:len(kids)]))
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
