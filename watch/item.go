package watch

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/kapi-dev/kapi/storage"
)

// Item is one version of one object. It is shared by every reader and must be
// treated as read-only.
//
// An item decoded from a stored value keeps the value and, strongly, only
// its Summary: the decoded object is held weakly, so that a cache of many
// objects costs about their stored bytes, not those and their decoded
// form too. Object decodes the value again when the object has been
// collected; a fresh write's object, and one read by many at once, is
// found alive.
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

	// held is an object not decoded from Value (see NewItem), kept
	// strongly; decoded is Value's decoding, kept while anything else uses
	// it, and decode makes it again.
	held    any
	decoded atomic.Pointer[weakObject]
	decode  DecodeFunc

	// encodings is read without a lock: a format once encoded is found by
	// every later reader at the cost of an atomic load. mu only serializes
	// the first encoding of a format, so each is made once.
	mu        sync.Mutex
	encodings atomic.Pointer[encoding]
	// versions are the item in the other versions its object is served
	// in, made as encodings are: once each, then found without a lock.
	versions atomic.Pointer[version]
}

// weakObject refers to a decoded object, a pointer, without keeping it
// alive.
type weakObject struct {
	typ reflect.Type
	ptr weak.Pointer[byte]
}

func (w *weakObject) value() any {
	p := w.ptr.Value()
	if p == nil {
		return nil
	}
	return reflect.NewAt(w.typ.Elem(), unsafe.Pointer(p)).Interface()
}

// NewItem returns an item that holds obj, at key and rev, with no stored
// value.
func NewItem(key string, rev int64, obj any) *Item {
	return &Item{Key: key, Revision: rev, held: obj}
}

// decodedItem is the item of a stored value decoded into obj, which it
// holds weakly.
func decodedItem(kv storage.KeyValue, obj any, decode DecodeFunc) *Item {
	it := &Item{Key: kv.Key, Revision: kv.ModRevision, Value: kv.Value, decode: decode}
	if !it.keep(obj) {
		it.held = obj
	}
	return it
}

// keep makes obj, decoded from Value, the item's object, weakly held, if
// it is a pointer to something (a DecodeFunc makes a new object each
// time); it reports whether it did.
func (it *Item) keep(obj any) bool {
	t := reflect.TypeOf(obj)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Size() == 0 || reflect.ValueOf(obj).IsNil() {
		return false
	}
	p := (*byte)(reflect.ValueOf(obj).UnsafePointer())
	it.decoded.Store(&weakObject{typ: t, ptr: weak.Make(p)})
	return true
}

// Object returns the item's object. For an item of a stored value that is
// the value decoded again if its last decoding has been collected, which
// fails only if the decoding function is not deterministic.
func (it *Item) Object() (any, error) {
	if it.held != nil || it.decode == nil {
		return it.held, nil
	}
	if w := it.decoded.Load(); w != nil {
		if obj := w.value(); obj != nil {
			return obj, nil
		}
	}
	obj, err := it.decode(storage.KeyValue{Key: it.Key, Value: it.Value, ModRevision: it.Revision})
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
