// Package listcache keeps the bytes of whole-collection LIST responses
// while their collection does not change.
//
// # What it owns
//
// A LIST of a whole collection that nothing has changed since the last one
// is the same bytes again, but for its resourceVersion: made from the
// cached items, it costs a walk over them and a copy of each one's stored
// value into the response, scattered reads that cost several times what
// writing the bytes costs (a no-op server replaying one buffer is three
// times as fast). Clients list unchanged collections over and over: the
// informers of a fleet restarting, a poller, kubectl. So the second LIST
// of a collection at one state keeps its items' bytes joined in one
// buffer, and the following ones write that buffer whole until the
// collection changes. Only plain JSON lists of the storage version
// qualify (no selector, no limit, no other view, no conversion), one
// buffer per collection, at most BodyMax (16 MiB) each and 64 MiB
// for the whole server (Budget); a list seen once (a collection that
// changes between lists) costs nothing more than before.
//
// # Invariant
//
// A kept list is valid only for the state of its collection it was made
// at: Get answers it only for the same change of the resource's cache
// (its last change, passed to Budget.Add) and the same item count, and
// a list of another state replaces it. Kept bytes are never changed: a
// response writes them as they are.
//
// # The slow, obviously correct path
//
// Not keeping anything: apiserver then makes every list from its cached
// items (storedListPieces), the same bytes; its tests compare the two.
package listcache
