package watch

import (
	"sync"
	"sync/atomic"

	"github.com/kapi-dev/kapi/storage"
)

// Item is one version of one object. It is shared by every reader and must be
// treated as read-only.
//
// An item decoded from a stored value keeps the value and its Summary; the
// decoded object only while the item is among the last ones its cache
// decoded or was handed (recentObjects of them), so that a cache of many
// objects costs about their stored bytes, not those and their decoded
// form too. Object decodes the value again for an item that has left
// them; a fresh write's object, and the one a client writes in a loop,
// is there.
type Item struct {
	Key string
	// Revision is the revision of the write that produced this version; for
	// the item of a DELETED event, the deletion's revision.
	Revision int64
	// Value is the stored value the object was decoded from, shared with
	// the store (nil for an item made otherwise). Encoders may derive an
	// encoding from it rather than keep one more copy of the object's
	// bytes.
	Value []byte
	// Mark is a number about Value that a reader derives from it once
	// and keeps here for the later ones (where in it a member goes, say),
	// at the cost of no allocation; 0 until one sets it.
	Mark atomic.Uint64
	// Summary is what the cache keeps of the decoded object for the
	// readers that must not decode it again (see [KeepSummary]); nil
	// otherwise.
	Summary any

	// recent is the item's object: for good if it was not decoded from
	// Value (see NewItem; cache is nil), else while the item is among its
	// cache's recent ones, and cache decodes it again.
	recent atomic.Pointer[decoded]
	cache  *Cache
	// offered: the object is the one a writer offered for Value (Offer).
	offered bool

	// encodings is read without a lock: a format once encoded is found by
	// every later reader at the cost of an atomic load. mu only serializes
	// the first encoding of a format, so each is made once.
	mu        sync.Mutex
	encodings atomic.Pointer[encoding]
	// versions are the item in the other versions its object is served
	// in, made as encodings are: once each, then found without a lock.
	versions atomic.Pointer[version]
}

// decoded is an item's decoded object.
type decoded struct{ obj any }

// recentObjects is how many decoded objects a cache keeps, those of the
// items it decoded or was handed last; recentValueMax the largest stored
// value whose object it keeps.
const (
	recentObjects  = 1024
	recentValueMax = 64 << 10
)

// recentItems are the items of a cache that keep their decoded objects,
// in a ring: the item a new one takes the place of lets its object go.
type recentItems struct {
	next  atomic.Uint64
	slots [recentObjects]atomic.Pointer[Item]
}

// keep makes obj, decoded from it.Value, the item's object for as long as
// it is among the cache's recent items.
func (it *Item) keep(obj any) {
	if len(it.Value) > recentValueMax {
		return
	}
	it.recent.Store(&decoded{obj})
	r := &it.cache.recent
	if old := r.slots[r.next.Add(1)%recentObjects].Swap(it); old != nil && old != it {
		old.recent.Store(nil) // if old came back meanwhile, it is decoded again
	}
}

// NewItem returns an item that holds obj, at key and rev, with no stored
// value.
func NewItem(key string, rev int64, obj any) *Item {
	it := &Item{Key: key, Revision: rev}
	it.recent.Store(&decoded{obj})
	return it
}

// decodedItem is the item of a stored value c decoded into obj.
func (c *Cache) decodedItem(kv storage.KeyValue, obj any) *Item {
	it := &Item{Key: kv.Key, Revision: kv.ModRevision, Value: kv.Value, cache: c}
	it.keep(obj)
	return it
}

// Kept returns the item's object if the item holds it now, without
// decoding its value again as Object would: a reader that can do with less
// than the object (its metadata read from the value, say) takes the
// object when it is there for nothing, as it is for a fresh write's item.
func (it *Item) Kept() (any, bool) {
	if d := it.recent.Load(); d != nil {
		return d.obj, true
	}
	return nil, false
}

// Offered says whether the item's object is the one a writer offered for
// its value ([Cache.Offer]), not one decoded from the value: the value is
// then that writer's encoding, and the object its image, so a writer may
// compare objects where it would compare their JSON.
func (it *Item) Offered() bool { return it.offered }

// Object returns the item's object. For an item of a stored value that is
// the value decoded again if the item has left its cache's recent ones,
// which fails only if the decoding function is not deterministic.
func (it *Item) Object() (any, error) {
	if d := it.recent.Load(); d != nil {
		return d.obj, nil
	}
	if it.cache == nil {
		return nil, nil
	}
	obj, err := it.cache.decode(storage.KeyValue{Key: it.Key, Value: it.Value, ModRevision: it.Revision})
	if err != nil {
		return nil, err
	}
	if c, ok := obj.(Converted); ok {
		obj = c.Object
	}
	it.keep(obj)
	return obj, nil
}

// Encoded returns the item's encoding in format, calling encode the first
// time it is asked for and sharing the bytes with every later caller. The
// returned bytes must not be modified. encode may call Object (not
// Encoded or As).
func (it *Item) Encoded(format string, encode func() ([]byte, error)) ([]byte, error) {
	if data, ok := it.encoded(format); ok {
		return data, nil
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if data, ok := it.encoded(format); ok {
		return data, nil
	}
	data, err := encode()
	if err != nil {
		return nil, err
	}
	it.encodings.Store(&encoding{format: format, data: data, next: it.encodings.Load()})
	return data, nil
}

func (it *Item) encoded(format string) ([]byte, bool) {
	for e := it.encodings.Load(); e != nil; e = e.next {
		if e.format == format {
			return e.data, true
		}
	}
	return nil, false
}

// As returns the item as served in another version of its object: an item
// with the same key and revision whose object is convert's result, made
// the first time the version is asked for and shared by every later
// caller, with encodings of its own. Only the object's first item (the one
// the cache holds) should be asked: a returned item has no versions.
func (it *Item) As(name string, convert func(obj any) (any, error)) (*Item, error) {
	if v, ok := it.as(name); ok {
		return v, nil
	}
	obj, err := it.Object()
	if err != nil {
		return nil, err
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if v, ok := it.as(name); ok {
		return v, nil
	}
	conv, err := convert(obj)
	if err != nil {
		return nil, err
	}
	v := NewItem(it.Key, it.Revision, conv)
	it.versions.Store(&version{name: name, item: v, next: it.versions.Load()})
	return v, nil
}

func (it *Item) as(name string) (*Item, bool) {
	for v := it.versions.Load(); v != nil; v = v.next {
		if v.name == name {
			return v.item, true
		}
	}
	return nil, false
}

// version is the item in one other version, in a list that only grows at
// its head.
type version struct {
	name string
	item *Item
	next *version
}

// encoding is one format's bytes, in a list that only grows at its head.
type encoding struct {
	format string
	data   []byte
	next   *encoding
}
