// Package storage defines the storage SPI kapi writes objects through: a
// revisioned key–value store shaped like etcd's.
//
// # Revisions
//
// The store has one revision, a strictly increasing int64: a new store is at
// revision 1 or more, never 0, and every successful write (create, update or
// delete) gets the next one. An object's resourceVersion is the decimal form
// of the revision of its last write; a list's is the revision it was read
// at. Revision 0 in a read means "the latest".
//
// # History and expiry
//
// A backend keeps a window of recent history. Reads at an older revision and
// watches from an older revision are served while that revision is in the
// window; once it has been compacted away they fail with [ErrExpired], which
// the HTTP layer turns into 410 Gone.
//
// # Watch
//
// [Watcher.Watch] delivers every change after a revision, in revision order,
// without gaps or duplicates, on a channel that the backend owns and closes.
// The channel is closed when the caller's context ends; if the backend must
// end the stream itself (the watcher fell out of the history window, the
// backend was closed), it sends one final event whose Err is set, then closes.
// A backend never blocks its writers on a slow watcher.
//
// # Faults
//
// A backend that cannot do what was asked for a reason of its own wraps its
// error in one of the fault sentinels: [ErrUnavailable] and [ErrTimeout]
// (try again later), [ErrTooLarge] and [ErrNoSpace] (the write is refused);
// a write that failed after it may have been applied is also marked
// [ErrOutcomeUnknown]. The HTTP layer answers each as a client can act on
// (503 with Retry-After, 413, 507), never 500. Package faulty injects them.
//
// # Conformance
//
// Package storagetest holds the suite every backend must pass:
// storagetest.Run(t, newStore).
package storage
