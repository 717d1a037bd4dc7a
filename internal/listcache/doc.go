// Package listcache keeps the bytes of whole-collection LIST responses, and
// of watches' initial events, so that the next one writes them as they are.
//
// # What it owns
//
// A LIST of a whole collection made from the cached items costs a walk
// over them and a copy of each one's bytes into the response, scattered
// reads that cost several times what writing the bytes costs (a no-op
// server replaying one buffer is two to three times as fast). Clients list
// the same collections over and over: the informers of a fleet
// restarting, a poller, kubectl; and between two lists a controller has
// changed a few items, rarely many.
//
// Runs keep a collection's list in runs of about RunBytes of its items'
// bytes joined, and the item versions each holds. The next list of the
// collection reuses every run whose items it holds in the same order,
// remakes those around what changed (a changed item's run; the runs
// between an inserted or deleted item and the next run found again), and
// is written run by run, each in one write: no copy of the bytes that did
// not change. A collection's first list keeps nothing (its sighting only),
// so that a collection listed once costs no more memory; collections over
// RunsMax (32 MiB) are not kept. apiserver keeps JSON and protobuf lists
// of the storage version so (no selector, no limit, no other view, no
// conversion).
//
// Bodies keep the initial events of a watch of a whole collection, in one
// buffer, while the collection does not change: the informers of a fleet
// restarting at once start from the same state. At most BodyMax (16 MiB)
// each.
//
// Both count their bytes in one Budget per server, 64 MiB: when it is
// short, bodies of collections that changed since and runs that no list
// used since it was last short give theirs back.
//
// # Invariant
//
// Kept bytes are never changed: a response writes them as they are. A run
// is reused only for the very items it was made from (the same versions,
// compared by identity; an item, one version of an object, never changes),
// in the same order; a body only for the same change of the resource's
// cache (its last change, passed to Budget.Add) and the same item count.
//
// # The slow, obviously correct path
//
// Not keeping anything: apiserver then makes every list from its cached
// items (storedListPieces), the same bytes; its tests compare lists made
// from runs, with writes going on, with lists read from the store and
// encoded anew (TestListRunsMatchEncodedList).
package listcache
