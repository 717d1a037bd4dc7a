package postgres

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/watchfeed"
)

const (
	// pollBatch is the most log rows the poller reads at a time.
	pollBatch = 512
	// recentEvents and recentBytes bound what the poller keeps in memory
	// for the watchers: a watcher further behind reads the log itself.
	recentEvents = 4096
	recentBytes  = 16 << 20
	// watchBatch is the most events a watcher reads from the log at a
	// time, and watchScan the most revisions one of its reads looks at,
	// so that a watcher of a rarely written prefix reads in short steps.
	watchBatch = 64
	watchScan  = 1024
)

// Watch delivers every change to keys with the given prefix whose revision
// is greater than rev, until ctx ends. rev 0 is no exception: it replays
// every change since the store began, and so fails with
// [storage.ErrExpired] once the window no longer reaches back that far.
//
// One goroutine per store, the poller, reads the log in revision order and
// keeps the latest events in memory; each watch runs a goroutine that takes
// its events from there, or, while it is further behind, reads them from
// the log itself. Writers never wait for watchers. A watcher whose next
// revision leaves the window (see [Store.Compact]) receives one event whose
// Err is ErrExpired; after [Store.Close], one whose Err is
// [storage.ErrClosed]; a failed read of the log (PostgreSQL away) ends it
// with one wrapping [storage.ErrUnavailable] or [storage.ErrTimeout], and
// the caller watches again from its last revision. The channel is
// unbuffered; it is closed after the final event, or when ctx ends.
func (s *Store) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	if err := s.check(ctx, rev); err != nil {
		return nil, err
	}
	rev = max(rev, initialRevision) // nothing happened at or before it
	// Another replica may have compacted: ask the database.
	qctx, cancel := s.opContext(ctx)
	var cur, compacted int64
	err := s.pool.QueryRow(qctx, s.sql.window).Scan(&cur, &compacted)
	if err != nil {
		err = s.fail(qctx, err)
	}
	cancel()
	if err != nil {
		return nil, err
	}
	if rev < compacted {
		return nil, expired(rev, compacted)
	}
	out := make(chan storage.Event)
	go watchfeed.Serve(ctx, rev+1, out, func(next int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error) {
		return s.readEvents(ctx, prefix, next, batch)
	})
	return out, nil
}

// readEvents is a watcher's read (a watchfeed.ReadFunc): from the poller's
// events if it holds revision next, otherwise from the log.
func (s *Store) readEvents(ctx context.Context, prefix string, next int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error) {
	wait := s.waitChannel() // before reading: a change the read misses closes it
	if s.closed.Load() {
		return batch, next, nil, storage.ErrClosed
	}
	batch, next, first, held, caughtUp, err := s.recent.read(prefix, next, batch)
	switch {
	case !held:
		return s.readLog(ctx, prefix, next, first-1, batch)
	case caughtUp:
		return batch, next, wait, nil
	}
	return batch, next, nil, err
}

// readLog reads, for a watcher behind the poller's events, the events for
// prefix from revision next to at most upto, which the poller has read.
func (s *Store) readLog(ctx context.Context, prefix string, next, upto int64, batch []storage.Event) ([]storage.Event, int64, <-chan struct{}, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	upto = min(upto, next+watchScan-1)
	rows, err := s.pool.Query(ctx, s.sql.watchLog, []byte(prefix), prefixEnd(prefix), next, upto, watchBatch)
	if err != nil {
		return batch, next, nil, s.watchError(ctx, err)
	}
	n := len(batch)
	compacted, last, err := scanEvents(rows, func(ev storage.Event) { batch = append(batch, ev) })
	if err != nil {
		return batch[:n], next, nil, s.watchError(ctx, err)
	}
	if next <= compacted {
		return batch[:n], next, nil, watchfeed.FellBehind(next, compacted)
	}
	if len(batch)-n == watchBatch {
		return batch, last + 1, nil, nil
	}
	return batch, upto + 1, nil, nil
}

func (s *Store) watchError(ctx context.Context, err error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	return s.fail(ctx, err)
}

