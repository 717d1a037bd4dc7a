// Package groupcommit is the write queue of kapi's storage backends that
// commit through one goroutine: bolt, sqlite and postgres. Every write is a
// request handed to that goroutine, the committer, which takes all the
// requests waiting when it starts a transaction and commits them in that
// one transaction, so N concurrent writers share one commit (and its fsync
// or round trips) instead of queueing for N.
//
// # The invariant
//
// A request handed to the committer (Submit returned nil) is answered
// exactly once: its done channel is closed after the Commit call whose
// batch held it returned, and only then. Commit sees requests in the order
// they were handed over, and each batch holds at most MaxBatch of them.
// What a request's outcome is, and how a failed precondition fails only its
// own request, is the backend's business, in Commit.
//
// # Gathering a batch
//
// The committer blocks for a first request, yields once (with few cores,
// the writers the last commit answered are often still runnable, not yet
// queued), then takes every request already waiting, without waiting for
// more. Taking only those waiting splits concurrent writers into small
// batches when each spends longer between writes than a commit takes (an
// API server decoding the next request). So with Linger set, when the
// committer knows of more writers than it has in hand (those of the last
// commit and those that queued up during it), it waits for them, at most
// Linger(average commit time): a straggler misses one commit's wait either
// way, and every writer it waits for shares a commit instead of paying for
// one of its own. A lone writer is never known to have company, and never
// waits.
//
// # Slow commits
//
// A request handed to a waiting committer never asks its context for Done
// (kapi's store guard arms a timer and a derived context when it is asked,
// a cost no write that is answered in time needs); nor does one that has
// to wait while the committer commits the batch before it, under load the
// usual case, unless that batch turns slow: a batch's slow signal also
// closes once the batch is answered, and tells Submit to try again. So
// that a write whose commit hangs (an fsync stuck on a failing disk)
// still has its guard notice it, the committer starts one timer per
// batch, and the batch's writers ask for Done once it fires, after 100 ms: Do, which then waits
// for the outcome however long it takes (bolt, sqlite), and Wait, which
// then also returns when the context ends (postgres, whose writer
// withdraws a request the committer has not sent yet).
//
// # Idle work
//
// A backend with work to do between writes (sqlite deletes the log rows
// that left its window) sets Pending and Idle: while Pending says there is
// work and no request waits, the committer calls Idle, so that no write
// ever waits for more than one small piece of it.
//
// # The slow, obviously correct path
//
// MaxBatch 1: every request its own transaction, in arrival order.
package groupcommit
