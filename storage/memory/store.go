package memory

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/watchfeed"
)

const (
	defaultHistory      = 10000
	defaultHistoryBytes = 256 << 20
)

// Option configures a [Store].
type Option func(*config)

type config struct {
	history      int64
	historyBytes int64
}

// WithHistory sets how many revisions of history the store keeps: with the
// store at revision r, reads at revisions r-n and later, and watches from
// them, work; older ones fail with [storage.ErrExpired]. It also bounds how
// far a watcher may fall behind. n below 1 counts as 1; the default is 10000.
// [WithHistoryBytes] may keep the window shorter.
func WithHistory(n int) Option {
	return func(c *config) { c.history = int64(max(n, 1)) }
}

// WithHistoryBytes bounds the memory history takes: the bytes of the values
// the store holds only for reads at older revisions and for watchers behind
// the latest (values that were since updated or deleted). When a write takes
// them over n, the window moves forward, ahead of [WithHistory]'s count,
// until they fit again; reads and watches it leaves behind fail with
// [storage.ErrExpired]. The last write's previous value is always kept, so
// that a watcher that has caught up never expires: history may exceed n by
// one value. n below 0 counts as 0; the default is 256 MiB.
func WithHistoryBytes(n int64) Option {
	return func(c *config) { c.historyBytes = max(n, 0) }
}

// Store is an in-memory [storage.Interface]. Its methods are safe for
// concurrent use. The zero value is not usable: call [New].
type Store struct {
	history      int64
	historyBytes int64 // the budget for heldBytes

	mu        sync.RWMutex
	closed    bool
	rev       int64 // revision of the last write
	compacted int64 // oldest revision reads may ask for
	keys      keyIndex
	log       eventLog // the events after compacted, oldest first
	// heldBytes is the length of the values of the versions that are not
	// their key's latest: what the store holds only for history.
	heldBytes int64

	// changed holds the channel (a chan struct{}) the next write or Close
	// closes, waking the watchers that have read everything, or noWaiters.
	// Watchers create it while holding only the read lock, hence the
	// atomic; an atomic.Value holds a channel without the allocation a
	// pointer to one costs each write.
	changed atomic.Value
}

// noWaiters is what Store.changed holds while no watcher waits.
var noWaiters any = (chan struct{})(nil)

var _ storage.Interface = (*Store)(nil)

// initialRevision is where a new store starts, as etcd does: no
// resourceVersion is ever "0", which clients send to mean "any". No change
// has it, so the history "before" it is empty rather than compacted.
const initialRevision = 1

// New returns an empty store at revision 1.
func New(opts ...Option) *Store {
	c := config{history: defaultHistory, historyBytes: defaultHistoryBytes}
	for _, opt := range opts {
		opt(&c)
	}
	s := &Store{
		history:      c.history,
		historyBytes: c.historyBytes,
		keys:         newKeyIndex(),
		rev:          initialRevision,
		compacted:    initialRevision,
	}
	s.changed.Store(noWaiters)
	return s
}

// Get returns the key's value at rev (0: the latest).
func (s *Store) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	if err := ctx.Err(); err != nil {
		return storage.KeyValue{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rev, err := s.readRevision(rev)
	if err != nil {
		return storage.KeyValue{}, err
	}
	r := s.keys.get(key)
	if r == nil {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	v, ok := r.at(rev)
	if !ok {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	return v.keyValue(key), nil
}

// List returns the keys with the given prefix as they were at
// opts.Revision (0: the latest), in key order.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if err := ctx.Err(); err != nil {
		return storage.ListResult{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rev, err := s.readRevision(opts.Revision)
	if err != nil {
		return storage.ListResult{}, err
	}
	res := storage.ListResult{Revision: rev}
	for r := range s.keys.from(max(prefix, opts.Start)) {
		if !strings.HasPrefix(r.key, prefix) {
			break
		}
		v, ok := r.at(rev)
		switch {
		case !ok:
		case opts.Limit > 0 && int64(len(res.Items)) == opts.Limit:
			res.Remaining++
		default:
			res.Items = append(res.Items, v.keyValue(r.key))
		}
	}
	return res, nil
}

// Revision returns the revision of the last write, 1 if there was none.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, storage.ErrClosed
	}
	return s.rev, nil
}

// Create stores value under key if the key is absent.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, storage.ErrClosed
	}
	r, b, i := s.keys.lookup(key)
	if r != nil && r.live() {
		return 0, storage.ErrExists
	}
	rev := s.rev + 1
	if v := (version{rev: rev, create: rev, value: value}); r == nil {
		s.keys.insert(&record{key: key, last: v}, b, i)
	} else {
		r.add(v)
	}
	s.commit(storage.Event{
		Type:     storage.Put,
		KeyValue: storage.KeyValue{Key: key, Value: value, CreateRevision: rev, ModRevision: rev},
	})
	return rev, nil
}

