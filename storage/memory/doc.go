// Package memory is kapi's default storage backend: a revisioned key–value
// store held in the process's memory, implementing [storage.Interface].
//
//	s := memory.New()
//	defer s.Close()
//
// Nothing survives the process; use it for tests, demos and servers whose
// state can be rebuilt.
//
// # Revisions and history
//
// Each key keeps the versions that reads inside the history window can still
// ask for. The window is at most the last n revisions ([WithHistory], 10000
// by default): with the store at revision r, reads at revisions r-n to r and
// watches from them work, older ones fail with [storage.ErrExpired]. The
// window is also held to a byte budget ([WithHistoryBytes], 256 MiB by
// default): when the values kept only for history (those since updated or
// deleted) outgrow it, the window moves forward until they fit, so a client
// rewriting one large object cannot fill memory with old copies of it. Every
// write moves the window along and drops the versions that left it, at a cost
// constant per write when amortised, so on top of the live keys and values
// history takes at most the budget plus one value, and the keys of the last
// n writes. [Store.Compact] moves the start of the window forward on demand.
//
// # Values are shared
//
// Values are stored as given, without copying: a caller must not modify a
// slice after passing it to Create or Update, and the values returned by Get,
// List and Watch are the stored ones, shared with every other reader, and
// must not be modified either.
//
// # Watch
//
// Writers never wait for watchers. Each watch runs one goroutine that reads
// the store's event log at its own position and hands events to an
// unbuffered channel; when it has read everything it sleeps until the next
// write. A watcher that falls so far behind that its next event leaves the
// window receives one event whose Err is [storage.ErrExpired]; after
// [Store.Close] every watcher receives one whose Err is [storage.ErrClosed].
// After that final event, or when the watch's context ends, the channel is
// closed and the goroutine exits. Watching from revision 0 delivers every
// change since the store began (while in the window); watching from a future
// revision waits for it, as etcd does.
package memory
