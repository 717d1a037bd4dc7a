package watch

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// Option configures a Hub.
type Option func(*config)

type config struct {
	historyCount int
	historyAge   time.Duration
	pageSize     int64
	onError      func(error)
}

// WithHistory bounds each cache's event window: at most count events, none
// older than age (0: no age bound). Defaults: 10,000 events, 15 minutes.
// Events leave by age whether or not writes follow them.
func WithHistory(count int, age time.Duration) Option {
	return func(c *config) { c.historyCount, c.historyAge = count, age }
}

// WithErrorHandler receives errors the hub recovers from: a stored value that
// does not decode (the object is left out of the cache), a storage watch that
// failed (the hub watches again from the last change it applied, or relists
// if the store no longer has it).
func WithErrorHandler(f func(error)) Option { return func(c *config) { c.onError = f } }

// Hub caches the resources under one key prefix of a store. See the package
// documentation.
//
// Its readers take no lock: the one goroutine that applies the store's
// changes (Run's) publishes each cache's state and history, then the
// hub's revision, through atomic pointers; a reader loads them in the
// opposite order (see Cache.read).
type Hub struct {
	store  storage.Interface
	root   string
	config config
	epoch  time.Time // the log's clock: events carry their age as an offset from it

	mu sync.Mutex // serializes Register and Unregister
	// applyMu is held by the applier while it changes the caches, and by
	// Add and Unregister while they change which caches there are.
	applyMu sync.Mutex
	caches  atomic.Pointer[map[string]*Cache] // by resource prefix; replaced, not changed, by Register
	// filling are the caches Add is filling, by prefix, with applyMu
	// not held: the applier keeps their events for Add to apply after
	// its list (see Cache.held), and goes on delivering every other
	// cache's, the one a filling cache replaces included.
	filling  map[string]*Cache
	rev      atomic.Int64 // every change up to rev has been applied
	synced   atomic.Bool
	stopped  atomic.Bool                   // Run has returned
	progress atomic.Pointer[chan struct{}] // made by a waiter, closed when rev moves
	lists    listClock                     // see Listed
}

// stop marks the hub stopped and wakes everything waiting on it.
func (h *Hub) stop() {
	h.stopped.Store(true)
	for _, c := range *h.caches.Load() {
		c.publish()
	}
	h.advance()
}

// New makes a hub over the keys of store that start with root. Register the
// caches, then call Run.
func New(store storage.Interface, root string, opts ...Option) *Hub {
	h := &Hub{
		store:  store,
		root:   root,
		config: config{historyCount: 10000, historyAge: 15 * time.Minute, pageSize: 1000, onError: func(error) {}},
		epoch:  time.Now(),
	}
	h.caches.Store(&map[string]*Cache{})
	for _, o := range opts {
		o(&h.config)
	}
	return h
}

// Register adds the cache for the keys of one resource, before Run. A
// resource prefix is root followed by one path segment and a slash
// ("/widgets.example.com/").
func (h *Hub) Register(prefix string, decode DecodeFunc, opts ...CacheOption) *Cache {
	c, _ := h.Add(context.Background(), prefix, decode, opts...) // fails only while Run runs
	return c
}

