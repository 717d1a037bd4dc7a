package storage

import "context"

// Interface is what kapi needs of a backend.
type Interface interface {
	Reader
	Writer
	Watcher
}

// Reader reads at the latest revision or at an older one in the history window.
type Reader interface {
	// Get returns the key's value at rev (0: latest). A key absent or deleted
	// at rev is ErrNotFound; rev compacted away is ErrExpired; rev newer than
	// the store is ErrFutureRevision.
	Get(ctx context.Context, key string, rev int64) (KeyValue, error)
	// List returns, in key order, the keys with the given prefix as they were
	// at one revision, starting at opts.Start (inclusive) and stopping after
	// opts.Limit items (0: no limit).
	List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error)
	// Revision is the store's current revision: that of its last write.
	// A new store is at revision 1 or more, never 0 (which clients send to
	// mean "any"), as etcd.
	Revision(ctx context.Context) (int64, error)
}

// Writer writes one key at a time; each successful write is one revision.
type Writer interface {
	// Create stores value under key if the key is absent (ErrExists
	// otherwise) and returns the write's revision. The store may keep value
	// itself, so the caller must not modify it afterwards (see
	// [KeyValue].Value); likewise for Update.
	Create(ctx context.Context, key string, value []byte) (int64, error)
	// Update replaces the value of an existing key (ErrNotFound otherwise,
	// whatever expect is). If expect is not 0 the key's current ModRevision
	// must equal it (ErrConflict otherwise). It returns the write's revision.
	Update(ctx context.Context, key string, value []byte, expect int64) (int64, error)
	// Delete removes an existing key, with the same precondition as Update,
	// and returns the value deleted with ModRevision set to the deletion's
	// revision.
	Delete(ctx context.Context, key string, expect int64) (KeyValue, error)
}

// Watcher streams changes.
type Watcher interface {
	// Watch delivers every change to keys with the given prefix whose
	// revision is greater than rev, in order, until ctx ends; rev 0 is no
	// exception (every change since the store began). A rev ahead
	// of the store is waited for. A rev that has left the history window
	// (a read at rev would fail with ErrExpired) is ErrExpired, returned at
	// once. When ctx ends the channel is closed with no error event; when the
	// backend ends the stream (ErrExpired for a watcher left behind,
	// ErrClosed) it sends one event with Err set, then closes.
	Watch(ctx context.Context, prefix string, rev int64) (<-chan Event, error)
}

// KeyValue is one version of one key.
type KeyValue struct {
	Key string
	// Value is shared, not copied: a backend may store the very slice
	// passed to Create or Update, and Get, List and Watch may hand the
	// store's own slice to every reader (package memory does both). Callers
	// must modify neither. Event.Prev is shared likewise.
	Value []byte
	// CreateRevision is the revision that created the key.
	CreateRevision int64
	// ModRevision is the revision of the key's last write.
	ModRevision int64
}

// ListOptions select a page of a List.
type ListOptions struct {
	// Revision to read at; 0 is the latest.
	Revision int64
	// Start is the first key to return (inclusive); empty starts at prefix.
	Start string
	// Limit is the most items returned; 0 returns all.
	Limit int64
}

// ListResult is one page of a List.
type ListResult struct {
	Items []KeyValue
	// Revision the page was read at: pass it back as ListOptions.Revision to
	// read the next page from the same snapshot.
	Revision int64
	// Remaining counts the keys after this page: 0 on the last page, and
	// only there. A backend may bound the count of a long rest (bolt,
	// sqlite and postgres count at most RemainingCountCap keys past the
	// page) and report a longer one as -1: some keys remain, how many is
	// not known. Kubernetes' remainingItemCount, which it feeds, is then
	// left unset, as kube-apiserver leaves it when it cannot give the exact
	// count.
	Remaining int64
}

// RemainingCountCap is how many keys past a page the backends that count
// them one by one (bolt, sqlite, postgres) count at most before they
// report ListResult.Remaining as -1. Counting the whole rest made each
// page cost the rest of the range, and a list paged through to its end
// (the watch cache's fill at start-up, a client's chunked LIST) cost the
// square of its length.
const RemainingCountCap = 1000

// EventType says what a change did.
type EventType int

// The kinds of change.
const (
	// Put: the key was created (Prev is nil) or updated.
	Put EventType = iota + 1
	// Delete: the key was removed; Value holds its last value.
	Delete
)

func (t EventType) String() string {
	switch t {
	case Put:
		return "PUT"
	case Delete:
		return "DELETE"
	}
	return "UNKNOWN"
}

// Event is one change, or the terminal error of a watch.
type Event struct {
	Type EventType
	// Key, Value, CreateRevision and ModRevision describe the key after the
	// change; for Delete, Value is the value removed and ModRevision the
	// deletion's revision.
	KeyValue
	// Prev is the value before an update or delete (non-nil even if that
	// value was empty); nil after a create, and only then.
	Prev []byte
	// Err ends the stream: it is set only on the last event sent.
	Err error
}
