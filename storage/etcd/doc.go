// Package etcd is kapi's storage backend for many replicas: a
// [storage.Interface] on an etcd v3 cluster, so that any number of kapi
// servers sharing the cluster serve one API.
//
//	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://127.0.0.1:2379"}})
//	if err != nil { ... }
//	defer client.Close()
//	s, err := etcd.New(ctx, client)
//	if err != nil { ... }
//	defer s.Close()
//	srv, err := apiserver.New(apiserver.WithStorage(s))
//
// It is a module of its own (github.com/kapi-dev/kapi/storage/etcd), so
// that importing kapi never brings in etcd's client.
//
// # Mapping
//
// A key k is stored at the etcd key prefix+"data"+k ([WithPrefix], "/kapi/"
// by default). A resourceVersion is an etcd revision: an object's is its
// key's mod_revision, a write's is the revision of its transaction. Create
// is a transaction conditional on the key's create_revision being 0,
// Update and Delete on its mod_revision being the expected one (or its
// create_revision being set, without a precondition); a failed condition
// reads the key in the same transaction to tell ErrNotFound from
// ErrConflict. Reads at a revision are etcd reads at that revision, Watch
// is an etcd watch from the revision after the one asked for, with the
// previous values (WithPrevKV) for updates' and deletes' Prev.
//
// # The store's revision
//
// etcd's revision counts every write in the cluster, the ones outside the
// prefix included, but kapi's watch cache must be able to wait for the
// store's revision through its watch of the prefix: an event at that
// revision has to come. So every write also updates one marker key,
// prefix+"revision", in the same transaction, and the store's revision is
// the marker's mod_revision: that of the last write under the prefix.
// [Store.Revision] reads it, and a List at the latest revision reads it with
// the page in one transaction and reports it as the page's revision (no key
// under the prefix changed between it and etcd's revision, so the page is
// the same). Writes elsewhere in the cluster then cannot leave a
// consistent read waiting for a revision its watch never delivers, and etcd
// progress notifications are not needed. The marker's creation, by the
// first [New] on a prefix, is where the store begins: a new store's
// revision is that of the marker's creation, 2 or more, never 0; reads and
// watches before it read the empty store there.
//
// # Round trips
//
// A create, and an update, a patch or an apply of kapi's, is one etcd
// transaction: an update's compare is its precondition, the ModRevision
// of the object kapi's watch cache holds (and the client's
// resourceVersion must match), so it reads nothing first; only if the
// cache was behind does the compare fail, and the update reads the key
// and tries again. A consistent read (resourceVersion unset) reads the
// store's revision, then answers from the watch cache: [Store.Revision]
// makes one read at a time, and every call made while one is in flight
// waits for the next, one read for all of them, which starts after each
// of them was called (so none misses a write acknowledged before it
// asked). N concurrent consistent reads cost two reads of etcd, not N
// (kube-apiserver's consistent reads from its cache make one each, with
// GetCurrentResourceVersion; what its cache shares is the progress
// requests it sends while they wait). Before a read starts, the goroutines
// ready to run (requests that have just come in) run first and may join
// it: with 8 clients reading in a closed loop, one read of etcd served 4.4
// GETs rather than 3.4. A call that comes while a read is in flight waits
// for the rest of it and then for the next, but a read of its own started
// at once would not answer sooner: etcd runs one ReadIndex round at a
// time, and a linearizable read that comes during one waits for the next
// (BenchmarkRevisionReadBehind; two of kapi's reads in flight were tried,
// and were slower).
//
// That read bounds a consistent GET: a linearizable read of one key,
// measured one at a time on a loaded 2-core machine, cost etcd about
// 330 µs of CPU and kapi's gRPC client about 250 µs, against about 85 µs
// of kapi's for the whole of a GET at resourceVersion=0. An etcd watch
// progress request costs a third to a half of that read
// (BenchmarkRevisionRead), but its answer is not linearizable: etcd
// answers with the revision the member serving the watch has applied,
// without confirming it is current, and on a follower that can be behind a
// write another member acknowledged.
//
// # History and compaction
//
// The history window is etcd's: everything since the cluster's last
// compaction. Reads below it, and watches from below it, fail with
// [storage.ErrExpired] (410 Gone at the HTTP layer); a watch that a
// compaction overtakes ends with an ErrExpired event. [Store.Compact]
// compacts the whole cluster, every prefix included. Run etcd with
// automatic compaction (for example --auto-compaction-mode=periodic
// --auto-compaction-retention=5m, which is what kube-apiserver arranges),
// or compaction is never done and etcd's database grows until its quota.
//
// # Watch
//
// Each watch is one etcd watch on a gRPC stream of its own, on the
// client's connection, and one goroutine that reads it and converts its
// events (a client whose Watcher was replaced, namespace.NewWatcher or a
// wrapper of the caller's, watches through it instead). kapi's own writes
// come back through the watch, and a write waits for its object's last one
// to reach the watch cache: the client's Watcher would hand each response
// through three goroutines of its own first. A watcher that falls behind
// is etcd's to hold (it catches it up from its store), so writers never
// wait for watchers. When the connection is lost, the watch starts again
// from the revision after the last one it delivered, once etcd is back; it
// is ended by etcd (ErrExpired) only when a compaction passes it, or when
// the member it watches loses its leader, after which the caller
// re-watches from its last revision, on any member. After [Store.Close],
// every watch ends with [storage.ErrClosed].
//
// # Outages
//
// While etcd cannot be reached, calls fail with [storage.ErrUnavailable]
// (or time out), and kapi answers 503 or 504 with Retry-After. Once etcd is
// back, the first call succeeds within about a second, however long the
// outage was: gRPC would wait longer after each failed attempt to connect,
// up to 120 s by default, so the store, from [New] until [Store.Close],
// resets that backoff every half second while the client's connection is
// in TRANSIENT_FAILURE. It needs nothing of the client: a client built with
// any dial options, grpc.WithConnectParams included, recovers as promptly.
// The outage test of this package stops etcd for a chosen time and
// measures it.
//
// # Durability and replicas
//
// A write is acknowledged once etcd has committed it: on a quorum of
// members, each of which has fsynced it to its write-ahead log. Reads are
// linearizable (etcd's default). Replicas share no state but etcd: each
// keeps its own watch cache, fed by its own watch, and a consistent read
// on any replica waits until that cache has reached the store's revision.
package etcd
