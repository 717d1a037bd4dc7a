package watch

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// DecodeFunc turns a stored value into the object the cache serves, with its
// resourceVersion set from kv.ModRevision. It makes a new object each
// time, and the same one from the same value: the cache keeps the objects
// of its recent items only, and calls it again (with Key, Value and
// ModRevision set) for an item that has left them (see Item).
type DecodeFunc func(kv storage.KeyValue) (any, error)

// Converted is what a DecodeFunc returns for a value it did not decode as
// it is but converted (a value stored in an older version): the item then
// keeps no Value, so that no encoder derives the object's bytes from bytes
// that are not its, and holds the object.
type Converted struct{ Object any }

// newItem is the item of a decoded value.
func (c *Cache) newItem(kv storage.KeyValue, obj any) *Item {
	var it *Item
	if conv, ok := obj.(Converted); ok {
		obj = conv.Object
		it = NewItem(kv.Key, kv.ModRevision, obj)
	} else {
		it = c.decodedItem(kv, obj)
	}
	if c.summarize != nil {
		it.Summary = c.summarize(obj, it.Value)
	}
	return it
}

// CacheOption configures one resource's Cache.
type CacheOption func(*Cache)

// TakeOffers has the cache take the objects writers offer (Offer) instead
// of decoding the values they write; stamp sets the revision of the write
// on such an object, as the DecodeFunc sets kv.ModRevision.
func TakeOffers(stamp func(obj any, rev int64)) CacheOption {
	return func(c *Cache) { c.stamp = stamp }
}

// offer is an object a writer offered for the value it is writing.
type offer struct {
	value []byte
	obj   any
}

// Offer tells the cache that value is being written at key and is what
// the DecodeFunc would decode into obj (but for the revision, which the
// cache stamps on it): when the write's event comes, the cache keeps obj
// rather than decode value again. obj is the cache's from then on: the
// writer must not change it, nor anything it shares with the writer's
// own objects. The writer withdraws the offer if the write failed, or the
// hub has already reached its revision; else the write's event takes it
// (a relist drops every offer). A cache made without TakeOffers ignores
// offers.
func (c *Cache) Offer(key string, value []byte, obj any) {
	if c.stamp == nil {
		return
	}
	c.offersMu.Lock()
	if c.offers == nil {
		c.offers = make(map[string]offer)
	}
	c.offers[key] = offer{value, obj}
	c.offersMu.Unlock()
}

// Withdraw ends the offer made for value at key, if the cache has not
// taken it.
func (c *Cache) Withdraw(key string, value []byte) {
	if c.stamp == nil {
		return
	}
	c.offersMu.Lock()
	if o, ok := c.offers[key]; ok && sameBytes(o.value, value) {
		delete(c.offers, key)
	}
	c.offersMu.Unlock()
}

// taken is the object offered for kv's value, stamped with its revision.
func (c *Cache) taken(kv storage.KeyValue) (any, bool) {
	if c.stamp == nil {
		return nil, false
	}
	c.offersMu.Lock()
	o, ok := c.offers[kv.Key]
	// The same bytes, not only the same key: of two writers racing on
	// one key, the offer may be the loser's.
	ok = ok && (sameBytes(o.value, kv.Value) || bytes.Equal(o.value, kv.Value))
	if ok {
		delete(c.offers, kv.Key)
	}
	c.offersMu.Unlock()
	if !ok {
		return nil, false
	}
	c.stamp(o.obj, kv.ModRevision)
	return o.obj, true
}

// sameBytes says a and b are one slice (a store in the process hands the
// writer's value to the watch as it is).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// KeepSummary has the cache keep summarize's result for each object it
// decodes, as the item's Summary, for as long as it keeps the item: what
// the readers of many items at once (selectors) read, which would cost a
// decoding of every item whose object the garbage collector took. value
// is the stored value obj was decoded from (nil for a converted one).
func KeepSummary(summarize func(obj any, value []byte) any) CacheOption {
	return func(c *Cache) { c.summarize = summarize }
}

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

