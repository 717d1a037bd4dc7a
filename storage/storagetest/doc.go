// Package storagetest is the conformance suite of the storage SPI
// ([storage.Interface]). Every backend's test file is one call to [Run], so
// a case added here reaches every backend at once.
//
// # Using the suite
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Interface {
//			s := mybackend.New()
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Run calls newStore once per subtest. It must return an empty store, at its
// initial revision (1 or more), whose history window holds at least a few
// thousand revisions, and register with t.Cleanup whatever releases it. The
// subtests are named Group/Case, for example Watch/FromZero, so that one
// case can be run alone: go test -run 'TestConformance/Watch/FromZero'.
//
// # Compaction
//
// Backends that can compact on demand implement [Compactor]; the suite uses
// it to test [storage.ErrExpired]: reads and watches below the compacted
// revision, and a watcher that falls behind a compaction. The Compact
// subtests are skipped for a store that does not implement it.
//
// # What the suite pins down
//
// Beyond the doc comments of package storage, the suite checks these
// choices, which are etcd's:
//
//   - A new store is at a revision of at least 1, never 0, as etcd: 0 is
//     what clients send to mean "any revision".
//   - Revisions are consecutive: each successful write gets the previous
//     revision plus one, and a failed write uses none.
//   - Watch from revision 0 delivers every change since the store began
//     (while that is in the window): "after rev" means the same for every
//     rev. A caller that wants only new changes watches from Revision().
//   - A Delete event carries the removed value both as Value and as Prev.
//   - Revision r has left the window once a read at r fails with
//     ErrExpired; a watch from such an r fails the same way, at once.
//   - Ending a watch's context closes its channel (possibly after events
//     already under way, but with no error event required) and ends every
//     goroutine the watch started.
//   - An operation whose context is already cancelled fails with an error
//     wrapping the context's error, and writes nothing.
//
// # Concurrency and linearizability
//
// Besides concurrent creates, watch ordering under concurrent writers and a
// read-modify-write counter that must end at exactly writers × increments,
// the suite records random concurrent histories of Create, Update (with and
// without a precondition), Delete and Get on a few keys, with the real-time
// order of every call, and checks each with a linearizability checker of
// its own (Wing and Gong's search with Lowe's memoisation, as in porcupine):
// some order of the calls that respects real time must be one a sequential
// store, with store-wide consecutive revisions, would have answered the
// same, values and revisions included. A store that serves a stale read, or
// lets two conditional updates from one revision both succeed, fails it.
//
// # Faults
//
// The Faults group puts the store behind a kapi server (package apiserver),
// through the fault-injecting wrapper of package faulty, and checks over
// HTTP what clients are answered for each fault of the store (the table in
// the README: 503 with Retry-After, 504, 413, 507, never 500), for a create,
// an update and a delete; that a write answered as maybe applied was
// applied, and one answered otherwise was not; that /readyz fails while the
// store does not answer and recovers after; and that the server's watch
// cache, its storage watch broken again and again, gives its watchers every
// change once, in order, with no 410; and that when the store's history no
// longer reaches back to the cache it relists and ends its watchers with
// 410 Expired, never with a gap. WatchRelist needs a [Compactor].
//
// # Timing
//
// The suite asserts no durations. Every wait (for a watch event, a closed
// channel, goroutines to exit) polls or blocks up to a deadline of ten
// seconds, generous for loaded machines. The goroutine-leak check compares
// runtime.NumGoroutine before and after, so do not run Run alongside
// parallel tests (t.Parallel) of the same process.
package storagetest
