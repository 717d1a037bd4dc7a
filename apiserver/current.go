package apiserver

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/deepcopy"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// latest is the object a read-modify-write starts from: if fromCache, the
// watch cache's version of it where the cache has one with its stored
// value (cached is then true), else the store's. Starting from the cache
// saves the read of every write on a remote store (etcd: one round trip in
// two): the write's compare on kv.ModRevision fails if the cache was
// behind, and write then starts again from the store, as kube-apiserver's
// GuaranteedUpdate starts from the watch cache's object and reads the
// store only once that proves stale. Whatever the cache says is taken as
// a guess: that the client's resourceVersion differs, or that nothing
// changes, is only believed of the store's version.
func (rq *request) latest(ctx context.Context, key string, fromCache bool) (kv storage.KeyValue, cached bool, err error) {
	if fromCache && rq.res.cache != nil && rq.s.hub.Reached(0) { // not before the cache has synced
		it, _ := rq.res.cache.Get(key)
		// This server's own last write to the object may be a moment
		// from its cache (a client writing one object in a loop):
		// waiting for it, briefly, spares a write that would fail.
		if w := rq.s.wrote.At(key); it == nil || it.Revision < w {
			if rq.waitCache(ctx, w) {
				it, _ = rq.res.cache.Get(key)
			}
		}
		if it != nil && it.Value != nil {
			return storage.KeyValue{Key: key, Value: it.Value, ModRevision: it.Revision}, true, nil
		}
	}
	kv, err = rq.s.config.store.Get(ctx, key, 0)
	return kv, false, err
}

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
// is made without encoding it again (objectJSON). rq.curOffered says the
// object is, in rq's version, the image offered for value (offer).
func (rq *request) current(ctx context.Context, kv storage.KeyValue) (obj kapi.Object, value []byte, err error) {
	if rq.curOffered = false; rq.subresource == "" && len(rq.s.config.mutating) == 0 && rq.res.cache != nil {
		rq.waitCache(ctx, kv.ModRevision) // if not reached, decoded below
		if it, _ := rq.res.cache.Get(kv.Key); it != nil && it.Revision == kv.ModRevision {
			if obj, err := cachedObject(it); err == nil && isObjectOf(obj, rq.res.storageVersion().objType.typ) {
				rq.curOffered = it.Offered() && !rq.res.converts()
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

// stampRevision sets the revision of the write that stored obj, an object
// offered to the watch cache (see offer).
func stampRevision(obj any, rev int64) {
	obj.(kapi.Object).GetObjectMeta().ResourceVersion = formatRevision(rev)
}

// cachedObject is the object of a cached item (see watch.Item.Object).
func cachedObject(it *watch.Item) (kapi.Object, error) {
	obj, err := it.Object()
	if o, ok := obj.(kapi.Object); ok || err != nil {
		return o, err
	}
	return nil, fmt.Errorf("the cached item %s holds a %T", it.Key, obj)
}

// isObjectOf says whether obj is a *t.
func isObjectOf(obj kapi.Object, t reflect.Type) bool {
	ot := reflect.TypeOf(obj)
	return ot.Kind() == reflect.Pointer && ot.Elem() == t
}

// currentWait bounds how long a write waits for the watch cache to reach
// the object it changes.
const currentWait = 100 * time.Millisecond

// waitCache waits, up to currentWait, for the watch cache to reach rev,
// and says whether it did. A request waits once at most: a cache that did
// not catch up then (its watch broken or behind) is not waited for again,
// and the request goes on with the store.
func (rq *request) waitCache(ctx context.Context, rev int64) bool {
	if rq.s.hub.Reached(rev) {
		return true
	}
	if rq.cacheSlow {
		return false
	}
	rq.s.cacheWaits.Add(1)
	rq.cacheSlow = rq.s.hub.WaitWithin(ctx, rev, currentWait) != nil
	return !rq.cacheSlow
}

// deepCopyObject is a copy of obj that shares nothing changeable with it
// (deepcopy.Set).
func deepCopyObject(obj kapi.Object) kapi.Object {
	v := reflect.New(reflect.TypeOf(obj).Elem())
	deepcopy.Set(v.Elem(), reflect.ValueOf(obj).Elem())
	return v.Interface().(kapi.Object)
}
