package patch

import (
	"bytes"
	"hash/maphash"
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
	// their bytes and where they were read.
	configTrees [64]ways[configTree, *configTree]
	// configTreesSeen are the hashes of values read once.
	configTreesSeen [1024]atomic.Uint64
	configTreeSeed  = maphash.MakeSeed()
)

// maxConfigTree bounds the bytes of a value kept, and so the memory
// configTrees holds (a few MiB at most); the values of a larger one are
// kept on their own.
const maxConfigTree = 4 << 10

// composite reads the object or array at d.i, depth levels down (an
// object's: the root's metadata when metadata), as the tree kept for its
// bytes if d keeps trees (jsonReader.trees) and one is kept.
func (d *jsonReader) composite(depth int, metadata bool) (any, bool) {
	if !d.trees || d.discard || d.shape == nil || depth < 2 { // the root: a whole configuration is rarely applied twice
		return d.compositeRead(depth, metadata)
	}
	// Where the value ends, looked for in the next maxConfigTree bytes
	// only: a larger value is not kept, and a look past them at every
	// level of a deep document would read it once per level.
	start := d.i
	p := jsonReader{data: d.data[:min(len(d.data), start+maxConfigTree)], i: start}
	if !p.pass() || p.i-start < 2 {
		return d.compositeRead(depth, metadata)
	}
	end := p.i
	raw := d.data[start:end]
	h := maphash.Bytes(configTreeSeed, raw) ^ uint64(depth)<<48 ^ uint64(d.where)<<56
	if metadata {
		h ^= 1 << 60
	}
	set, where := &configTrees[h%uint64(len(configTrees))], d.where
	is := func(t *configTree) bool {
		return t.depth == depth && t.where == where && t.metadata == metadata && bytes.Equal(t.raw, raw)
	}
	if t := set.find(is); t != nil {
		d.i = end
		d.shape = append(d.shape, t.shape...)
		d.respelled = d.respelled || t.respelled
		return t.tree, true
	}
	shapeAt, respelled := len(d.shape), d.respelled
	d.respelled = false
	v, ok := d.compositeRead(depth, metadata)
	own := d.respelled
	d.respelled = respelled || own
	if !ok || d.i != end || d.shape == nil {
		return v, ok
	}
	if seen := &configTreesSeen[h%uint64(len(configTreesSeen))]; seen.Swap(h) != h {
		return v, ok // read once: kept if read again
	}
	set.store(&configTree{
		raw: bytes.Clone(raw), depth: depth, where: where, metadata: metadata,
		tree: v, shape: bytes.Clone(d.shape[shapeAt:]), respelled: own,
	}, is)
	return v, ok
}

// compositeRead reads the object or array at d.i.
func (d *jsonReader) compositeRead(depth int, metadata bool) (any, bool) {
	if d.data[d.i] == '{' {
		return d.object(depth, metadata)
	}
	return d.array(depth)
}