// Update replaces the value of an existing key, if its ModRevision is
// expect or expect is 0.
func (s *Store) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, cur, err := s.current(key, expect)
	if err != nil {
		return 0, err
	}
	rev := s.rev + 1
	r.add(version{rev: rev, create: cur.create, value: value})
	s.heldBytes += int64(len(cur.value))
	s.commit(storage.Event{
		Type:     storage.Put,
		KeyValue: storage.KeyValue{Key: key, Value: value, CreateRevision: cur.create, ModRevision: rev},
		Prev:     prevValue(cur.value),
	})
	return rev, nil
}

// Delete removes an existing key, if its ModRevision is expect or expect
// is 0, and returns the value removed with ModRevision set to the
// deletion's revision.
func (s *Store) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	if err := ctx.Err(); err != nil {
		return storage.KeyValue{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, cur, err := s.current(key, expect)
	if err != nil {
		return storage.KeyValue{}, err
	}
	rev := s.rev + 1
	r.add(version{rev: rev}) // a tombstone
	s.heldBytes += int64(len(cur.value))
	removed := storage.KeyValue{Key: key, Value: cur.value, CreateRevision: cur.create, ModRevision: rev}
	s.commit(storage.Event{Type: storage.Delete, KeyValue: removed, Prev: prevValue(cur.value)})
	return removed, nil
}

// Watch delivers every change to keys with the given prefix whose revision
// is greater than rev, until ctx ends. rev 0 is no exception: it replays
// every change since the store began, and so fails with [storage.ErrExpired]
// once the history window no longer reaches back to the store's start; to
// see only new changes, watch from [Store.Revision]. The channel is
// unbuffered; the goroutine feeding it exits when ctx ends or after the
// stream's final error event has been received.
func (s *Store) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rev < 0 {
		return nil, negativeRevision(rev)
	}
	rev = max(rev, initialRevision) // nothing happened at or before it
	s.mu.RLock()
	closed, compacted := s.closed, s.compacted
	s.mu.RUnlock()
	switch {
	case closed:
		return nil, storage.ErrClosed
	case rev < compacted:
		return nil, expired(rev, compacted)
	}
	out := make(chan storage.Event)
	go watchfeed.Serve(ctx, rev+1, out, func(next int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error) {
		return s.readLog(prefix, next, batch)
	})
	return out, nil
}

// Compact discards the history before rev: reads at revisions below it and
// watches from them fail with [storage.ErrExpired] from now on. A rev newer
// than the store's is [storage.ErrFutureRevision]; one at or below an
// earlier compaction changes nothing.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return storage.ErrClosed
	case rev > s.rev:
		return fmt.Errorf("%w: compact at %d, store at %d", storage.ErrFutureRevision, rev, s.rev)
	case rev > s.compacted:
		s.compact(rev)
	}
	return nil
}

// Close ends every watch with a final [storage.ErrClosed] event and releases
// the store's data. Every later call, Close included, returns
// [storage.ErrClosed].
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return storage.ErrClosed
	}
	s.closed = true
	s.keys = keyIndex{}
	s.log = eventLog{}
	s.heldBytes = 0
	s.wake()
	return nil
}

// readRevision resolves a read's revision (0: the latest) and checks that
// it is in the window. The caller holds the lock.
func (s *Store) readRevision(rev int64) (int64, error) {
	switch {
	case s.closed:
		return 0, storage.ErrClosed
	case rev < 0:
		return 0, negativeRevision(rev)
	case rev == 0:
		return s.rev, nil
	case rev > s.rev:
		return 0, fmt.Errorf("%w: revision %d, store at %d", storage.ErrFutureRevision, rev, s.rev)
	case rev < s.compacted:
		return 0, expired(rev, s.compacted)
	}
	return rev, nil
}

