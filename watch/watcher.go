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
	end   bool    // the initial-events-end bookmark is still due
	idle  time.Time
}

// Watch starts a watcher. A Revision that has left the history window is
// storage.ErrExpired; one ahead of the cache is waited for by Next.
func (c *Cache) Watch(opts WatchOptions) (*Watcher, error) {
	prefix := c.prefix + strings.TrimPrefix(opts.Prefix, c.prefix)
	w := &Watcher{cache: c, opts: opts, idle: time.Now()}
	w.opts.Prefix = prefix
	c.hub.mu.RLock()
	defer c.hub.mu.RUnlock()
	if opts.InitialEvents {
		for _, k := range c.rangeOf(prefix) {
			if it := c.items[k]; w.accepts(it) {
				w.queue = append(w.queue, it)
			}
		}
		w.pos = c.hub.rev
		w.end = opts.InitialEventsEnd
		return w, nil
	}
	if opts.Revision < c.floor {
		return nil, storage.ErrExpired
	}
	w.pos = opts.Revision
	return w, nil
}

// Next blocks until the watcher's next event, and returns it. It returns
// ctx.Err() when ctx ends, ErrStopped when the hub has stopped, and
// storage.ErrExpired when the events the watcher had still to read have left
// the history window: the watch cannot go on without a gap.
func (w *Watcher) Next(ctx context.Context) (Event, error) {
	if len(w.queue) > 0 {
		it := w.queue[0]
		w.queue[0] = nil
		w.queue = w.queue[1:]
		return Event{Type: Added, Item: it, Revision: it.Revision}, nil
	}
	if w.end {
		w.end = false
		w.idle = time.Now()
		return Event{Type: Bookmark, Revision: w.pos, InitialEventsEnd: true}, nil
	}
	var timer <-chan time.Time
	for {
		ev, changed, err := w.read()
		if err != nil || ev.Type != "" {
			w.idle = time.Now()
			return ev, err
		}
		if w.opts.BookmarkInterval > 0 && timer == nil {
			t := time.NewTimer(w.opts.BookmarkInterval - time.Since(w.idle))
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		case <-timer:
			return w.Bookmark(), nil
		}
	}
}

// read returns the next event after pos that is under the watcher's prefix,
// or, when there is none yet, the channel that will say when to look again.
func (w *Watcher) read() (Event, <-chan struct{}, error) {
	c := w.cache
	c.hub.mu.RLock()
	defer c.hub.mu.RUnlock()
	if c.hub.stopped {
		return Event{}, nil, ErrStopped
	}
	if w.pos < c.floor {
		return Event{}, nil, storage.ErrExpired
	}
	i := sort.Search(len(c.log), func(i int) bool { return c.log[i].Revision > w.pos })
	for ; i < len(c.log); i++ {
		ev := c.log[i].Event
		w.pos = ev.Revision
		if ev, ok := w.filter(ev); ok {
			return ev, nil, nil
		}
	}
	return Event{}, c.changed, nil
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
	c.hub.mu.RLock()
	defer c.hub.mu.RUnlock()
	if c.hub.stopped || w.pos < c.floor {
		return true // Next ends the watch at once
	}
	for i := sort.Search(len(c.log), func(i int) bool { return c.log[i].Revision > w.pos }); i < len(c.log); i++ {
		if _, ok := w.filter(c.log[i].Event); ok {
			return true
		}
	}
	return false
}

// Bookmark returns a bookmark for where the watcher is: every event up to
// its revision has been delivered. A server sends one before it ends a
// stream, so the client resumes from there.
func (w *Watcher) Bookmark() Event {
	w.idle = time.Now()
	c := w.cache
	c.hub.mu.RLock()
	defer c.hub.mu.RUnlock()
	if len(c.log) == 0 || c.log[len(c.log)-1].Revision <= w.pos {
		w.pos = max(w.pos, c.hub.rev)
	}
	return Event{Type: Bookmark, Revision: w.pos}
}
