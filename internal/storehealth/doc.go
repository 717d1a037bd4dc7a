// Package storehealth is what a kapi server knows of its store's
// reachability, and the store as requests see it: failing fast while the
// store is down instead of queueing.
//
// # What it owns
//
// Health remembers what the readiness check of the store (/readyz's
// storage check, Health.ReadyCheck) finds. While it finds the store
// unreachable every call made through Health.Store fails at once with
// storage.ErrUnavailable: the server answers a write 503 with Retry-After,
// its outcome known (not applied), a consistent read 503 likewise, and
// neither holds an in-flight slot for the whole request timeout. What the
// watch cache serves (resourceVersion=0 lists and gets, watches), /version
// and the probes do not touch the store and go on being served.
//
// kube-apiserver has no such switch: its requests wait on etcd until their
// timeout, each holding an in-flight slot, so that under load even the
// reads its cache could serve are refused with 429.
//
// # Invariant
//
// The store is thought down only when the readiness check fails, never on
// one call's error. A check runs when /readyz asks, when the server's
// watch cache reports an error (Health.Suspect), and when a call to the
// store fails with a fault or has not returned within CheckTimeout (an
// unreachable etcd makes calls hang rather than fail). While the store is
// down the check is repeated every ProbeInterval; the first that passes
// lets calls through again (within ProbeInterval + ProbeTimeout of the
// store's return). A call already waiting on the store when it is found
// down is released then and answered as if it had come after: a write so
// released is reported with storage.ErrOutcomeUnknown as well, since the
// store may have applied it, unless the store had already answered it
// (not found, exists, conflict, ...), an answer that stands.
//
// # Cost
//
// A call through the guard costs an atomic load and one small allocation
// (BenchmarkGuard: about 0.1 µs over the memory store's own). What
// releases a call and what notices a slow one, a cancellable context and
// a timer (about a microsecond more), are set up only when the store asks
// the call's context for Done, that is, when it waits; a store that does
// not wait cannot be released by a context anyway, and sees the release
// in the context's Err.
//
// # The slow, obviously correct path
//
// The store itself, unguarded: every call waits for the store's own answer
// or for the request's deadline. Health.Store gives the same answers
// whenever the store is reachable; TestGuardIsTransparent holds it to that,
// and apiserver's outage tests and storage's conformance suites (their
// Faults groups) hold the whole to what clients see.
package storehealth
