package watch

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// EventType is the type of a watch event, as it travels on the wire.
type EventType string

// The watch event types of the Kubernetes API.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
)

// Event is one change of one object, or a bookmark.
type Event struct {
	Type EventType
	// Item is the object after the change; for Deleted, its last state at
	// the deletion's revision. Nil for Bookmark.
	Item *Item
	// Prev is the version before the change, nil for Added and Bookmark.
	Prev *Item
	// Revision of the change; for a Bookmark, the revision the watcher has
	// seen everything up to.
	Revision int64
	// InitialEventsEnd marks the bookmark that follows a watch's initial
	// events.
	InitialEventsEnd bool
}

// WatchOptions say where a watch starts and what it sends.
type WatchOptions struct {
	// Prefix narrows the watch to keys under it (a namespace); empty watches
	// the whole resource.
	Prefix string
	// Revision: send the changes after it. Ignored with InitialEvents.
	Revision int64
	// InitialEvents starts the watch with an Added event for every current
	// object, then sends the changes after that state.
	InitialEvents bool
	// InitialEventsEnd sends a bookmark marked InitialEventsEnd after the
	// initial events.
	InitialEventsEnd bool
	// BookmarkInterval, if not 0, sends a bookmark when the watcher has been
	// idle that long.
	BookmarkInterval time.Duration
	// Filter, if not nil, narrows the watch to the objects it accepts, as a
	// selector does: an object that starts being accepted arrives as Added,
	// one that stops as Deleted (its Item then the version before the
	// change, whose Revision is older than the event's), and the changes of
	// objects never accepted are not seen at all.
	Filter func(*Item) bool
}

// Watcher is one watch on a cache. It holds no buffer and no goroutine: Next
// reads the cache's shared history at the watcher's position.
type Watcher struct {
	cache *Cache
	opts  WatchOptions
	pos   int64   // every event up to pos has been delivered or skipped
	queue []*Item // initial events not yet delivered
	// whole is the cache's last change when queue is every item under
	// the prefix at it (no filter), else 0.
	whole int64
	end   bool          // the initial-events-end bookmark is still due
	idle  time.Duration // when it last returned an event, since the hub's epoch
	// bookmark fires when the watcher has been idle for BookmarkInterval:
	// one timer for all its waits, since a new one and a deferred Stop per
	// wait (an event, for a watcher that keeps up) cost more than Reset.
	bookmark *time.Timer
}

// Watch starts a watcher. A Revision that has left the history window is
// storage.ErrExpired; one ahead of the cache is waited for by Next.
func (c *Cache) Watch(opts WatchOptions) (*Watcher, error) {
	prefix := c.prefix + strings.TrimPrefix(opts.Prefix, c.prefix)
	w := &Watcher{cache: c, opts: opts, idle: c.hub.now()}
	w.opts.Prefix = prefix
	if opts.InitialEvents {
		s, rev := c.read()
		span := s.items.RankAfter(prefix) - s.items.Rank(prefix) // see List
		if opts.Filter == nil {
			w.queue = make([]*Item, 0, span)
			w.whole = s.rev
		}
		s.items.Ascend(prefix, func(it *Item) bool {
			if span == 0 {
				return false
			}
			span--
			if w.accepts(it) {
				w.queue = append(w.queue, it)
			}
			return true
		})
		w.pos = rev // the log holds every change after it
		w.end = opts.InitialEventsEnd
		return w, nil
	}
	if opts.Revision < c.history.Load().floor {
		return nil, storage.ErrExpired
	}
	w.pos = opts.Revision
	return w, nil
}

// Prefix is the key prefix the watcher watches, after its cache's prefix
// (a namespace and a slash, or empty).
func (w *Watcher) Prefix() string { return strings.TrimPrefix(w.opts.Prefix, w.cache.prefix) }

// TakeInitial hands the caller the initial events the watcher has not
// delivered, as their items, to write itself: Next then goes on after
// them. whole is the cache's last change when they are every object
// under the watch's prefix at that change (the watch has no filter and
// delivered none yet), else 0: a writer may keep what it makes of them
// for the next watch at the same change.
func (w *Watcher) TakeInitial() (items []*Item, whole int64) {
	items, w.queue = w.queue, nil
	whole, w.whole = w.whole, 0
	return items, whole
}