// Add is Register at any time: a cache added while Run runs is filled from
// the store before Add returns, which fails only if the store cannot be
// read; one added before Run is filled by Run.
func (h *Hub) Add(ctx context.Context, prefix string, decode DecodeFunc, opts ...CacheOption) (*Cache, error) {
	c := &Cache{hub: h, prefix: prefix, decode: decode}
	for _, o := range opts {
		o(c)
	}
	c.state.Store(&snapshot{})
	c.history.Store(&history{changed: make(chan struct{})})
	c.unreadable.Store(&map[string]Unreadable{})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.applyMu.Lock()
	if !h.synced.Load() || h.stopped.Load() {
		h.publishCache(c)
		h.applyMu.Unlock()
		return c, nil
	}
	// Filled with applyMu not held, so that the events of every other
	// cache flow while a large collection is read: the applier keeps
	// this one's, which are applied after the list, in order.
	if h.filling == nil {
		h.filling = map[string]*Cache{}
	}
	h.filling[prefix] = c
	h.applyMu.Unlock()
	for {
		f, err := h.fill(ctx, c)
		h.applyMu.Lock()
		if err != nil {
			delete(h.filling, prefix)
			h.applyMu.Unlock()
			return nil, err
		}
		if c.relisted { // the events after the list may be lost: again
			c.relisted, c.held = false, nil
			h.applyMu.Unlock()
			continue
		}
		delete(h.filling, prefix)
		c.state.Store(&snapshot{items: f.items, rev: f.rev})
		c.unreadable.Store(&f.unreadable)
		c.floor, c.from = f.rev, f.rev
		c.history.Store(&history{floor: f.rev, changed: make(chan struct{})})
		for _, ev := range c.held {
			if ev.ModRevision > c.from {
				h.applyTo(c, ev)
			}
		}
		c.held = nil
		c.publish()
		h.publishCache(c)
		h.applyMu.Unlock()
		return c, nil
	}
}

// publishCache makes c the cache of its prefix; the caller holds applyMu.
func (h *Hub) publishCache(c *Cache) {
	caches := maps.Clone(*h.caches.Load())
	caches[c.prefix] = c
	h.caches.Store(&caches)
}

// filled is a cache's state as fill read it.
type filled struct {
	items      tree
	unreadable map[string]Unreadable
	rev        int64
}

// fill lists the keys of c from the store, at its latest revision; the
// applier then skips the events up to that revision for it.
func (h *Hub) fill(ctx context.Context, c *Cache) (filled, error) {
	var items []*Item
	unreadable := map[string]Unreadable{}
	opts := storage.ListOptions{Limit: h.config.pageSize}
	for {
		page, err := h.store.List(ctx, c.prefix, opts)
		if err != nil {
			return filled{}, err
		}
		opts.Revision = page.Revision
		for _, kv := range page.Items {
			obj, err := c.decode(kv)
			if err != nil {
				h.config.onError(err)
				unreadable[kv.Key] = Unreadable{Key: kv.Key, Revision: kv.ModRevision, Err: err}
				continue
			}
			items = append(items, c.newItem(kv, obj))
		}
		if page.Remaining == 0 || len(page.Items) == 0 {
			break
		}
		opts.Start = page.Items[len(page.Items)-1].Key + "\x00"
	}
	return filled{items: buildTree(items), unreadable: unreadable, rev: opts.Revision}, nil
}

// Unregister removes a cache: its watchers end with ErrStopped, and reads
// of it see what it held last.
func (h *Hub) Unregister(c *Cache) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	caches := maps.Clone(*h.caches.Load())
	if caches[c.prefix] == c {
		delete(caches, c.prefix)
	}
	h.caches.Store(&caches)
	c.removed.Store(true)
	c.publish() // wakes its watchers, which then see removed
}

// Run fills the caches and keeps them current until ctx ends. It returns nil
// when ctx ends, or the error that stopped it; either way every watcher then
// ends with ErrStopped.
func (h *Hub) Run(ctx context.Context) error {
	h.stopped.Store(false)
	defer h.stop()
	retry := time.Duration(0)
	listed := false
	for {
		var err error
		if !listed {
			var rev int64
			if rev, err = h.relist(ctx); err == nil {
				listed, retry = true, 0
				err = h.follow(ctx, rev)
			}
		} else {
			// The storage watch broke: go on from the last change
			// applied, so that the caches' watchers miss nothing and
			// see nothing twice; relist only if the store's history no
			// longer reaches back there.
			from := h.rev.Load()
			err = h.follow(ctx, from)
			if h.rev.Load() > from {
				retry = 0
			}
			if errors.Is(err, storage.ErrExpired) {
				listed = false
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, storage.ErrClosed) {
			return err
		}
		h.config.onError(err)
		retry = min(max(2*retry, 50*time.Millisecond), 5*time.Second)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retry):
		}
	}
}

