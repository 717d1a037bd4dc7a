// Package robustness checks kapi from the outside, as etcd's robustness
// tests check etcd: concurrent clients over HTTP through two replicas on
// one etcd, with a replica stopped and started and store faults injected,
// their histories checked for linearizability with porcupine and every
// watcher's events compared with the store's own change log.
//
// # Runs
//
// The bounded run is part of CI (go test ./internal/test/robustness). Setting
// KAPI_ROBUSTNESS_LONG=1 runs the long form as well: a three-member etcd
// cluster, a member killed and restarted, for a minute
// (KAPI_ROBUSTNESS_DURATION changes it). TestBrokenServersAreCaught runs
// the same checks against replicas broken on purpose, and passes only if
// the checks fail them. TestStalledWatchers and TestOverload log the
// process's RSS; KAPI_ROBUSTNESS_STALLED sets the number of stalled
// watchers (0 for the baseline).
//
// # Beside the conformance suite's checker
//
// storagetest keeps its own linearizability checker, on the storage SPI:
// it runs on every backend (memory and bolt cannot have two replicas),
// checks store-wide consecutive revisions, which no HTTP client can see,
// and lives in kapi's module, which may not require porcupine. This one
// checks what only the whole server can get wrong: the watch cache, the
// consistent-read wait, the request path, a replica's restart.
//
// It is a module of its own so that porcupine and etcd's server stay out of
// kapi's dependencies.
package robustness