// Cache is the state and recent history of one resource.
type Cache struct {
	hub       *Hub
	prefix    string
	decode    DecodeFunc
	summarize func(obj any, value []byte) any
	stamp     func(obj any, rev int64)

	offersMu sync.Mutex
	offers   map[string]offer // by key

	recent recentItems // the items that keep their decoded objects

	state   atomic.Pointer[snapshot] // the current items
	history atomic.Pointer[history]  // the recent events
	removed atomic.Bool              // by Unregister: its watchers end
	// unreadable are the keys whose stored values do not decode, by key;
	// replaced, not changed, by the applier.
	unreadable atomic.Pointer[map[string]Unreadable]

	// The applier's own: the buffer the published histories are views of.
	// Entries before head have left the window; entries are only ever
	// appended after the last published one, so no reader sees a write.
	log   []logEntry
	head  int
	floor int64 // every event after floor is in log[head:]
	from  int64 // the revision Add filled it at; events up to it are in its state
	// held are the events of the cache while Add fills it, in order;
	// relisted says the hub relisted meanwhile, so that they may not
	// follow the list without a gap.
	held     []storage.Event
	relisted bool
}

// snapshot is the state of a cache's items at revision rev: the revision
// of the last change applied to them (or of the relist that made them).
// It is never changed once published.
type snapshot struct {
	items tree
	rev   int64
	lists atomic.Pointer[wholeList] // see wholelist.go
}

// history is a published view of a cache's event window. It is never
// changed; a newer one replaces it, and then changed is closed.
type history struct {
	log     []logEntry // every event after floor, oldest first
	floor   int64
	changed chan struct{}
}

// latest is the revision up to which the history holds every event.
func (h *history) latest() int64 {
	if len(h.log) == 0 {
		return h.floor
	}
	return h.log[len(h.log)-1].Revision
}

type logEntry struct {
	Event
	at time.Duration // when it was recorded, since the hub's epoch
}

// Len is the number of objects the cache holds.
func (c *Cache) Len() int { return c.state.Load().items.Len() }

// Prefix is the key prefix of the cache's resource.
func (c *Cache) Prefix() string { return c.prefix }

// apply makes one change to the state and publishes it, and adds the
// event to the log, for publish to publish; it reports whether there was a
// change. Only the applier calls it.
func (c *Cache) apply(typ storage.EventType, key string, item *Item, rev int64) bool {
	s := c.state.Load()
	ev := Event{Revision: rev, Item: item}
	var next tree
	if typ == storage.Delete || item == nil {
		next, ev.Prev = s.items.Delete(key)
		if ev.Prev == nil {
			return false
		}
		if item == nil { // not even the last state decodes: what was served, at this revision
			// Without the value, whose bytes say the last state's
			// resourceVersion, not this revision.
			if obj, err := ev.Prev.Object(); err == nil {
				item = NewItem(key, rev, obj)
			} else {
				item = &Item{Key: key, Revision: rev, Value: ev.Prev.Value, cache: ev.Prev.cache}
			}
			item.Summary = ev.Prev.Summary
		}
		ev.Type, ev.Item = Deleted, item
	} else {
		next, ev.Prev = s.items.Set(item)
		ev.Type = Added
		if ev.Prev != nil {
			ev.Type = Modified
		}
	}
	c.state.Store(&snapshot{items: next, rev: rev})

	now := c.hub.now()
	c.append(logEntry{ev, now})
	c.trim(now)
	return true
}

// trim drops the events beyond the window's count or older than its age,
// and reports whether it dropped any; only the applier calls it.
func (c *Cache) trim(now time.Duration) bool {
	cfg, head := c.hub.config, c.head
	for c.head < len(c.log) && (len(c.log)-c.head > cfg.historyCount || cfg.historyAge > 0 && now-c.log[c.head].at > cfg.historyAge) {
		c.floor = c.log[c.head].Revision
		c.head++
	}
	return c.head != head
}

// append adds an entry to the log buffer. When the entries that have left
// the window outnumber a quarter of those in it, or the buffer is full,
// the window moves to a new buffer, so the items of events that left are
// freed as they were when the log was trimmed in place. The old buffer
// stays whole for the readers of the views into it.
func (c *Cache) append(e logEntry) {
	live := len(c.log) - c.head
	if len(c.log) == cap(c.log) || c.head > live/4+16 {
		log := make([]logEntry, live, live+live/2+32)
		copy(log, c.log[c.head:])
		c.log, c.head = log, 0
	}
	c.log = append(c.log, e)
}

