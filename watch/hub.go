package watch

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/storage"
)

// DecodeFunc turns a stored value into the object the cache serves, with its
// resourceVersion set from kv.ModRevision.
type DecodeFunc func(kv storage.KeyValue) (any, error)

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
func WithHistory(count int, age time.Duration) Option {
	return func(c *config) { c.historyCount, c.historyAge = count, age }
}

// WithErrorHandler receives errors the hub recovers from: a stored value that
// does not decode (the object is left out of the cache), a storage watch that
// failed (the hub relists).
func WithErrorHandler(f func(error)) Option { return func(c *config) { c.onError = f } }

// Hub caches the resources under one key prefix of a store. See the package
// documentation.
type Hub struct {
	store  storage.Interface
	root   string
	config config

	mu       sync.RWMutex
	caches   map[string]*Cache // by resource prefix
	rev      int64             // every change up to rev has been applied
	synced   bool
	stopped  bool          // Run has returned
	progress chan struct{} // closed and replaced whenever rev moves
}

// stop marks the hub stopped and wakes everything waiting on it.
func (h *Hub) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	for _, c := range h.caches {
		c.notify()
	}
	h.advance()
}

// New makes a hub over the keys of store that start with root. Register the
// caches, then call Run.
func New(store storage.Interface, root string, opts ...Option) *Hub {
	h := &Hub{
		store:    store,
		root:     root,
		config:   config{historyCount: 10000, historyAge: 15 * time.Minute, pageSize: 1000, onError: func(error) {}},
		caches:   map[string]*Cache{},
		progress: make(chan struct{}),
	}
	for _, o := range opts {
		o(&h.config)
	}
	return h
}

// Register adds the cache for the keys of one resource. A resource prefix is
// root followed by one path segment and a slash ("/widgets.example.com/");
// it must be registered before Run.
func (h *Hub) Register(prefix string, decode DecodeFunc) *Cache {
	c := &Cache{hub: h, prefix: prefix, decode: decode, items: map[string]*Item{}, changed: make(chan struct{})}
	h.mu.Lock()
	h.caches[prefix] = c
	h.mu.Unlock()
	return c
}

