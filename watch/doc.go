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
// # Items and encodings
//
// Each object version is an [Item]: its key, revision, the decoded object and
// its encodings. An item is immutable once published; encodings are made
// lazily, once per media type, and shared by every reader and watcher.
//
// # History and fan-out
//
// Each cache keeps a window of recent events, bounded by count and age.
// Watchers do not own buffers: each reads the shared window at its own
// position, woken by a broadcast when the window grows. Publishing never
// waits for a watcher. A watcher whose position leaves the window before it
// has read it is ended with [storage.ErrExpired]; the client re-watches from
// its last resourceVersion, and gets 410 Gone if that has left too.
//
// # Lifecycle
//
// [Hub.Run] feeds the caches until its context ends; every watcher then ends
// with [ErrStopped]. If the storage watch itself expires, the hub relists and restarts its
// history, which ends the watchers it could no longer serve.
package watch
