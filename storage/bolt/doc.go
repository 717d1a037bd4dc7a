// Package bolt is kapi's durable storage backend for one process: a
// revisioned key–value store in one bbolt file, implementing
// [storage.Interface].
//
//	s, err := bolt.Open("/var/lib/myservice/kapi.db")
//	if err != nil { ... }
//	defer s.Close()
//	srv, err := apiserver.New(apiserver.WithStorage(s))
//
// # Durability
//
// A write returns only once its transaction is committed and on disk
// (bbolt fsyncs every commit), so an acknowledged write survives the
// process being killed and, as far as the disk keeps its fsync promises,
// the machine losing power. A commit is atomic: a crash leaves the file as
// it was before the commit or after it, never between. The crash test of
// this package kills a writing process with SIGKILL at random moments, a
// hundred times, and finds every acknowledged write after each.
//
// Concurrent writes are group-committed: one goroutine owned by the store
// applies every write waiting when it begins a transaction in that one
// transaction, so N concurrent writers share one fsync instead of queueing
// for N. When it knows of more writers than are waiting (those it answered
// last time and those that queued up since), it waits for them a little,
// at most about as long as a commit takes, so that they keep sharing. A
// lone writer waits for one fsync and nothing else.
//
// Past the pages in use the file is kept written ahead with zeros (4 MiB of
// them), rather than extended with holes, so that a commit whose data grows
// the file overwrites blocks the filesystem already has, and its fsync
// need not commit the filesystem's journal as well.
//
// # Revisions and history
//
// The file keeps every version of every key that reads in the history
// window may ask for, and a log naming the key each revision wrote, from
// which watches rebuild their events. Revisions are store-wide and start at
// 1, as etcd's. The window is bounded as the memory store's: at most the
// last n revisions ([WithHistory], 10000 by default), and at most a budget
// of bytes of superseded values ([WithHistoryBytes], 256 MiB by default).
// Every write moves the window along and drops the versions that left it,
// so the file holds the live keys plus at most that much history; bbolt
// reuses the freed pages, so the file stops growing once the window is
// full. [Store.Compact] moves the start of the window forward on demand.
// Reads at revisions that have left the window, and watches from them, fail
// with [storage.ErrExpired].
//
// # Watch
//
// Writers never wait for watchers. Each watch runs one goroutine that reads
// the file's log at its own position in short read transactions, and sleeps
// until the next commit when it has read everything; watchers are woken
// only after a commit, so they see only what is on disk. The events of the
// last commits (up to 1024 of them, 4 MiB of values) are also kept in
// memory as the committer made them, and a watcher that keeps up takes
// them from there instead of reading them back. A watcher that
// falls so far behind that its next event leaves the window receives one
// event whose Err is [storage.ErrExpired]; after [Store.Close] every watcher
// receives one whose Err is [storage.ErrClosed]. After that final event, or
// when the watch's context ends, the channel is closed and the goroutine
// exits.
//
// # Values
//
// Values are copied in and out of the file: a caller may reuse a slice
// passed to Create or Update once the call returns, and each read returns
// slices of its own. Watchers that keep up share theirs, as
// [storage.KeyValue] allows: they must not modify them.
//
// # One process
//
// bbolt locks the file while it is open, so one process serves it. For
// several replicas of a service, use the etcd backend
// (github.com/kapi-dev/kapi/storage/etcd, a module of its own).
package bolt
