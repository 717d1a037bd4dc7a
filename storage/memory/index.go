package memory

import (
	"iter"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/storage"
)

// version is one write of one key. A tombstone (the key was deleted at
// rev) has no create: revisions start above 0.
type version struct {
	rev    int64 // the write's revision: the version's ModRevision
	create int64 // CreateRevision of the key's current life; 0 for a tombstone
	value  []byte
}

func (v version) deleted() bool { return v.create == 0 }

func (v version) keyValue(key string) storage.KeyValue {
	return storage.KeyValue{Key: key, Value: v.value, CreateRevision: v.create, ModRevision: v.rev}
}

// record is a key and the versions of it reads in the window may still see:
// the latest, and the older ones (oldest first) behind a pointer that is
// nil for a key written once since the window's start, as most keys are.
// So a record is 64 bytes, one allocation: with every version in a slice
// it was two of 48, 10 MB of a hundred thousand widgets' 130 MB of live
// heap.
type record struct {
	key   string
	last  version
	older *[]version
}

func (r *record) latest() version { return r.last }

// live reports whether the key exists at the latest revision.
func (r *record) live() bool { return !r.last.deleted() }

// count is how many versions the record holds, and version the i-th
// oldest.
func (r *record) count() int {
	if r.older == nil {
		return 1
	}
	return len(*r.older) + 1
}

func (r *record) version(i int) version {
	if r.older != nil && i < len(*r.older) {
		return (*r.older)[i]
	}
	return r.last
}

// add makes v the latest version.
func (r *record) add(v version) {
	if r.older == nil {
		r.older = new([]version)
	}
	*r.older = append(*r.older, r.last)
	r.last = v
}

// dropOldest drops the n oldest versions, fewer than count.
//
// Reslicing rather than shifting the rest down keeps this O(versions
// dropped) for a key written at every revision; append reclaims the space
// in front when it next grows the slice.
func (r *record) dropOldest(n int) {
	older := *r.older
	clear(older[:n])
	if older = older[n:]; len(older) == 0 {
		r.older = nil
		return
	}
	*r.older = older
}

// at returns the version of the key at revision rev, if it existed then.
func (r *record) at(rev int64) (version, bool) {
	for i := r.count() - 1; i >= 0; i-- {
		if v := r.version(i); v.rev <= rev {
			return v, !v.deleted()
		}
	}
	return version{}, false
}

// keyIndex holds the records in key order: sorted blocks of at most
// blockMax records. An insert or a delete moves at most a block's records,
// not all of them: one sorted slice made a CREATE among a hundred thousand
// keys move the pointers of half of them, each with GC's write barrier (a
// tenth of a CREATE's CPU under load).
//
// A point lookup is two binary searches, not a map's: a map of the keys
// cost 35 bytes a key (3.5 MB of a hundred thousand widgets' 140 MB of live
// heap, twice that in RSS with GC's goal), and a lookup among a hundred
// thousand keys, ~17 compares, costs a write well under a microsecond of its
// hundreds.
type keyIndex struct {
	blocks [][]*record // each sorted and not empty; all in key order
}

// blockMax bounds a block; a full one splits in two.
const blockMax = 512

func newKeyIndex() keyIndex { return keyIndex{} }

func (ix *keyIndex) get(key string) *record {
	r, _, _ := ix.lookup(key)
	return r
}

// lookup returns key's record, or nil and where put would insert one: at
// index i of block b. A create looks once, not once to check and once to
// insert.
func (ix *keyIndex) lookup(key string) (r *record, b, i int) {
	if len(ix.blocks) == 0 {
		return nil, 0, 0
	}
	b = ix.block(key)
	if b == len(ix.blocks) {
		b-- // after every key: the last block takes it
		return nil, b, len(ix.blocks[b])
	}
	blk := ix.blocks[b]
	i, found := searchBlock(blk, key)
	if found {
		return blk[i], b, i
	}
	return nil, b, i
}

// put adds r, whose key must not be in the index.
func (ix *keyIndex) put(r *record) {
	_, b, i := ix.lookup(r.key)
	ix.insert(r, b, i)
}

// insert adds r where lookup of its key, not in the index, said, with no
// change to the index since.
func (ix *keyIndex) insert(r *record, b, i int) {
	if len(ix.blocks) == 0 {
		ix.blocks = append(ix.blocks, []*record{r})
		return
	}
	blk := slices.Insert(ix.blocks[b], i, r)
	if len(blk) <= blockMax {
		ix.blocks[b] = blk
		return
	}
	// Both halves copied to arrays of their size: the full block's array,
	// grown by append to half as much again, held by its first half alone
	// made the blocks of keys created in order (each split leaving its
	// first half alone) cost three times their pointers.
	half := len(blk) / 2
	ix.blocks[b] = slices.Clone(blk[:half])
	ix.blocks = slices.Insert(ix.blocks, b+1, slices.Clone(blk[half:]))
}

func (ix *keyIndex) delete(key string) {
	b := ix.block(key)
	if b == len(ix.blocks) {
		return
	}
	i, found := searchBlock(ix.blocks[b], key)
	if !found {
		return
	}
	blk := slices.Delete(ix.blocks[b], i, i+1)
	if len(blk) == 0 {
		ix.blocks = slices.Delete(ix.blocks, b, b+1)
		return
	}
	ix.blocks[b] = blk
}

// from yields the records with keys at or after start, in key order. The
// index must not change during the iteration.
func (ix *keyIndex) from(start string) iter.Seq[*record] {
	return func(yield func(*record) bool) {
		b := ix.block(start)
		if b == len(ix.blocks) {
			return
		}
		i, _ := searchBlock(ix.blocks[b], start)
		for _, blk := range ix.blocks[b:] {
			for _, r := range blk[i:] {
				if !yield(r) {
					return
				}
			}
			i = 0
		}
	}
}

// block is the first block whose last key is at or after key:
// len(ix.blocks) if there is none.
func (ix *keyIndex) block(key string) int {
	b, _ := slices.BinarySearchFunc(ix.blocks, key, func(blk []*record, key string) int {
		return strings.Compare(blk[len(blk)-1].key, key)
	})
	return b
}

func searchBlock(blk []*record, key string) (int, bool) {
	return slices.BinarySearchFunc(blk, key, func(r *record, key string) int {
		return strings.Compare(r.key, key)
	})
}

// eventLog is a ring of the events after the compaction point, oldest
// first. It grows as needed up to the history size, then stays that size.
type eventLog struct {
	ring  []storage.Event
	first int // index in ring of the oldest event
	n     int
}

func (l *eventLog) len() int { return l.n }

// at returns the i-th oldest event.
func (l *eventLog) at(i int) *storage.Event { return &l.ring[(l.first+i)%len(l.ring)] }

// push appends ev. The caller keeps the log shorter than limit before the
// call.
func (l *eventLog) push(ev storage.Event, limit int64) {
	if l.n == len(l.ring) {
		ring := make([]storage.Event, min(max(2*int64(l.n), 64), limit))
		for i := range l.n {
			ring[i] = *l.at(i)
		}
		l.ring, l.first = ring, 0
	}
	*l.at(l.n) = ev
	l.n++
}

// dropFirst removes the k oldest events.
func (l *eventLog) dropFirst(k int) {
	if k == 0 {
		return
	}
	for i := range k {
		*l.at(i) = storage.Event{}
	}
	l.first = (l.first + k) % len(l.ring)
	l.n -= k
}
