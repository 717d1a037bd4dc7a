package listcache

import (
	"slices"
	"sync"
)

// Bodies are the joined lists of one resource's collections, by key
// prefix (apiserver keeps watches' initial events so).
type Bodies struct {
	budget     *Budget
	lastChange func() int64 // the resource's cache's last change

	mu    sync.Mutex
	lists map[string]*body // by key prefix
	left  bool             // see Leave
}

// body is one collection's joined items, at the cache's last change.
type body struct {
	change int64
	count  int
	data   []byte // nil until a second list at change
}

const (
	BodyMax      = 16 << 20 // the largest list kept
	listBytesMax = 64 << 20 // all lists kept by a server
	listsMax     = 1024     // the collections a resource remembers a sighting of
)

// Budget is the bytes a server's kept lists hold, all resources'.
type Budget struct {
	mu      sync.Mutex
	bytes   int
	members []member
}

// member is what a budget counts the bytes of.
type member interface {
	// dropStale gives back the bytes of what is least likely to be
	// used again.
	dropStale()
}

// Add has the budget count l's lists, kept from then on while their
// cache does not change (lastChange).
func (b *Budget) Add(l *Bodies, lastChange func() int64) {
	l.budget, l.lastChange = b, lastChange
	b.join(l)
}

func (b *Budget) join(m member) {
	b.mu.Lock()
	b.members = append(b.members, m)
	b.mu.Unlock()
}

// Held is the bytes the budget counts.
func (b *Budget) Held() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytes
}

// leave forgets a member, which gives its bytes back itself.
func (b *Budget) leave(m member) {
	b.mu.Lock()
	b.members = slices.DeleteFunc(b.members, func(x member) bool { return x == m })
	b.mu.Unlock()
}

// Leave drops l's lists and gives their bytes back to the budget, which
// forgets l: its resource is no longer served (a kind removed or
// replaced). l keeps nothing afterwards.
func (l *Bodies) Leave() {
	if l.budget == nil {
		return
	}
	l.budget.leave(l)
	l.mu.Lock()
	n := 0
	for _, b := range l.lists {
		n += len(b.data)
	}
	l.lists, l.left = nil, true
	l.mu.Unlock()
	l.budget.release(n)
}

// reserve takes n bytes of the budget, first having its members give back
// what is least likely to be used (dropStale) if they are not free; false
// if they are not there even then.
func (b *Budget) reserve(n int) bool {
	b.mu.Lock()
	members := b.members
	ok := b.bytes+n <= listBytesMax
	b.mu.Unlock()
	if !ok {
		for _, m := range members {
			m.dropStale()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bytes+n > listBytesMax {
		return false
	}
	b.bytes += n
	return true
}

func (b *Budget) release(n int) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.bytes -= n
	b.mu.Unlock()
}

// dropStale forgets the lists whose collection has changed since.
func (l *Bodies) dropStale() {
	now := l.lastChange()
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, b := range l.lists {
		if b.change != now {
			l.budget.release(len(b.data))
			delete(l.lists, p)
		}
	}
}

// Get returns the joined items of the collection at prefix if they were
// kept at change, for count items; else it records the sighting, and
// keep says whether the caller should join the items and keep them (the
// second list at one change).
func (l *Bodies) Get(prefix string, change int64, count int) (data []byte, keep bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.lists[prefix]
	if b != nil && b.change == change && b.count == count {
		return b.data, b.data == nil && count > 0 && l.budget != nil
	}
	if b != nil {
		l.budget.release(len(b.data))
		delete(l.lists, prefix)
	}
	if count == 0 || l.left {
		return nil, false // nothing to keep: no sighting either (a namespace that is not there)
	}
	if len(l.lists) >= listsMax {
		// Sightings of many collections (namespaces, each listed once):
		// those that keep nothing go.
		for p, other := range l.lists {
			if other.data == nil {
				delete(l.lists, p)
			}
		}
		if len(l.lists) >= listsMax {
			return nil, false
		}
	}
	if l.lists == nil {
		l.lists = make(map[string]*body)
	}
	l.lists[prefix] = &body{change: change, count: count}
	return nil, false
}

// Keep keeps data, the joined items of the collection at prefix at change,
// if the budget has room.
func (l *Bodies) Keep(prefix string, change int64, count int, data []byte) {
	if data == nil || len(data) > BodyMax || !l.budget.reserve(len(data)) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.lists[prefix]; b != nil && b.change == change && b.count == count && b.data == nil {
		b.data = data
		return
	}
	l.budget.release(len(data)) // another list came first
}

// Join joins elements given as pieces, per pieces each (apiserver's
// storedListPieces: three per item), each between open and close, sep between them; nil
// if they would be more than a list kept may hold.
func Join(pieces [][]byte, per int, open, sep, close string) []byte {
	n := len(pieces) / per
	size := n*(len(open)+len(close)) + max(n-1, 0)*len(sep)
	for _, p := range pieces {
		size += len(p)
	}
	if size > BodyMax {
		return nil
	}
	data := make([]byte, 0, size)
	for i, p := range pieces {
		if i%per == 0 {
			if i > 0 {
				data = append(data, close...)
				data = append(data, sep...)
			}
			data = append(data, open...)
		}
		data = append(data, p...)
	}
	if n > 0 {
		data = append(data, close...)
	}
	return data
}