// Next blocks until the watcher's next event, and returns it. It returns
// ctx.Err() when ctx ends, ErrStopped when the hub has stopped, and
// storage.ErrExpired when the events the watcher had still to read have left
// the history window: the watch cannot go on without a gap.
func (w *Watcher) Next(ctx context.Context) (Event, error) {
	if len(w.queue) > 0 {
		w.whole = 0 // what is left is not every object
		it := w.queue[0]
		w.queue[0] = nil
		w.queue = w.queue[1:]
		return Event{Type: Added, Item: it, Revision: it.Revision}, nil
	}
	if w.end {
		w.end = false
		w.idle = w.cache.hub.now()
		return Event{Type: Bookmark, Revision: w.pos, InitialEventsEnd: true}, nil
	}
	var due <-chan time.Time
	for {
		ev, changed, err := w.read()
		if err != nil || ev.Type != "" {
			w.idle = w.cache.hub.now()
			return ev, err
		}
		if w.opts.BookmarkInterval > 0 && due == nil {
			due = w.armBookmark()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		case <-due:
			if w.cache.hub.now()-w.idle < w.opts.BookmarkInterval {
				due = w.armBookmark() // a tick from before the Reset (GODEBUG=asynctimerchan=1)
				continue
			}
			return w.Bookmark(), nil
		}
	}
}

// armBookmark sets the watcher's timer to fire once it has been idle for
// its BookmarkInterval, and returns the timer's channel.
func (w *Watcher) armBookmark() <-chan time.Time {
	d := w.opts.BookmarkInterval - (w.cache.hub.now() - w.idle)
	if w.bookmark == nil {
		w.bookmark = time.NewTimer(d)
	} else {
		w.bookmark.Reset(d)
	}
	return w.bookmark.C
}

// read returns the next event after pos that is under the watcher's prefix,
// or, when there is none yet, the channel that will say when to look again.
func (w *Watcher) read() (Event, <-chan struct{}, error) {
	c := w.cache
	h := c.history.Load() // before stopped: stop replaces the history after it sets stopped
	if c.hub.stopped.Load() || c.removed.Load() {
		return Event{}, nil, ErrStopped
	}
	if w.pos < h.floor {
		return Event{}, nil, storage.ErrExpired
	}
	for _, e := range h.log[h.after(w.pos):] {
		w.pos = e.Revision
		if ev, ok := w.filter(e.Event); ok {
			return ev, nil, nil
		}
	}
	return Event{}, h.changed, nil
}

// after returns the index of the first event in the log after rev.
func (h *history) after(rev int64) int {
	return sort.Search(len(h.log), func(i int) bool { return h.log[i].Revision > rev })
}

func (w *Watcher) accepts(it *Item) bool { return w.opts.Filter == nil || w.opts.Filter(it) }

// filter says whether the watcher sees ev, and as what.
func (w *Watcher) filter(ev Event) (Event, bool) {
	if !strings.HasPrefix(ev.Item.Key, w.opts.Prefix) {
		return ev, false
	}
	if w.opts.Filter == nil {
		return ev, true
	}
	now := w.opts.Filter(ev.Item)
	if ev.Type != Modified {
		return ev, now
	}
	before := w.opts.Filter(ev.Prev)
	switch {
	case now && !before:
		ev.Type = Added
	case !now && before:
		ev.Type, ev.Item = Deleted, ev.Prev
	}
	return ev, now || before
}

// Buffered reports whether Next has an event ready without waiting: a
// writer can leave flushing to the last of them.
func (w *Watcher) Buffered() bool {
	if len(w.queue) > 0 || w.end {
		return true
	}
	c := w.cache
	h := c.history.Load()
	if c.hub.stopped.Load() || c.removed.Load() || w.pos < h.floor {
		return true // Next ends the watch at once
	}
	for _, e := range h.log[h.after(w.pos):] {
		if _, ok := w.filter(e.Event); ok {
			return true
		}
	}
	return false
}

// Bookmark returns a bookmark for where the watcher is: every event up to
// its revision has been delivered. A server sends one before it ends a
// stream, so the client resumes from there.
func (w *Watcher) Bookmark() Event {
	c := w.cache
	w.idle = c.hub.now()
	// The applier publishes a change's state, then the hub's revision,
	// then the history. Loaded in the opposite order: every change up to
	// rev is in the state, and if the history holds every change in the
	// state and none after pos, there is none up to rev the watcher has
	// not seen. Otherwise it stays where it is: an event is on its way, or
	// (pos before the floor) it has missed some.
	rev := c.hub.rev.Load()
	h := c.history.Load()
	s := c.state.Load()
	if latest := h.latest(); s.rev <= latest && latest <= w.pos {
		w.pos = max(w.pos, rev)
	}
	return Event{Type: Bookmark, Revision: w.pos}
}
