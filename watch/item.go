package watch

import (
	"sync"
	"sync/atomic"
)

// Item is one version of one object. It is shared by every reader and must be
// treated as read-only.
type Item struct {
	Key string
	// Revision is the revision of the write that produced this version; for
	// the item of a DELETED event, the deletion's revision.
	Revision int64
	// Object is the decoded object, with its resourceVersion set.
	Object any
	// Value is the stored value Object was decoded from, shared with the
	// store (nil for an item made otherwise). Encoders may derive an
	// encoding from it rather than keep one more copy of the object's
	// bytes.
	Value []byte

	// encodings is read without a lock: a format once encoded is found by
	// every later reader at the cost of an atomic load. mu only serializes
	// the first encoding of a format, so each is made once.
	mu        sync.Mutex
	encodings atomic.Pointer[encoding]
	// versions are the item in the other versions its object is served
	// in, made as encodings are: once each, then found without a lock.
	versions atomic.Pointer[version]
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

// Encoded returns the item's encoding in format, calling encode the first
// time it is asked for and sharing the bytes with every later caller. The
// returned bytes must not be modified.
func (it *Item) Encoded(format string, encode func(obj any) ([]byte, error)) ([]byte, error) {
	if data, ok := it.encoded(format); ok {
		return data, nil
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if data, ok := it.encoded(format); ok {
		return data, nil
	}
	data, err := encode(it.Object)
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
	it.mu.Lock()
	defer it.mu.Unlock()
	if v, ok := it.as(name); ok {
		return v, nil
	}
	obj, err := convert(it.Object)
	if err != nil {
		return nil, err
	}
	v := &Item{Key: it.Key, Revision: it.Revision, Object: obj}
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