// scanEvents reads the rows of pollLog or watchLog, giving each event to
// add, and returns the window's start and the last event's revision.
func scanEvents(rows pgx.Rows, add func(storage.Event)) (compacted, last int64, err error) {
	defer rows.Close()
	for rows.Next() {
		var (
			rev, create, prevRev *int64
			key, value, prev     []byte
			deleted              *bool
		)
		if err := rows.Scan(&compacted, &rev, &key, &value, &create, &prevRev, &deleted, &prev); err != nil {
			return 0, 0, err
		}
		if rev == nil || *rev <= compacted {
			// No log row (the row only carries the window), or one no
			// watcher may read any more, which may have lost the
			// version before it to pruning.
			continue
		}
		ev := storage.Event{Type: storage.Put, KeyValue: storage.KeyValue{Key: string(key), Value: value, CreateRevision: *create, ModRevision: *rev}}
		if ev.Value == nil && !*deleted {
			ev.Value = []byte{}
		}
		if *prevRev > 0 {
			if prev == nil {
				// The version it replaced is gone: pruned by a
				// compaction past this revision.
				return 0, 0, fmt.Errorf("%w: the version of %q before revision %d was compacted", storage.ErrExpired, key, *rev)
			}
			ev.Prev = prev
		}
		if *deleted {
			ev.Type, ev.Value = storage.Delete, ev.Prev
		}
		add(ev)
		last = *rev
	}
	return compacted, last, rows.Err()
}

// pollLoop is the poller: it reads the log after the last revision it has,
// whenever a commit of this store, a notification or the poll interval
// says there may be more. It runs from Open until Close.
func (s *Store) pollLoop() {
	ticker := time.NewTicker(s.config.pollInterval)
	defer ticker.Stop()
	for {
		for {
			more, err := s.poll()
			if err != nil || !more {
				break
			}
		}
		select {
		case <-s.closing:
			return
		case <-s.pollNow:
		case <-ticker.C:
		}
	}
}

// poll reads the log once and says whether there may be more to read at
// once. Transactions commit in revision order (see commit.go), so a read
// sees every revision up to the last it returns: the poller trusts it and
// goes on from there.
func (s *Store) poll() (more bool, err error) {
	ctx, cancel := context.WithTimeout(s.bg, s.config.timeout)
	defer cancel()
	after := s.recent.last()
	rows, err := s.pool.Query(ctx, s.sql.pollLog, after, pollBatch)
	if err != nil {
		return false, err
	}
	var events []storage.Event
	compacted, _, err := scanEvents(rows, func(ev storage.Event) { events = append(events, ev) })
	if err != nil {
		return false, err
	}
	if compacted > after {
		// The poller fell out of the window: the revisions up to its
		// start are gone. Start again there; the watchers that still
		// needed them end with ErrExpired.
		s.recent.reset(compacted, compacted)
		s.wake()
		return true, nil
	}
	s.recent.add(events, compacted)
	s.wake()
	return len(events) == pollBatch, nil
}

// listenLoop keeps a connection LISTENing on the store's channel, which
// every write transaction notifies as it commits, and wakes the poller for
// each notification. Nothing depends on it: it only makes watches prompt.
// It runs from Open until Close.
func (s *Store) listenLoop() {
	for {
		s.listenOnce()
		select {
		case <-s.closing:
			return
		case <-time.After(s.config.pollInterval):
		}
	}
}

func (s *Store) listenOnce() {
	conn, err := pgx.ConnectConfig(s.bg, s.listen)
	if err != nil {
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(ctx)
	}()
	channel := s.sql.channel
	if s.config.listenElsewhere {
		channel = pgx.Identifier{s.sql.channelName + ".nobody"}.Sanitize()
	}
	if _, err := conn.Exec(s.bg, "LISTEN "+channel); err != nil {
		return
	}
	s.pollSoon() // for what was notified while nobody listened
	for {
		n, err := conn.WaitForNotification(s.bg)
		if err != nil {
			return
		}
		// A commit's notification names the revision it took the store
		// to: one the poller has read already, or one of this store's
		// own commits, which the committer follows itself or else wakes
		// the poller for (even if it failed: it may pass over another
		// replica's notification here), needs no read. The notification
		// may come before the committer has read its COMMIT's answer.
		if rev, err := strconv.ParseInt(n.Payload, 10, 64); err == nil && rev <= max(s.recent.last(), s.committing.Load()) {
			continue
		}
		s.pollSoon()
	}
}

func (s *Store) pollSoon() {
	select {
	case s.pollNow <- struct{}{}:
	default:
	}
}

// wake wakes the watchers waiting for the poller.
func (s *Store) wake() {
	if ch := s.changed.Swap(nil); ch != nil {
		close(*ch)
	}
}