// current returns the live version of key that an update or delete
// replaces, checking the precondition expect. The caller holds the lock.
func (s *Store) current(key string, expect int64) (*record, version, error) {
	if s.closed {
		return nil, version{}, storage.ErrClosed
	}
	r := s.keys.get(key)
	if r == nil || !r.live() {
		return nil, version{}, storage.ErrNotFound
	}
	cur := r.latest()
	if expect != 0 && expect != cur.rev {
		return nil, version{}, storage.ErrConflict
	}
	return r, cur, nil
}

// commit makes ev, whose version the caller has already appended to its
// key (counting the value it superseded in heldBytes), the store's next
// revision, moving the history window along. The caller holds the write
// lock.
//
// Each step of the byte budget's loop drops one event from the log, and
// each write adds one, so the loop costs O(1) per write amortised.
func (s *Store) commit(ev storage.Event) {
	s.rev = ev.ModRevision
	if int64(s.log.len()) >= s.history {
		s.compact(s.rev - s.history)
	}
	s.log.push(ev, s.history)
	for s.heldBytes > s.historyBytes && s.compacted < s.rev-1 {
		s.compact(s.compacted + 1)
	}
	s.wake()
}

// compact moves the start of the window to c, in (s.compacted, s.rev]. Only
// the keys written by the events leaving the log are visited, so the cost
// is proportional to the history discarded. The caller holds the write lock.
func (s *Store) compact(c int64) {
	n := int(c - s.compacted)
	for i := range n {
		s.prune(s.log.at(i).Key, c)
	}
	s.log.dropFirst(n)
	s.compacted = c
}

// prune drops the versions of key that no read at c or later can see: all
// but the newest one at or below c, and that one too if it is a tombstone.
// A key left without versions leaves the index.
func (s *Store) prune(key string, c int64) {
	r := s.keys.get(key)
	if r == nil || r.version(0).rev > c {
		return
	}
	n, i := r.count(), 0
	for i+1 < n && r.version(i+1).rev <= c {
		i++
	}
	if r.version(i).deleted() {
		i++
	}
	if i == 0 {
		return
	}
	for j := range i {
		s.heldBytes -= int64(len(r.version(j).value)) // none was the latest but a tombstone's nil
	}
	if i == n {
		s.keys.delete(key)
		return
	}
	r.dropOldest(i)
}

// wake wakes the watchers waiting for a write. The caller holds the write
// lock.
func (s *Store) wake() {
	if ch, _ := s.changed.Swap(noWaiters).(chan struct{}); ch != nil {
		close(ch)
	}
}

// waitChannel returns the channel the next write closes. The caller holds
// the read lock, so no write can slip between its last look at the log and
// this call.
func (s *Store) waitChannel() <-chan struct{} {
	for {
		old := s.changed.Load()
		if ch, _ := old.(chan struct{}); ch != nil {
			return ch
		}
		ch := make(chan struct{})
		if s.changed.CompareAndSwap(old, ch) {
			return ch
		}
	}
}

const (
	// watchBatch is the most events a watcher copies out of the log at a
	// time, and so the most it can hold when it falls out of the window.
	watchBatch = 64
	// watchScan is the most log entries a watcher looks at under one read
	// lock, so that watchers of rarely written prefixes do not hold writers
	// up.
	watchScan = 1024
)

// readLog appends to batch the events for prefix from revision next on,
// and returns the revision to read from next time. When it found nothing
// left to read it also returns the channel to wait on; when the stream must
// end, the error to end it with.
func (s *Store) readLog(prefix string, next int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case s.closed:
		return batch, next, nil, storage.ErrClosed
	case next <= s.compacted:
		return batch, next, nil, fmt.Errorf("%w: the watch fell behind: its next revision %d left the history window, which starts at %d",
			storage.ErrExpired, next, s.compacted)
	}
	for scanned := 0; next <= s.rev && scanned < watchScan && len(batch) < watchBatch; scanned++ {
		if ev := s.log.at(int(next - s.compacted - 1)); strings.HasPrefix(ev.Key, prefix) {
			batch = append(batch, *ev)
		}
		next++
	}
	if len(batch) == 0 && next > s.rev {
		return batch, next, s.waitChannel(), nil
	}
	return batch, next, nil, nil
}

func expired(rev, compacted int64) error {
	return fmt.Errorf("%w: revision %d, history starts at %d", storage.ErrExpired, rev, compacted)
}

func negativeRevision(rev int64) error {
	return fmt.Errorf("memory: negative revision %d", rev)
}

// prevValue keeps Prev non-nil after an update or delete even when the old
// value was nil, since a nil Prev means "created".
func prevValue(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}
