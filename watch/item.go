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
