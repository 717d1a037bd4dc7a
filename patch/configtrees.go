package patch

import (
	"bytes"
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// A client applies one configuration again and again with a value or two
// changed (kubectl apply of one file, a controller's apply of the object it
// manages), so most objects and lists of a configuration are, byte for
// byte, those of the one it applied before: its metadata, its labels, its
// list of ports. The reader of configurations (ParseConfiguration) keeps
// the trees it made of them by their bytes, and reads a value whose bytes
// it has read before as that tree, without making its maps again (they are
// most of what reading a configuration allocates). A configuration's tree
// is never changed (Configuration), so configurations may share its parts.
// A value is kept the second time it is read, so that a value that is
// never read again (a spec whose size changes at every apply) costs no
// copy of its bytes.

// configTree is the tree the reader made of raw, read depth levels down at
// where (and as the root's metadata, or not): what the same bytes read
// there again make.
type configTree struct {
	raw       []byte
	depth     int
	where     shapePlace
	metadata  bool
	tree      any
	shape     []byte // what the reader wrote of raw into the document's shape
	respelled bool   // raw alone marks its document respelled
	wayStamp
}

var (
	// configTrees are the values kept, in sets of ways by a hash of
	// their first bytes (configTreeKey) and where they were read.
	configTrees [64]ways[configTree, *configTree]
	// configTreesSeen are the hashes of values read once: of their
	// whole bytes and where they were read.
	configTreesSeen [1024]atomic.Uint64
	configTreeSeed  = maphash.MakeSeed()
)

// maxConfigTree bounds the bytes of a value kept, and so the memory
// configTrees holds (a few MiB at most); the values of a larger one are
// kept on their own.
const maxConfigTree = 4 << 10

// configTreeKey is how many bytes from a value's start choose its set of
// configTrees: a kept value is looked for before the reader knows where
// the value ends (finding that is a pass over its bytes, at every level
// of the document), as the one kept whose bytes the document has at d.i,
// and the set is chosen by what the reader has there: the value's first
// bytes, up to its first closing bracket. Values that begin alike (specs
// of one kind) share a set; 64 bytes reach past their first names.
const configTreeKey = 64

// composite reads the object or array at d.i, depth levels down (an
// object's: the root's metadata when metadata), as the tree kept for its
// bytes if d keeps trees (jsonReader.trees) and one is kept.
func (d *jsonReader) composite(depth int, metadata bool) (any, bool) {
	if !d.trees || d.discard || d.shape == nil || depth < 2 { // the root: a whole configuration is rarely applied twice
		return d.compositeRead(depth, metadata)
	}
	start, where := d.i, d.where
	// Where the value is (its depth, whether a list's item, whether the
	// root's metadata), spread over the hash's bits (the set is its low
	// ones): equal bytes read at places the reader treats apart are two
	// values kept. Equal bytes at places alike (a selector and the labels
	// it selects, both three levels down) may be one tree: never changed,
	// and decoded into copies, it serves both.
	place := uint64(depth)<<8 | uint64(where)<<1
	if metadata {
		place |= 1
	}
	place = bits.RotateLeft64(place*0x9e3779b97f4a7c15, 32)
	// The key is the value's own bytes, never what follows it: up to its
	// first closing bracket (a value ends at one) within configTreeKey.
	key := d.data[start:min(len(d.data), start+configTreeKey)]
	if j := bytes.IndexByte(key, '}'); j >= 0 {
		key = key[:j+1]
	}
	if j := bytes.IndexByte(key, ']'); j >= 0 {
		key = key[:j+1]
	}
	h := maphash.Bytes(configTreeSeed, key) ^ place
	set := &configTrees[h%uint64(len(configTrees))]
	// A JSON value ends where its bytes say: if the document has a kept
	// value's bytes at d.i, the value at d.i is that one.
	if t := set.find(func(t *configTree) bool {
		return t.depth == depth && t.where == where && t.metadata == metadata && bytes.HasPrefix(d.data[start:], t.raw)
	}); t != nil {
		d.i += len(t.raw)
		d.shape = append(d.shape, t.shape...)
		d.respelled = d.respelled || t.respelled
		return t.tree, true
	}
	shapeAt, respelled := len(d.shape), d.respelled
	d.respelled = false
	v, ok := d.compositeRead(depth, metadata)
	own := d.respelled
	d.respelled = respelled || own
	raw := d.data[start:d.i]
	if !ok || d.shape == nil || len(raw) > maxConfigTree {
		return v, ok
	}
	// Kept the second time its bytes are read (at this place), not the
	// second time a value with its first bytes is.
	whole := maphash.Bytes(configTreeSeed, raw) ^ place
	if seen := &configTreesSeen[whole%uint64(len(configTreesSeen))]; seen.Swap(whole) != whole {
		return v, ok // read once: kept if read again
	}
	t := &configTree{
		raw: bytes.Clone(raw), depth: depth, where: where, metadata: metadata,
		tree: v, shape: bytes.Clone(d.shape[shapeAt:]), respelled: own,
	}
	set.store(t, func(old *configTree) bool {
		return old.depth == depth && old.where == where && old.metadata == metadata && bytes.Equal(old.raw, raw)
	})
	return v, ok
}

// compositeRead reads the object or array at d.i.
func (d *jsonReader) compositeRead(depth int, metadata bool) (any, bool) {
	if d.data[d.i] == '{' {
		return d.object(depth, metadata)
	}
	return d.array(depth)
}
