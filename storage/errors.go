package storage

import "errors"

// Sentinel errors of every backend. Callers test them with errors.Is.
var (
	// ErrNotFound: the key does not exist at the revision read.
	ErrNotFound = errors.New("storage: key not found")
	// ErrExists: Create found the key already there.
	ErrExists = errors.New("storage: key already exists")
	// ErrConflict: a write's revision precondition did not hold.
	ErrConflict = errors.New("storage: revision precondition failed")
	// ErrExpired: the revision asked for has left the history window.
	ErrExpired = errors.New("storage: revision has been compacted")
	// ErrFutureRevision: the revision asked for is newer than the store's.
	ErrFutureRevision = errors.New("storage: revision is in the future")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("storage: store closed")
)

// Faults: the store could not do what was asked, for a reason of its own
// rather than of the request. A backend wraps the error it got in one of
// them (fmt.Errorf("%w: %w", storage.ErrUnavailable, err)), and, for a
// write that may have been applied all the same, in ErrOutcomeUnknown too.
var (
	// ErrUnavailable: the store cannot serve now (unreachable, no leader,
	// overloaded); the same call may succeed later.
	ErrUnavailable = errors.New("storage: unavailable")
	// ErrTimeout: the store did not answer in its own time; the same call
	// may succeed later. (A caller's context that ends is its ctx.Err().)
	ErrTimeout = errors.New("storage: timed out")
	// ErrTooLarge: the store refuses the value for its size. Nothing was
	// written.
	ErrTooLarge = errors.New("storage: value too large")
	// ErrNoSpace: the store is out of space or over its quota and refuses
	// writes until an operator frees some. Nothing was written.
	ErrNoSpace = errors.New("storage: out of space")
	// ErrOutcomeUnknown marks a failed write that may nonetheless have been
	// applied: the store failed, or the caller's context ended, after the
	// write was sent. Only a read can tell.
	ErrOutcomeUnknown = errors.New("storage: the write may or may not have been applied")
)
