// Package pgtest starts throwaway PostgreSQL clusters for tests and
// benchmarks: initdb into a temporary directory, a server on 127.0.0.1 and
// a Unix socket in that directory only, stopped, crashed, killed and
// started again on demand, removed at the end.
//
// # Running as root
//
// PostgreSQL refuses to run as root. Run as root, pgtest runs initdb and
// the server as the postgres user (Debian's package creates it) through
// runuser, in a directory that user owns.
//
// # Faults
//
// Stop("immediate") is a crash in all but name: no shutdown checkpoint,
// every connection cut. Kill sends SIGKILL to the postmaster, whose
// backends then end by themselves; StartAfterKill waits until they have let
// go of the shared memory, which PostgreSQL needs before it starts again.
//
// # Without PostgreSQL
//
// Start fails with ErrNoPostgres when initdb is found neither on PATH nor
// under /usr/lib/postgresql; tests then skip, saying why, except in CI.
package pgtest
