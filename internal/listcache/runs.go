package listcache

import (
	"slices"
	"sync"
)

// Runs are the LIST bodies of one resource's collections kept in runs, by
// a key that names the collection and the format.
//
// A run is consecutive items of a list with their bytes joined (each
// item's prefix and element, made by the caller); a list of the collection
// is written as its runs, each in one write. The next list reuses every
// run whose items it holds in the same order, the same versions (the
// items are compared, not their bytes: an item is one version of an
// object, never changed), and makes anew only those around what changed: a
// collection a controller writes to between lists costs a copy of a run
// or two per list, not of every item.
type Runs[T comparable] struct {
	budget *Budget

	mu   sync.Mutex
	sets map[string]*runSet[T]
	left bool // see Leave
}

// runSet is one collection's runs, or its sighting: a list seen once keeps
// nothing (the memory of a collection listed once is not doubled).
type runSet[T comparable] struct {
	runs   []*run[T]
	starts map[T]int // the run each first item of a run starts
	size   int       // the runs' bytes, counted in the budget
	rev    int64     // of the list the runs were made for
	used   bool      // by a list since the budget last dropped unused runs
	// tooLarge is the item count at which the collection's runs were
	// over RunsMax: a list of as many items is not joined.
	tooLarge int
}

// run is consecutive items of a list and their bytes joined. Both are
// never changed once the run is made.
type run[T comparable] struct {
	items []T
	data  []byte
}

const (
	// RunBytes is the size from which a run ends: large enough for few
	// writes per list (each a syscall with a cost of its own: a LIST of
	// 10 MB written in runs of 128 KiB cost ~15% more CPU than in runs
	// of 512 KiB), small enough that remaking one is cheap.
	RunBytes = 512 << 10
	// RunsMax is the largest collection kept in runs.
	RunsMax = 32 << 20
)

// Use has the budget count the runs' bytes.
func (c *Runs[T]) Use(b *Budget) {
	c.budget = b
	b.join(c)
}

// Leave drops the runs and gives their bytes back to the budget, which
// forgets c: its resource is no longer served (a kind removed or
// replaced). c keeps nothing afterwards.
func (c *Runs[T]) Leave() {
	if c.budget == nil {
		return
	}
	c.budget.leave(c)
	c.mu.Lock()
	n := 0
	for _, s := range c.sets {
		n += s.size
	}
	c.sets, c.left = nil, true
	c.mu.Unlock()
	c.budget.release(n)
}

// Join returns items' bytes joined, in runs, each item's made by add
// (which appends them to dst): the runs of the last list of key reused
// where they hold the same items in the same order, new ones made where
// not. rev is the list's revision: the runs of the latest list are kept
// for the next. nil: the collection was not listed before (or is too
// large to keep, found so on its second list as soon as its runs pass
// RunsMax); the caller writes the items itself.
func (c *Runs[T]) Join(key string, rev int64, items []T, add func(dst []byte, item T) ([]byte, error)) ([][]byte, error) {
	old, ok := c.sighting(key, len(items))
	if !ok {
		return nil, nil
	}
	// reusable is the run of old that starts at items[i], if items hold
	// all of it there and it is not small: a small run is joined into the
	// one being made, so that a collection growing at its end between
	// lists does not leave one small run more each time.
	reusable := func(i int) *run[T] {
		k, ok := old.starts[items[i]]
		if !ok {
			return nil
		}
		r := old.runs[k]
		if len(r.data) < RunBytes/4 {
			return nil
		}
		if len(items)-i < len(r.items) || !slices.Equal(items[i:i+len(r.items)], r.items) {
			return nil
		}
		return r
	}
	var runs []*run[T]
	size, data, made := 0, 0, false
	for i := 0; i < len(items); {
		r := reusable(i)
		if r == nil {
			r = &run[T]{data: make([]byte, 0, RunBytes+RunBytes/8)}
			start := i
			for i < len(items) && (i == start || len(r.data) < RunBytes && reusable(i) == nil) {
				var err error
				if r.data, err = add(r.data, items[i]); err != nil {
					return nil, err
				}
				i++
			}
			if cap(r.data)-len(r.data) > RunBytes/8 {
				// Ended early: keep its bytes, not the room it was given.
				r.data = slices.Clone(r.data)
			}
			r.items = slices.Clone(items[start:i])
			made = true
		} else {
			i += len(r.items)
		}
		runs = append(runs, r)
		size += cap(r.data) // what the run holds on to, counted against the budget
		data += len(r.data)
		if data > RunsMax {
			// Too large to keep: give up now rather than hold the
			// whole list's bytes at once (100,000 widgets: ~100 MB)
			// only to drop them; the caller streams the items.
			c.keep(key, rev, nil, 0, data, len(items))
			return nil, nil
		}
	}
	joined := make([][]byte, len(runs))
	for i, r := range runs {
		joined[i] = r.data
	}
	if made || len(runs) != len(old.runs) {
		c.keep(key, rev, runs, size, data, len(items))
	}
	return joined, nil
}

// sighting returns the runs of key, or false for a collection not listed
// before (whose sighting it records) or one too large to keep.
func (c *Runs[T]) sighting(key string, n int) (runSet[T], bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sets[key]
	if c.left {
		return runSet[T]{}, false
	}
	if s == nil {
		if len(c.sets) >= listsMax {
			// Sightings of many collections (namespaces, each listed
			// once): those that keep nothing go.
			for k, other := range c.sets {
				if other.runs == nil {
					delete(c.sets, k)
				}
			}
			if len(c.sets) >= listsMax {
				return runSet[T]{}, false
			}
		}
		if c.sets == nil {
			c.sets = make(map[string]*runSet[T])
		}
		c.sets[key] = &runSet[T]{}
		return runSet[T]{}, false
	}
	if s.tooLarge > 0 && n >= s.tooLarge {
		return runSet[T]{}, false
	}
	s.used = true
	return *s, true
}

// keep keeps runs for key, made for a list at rev of n items, unless a
// later list's are kept already or the budget has no room for them.
func (c *Runs[T]) keep(key string, rev int64, runs []*run[T], size, data, n int) {
	if data > RunsMax {
		c.mu.Lock()
		if s := c.sets[key]; s != nil {
			released := s.size
			*s = runSet[T]{tooLarge: n}
			defer c.budget.release(released)
		}
		c.mu.Unlock()
		return
	}
	if c.budget == nil || !c.budget.reserve(size) {
		return
	}
	starts := make(map[T]int, len(runs))
	for i, r := range runs {
		starts[r.items[0]] = i
	}
	c.mu.Lock()
	s := c.sets[key]
	if s == nil || rev < s.rev {
		c.mu.Unlock()
		c.budget.release(size) // gone meanwhile, or a later list came first
		return
	}
	released := s.size
	*s = runSet[T]{runs: runs, starts: starts, size: size, rev: rev, used: true}
	c.mu.Unlock()
	c.budget.release(released)
}

// dropStale gives back the bytes of the runs no list used since the last
// time.
func (c *Runs[T]) dropStale() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, s := range c.sets {
		if s.runs != nil && !s.used {
			c.budget.release(s.size)
			c.sets[key] = &runSet[T]{} // a sighting still: the next list keeps runs again
		}
		s.used = false
	}
}
