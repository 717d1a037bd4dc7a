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
