// Package sqlite is a kapi storage backend for one process: a revisioned
// key–value store in one SQLite file, implementing [storage.Interface],
// through modernc.org/sqlite, a translation of SQLite to Go (no cgo).
//
//	s, err := sqlite.Open("/var/lib/myservice/kapi.sqlite")
//	if err != nil { ... }
//	defer s.Close()
//	srv, err := apiserver.New(apiserver.WithStorage(s))
//
// It is a module of its own (github.com/kapi-dev/kapi/storage/sqlite), so
// that importing kapi never brings in SQLite.
//
// # When to pick it
//
// Pick it over package bolt when the objects should live in a file that
// SQLite's tools (the sqlite3 shell, litestream, backups with VACUUM INTO,
// ad-hoc SQL) can read and operate; bolt is faster for writes and needs no
// module of its own. Both serve one process. For several replicas of a
// service use etcd (github.com/kapi-dev/kapi/storage/etcd). kapi's watch
// cache serves reads on every backend, so they differ in what a write
// costs, not in what a read does.
//
// # Schema
//
// Three tables. meta holds one row: the schema's format, the store's
// revision and the start of its history window. current holds every live
// key with its value, CreateRevision and ModRevision: a List at the latest
// revision is a scan of it in key order, and a Get is one lookup. log holds
// one row per revision in the window, keyed by the revision: the key
// written, the operation (create, update, delete), the value written and
// the version it replaced (value and ModRevision). Keys are BLOBs, which
// SQLite orders byte by byte as Go orders strings.
//
// A key's version at an older revision r is the one its first write after
// r replaced, or its current row if it was not written since; so the rows
// of the window are all that reads at older revisions, and watches from
// them, need. Watches rebuild their events from the log alone.
//
// # Revisions
//
// Revisions are store-wide and consecutive: every successful write gets
// the store's revision plus one, a failed one none, and a new file starts
// at 1, as etcd does. An object's resourceVersion is its row's ModRevision.
//
// # Writes
//
// One goroutine of the store, the committer, owns the file's only write
// connection, and applies every write in a transaction of its own making
// (BEGIN IMMEDIATE). Concurrent writes are group-committed: the writes
// waiting when a transaction begins are applied in it, up to 512, and
// answered after its commit; a write whose precondition fails (the key
// exists, is missing, or has another ModRevision) is answered with that
// error and the others in its transaction go ahead. No two connections
// ever want SQLite's write lock, so no writer meets "database is locked"
// (SQLITE_BUSY), whatever the number of concurrent writers. Readers use a
// pool of read-only connections of their own: in WAL mode they never wait
// for the writer nor it for them, and each read (a List with its revision,
// a Get at an older revision) is one transaction, one snapshot.
//
// # Durability
//
// The file is in WAL mode with synchronous=FULL: a write returns only once
// its commit is in the WAL and the WAL is fsynced, so an acknowledged write
// survives the process being killed and, as far as the disk keeps its
// fsync promises, the machine losing power, as with package bolt and with
// etcd. (synchronous=NORMAL would skip that fsync: writes would still
// survive a killed process, but the last ones acknowledged could be lost
// with the power, which a store that answers "created" must not allow.)
// Group commit shares the fsync among the writers of a transaction. The
// crash test of this package kills a writing process with SIGKILL at
// random moments and finds every acknowledged write after each.
//
// # History and compaction
//
// The window is bounded as the other backends': at most the last n
// revisions ([WithHistory], 10000 by default), and at most a budget of
// bytes of the log's values ([WithHistoryBytes], 256 MiB by default). The
// file holds the live keys plus at most that window. Moving the start of
// the window is bookkeeping in the meta row, made by the write that moves
// it, or by [Store.Compact]: from that commit on, reads and watches below
// it fail with [storage.ErrExpired]. The log rows that left it are deleted
// afterwards, a few hundred per transaction (and twice as many as the
// transaction's writes, to keep up), and by transactions of their own while
// no write waits, so that no write waits for a large delete, even after a
// Compact that drops the whole window. SQLite reuses the freed pages, so the
// file stops growing once the window is full.
//
// # Watch
//
// Writers never wait for watchers. After each commit the committer keeps
// its events in memory (up to 1024 of them, 4 MiB of values) and wakes the
// watchers, so watchers see only what is committed, in revision order.
// Each watch runs one goroutine that takes the events from there while it
// keeps up, and reads the log, in short read transactions, when it is
// further behind (a watch from an older revision catches up that way). A
// watcher that falls so far behind that its next event leaves the window
// receives one event whose Err is [storage.ErrExpired], and the caller
// re-watches; after [Store.Close] every watcher receives one whose Err is
// [storage.ErrClosed]. After that final event, or when the watch's context
// ends, the channel is closed and the goroutine exits.
//
// # Performance
//
// Measured on a shared 2-core machine under load (go test -bench Backends
// in this package, which runs bolt beside it; figures of several runs): one
// writer made 340 to 620 creates or updates a second (bolt: 165 to 720),
// eight concurrent writers 2,100 to 4,500 (bolt: 1,350 to 2,000), group
// commit sharing each fsync among them. A Get took 20 to 65 µs and a List
// of 500 keys 1.7 to 3.2 ms (bolt: 5 to 15 µs and 0.3 to 0.4 ms), the cost of
// database/sql and of SQLite's interpreter; kapi's watch cache serves
// reads, so they matter when it starts. With synchronous=NORMAL writes were
// 3 to 7 times faster: that is what the fsync costs. After 1,000,000
// updates of 1,000 keys by eight writers, the tables held 1,000 current
// rows and 10,000 log rows, and the file was 7 MiB; the longest DELETE of
// compacted rows took 45 ms (8 ms in a quieter run of 30,000 writes), and
// the writes' longest waits were the disk's stalls, which a run without
// compaction shows as well (TestMeasureCompaction reports both).
//
// # One process
//
// [Open] locks the file path+"-lock" (flock) for the life of the store and
// fails at once, naming it, if another store, in this process or another,
// holds it: a second writer would write behind the first one's watchers.
// SQLite's own tools may read the file meanwhile; they must not write it.
package sqlite
