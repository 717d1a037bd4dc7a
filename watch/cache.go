package watch

import (
	"bytes"
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
