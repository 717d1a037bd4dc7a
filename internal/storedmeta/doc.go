// Package storedmeta gives a controller that acts on an object's identity,
// owners, finalizers and deletion only (the garbage collector) that part of
// its metadata, read from the object's stored value when the object has no
// owners, finalizers or deletion to act on, rather than decoding the whole
// object: the collector's first look at every object of a collection of
// 100,000 widgets decoded each, seconds of CPU after the server was ready.
//
// # Invariant
//
// [Meta] reads the stored value only when its caller says the value is
// json.Marshal of the object with kapi.ObjectMeta as its "metadata" (as
// package splice relies on: apiserver's plainMetadata, an item of the watch
// cache that keeps its stored value, which a converted one does not). Such
// a value holds each member once, named exactly, and omits an empty
// ownerReferences, finalizers and deletionTimestamp.
//
// # The slow, obviously correct path
//
// The metadata of the decoded object. Meta takes it for every object that
// has owners, finalizers or a deletionTimestamp, and for any value it does
// not find in that shape (a name with an escape in it, say); for the others
// it returns the name, namespace, uid and resourceVersion the decoded
// object has, and the collector reads nothing else of such an object.
// TestMetaIsDecoded holds the two equal.
package storedmeta