// publish makes the log buffer's window the cache's history and wakes its
// watchers; only the applier calls it.
func (c *Cache) publish() {
	prev := c.history.Load()
	c.history.Store(&history{log: c.log[c.head:len(c.log):len(c.log)], floor: c.floor, changed: make(chan struct{})})
	close(prev.changed)
}

// Unreadable is a stored value the cache could not decode: its object is
// left out of the cache's items, and reads of it must say why.
type Unreadable struct {
	Key string
	// Revision is the revision of the value's write.
	Revision int64
	Err      error
}

// setUnreadable records (u not nil) or forgets that key does not decode;
// only the applier calls it.
func (c *Cache) setUnreadable(key string, u *Unreadable) {
	keys := maps.Clone(*c.unreadable.Load())
	if u == nil {
		delete(keys, key)
	} else {
		if keys == nil {
			keys = map[string]Unreadable{}
		}
		keys[key] = *u
	}
	c.unreadable.Store(&keys)
}

// Unreadable returns, in key order, the keys under prefix whose current
// stored values do not decode.
func (c *Cache) Unreadable(prefix string) []Unreadable {
	var out []Unreadable
	for key, u := range *c.unreadable.Load() {
		if strings.HasPrefix(key, prefix) {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b Unreadable) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// LastChange is the revision of the last change to the cache's items, or
// of the relist that filled it: a watcher that has delivered the events
// up to it has delivered every change the cache holds.
func (c *Cache) LastChange() int64 { return c.state.Load().rev }

// Get returns the current version of key (nil if absent) and the revision the
// cache reflects.
func (c *Cache) Get(key string) (*Item, int64) {
	s, rev := c.read()
	return s.items.Get(key), rev
}

// List returns, in key order, the current items whose keys start with prefix
// and are not before start, at most limit of them (0: all) among those that
// pass filter (nil: all); the revision they were read at; and how many keys
// under prefix follow the last item returned. The items of a whole
// collection (no start, limit or filter) may be those an earlier List of it
// returned, in the same slice: callers must not change the slice.
func (c *Cache) List(prefix, start string, limit int, filter func(*Item) bool) (items []*Item, rev int64, remaining int) {
	s, rev := c.read()
	whole := start == "" && limit == 0 && filter == nil
	if items := s.wholeList(prefix); whole && items != nil {
		return items, rev, 0
	}
	from := max(start, prefix)
	// The keys under prefix from from on are the next span items: counted,
	// not compared (a key's bytes are one more cache miss per item).
	span := s.items.RankAfter(prefix) - s.items.Rank(from)
	if span <= 0 {
		return nil, rev, 0
	}
	if filter == nil {
		size := span
		if limit > 0 {
			size = min(size, limit)
		}
		items = make([]*Item, 0, size)
	}
	s.items.Ascend(from, func(it *Item) bool {
		if span == 0 {
			return false
		}
		span--
		if filter == nil || filter(it) {
			items = append(items, it)
		}
		return limit == 0 || len(items) < limit
	})
	if limit > 0 && len(items) == limit {
		remaining = s.items.RankAfter(prefix) - s.items.Rank(items[limit-1].Key) - 1
	}
	if whole {
		s.keepWholeList(prefix, items)
	}
	return items, rev, remaining
}

// read returns the cache's state and the revision it is the state at.
//
// The applier publishes a change to the cache's state before it moves the
// hub's revision, and the hub's revision moves for changes to other
// caches too. Loaded in the opposite order, the state reflects every
// change to this cache up to the hub revision read before it, so it is the
// state at that revision; or it is newer, at its own revision, which the
// hub is about to reach. Either way it is the state at the larger.
func (c *Cache) read() (*snapshot, int64) {
	rev := c.hub.rev.Load()
	s := c.state.Load()
	return s, max(rev, s.rev)
}

// now is the time on the hub's clock, which is monotonic and smaller to
// keep than a time.Time.
func (h *Hub) now() time.Duration { return time.Since(h.epoch) }