// Revision is the revision the caches reflect.
func (h *Hub) Revision() int64 { return h.rev.Load() }

// Reached reports whether the caches reflect revision rev or later.
func (h *Hub) Reached(rev int64) bool { return h.synced.Load() && h.rev.Load() >= rev }

// WaitFor waits until the caches reflect revision rev or later, or ctx ends,
// or the hub stops (ErrStopped).
func (h *Hub) WaitFor(ctx context.Context, rev int64) error { return h.WaitWithin(ctx, rev, 0) }

// WaitWithin is WaitFor for d at most (no bound if d is 0), after which it
// returns context.DeadlineExceeded. A write that waits a moment for the
// cache to see the last one pays a timer, and only if it waits, rather
// than a context of its own with its cancellation.
func (h *Hub) WaitWithin(ctx context.Context, rev int64, d time.Duration) error {
	var expired <-chan time.Time
	for {
		if h.Reached(rev) {
			return nil
		}
		// Take the channel before looking again: advance moves rev before
		// it closes the channel, so either the look sees the new revision
		// or the channel is closed.
		progress := h.progressChannel()
		if h.Reached(rev) {
			return nil
		}
		if h.stopped.Load() {
			return ErrStopped
		}
		if d > 0 && expired == nil {
			t := time.NewTimer(d)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return ctx.Err()
		case <-expired:
			return context.DeadlineExceeded
		}
	}
}

// relist reads the whole key space at one revision and makes it the caches'
// state, with an empty history starting there.
func (h *Hub) relist(ctx context.Context) (int64, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	states := map[*Cache][]*Item{}
	unreadable := map[*Cache]map[string]Unreadable{}
	opts := storage.ListOptions{Limit: h.config.pageSize}
	for {
		page, err := h.store.List(ctx, h.root, opts)
		if err != nil {
			return 0, err
		}
		opts.Revision = page.Revision
		for _, kv := range page.Items {
			c := h.cacheFor(kv.Key)
			if c == nil {
				continue
			}
			obj, err := c.decode(kv)
			if err != nil {
				h.config.onError(err)
				if unreadable[c] == nil {
					unreadable[c] = map[string]Unreadable{}
				}
				unreadable[c][kv.Key] = Unreadable{Key: kv.Key, Revision: kv.ModRevision, Err: err}
				continue
			}
			// List returns keys in order.
			states[c] = append(states[c], c.newItem(kv, obj))
		}
		if page.Remaining == 0 || len(page.Items) == 0 {
			break
		}
		opts.Start = page.Items[len(page.Items)-1].Key + "\x00"
	}

	caches := *h.caches.Load()
	for _, c := range caches {
		c.state.Store(&snapshot{items: buildTree(states[c]), rev: opts.Revision})
		keys := unreadable[c]
		c.unreadable.Store(&keys)
		c.log, c.head, c.floor, c.from = nil, 0, opts.Revision, 0
		c.offersMu.Lock()
		clear(c.offers) // their events are behind the relist, or lost
		c.offersMu.Unlock()
	}
	for _, c := range h.filling {
		c.relisted = true
	}
	h.rev.Store(opts.Revision)
	h.synced.Store(true)
	for _, c := range caches {
		c.publish()
	}
	h.advance()
	return opts.Revision, nil
}

// follow applies the store's changes after rev until the watch ends.
func (h *Hub) follow(ctx context.Context, rev int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Every key, not only root's: a write elsewhere in a shared store moves
	// its revision too, and a consistent read waits for the hub to reach it.
	events, err := h.store.Watch(ctx, "", rev)
	if err != nil {
		return err
	}
	// Events leave the window by age even when no write comes to push
	// them out: an idle server does not keep an hour-old revision
	// watchable.
	var expire <-chan time.Time
	if age := h.config.historyAge; age > 0 {
		t := time.NewTicker(expiryInterval(age))
		defer t.Stop()
		expire = t.C
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return errWatchEnded
			}
			if ev.Err != nil {
				return ev.Err
			}
			h.apply(ev)
		case <-expire:
			h.expire()
		}
	}
}