// Run fills the caches and keeps them current until ctx ends. It returns nil
// when ctx ends, or the error that stopped it; either way every watcher then
// ends with ErrStopped.
func (h *Hub) Run(ctx context.Context) error {
	h.mu.Lock()
	h.stopped = false
	h.mu.Unlock()
	defer h.stop()
	retry := time.Duration(0)
	for {
		rev, err := h.relist(ctx)
		if err == nil {
			retry = 0
			err = h.follow(ctx, rev)
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
func (h *Hub) Revision() int64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.rev
}

// Reached reports whether the caches reflect revision rev or later.
func (h *Hub) Reached(rev int64) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.synced && h.rev >= rev
}

// WaitFor waits until the caches reflect revision rev or later, or ctx ends,
// or the hub stops (ErrStopped).
func (h *Hub) WaitFor(ctx context.Context, rev int64) error {
	for {
		h.mu.RLock()
		ok, stopped, progress := h.synced && h.rev >= rev, h.stopped, h.progress
		h.mu.RUnlock()
		if ok {
			return nil
		}
		if stopped {
			return ErrStopped
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// relist reads the whole key space at one revision and makes it the caches'
// state, with an empty history starting there.
func (h *Hub) relist(ctx context.Context) (int64, error) {
	states := map[*Cache]*state{}
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
				continue
			}
			s := states[c]
			if s == nil {
				s = &state{items: map[string]*Item{}}
				states[c] = s
			}
			s.items[kv.Key] = &Item{Key: kv.Key, Revision: kv.ModRevision, Object: obj}
			s.keys = append(s.keys, kv.Key) // List returns keys in order
		}
		if page.Remaining == 0 || len(page.Items) == 0 {
			break
		}
		opts.Start = page.Items[len(page.Items)-1].Key + "\x00"
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.caches {
		s := states[c]
		if s == nil {
			s = &state{items: map[string]*Item{}}
		}
		c.items, c.keys = s.items, s.keys
		clear(c.log)
		c.log, c.floor = nil, opts.Revision
		c.notify()
	}
	h.rev, h.synced = opts.Revision, true
	h.advance()
	return opts.Revision, nil
}

type state struct {
	items map[string]*Item
	keys  []string
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
	for ev := range events {
		if ev.Err != nil {
			return ev.Err
		}
		h.apply(ev)
	}
	return ctx.Err()
}

func (h *Hub) apply(ev storage.Event) {
	c := h.cacheFor(ev.Key)
	var item *Item
	typ := ev.Type
	if c != nil {
		obj, err := c.decode(ev.KeyValue)
		if err != nil && ev.Prev != nil {
			// What was served is gone from the cache: announce its
			// deletion, with its last state at this revision.
			h.config.onError(err)
			typ = storage.Delete
			prev := ev.KeyValue
			prev.Value = ev.Prev
			obj, err = c.decode(prev)
		}
		if err != nil {
			h.config.onError(err)
		} else {
			item = &Item{Key: ev.Key, Revision: ev.ModRevision, Object: obj}
		}
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if c != nil {
		c.apply(typ, ev.Key, item, ev.ModRevision)
	}
	h.rev = ev.ModRevision
	h.advance()
}

func (h *Hub) advance() {
	close(h.progress)
	h.progress = make(chan struct{})
}

func (h *Hub) cacheFor(key string) *Cache {
	rest, ok := strings.CutPrefix(key, h.root)
	if !ok {
		return nil
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.caches[key[:len(h.root)+i+1]]
}

// Cache is the state and recent history of one resource.
type Cache struct {
	hub    *Hub
	prefix string
	decode DecodeFunc

	// Guarded by hub.mu.
	items   map[string]*Item
	keys    []string // sorted
	log     []logEntry
	floor   int64         // every event after floor is in log
	changed chan struct{} // closed and replaced when log grows or restarts
}

type logEntry struct {
	Event
	at time.Time
}

// Prefix is the key prefix of the cache's resource.
func (c *Cache) Prefix() string { return c.prefix }

// apply records one change; the caller holds hub.mu.
func (c *Cache) apply(typ storage.EventType, key string, item *Item, rev int64) {
	prev := c.items[key]
	ev := Event{Revision: rev, Item: item, Prev: prev}
	switch {
	case typ == storage.Delete || item == nil:
		if prev == nil {
			return
		}
		if item == nil { // not even the last state decodes: what was served, at this revision
			item = &Item{Key: key, Revision: rev, Object: prev.Object}
		}
		ev.Type, ev.Item = Deleted, item
		delete(c.items, key)
		i := sort.SearchStrings(c.keys, key)
		c.keys = append(c.keys[:i], c.keys[i+1:]...)
	case prev == nil:
		ev.Type = Added
		c.items[key] = item
		i := sort.SearchStrings(c.keys, key)
		c.keys = append(c.keys, "")
		copy(c.keys[i+1:], c.keys[i:])
		c.keys[i] = key
	default:
		ev.Type = Modified
		c.items[key] = item
	}

	now := time.Now()
	c.log = append(c.log, logEntry{ev, now})
	cfg := c.hub.config
	for len(c.log) > 0 && (len(c.log) > cfg.historyCount || cfg.historyAge > 0 && now.Sub(c.log[0].at) > cfg.historyAge) {
		c.floor = c.log[0].Revision
		c.log[0] = logEntry{}
		c.log = c.log[1:]
	}
	c.notify()
}

func (c *Cache) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Get returns the current version of key (nil if absent) and the revision the
// cache reflects.
func (c *Cache) Get(key string) (*Item, int64) {
	c.hub.mu.RLock()
	defer c.hub.mu.RUnlock()
	return c.items[key], c.hub.rev
}

// List returns, in key order, the current items whose keys start with prefix
// and are not before start, at most limit of them (0: all) among those that
// pass filter (nil: all); the revision they were read at; and how many keys
// under prefix follow the last item returned.
func (c *Cache) List(prefix, start string, limit int, filter func(*Item) bool) (items []*Item, rev int64, remaining int) {
	c.hub.mu.RLock()
	defer c.hub.mu.RUnlock()
	keys := c.rangeOf(prefix)
	from := sort.SearchStrings(keys, max(start, prefix))
	if len(keys) > from {
		keys = keys[from:]
	} else {
		keys = nil
	}
	for i, k := range keys {
		if limit > 0 && len(items) == limit {
			return items, c.hub.rev, len(keys) - i
		}
		if it := c.items[k]; filter == nil || filter(it) {
			items = append(items, it)
		}
	}
	return items, c.hub.rev, 0
}

// rangeOf returns the sorted keys that start with prefix; the caller holds
// hub.mu.
func (c *Cache) rangeOf(prefix string) []string {
	lo := sort.SearchStrings(c.keys, prefix)
	hi := lo + sort.Search(len(c.keys)-lo, func(i int) bool { return !strings.HasPrefix(c.keys[lo+i], prefix) })
	return c.keys[lo:hi]
}
