package apiserver

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// current is the object a read-modify-write starts from: kv, the value just
// read from the store, as the watch cache decodes it anyway (a PUT or PATCH
// otherwise decodes the whole stored object again, managedFields included:
// a quarter of its CPU), else decoded here. When the cache has not reached
// kv's revision yet (the last write to the object was a moment ago, as a
// client writing one object in a loop does) it waits for it, as consistent
// reads do, but only briefly: a cache far behind is no reason to hold a
// write. The cache's object is shared with every reader and never
// changed, so the write gets a shallow copy, and only where nothing can
// change what the copy shares with it: not on /status and /scale (whose
// next object is the current one changed), not when mutating admission
// hooks are configured (they change objects in place, and see the current
// one); prepareUpdate copies the status it carries over.
//
// value is the object's marshalStored encoding (kv's value, unless it was
// stored in another version and converted; then nil), from which its JSON
// is made without encoding it again (objectJSON).
func (rq *request) current(ctx context.Context, kv storage.KeyValue) (obj kapi.Object, value []byte, err error) {
	if rq.subresource == "" && len(rq.s.config.mutating) == 0 && rq.res.cache != nil {
		if !rq.s.hub.Reached(kv.ModRevision) {
			wait, cancel := context.WithTimeout(ctx, currentWait)
			_ = rq.s.hub.WaitFor(wait, kv.ModRevision) // if not, decoded below
			cancel()
		}
		if it, _ := rq.res.cache.Get(kv.Key); it != nil && it.Revision == kv.ModRevision {
			if obj, err := cachedObject(it); err == nil && reflect.TypeOf(obj) == reflect.TypeOf(rq.res.storageVersion().newObject()) {
				return shallowCopy(obj), it.Value, nil // no Value if converted
			}
		}
	}
	decoded, converted, err := rq.res.decodeStoredVersion(kv)
	if err != nil || converted {
		return decoded, nil, err
	}
	return decoded, kv.Value, nil
}

// offer hands the watch cache a copy of obj, the storage version's object
// about to be stored as value at key, so that the cache need not decode
// value again when the write's event comes (watch.Cache.Offer). The copy
// shares obj's maps and slices, which no write changes once stored (a
// controller's write starts from a deep copy, see current). Only types
// whose JSON is a faithful picture of their values are offered (see
// roundTrips): the object must read, in every format, as the value decoded
// does. Call the returned function with the write's outcome: it withdraws
// the offer unless the cache has yet to see the write.
func (rq *request) offer(key string, value []byte, obj kapi.Object) (written func(rev int64, err error)) {
	c := rq.res.cache
	if ot := rq.res.storageVersion().objType; c == nil || !ot.plainMetadata || !ot.roundTrips {
		return func(int64, error) {}
	}
	c.Offer(key, value, shallowCopy(obj))
	return func(rev int64, err error) {
		if err != nil || rq.s.hub.Reached(rev) {
			c.Withdraw(key, value)
		}
	}
}

// roundTrips says that encoding/json decodes what it encodes of a value of
// type t back into an equal value, as far as any encoding of it shows:
// struct fields of plain kinds, slices, maps and pointers of such, and
// kapi's metadata and times. Not so an interface (a number comes back a
// float64), a pointer to a type whose JSON may be null (a zero *kapi.Time
// comes back nil), or a type with JSON methods of its own.
func roundTrips(t reflect.Type) bool {
	return roundTripsSeen(t, map[reflect.Type]bool{})
}

func roundTripsSeen(t reflect.Type, seen map[reflect.Type]bool) bool {
	switch t {
	case reflect.TypeFor[kapi.ObjectMeta](), reflect.TypeFor[kapi.Time](), reflect.TypeFor[kapi.MicroTime]():
		return true // their zero values are never pointed to: the server sets them
	}
	if ok, done := seen[t]; done {
		return ok
	}
	seen[t] = true // a recursive type is as its other fields say
	ok := true
	marshaler, unmarshaler := reflect.TypeFor[json.Marshaler](), reflect.TypeFor[json.Unmarshaler]()
	text := reflect.TypeFor[encoding.TextMarshaler]()
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) || reflect.PointerTo(t).Implements(unmarshaler) ||
		t.Implements(text) || reflect.PointerTo(t).Implements(text) {
		ok = false
	} else {
		switch t.Kind() {
		case reflect.Bool, reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		case reflect.Slice, reflect.Array:
			ok = roundTripsSeen(t.Elem(), seen)
		case reflect.Map:
			ok = t.Key().Kind() == reflect.String && roundTripsSeen(t.Elem(), seen)
		case reflect.Pointer:
			e := t.Elem()
			ok = e != reflect.TypeFor[kapi.Time]() && e != reflect.TypeFor[kapi.MicroTime]() && roundTripsSeen(e, seen)
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() && !f.Anonymous || f.Tag.Get("json") == "-" {
					ok = false // kept by the writer, lost by the encoding
					break
				}
				if !roundTripsSeen(f.Type, seen) {
					ok = false
					break
				}
			}
		default:
			ok = false
		}
	}
	seen[t] = ok
	return ok
}

// stampRevision sets the revision of the write that stored obj, an object
// offered to the watch cache (see offer).
func stampRevision(obj any, rev int64) {
	obj.(kapi.Object).GetObjectMeta().ResourceVersion = formatRevision(rev)
}

// cachedObject is the object of a cached item (see watch.Item.Object).
func cachedObject(it *watch.Item) (kapi.Object, error) {
	obj, err := it.Object()
	if err != nil {
		return nil, err
	}
	o, ok := obj.(kapi.Object)
	if !ok {
		return nil, fmt.Errorf("the cached item %s holds a %T", it.Key, obj)
	}
	return o, nil
}

// currentWait bounds how long a write waits for the watch cache to reach
// the object it changes.
const currentWait = 100 * time.Millisecond

// deepCopyObject is a copy of obj that shares nothing changeable with it.
func deepCopyObject(obj kapi.Object) kapi.Object {
	v := reflect.New(reflect.TypeOf(obj).Elem())
	deepCopy(v.Elem(), reflect.ValueOf(obj).Elem())
	return v.Interface().(kapi.Object)
}

// deepCopy sets dst to a copy of src that shares nothing changeable with
// it: maps, slices and pointers are copied all the way down (strings,
// immutable, are shared).
func deepCopy(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			dst.Set(reflect.Zero(src.Type()))
			return
		}
		p := reflect.New(src.Type().Elem())
		deepCopy(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Slice:
		if src.IsNil() {
			dst.Set(reflect.Zero(src.Type()))
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deepCopy(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			dst.Set(reflect.Zero(src.Type()))
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(src.Type().Elem()).Elem()
			deepCopy(v, it.Value())
			m.SetMapIndex(it.Key(), v)
		}
		dst.Set(m)
	case reflect.Interface:
		if src.IsNil() {
			dst.Set(reflect.Zero(src.Type()))
			return
		}
		v := reflect.New(src.Elem().Type()).Elem()
		deepCopy(v, src.Elem())
		dst.Set(v)
	case reflect.Struct:
		dst.Set(src) // unexported fields (time.Time's) are values or immutable
		for i := range src.NumField() {
			if dst.Field(i).CanSet() {
				deepCopy(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Array:
		for i := range src.Len() {
			deepCopy(dst.Index(i), src.Index(i))
		}
	default:
		dst.Set(src)
	}
}
