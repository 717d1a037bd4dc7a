// Package watch is kapi's watch hub: a cache of every registered resource,
// fed by one storage watch, that serves get, list and watch.
//
// # Shape
//
// A [Hub] owns one storage watch over the whole store and one [Cache] per
// resource key prefix under its root. Because it sees every revision of the
// store (changes outside root only move its revision), the hub
// always knows how far it has caught up, and a consistent read can wait until
// it has reached the store's current revision ([Hub.WaitFor]).
//
// # Snapshots
//
// A cache's state is an immutable ordered tree of items (a copy-on-write
// B+tree that counts the items under each node). The one goroutine that
// applies the store's changes builds each next version, sharing all but
// the path it changed (and on that path, the nodes' keys when the change
// moved none), and publishes it with its revision through an atomic
// pointer. [Cache.Get], [Cache.List] and the start of a watch load
// the current version and read it without a lock, so a reader never waits
// for the writer, nor the writer for a reader, and a list's remaining count
// costs O(log n). A version a reader holds stays what it was.
//
// # Items and encodings
//
// Each object version is an [Item]: its key, revision, stored value, a
// summary (see [KeepSummary]) and its encodings. An item is immutable once
// published; encodings are made lazily, once per media type, and shared by
// every reader and watcher; one already made is found without a lock. The
// decoded object ([Item.Object]) is kept only for a cache's last items;
// for the others it is decoded again when asked for. A writer may hand
// the cache the object it is storing ([Cache.Offer]), which the cache then
// keeps instead of decoding the value.
//
// # History and fan-out
//
// Each cache keeps a window of recent events, bounded by count and age;
// events leave by age on a timer too, so that an idle cache does not keep
// an old revision watchable.
// Watchers do not own buffers: each reads the shared window at its own
// position, without a lock. The window is published as an immutable view,
// and each view's channel is closed when the next replaces it, which wakes
// the watchers waiting on it. Publishing never waits for a watcher. A watcher whose position leaves the window before it
// has read it is ended with [storage.ErrExpired]; the client re-watches from
// its last resourceVersion, and gets 410 Gone if that has left too.
//
// # Values that do not decode
//
// A stored value the DecodeFunc rejects (corrupt, or encrypted with a key
// the server lacks) is left out of a cache's items, and an object served
// before is announced as deleted; [Cache.Unreadable] names those keys, so
// that a read of one can say why it fails instead of answering that it is
// not there.
//
// # Lifecycle
//
// [Hub.Add] adds a cache while Run runs, filled from the store at once, and
// [Hub.Unregister] removes one, whose watchers then end with [ErrStopped]:
// the kinds a server defines at run time come and go so.
//
// [Hub.Run] feeds the caches until its context ends; every watcher then ends
// with [ErrStopped]. If the storage watch itself expires, the hub relists and restarts its
// history, which ends the watchers it could no longer serve.
package watch