// waitChannel returns the channel the poller's next step (or Close)
// closes.
func (s *Store) waitChannel() <-chan struct{} {
	for {
		if ch := s.changed.Load(); ch != nil {
			return *ch
		}
		ch := make(chan struct{})
		if s.changed.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// recent is the log as the poller has read it: its last events (all it
// read of the revisions first to rev), and the window's start.
type recent struct {
	mu        sync.Mutex
	events    []storage.Event // in revision order: a window of buf
	buf       []storage.Event // events' array; outside the window, zero
	first     int64
	rev       int64
	bytes     int
	compacted int64
}

// reset starts over after revision rev, keeping nothing.
func (r *recent) reset(rev, compacted int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.events)
	r.events, r.first, r.rev, r.bytes = r.events[:0], rev+1, rev, 0
	r.compacted = max(r.compacted, compacted)
}

func (r *recent) last() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rev
}

func (r *recent) compactedAt() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.compacted
}

// setCompacted moves the window's start to c, if that is forward.
func (r *recent) setCompacted(c int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.compacted = max(r.compacted, c)
}

// add appends the events the poller read, in revision order, but those
// the committer added while the read was under way (see follow).
func (r *recent) add(evs []storage.Event, compacted int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.compacted = max(r.compacted, compacted)
	for len(evs) > 0 && evs[0].ModRevision <= r.rev {
		evs = evs[1:]
	}
	r.appendLocked(evs)
}

// follow appends the events of a batch this store has just committed, in
// revision order, if they follow the last revision read: the committer's
// own writes need no read of the log. It says whether it did; if not (a
// write of another replica between, not yet read), the poller reads them
// all.
func (r *recent) follow(evs []storage.Event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(evs) == 0 || evs[0].ModRevision != r.rev+1 {
		return false
	}
	r.appendLocked(evs)
	return true
}

func (r *recent) appendLocked(evs []storage.Event) {
	if len(evs) == 0 {
		return
	}
	if cap(r.events)-len(r.events) < len(evs) {
		// No room after the window: move it to the start of buf, an
		// array twice the size it needs, so that this happens about
		// once every recentEvents events and each event is moved about
		// once, with no allocation once buf is big enough.
		n := len(r.events)
		if need := 2 * (n + len(evs)); cap(r.buf) < need {
			r.buf = make([]storage.Event, n, max(need, 2*recentEvents))
			copy(r.buf, r.events)
		} else {
			buf := r.buf[:cap(r.buf)]
			start := cap(buf) - cap(r.events) // the window's offset in buf
			copy(buf, r.events)
			clear(buf[max(n, start) : start+n]) // where it was, and is no more
		}
		r.events = r.buf[:n]
	}
	r.events = append(r.events, evs...)
	for _, ev := range evs {
		r.bytes += eventBytes(ev)
	}
	r.rev = evs[len(evs)-1].ModRevision
	drop := 0
	for len(r.events)-drop > recentEvents || r.bytes > recentBytes && drop < len(r.events)-1 {
		r.bytes -= eventBytes(r.events[drop])
		drop++
	}
	if drop > 0 {
		// Dropped from the front by moving the window, not the
		// thousands kept: those move once the array's end is reached
		// (above). The dropped ones are cleared, so that their values
		// go now.
		r.first = r.events[drop-1].ModRevision + 1
		clear(r.events[:drop])
		r.events = r.events[drop:]
	}
}

func eventBytes(ev storage.Event) int {
	n := len(ev.Key) + len(ev.Value)
	if ev.Type != storage.Delete { // a deletion's Value is its Prev
		n += len(ev.Prev)
	}
	return n
}

// read appends the events for prefix from revision next on. held is false
// if next is before first, which the log then has to give; caughtUp, that
// the poller has read nothing after next yet.
func (r *recent) read(prefix string, next int64, batch []storage.Event) (_ []storage.Event, _, first int64, held, caughtUp bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case next <= r.compacted:
		return batch, next, r.first, true, false, watchfeed.FellBehind(next, r.compacted)
	case next > r.rev:
		return batch, next, r.first, true, true, nil
	case next < r.first:
		return batch, next, r.first, false, false, nil
	}
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].ModRevision >= next })
	for scanned := 0; i < len(r.events) && scanned < watchScan && len(batch) < watchBatch; scanned++ {
		if ev := r.events[i]; strings.HasPrefix(ev.Key, prefix) {
			batch = append(batch, ev)
		}
		next = r.events[i].ModRevision + 1
		i++
	}
	if i == len(r.events) {
		next = r.rev + 1
	}
	return batch, next, r.first, true, false, nil
}