// expiryInterval is how often an idle hub looks for events that have left
// its window by age: often enough that one outstays it by a small part of
// age, seldom enough to cost nothing.
func expiryInterval(age time.Duration) time.Duration {
	return min(max(age/8, time.Millisecond), time.Minute)
}

// expire drops from each cache's history the events older than the
// window's age, and publishes the histories that changed; only the
// applier calls it.
func (h *Hub) expire() {
	now := h.now()
	for _, c := range *h.caches.Load() {
		if c.trim(now) {
			c.publish()
		}
	}
}

// errWatchEnded is a storage watch closed without an error event, which
// the SPI does not allow: it is retried like any broken watch.
var errWatchEnded = errors.New("watch: the storage watch ended without an error")

func (h *Hub) apply(ev storage.Event) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	if len(h.filling) > 0 {
		if f := h.filling[h.prefixOf(ev.Key)]; f != nil {
			f.held = append(f.held, ev)
		}
	}
	c := h.cacheFor(ev.Key)
	if c != nil && ev.ModRevision <= c.from {
		c = nil // filled after it by Add
	}
	// The order readers rely on: the cache's state, then the hub's
	// revision (see Cache.read), then the cache's history, so that a
	// watcher never sees an event the hub has not reached.
	changed := c != nil && h.applyTo(c, ev)
	h.rev.Store(ev.ModRevision)
	if changed {
		c.publish()
	}
	h.advance()
}

// applyTo applies one event to c's state and log, and says whether it
// changed them; the caller holds applyMu and publishes.
func (h *Hub) applyTo(c *Cache, ev storage.Event) bool {
	kv := ev.KeyValue
	_, wasUnreadable := (*c.unreadable.Load())[ev.Key]
	if ev.Type == storage.Delete && wasUnreadable {
		// Nothing of it was served: there is nothing to announce.
		c.setUnreadable(ev.Key, nil)
		return false
	}
	var item *Item
	typ := ev.Type
	obj, offered := c.taken(kv)
	var err error
	if !offered {
		obj, err = c.decode(kv)
	}
	if ev.Type == storage.Put && err != nil {
		c.setUnreadable(ev.Key, &Unreadable{Key: ev.Key, Revision: ev.ModRevision, Err: err})
	} else if wasUnreadable {
		c.setUnreadable(ev.Key, nil)
	}
	if err != nil && ev.Prev != nil {
		// What was served is gone from the cache: announce its
		// deletion, with its last state at this revision.
		h.config.onError(err)
		typ = storage.Delete
		kv.Value = ev.Prev
		obj, err = c.decode(kv)
	}
	if err != nil {
		h.config.onError(err)
	} else {
		item = c.newItem(kv, obj)
		item.offered = offered && item.Value != nil
	}
	return c.apply(typ, ev.Key, item, ev.ModRevision)
}

// advance wakes the waiters of WaitFor; rev has moved, or the hub stopped.
func (h *Hub) advance() {
	if p := h.progress.Swap(nil); p != nil {
		close(*p)
	}
}

// progressChannel returns the channel advance closes next. It is made only
// when someone waits, so that applying an event costs no allocation here.
func (h *Hub) progressChannel() <-chan struct{} {
	for {
		if p := h.progress.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if h.progress.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

func (h *Hub) cacheFor(key string) *Cache {
	p := h.prefixOf(key)
	if p == "" {
		return nil
	}
	return (*h.caches.Load())[p]
}

// prefixOf is the resource prefix of a key, "" for a key outside root.
func (h *Hub) prefixOf(key string) string {
	rest, ok := strings.CutPrefix(key, h.root)
	if !ok {
		return ""
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return ""
	}
	return key[:len(h.root)+i+1]
}

// now is the time on the hub's clock, which is monotonic and smaller to
// keep than a time.Time.
func (h *Hub) now() time.Duration { return time.Since(h.epoch) }
