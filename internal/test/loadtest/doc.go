// Command loadtest is kapi's load harness: it drives a Kubernetes-style API
// server over HTTP and measures it beside its ceiling, a no-op net/http
// server that writes the same response bytes.
//
// # Running
//
// From the repository root (the module is in go.work):
//
//	go run ./internal/test/loadtest -report BENCHMARKS.md
//
// builds examples/widgets, starts it (memory backend, -pprof), the ceiling
// (-serve-ceiling) and a kapi that counts its encodes (-serve-kapi), each
// its own process (and, for the bolt workloads, the idle watchers and
// memory, fresh example servers of their own; for the bolt workloads, the
// bolt-only server too); for the workloads named -etcd, one etcd member
// (built from the version internal/test/robustness requires, or
// -etcd-bin / $ETCD_BIN; -no-etcd leaves them out),
// storage/etcd/cmd/widgets-etcd -pprof on it and the etcd-only server on
// the same member, etcd's CPU counted apart from each server's. It runs
// every workload against kapi and then the ceiling (and the store-only
// server where there is one), prints a table, judges issue 29's targets,
// writes the report and profiles kapi on every missed target. -json FILE
// writes the results as JSON.
//
// Against another server: -server URL (with -ca, -cert, -key for TLS and a
// client certificate; -server-pid for its CPU and RSS when it is local),
// and -ceiling URL for a ceiling started with -serve-ceiling ADDR; create-bolt
// is then left out (the harness has no bolt server of that kind to start).
//
// # Workloads
//
// GET one widget; LIST the small and the large namespace in JSON and
// protobuf; GET and the large LIST in JSON at resourceVersion=0 (get-rv0,
// list-large-json-rv0: the watch cache answers without a consistent read
// of the store), and the large one in JSON again over 2 connections
// (list-large-json-2) and as a Table, as kubectl get asks for it
// (list-large-table); LIST where the list kept from the last one cannot
// serve as it is: the large namespace while a writer patches one of its
// widgets at 10/s (list-writes-json, list-writes-json-2), and a namespace
// of as many widgets padded to ~1.9 KB, over 16 MiB in all (list-huge-json,
// list-huge-json-2); CREATE; CREATE on bolt (create-bolt: a kapi of its
// own, examples/widgets -data DIR in a temporary directory on disk, 8
// writers at once); UPDATE (PUT); merge PATCH; server-side apply; PUT and
// merge PATCH on bolt (update-bolt, patch-bolt: 8 writers, beside the
// bolt-only server); the watch fan-out (watchers × a writer at a fixed
// rate: delivery latency, events lost, encodes per event; watch-small
// with 300 watchers, watch with 1,000; -rounds rounds, kapi and the
// ceiling in turn, the round with the least server CPU per delivered
// event of each, the events lost of the worst); idle watchers (RSS per
// watcher); informers starting at once (streaming lists read to their
// initial-events-end bookmark: 8 × 1,000 widgets in a namespace of their
// own, informers-small, and 100 × the large namespace, informers; then
// client-go dynamic informers); memory (RSS growth and live-heap growth
// for many widgets against their JSON size). The same widgets defined by a
// CustomResourceDefinition (examples/controlplane -pprof, a process of its
// own, with the typed widget's fields, constraints, defaults and list-map
// keys as a schema): get-cr, list-large-json-cr, create-cr and apply-cr
// against their own ceiling, and memory-cr, each beside the typed
// widget's figure of the same run. kinds: on a fresh control plane for
// each number of -kinds (10, 30, 100, 300, 1,000), that many generated
// CustomResourceDefinitions (20 to 50 properties each, 10 kinds to a
// group) applied server-side over HTTP as kubectl apply --server-side
// does: RSS and live heap per kind, the time from the last one's apply to
// its Established condition and to a first object created, and the first
// and warm response times of discovery (aggregated, and /apis with every
// group version) and OpenAPI (v2; the v3 index and one group version's
// document); -figures DIR draws them as SVG (package plot). Two more
// curves (curves.go): objects, one collection grown through -objects
// (1,000 to 1,000,000) in a bolt file and in one etcd member
// (-objects-stores; -objects-etcd-max caps etcd's sizes; -etcd-bin, or
// etcd is built as sqlrun.sh builds it), filled directly with renamed
// copies of a widget kapi stored, kapi started on it at each size: time
// to /readyz, the work after ready, RSS, LIST, GET and CREATE; and
// watchers, the watch fan-out at each of -watchers-curve (100 to 10,000)
// on a fresh kapi with no cap on watches, and on the ceiling: CPU per
// delivered event, delivery latency, RSS, with write syscalls per event
// and a CPU profile to say why. Every request workload runs
// closed-loop over -conns connections (unless it has its own number) for
// -duration, or at an offered -rate, in -rounds rounds against kapi and
// the ceiling in turn, the best round of each counting. On kapi on etcd:
// get-etcd, list-large-json-etcd, create-etcd, update-etcd, patch-etcd,
// apply-etcd (GET and the writes beside the etcd-only server),
// watch-small-etcd, watch-etcd, informers-small-etcd, informers-etcd.
//
// Run one workload alone with -workloads, e.g.
//
//	go run ./internal/test/loadtest -workloads create-bolt
//	go run ./internal/test/loadtest -workloads list-large-json,list-large-json-2
//	go run ./internal/test/loadtest -workloads list-huge-json,list-writes-json-2
//	go run ./internal/test/loadtest -workloads informers-small,informers
//	go run ./internal/test/loadtest -workloads memory
//	go run ./internal/test/loadtest -workloads memory,memory-cr,get,get-cr
//	go run ./internal/test/loadtest -workloads kinds -figures docs/figures
//	go run ./internal/test/loadtest -workloads objects -objects-etcd-max 300000 -objects-lists 3 -duration 2s -figures docs/figures
//	go run ./internal/test/loadtest -workloads watchers -figures docs/figures
//
// # The ceiling
//
// Before each workload runs against the ceiling, the harness records kapi's
// answer to one of its requests (status, headers, body) and configures the
// ceiling to answer every request with it; for the watch, every watcher's
// handler writes one recorded event frame after each write; for informers
// starting, it records kapi's whole answer to one streaming list (every
// ADDED frame and the bookmark), and the ceiling writes it to each client
// in one go and then holds the watch open. CREATE on bolt is replayed from
// the bolt server's answer.
//
// CREATE on bolt also runs against the bolt-only server, a third process
// (-serve-ceiling with -ceiling-store DIR, a directory of its own on
// disk): the ceiling, but each write first stores the answer it replays
// under a key of its own in kapi's bolt store, 8 writers sharing its
// commits as kapi's do. It is what kapi on bolt would do if its own
// request handling cost nothing: between it and the ceiling is what the
// store costs, between kapi and it what kapi's handling costs.
//
// # The SQL backends
//
// sqlrun.sh runs kapi on PostgreSQL (storage/postgres/cmd/widgets-postgres
// on a throwaway cluster, -serve-postgres) and kapi on etcd
// (storage/etcd/cmd/widgets-etcd on one etcd member) through the harness
// (-server), each against the ceiling, and the write workloads once more
// against the PostgreSQL-only server (-serve-ceiling -ceiling-postgres URL):
// the ceiling, but each write first stored through kapi's PostgreSQL store,
// the same statements and group commit with none of kapi's handling, as
// the bolt-only server is for bolt; its tables first hold as many rows as
// kapi's after seeding (-ceiling-postgres-fill). The etcd pass runs the etcd-only
// server (-serve-ceiling -ceiling-etcd ENDPOINTS) in the same rounds as
// kapi and the ceiling (-store-only URL), for GET and the writes: the
// ceiling, but each request first makes the etcd requests kapi's store
// makes for it (a POST's create-if-absent transaction, a PUT's or PATCH's
// compare-and-swap on the revision it last wrote, a GET's linearizable
// read of the store's revision) from a bare etcd client, and the report
// sets kapi on etcd's writes against it. -store-pid reports the store's
// processes' CPU (etcd; the postmaster and its backends) beside the
// server's. SCALE=N runs the scale run instead: N widgets stored as kapi
// stores them (-fill-postgres), then kapi's start-up time and RSS on them,
// and GET and LIST latency after.
//
// Its last pass is kube-apiserver on kine v0.17.5 on the same cluster
// (internal/test/kinebench, a module of its own outside go.work: build.sh
// builds both from the Go module proxy once, kube-on-kine.sh starts them
// and registers examples/widgets' Widget as a CRD), driven over TLS with a
// client certificate (-ca, -cert, -key) against a ceiling replaying its own
// answers; -store-pid counts kine and PostgreSQL. sqlsummary.py then puts
// the passes side by side with the targets (summary.md). PASSES
// picks passes and their order.
//
// # Memory
//
// The memory workload loads a fresh kapi and reads its RSS (from /proc)
// and its live heap: HeapAlloc from /debug/pprof/heap?gc=1&debug=1, right
// after the garbage collection gc=1 forces, before and after the load; a
// server without -pprof gets the RSS figure alone.
package main
