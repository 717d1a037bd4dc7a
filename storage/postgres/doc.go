// Package postgres is kapi's storage backend on PostgreSQL: a
// [storage.Interface] in a few tables of one schema, so that a service
// keeps its API's objects where it keeps the rest of its data (backed up,
// replicated and operated the same way), and any number of kapi servers on
// the database serve one API.
//
//	s, err := postgres.Open(ctx, "postgres://kapi@db.internal:5432/kapi")
//	if err != nil { ... }
//	defer s.Close()
//	srv, err := apiserver.New(apiserver.WithStorage(s))
//
// It is a module of its own (github.com/kapi-dev/kapi/storage/postgres,
// on github.com/jackc/pgx/v5), so that importing kapi never brings in a
// database driver.
//
// # Schema
//
// [Open] creates, in the schema [WithSchema] names ("kapi" by default),
// if they are missing:
//
//   - revision: one row, the store's revision.
//   - compaction: one row, the start of the history window (compacted),
//     and how far the log has been pruned to it (pruned).
//   - current: the latest version of every live key (key, value,
//     create_rev, mod_rev), keyed by key. A Get or a List at the latest
//     revision reads only it: a List is one index range scan, in key order.
//   - log: every version a read or watch in the window may need, keyed by
//     the revision that wrote it: the key, the value (NULL for a
//     deletion), the key's create_rev and prev_rev, the revision of the
//     version it replaced (0 for a creation); with an index on (key, rev).
//     A Get at an older revision is the key's newest log row at or below
//     it; a List, the newest row of each key in the range (but a List at
//     the revision the store is still at, as each page of a relist on a
//     quiet store is, reads current: one statement chooses, in the
//     snapshot it reads the rows in); watches read
//     the log in revision order, each row joined with the row of its
//     prev_rev for the event's previous value.
//
// Keys are bytea, so that they order byte by byte as Go strings do,
// whatever the database's collation. Every read that depends on the window
// reads the revision and compaction rows in the same statement, and so in
// the same snapshot, as its data. A write stores its version both in
// current and in log, so the tables hold the live values twice: the price
// of a latest List that scans only live rows.
//
// A page of a List counts at most 1,000 keys past itself for its
// Remaining (reporting -1, "some, not counted", when more follow, which
// the server answers without remainingItemCount, as kube-apiserver does
// when it cannot count exactly), so that a page costs about its own rows
// however long the list.
//
// # Revisions, and why a watch never skips one
//
// A watch that reads "the log after the last revision I saw" skips a
// revision if a transaction with a lower revision commits after one with a
// higher: that is how kine, which takes revisions from a sequence, can lose
// events (k3s-io/kine#676). Here that cannot happen, by construction:
// every write transaction first locks the revision row (SELECT ... FOR
// UPDATE), reads the versions it replaces, writes, sets the row to its last
// revision, and only then commits, releasing the lock. The next writer,
// in this process or in any other, gets its revision only after that
// commit, so transactions commit in revision order, and any snapshot that
// sees a revision sees every revision below it. The test
// TestWatchNeverSkipsALateCommit checks it with several stores on one
// schema, concurrent writers and commits delayed after their revisions are
// assigned; with a test-only switch that takes revisions from a sequence
// instead, the same test finds every watcher skipping revisions.
//
// The lock makes writes one transaction at a time across the database; a
// process recovers throughput by group commit, as the bolt backend does:
// one goroutine, the committer, applies every write waiting when it starts
// a transaction in that one transaction (at most 256), in two round trips
// and one WAL flush for all of them: BEGIN, the lock and the current
// versions of the batch's keys; then, once the committer has checked each
// write's precondition against them (in order, so that a key written
// twice sees its first write) and numbered those that hold, the log rows,
// the current rows, the counter and the notification in one statement,
// and COMMIT, sent together. A failed precondition fails only its own write and uses no
// revision. Revisions are store-wide and consecutive, and a new store is
// at revision 1, as etcd's. (Doing it all on the server in one round trip,
// one statement per round of the batch, measured slower: about twice
// these two round trips' time per batch on a local server.) The lock is
// held for a round trip and the committer's own work between them, never
// for a caller: a process that stalls holding it is ended by the server
// (idle_in_transaction_session_timeout, see Faults); a write waiting for
// the lock gives up after three quarters of [WithTimeout] (lock_timeout),
// and is then known not to have been applied.
//
// # Watch, LISTEN and NOTIFY
//
// One goroutine per store, the poller, reads the log after the last
// revision it has (512 rows at a time) and keeps the last events in
// memory (4096 of them, 16 MiB of values); each watch runs one goroutine
// that takes its events from there, or, while it is further behind (a
// watch from an older revision), reads them from the log itself, 64 at a
// time. Writers never wait for watchers; a watcher that falls out of the
// window ends with [storage.ErrExpired], after Close with
// [storage.ErrClosed].
//
// A store's own commits need no read: their revisions follow every
// revision before them, all committed (the lock), so when the poller has
// read up to the first of a batch's, the committer appends the batch's
// events itself (each with the version it replaced, which the batch read
// under the lock), as the log would give them, before its writers are
// answered. Only a batch that follows another replica's write not yet
// read is left to the poller. A write then costs PostgreSQL its commit's
// two round trips and no third to read it back (TestOwnWritesNotReadBack).
//
// Every write transaction also calls pg_notify on the schema's channel, and
// each store keeps one connection LISTENing to it: a notification wakes the
// poller at once, and so does a commit of the store's own that it could
// not follow. Nothing depends on a
// notification arriving: the poller also reads the log every poll
// interval ([WithPollInterval], 1s by default), so a lost notification
// (or a listener that is reconnecting) delays an event by at most that. An
// idle store costs the database one indexed read per interval.
//
// # Consistent reads without a query: the sole-writer lease
//
// A consistent read (a GET or LIST without resourceVersion) must see
// every write acknowledged before it began, by any replica: the server
// asks [Store.Revision] and serves the read from its watch cache once the
// cache has reached it. Asking PostgreSQL costs a round trip per read
// (batched, see Revision). A revision fed by NOTIFY would not do: a
// notification reaches a listener some time after the writer's COMMIT
// has returned, so a write another replica has acknowledged may not have
// been notified yet when a read begins.
//
// While one store is the only one whose writes the database accepts,
// though, every revision committed is its own (or was there when it
// became the only one), and it answers Revision without a query. That is
// the sole-writer lease, one row of the table writer_lease (mode sole or
// shared, holder, term, lease_ms), beside a table writers of the stores
// that have lately written while the lease was shared (holder, until).
// The row holds no time: term counts every take, renewal, share and
// release of the lease, and lease_ms is the duration the last one granted
// (2s by default, [WithWriterLease]).
//
//   - Every write transaction, in its first round trip, reads the lease
//     in a statement after the revision lock is held, and commits only if
//     the mode is shared or the store is the holder; otherwise it rolls
//     back (nothing was applied) and is sent again once the store has
//     shared the lease. The holder's writes cost one statement more in the
//     round trip they already make, and no round trip.
//   - A store watches a lease it does not hold by its term: it reads
//     (term, lease_ms), and may act on the lease (share or take it) once
//     its own monotonic clock has passed lease_ms since the answer came,
//     and only if the term is then still the same (the statement that
//     acts says WHERE term = the one seen); a changed term starts the
//     wait again. This is how Kubernetes' leader election watches a
//     lease record (client-go's leaderelection): no clock is compared
//     with another's.
//   - Taking the lease is a transaction that holds the revision lock: it
//     sets mode sole, the holder, the store's duration and the next term,
//     if no other store has registered as a writer lately and the term is
//     the one the store watched for a duration (or the lease is its own);
//     and reads the revision under the lock. Every write committed before
//     is at or below that revision; every write of another store after it
//     finds the lease taken and rolls back. A lease given up (a store that
//     closes releases it, with lease_ms 0) may be taken at once.
//   - The holder renews the lease every quarter of its duration (one
//     UPDATE of the term, WHERE it still holds it and no other store has
//     registered as a writer lately), and answers Revision itself only
//     while its own monotonic clock has not passed the time it sent its
//     last successful renewal (or the take) plus the duration, less an
//     eighth of it. Its answer is the highest revision it knows committed
//     (its commits', and the one it read when it took the lease), once
//     the commit it has under way, if any, is answered; and while a
//     commit's outcome is unknown (it may have committed a revision above
//     that) it asks PostgreSQL instead, until its next commit reads the
//     revision under the lock again.
//   - A store whose write was refused registers as a writer (which stops
//     the holder's renewals) and watches the lease's term, under the
//     revision lock, and turns it to shared (next term) once it has
//     watched it unchanged for its duration: it waits out the lease once,
//     and only if the holder was still renewing. A shared lease is
//     watched for a duration too before it is taken, so that the old
//     holder, if it writes too, registers first. A store that writes
//     while the lease is shared keeps its registration alive for ten
//     durations after its last write (20s by default); once no other
//     store's registration is alive, a store takes the lease again (the
//     one still writing, as a rule: each tries every quarter of the
//     duration). So replicas that all write, even seldom, keep it shared,
//     and a replica's writes wait out a lease at most once per ten
//     durations. Each registration, and each take, deletes the
//     registrations that ran out, and a store that closes deletes its
//     own, so the table holds the stores that wrote lately.
//   - Without the lease (shared, or not renewed in time), Revision asks
//     PostgreSQL as before.
//
// A lease's duration is at least 100ms and at most half the store's
// [WithTimeout] (a longer one is cut to that): a write that waits out a
// vanished holder's lease then commits within its timeout. A refused
// write waits out the holder's duration, not its own store's: stores on
// one schema should share their lease and timeout settings.
//
// Why it is linearizable: a read the holder answers itself began before
// its own reckoning of the lease ran out, the duration less an eighth
// after it sent its last renewal (or take), which set some term t. No
// other store's write commits until the lease is shared or taken, which
// needs the term still t after the other store watched it for the
// duration from an answer that showed t; that answer was sent after the
// renewal ran, so after the holder sent it. So, if the two clocks' rates
// differ by less than the margin allows, the holder's reckoning had run
// out before any other store's write could commit. When the read began,
// every write committed in the database was then either committed before
// the holder took the lease (at or below the revision it read then) or
// the holder's own: answered (at or below known) or under way (waited
// for). Writes acknowledged before the read began are among them; the
// cache the read is then served from has them all.
//
// The assumptions: the holder's and the watching store's clocks run at
// rates that differ by less than an eighth of the duration over the
// duration (about 6 %); nothing is assumed of PostgreSQL's clock, and no
// clock needs to agree with another or be free of steps (Go's monotonic
// clock is not stepped by NTP or by setting the time). Go's monotonic
// clock does stop while the machine is suspended, though: a holder whose
// machine (or VM) is suspended and resumed counts the pause as no time,
// and may answer from its cache after the lease has moved on. A holder
// that can be suspended is outside the assumption; run replicas that
// might be with [WithWriterLease](-1). PostgreSQL's own clock (now()) dates
// only the writers' registrations, which decide which store tries to
// take the lease, never whether a store may write: a step of it can make
// a store wait a lease out once more, or take the lease sooner, not read
// stale. The lease also assumes that a take or renewal PostgreSQL
// acknowledged survives a crash: the store's sessions set
// synchronous_commit on whatever the database's default (fsync must be
// on, and a failover must not lose acknowledged commits: an asynchronous
// standby promoted may, which loses acknowledged writes as well); and
// that every store on the schema checks it: stores of a kapi version
// from before the lease must not write beside ones that have it (upgrade
// all, or run the new ones with WithWriterLease(-1), which never take it,
// until none is left).
//
// While PostgreSQL is away, the holder answers consistent reads from its
// cache until its lease runs out (no write can be made meanwhile), and
// then fails them as before.
//
// Measured on the load harness (the get workload: a GET without
// resourceVersion at 8 connections, each server against the replayed-bytes
// ceiling in the same pass; kapi on PostgreSQL with the lease, as before
// it, and on memory, alternated in three rounds, a fresh server and schema
// each, load average 5.1 to 5.5): the holder served 74 to 100 % of its
// ceiling (median 78 %; 12,174 GETs/s) at 67 to 73 µs of kapi's CPU per
// GET and none of PostgreSQL's, against 35 to 58 % (median 46 %; 5,904/s)
// at 100 to 141 µs plus 46 to 59 µs of PostgreSQL's before, and memory's
// 70 to 79 % (median 72 %; 8,508/s) at 66 to 74 µs: the consistent GET
// matches memory's.
//
// Several stores that all write (replicas behind a load balancer) keep
// the lease shared, and ask PostgreSQL on each consistent read, as
// before; one store that writes alone, with any number of others that
// only read (and ask), answers its own. TestLeaseStopsStaleConsistentReads
// checks that a write of another store waits the lease out and the
// holder then asks; with the other store's check left out
// (WithoutLeaseCheck, a test-only switch) its write commits at once and
// the holder's Revision misses it, which the same test catches.
// TestLeaseSurvivesPostgresClockStepForward checks that a forward step of
// PostgreSQL's clock does not let another store write while the holder
// still reckons it holds the lease.
// TestLeaseTakeover checks that a holder that stops renewing holds the
// others' writes up for one lease, and that the lease then moves to the
// store that writes.
//
// # Compaction
//
// The window is the last [WithHistory] revisions (10000 by default). When a
// commit takes the store a tenth of the window past it, and every ten poll
// intervals for other replicas' writes, the store's compactor moves the
// window's start (one UPDATE of the compaction row, after which reads and
// watches below it fail with ErrExpired, 410 Gone at the HTTP layer), then
// prunes the log behind it in transactions of 500 revisions each: for
// each log row of those revisions it deletes the version the row replaced,
// and the row itself if it is a deletion. What stays is every revision of
// the window and, for each live key, its newest version before the window,
// so the log holds at most the window plus one row per key. Writers never
// wait for pruning (it takes no lock they take); a pruning transaction
// deletes at most 1000 rows by primary key, and does not wait for its WAL
// to be flushed (a pruning lost in a crash is done again). Several
// replicas prune in turns on the compaction row's lock. [Store.Compact]
// compacts on demand.
// PostgreSQL's autovacuum reclaims the deleted rows' space.
//
// # Faults
//
// Every call is bounded by [WithTimeout] (10s by default): waiting for a
// pooled connection, each statement (the session's statement_timeout),
// and a write's transaction; a session left idle in a transaction, such as
// one whose client vanished holding the revision lock, is ended by the
// server after twice that. PostgreSQL unreachable, restarting or refusing
// connections is [storage.ErrUnavailable]; a timeout (the store's or the
// server's statement_timeout) is [storage.ErrTimeout]; a full disk is
// [storage.ErrNoSpace]; a key too large for the index is
// [storage.ErrTooLarge]. A write whose round trip was sent but not
// answered (a lost connection, a timeout, the server shutting down) is
// also [storage.ErrOutcomeUnknown]: only a read can tell. A write that
// failed before it was sent, or that the server answered with an error,
// was not applied; so was a write whose caller stopped waiting before the
// committer sent it, which fails with [storage.ErrUnavailable] (503 with
// Retry-After), not as its caller's own timeout. Once a call has found
// PostgreSQL away, the committer pings its connection before sending a
// write on it, until a write commits again: a write made while the server
// is down fails as not applied, not as unknown. The HTTP layer answers these 503 or
// 504 with Retry-After, "may or may not have been applied" where the
// outcome is unknown. The pool reconnects by itself, and the poller and
// the listener resume, so a store outlives a restart of PostgreSQL
// without being reopened.
//
// # Testing against a throwaway PostgreSQL
//
// Package pgtest starts a cluster of a test's own (initdb into a temporary
// directory, loopback only), and crashes, kills and restarts it: the
// package's own tests, the HTTP robustness check with several replicas
// (internal/test/robustness) and the load harness's PostgreSQL rows use it.
// Two and three replicas stay linearizable, and their watchers exact,
// through a replica's restart and PostgreSQL killed and restarted.
//
// # Choosing it
//
// Pick this backend when the service runs PostgreSQL already and wants its
// API's objects there, or wants several stateless kapi replicas without
// running etcd: each replica serves reads from its own watch cache, so
// the database sees writes, consistent-read revision checks (none while a
// replica holds the sole-writer lease) and the pollers' reads of other
// replicas' writes. Writes are serialised across the database by the
// revision lock and group-committed per process; for one node with no
// database, the bolt backend is simpler, and etcd remains the choice
// where etcd is already run.
//
// Measured on a 2-core machine shared by the server, PostgreSQL and the
// load generator (internal/test/loadtest/sqlrun.sh, 8 connections, every
// row in one run; medians of three runs, BENCHMARKS.md has them and those
// before): kapi on PostgreSQL wrote 4,400 creates/s, 4,023 PUTs, 4,691
// merge PATCHes and 4,224 server-side applies, 1.27x to 1.43x kapi on one
// etcd member and 5.7x to 15.1x kube-apiserver on kine v0.17.5 on the same
// PostgreSQL, at 218 to 255 µs of kapi and PostgreSQL CPU per write (kapi
// and etcd: 418 to 469 µs; kube-apiserver, kine and PostgreSQL: 2.6 to
// 6.8 ms). Reads come from the watch cache, as on the memory backend: a
// consistent GET at 102 % of its ceiling (memory 94 %), a LIST of 10,000
// widgets at 96 % (memory 92 %).
//
// What bounds writes: a batch of about 8 writes makes 2 round trips and 5
// statements (BEGIN, the revision lock, the lease check with the current
// rows; the log, the current rows, the counter and the notification in one
// statement, COMMIT). A bare client issuing the same statements through
// this store at the same concurrency makes the same commits, as full (8
// writes each, counted with pg_stat_statements), and writes 4,800 to
// 6,800 times a second; kapi beside it, in alternated rounds, reached
// 0.71x to 0.85x its rates (medians of the same three runs: create 0.80,
// PUT 0.85, merge PATCH 0.72, apply 0.71; 0.56x to 0.98x in single runs
// on this and slower machines): kapi's request handling (102 to 172 µs
// of CPU per write in those runs, the bare client's 68 to 99) runs
// between commits, in series with them because 8 writers answered
// together come back together. Overlapping it with the
// next commit cannot pay: PostgreSQL releases the revision lock only once
// the COMMIT's WAL flush is done, and splitting the writers into two
// batches that take turns halves the writes per commit (measured 1.2 to
// 1.6 times slower). A commit that does not wait for the writers it
// expects makes smaller batches: measured in 3 alternated pairs, kapi and
// the bare client each wrote a fifth to a third fewer merge PATCHes a
// second, at 1.3 to 1.7 times the CPU per write; one that waits twice as
// long made batches no fuller and raised no ratio.
//
// Every row again, side by side, from the repository root (the first run
// builds kine and kube-apiserver):
//
//	internal/test/loadtest/sqlrun.sh
package postgres
