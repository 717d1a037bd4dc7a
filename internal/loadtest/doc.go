// Command loadtest is kapi's load harness: it drives a Kubernetes-style API
// server over HTTP and measures it beside its ceiling, a no-op net/http
// server that writes the same response bytes.
//
// # Running
//
// From the repository root (the module is in go.work):
//
//	go run ./internal/loadtest -report BENCHMARKS.md
//
// builds examples/widgets, starts it (memory backend, -pprof), the ceiling
// (-serve-ceiling) and a kapi that counts its encodes (-serve-kapi), each
// its own process, runs every workload against kapi and then the ceiling,
// prints a table, writes the report and profiles kapi on every missed
// target. -json FILE writes the results as JSON.
//
// Against another server: -server URL (with -ca, -cert, -key for TLS and a
// client certificate; -server-pid for its CPU and RSS when it is local),
// and -ceiling URL for a ceiling started with -serve-ceiling ADDR.
//
// # Workloads
//
// GET one widget; LIST the small and the large namespace in JSON and
// protobuf; CREATE; UPDATE (PUT); merge PATCH; server-side apply; the watch
// fan-out (watchers × a writer at a fixed rate: delivery latency, events
// lost, encodes per event); idle watchers (RSS per watcher); informers
// starting at once (client-go dynamic informers, streaming lists); memory
// (RSS growth for many widgets against their JSON size). Every request
// workload runs closed-loop over -conns connections for -duration, or at an
// offered -rate.
//
// # The ceiling
//
// Before each workload runs against the ceiling, the harness records kapi's
// answer to one of its requests (status, headers, body) and configures the
// ceiling to answer every request with it; for the watch, every watcher's
// handler writes one recorded event frame after each write.
package main
