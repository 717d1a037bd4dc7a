package apiserver

import (
	"sync"
)

// A LIST of a whole collection that nothing has changed since the last one
// is the same bytes again, but for its resourceVersion: made from the
// cached items, it costs a walk over them and a copy of each one's stored
// value into the response, scattered reads that cost several times what
// writing the bytes costs (a no-op server replaying one buffer is three
// times as fast). Clients list unchanged collections over and over: the
// informers of a fleet restarting, a poller, kubectl. So the second LIST
// of a collection at one state keeps its items' bytes joined in one
// buffer, and the following ones write that buffer whole until the
// collection changes. Only plain JSON lists of the storage version
// qualify (no selector, no limit, no other view, no conversion), one
// buffer per collection, at most listBodyMax bytes each and listBytesMax
// for the whole server (listBudget); a list seen once (a collection that
// changes between lists) costs nothing more than before.
type listBodies struct {
	budget     *listBudget
	lastChange func() int64 // the resource's cache's last change

	mu    sync.Mutex
	lists map[string]*listBody // by key prefix
}

// listBody is one collection's joined items, at the cache's last change.
type listBody struct {
	change int64
	count  int
	data   []byte // nil until a second list at change
}

const (
	listBodyMax  = 16 << 20 // the largest list kept
	listBytesMax = 64 << 20 // all lists kept by a server
	listsMax     = 1024     // the collections a resource remembers a sighting of
)

// listBudget is the bytes a server's kept lists hold, all resources'.
type listBudget struct {
	mu     sync.Mutex
	bytes  int
	bodies []*listBodies
}

// add has the budget count l's lists, kept from then on while their
// cache does not change (lastChange).
func (b *listBudget) add(l *listBodies, lastChange func() int64) {
	l.budget, l.lastChange = b, lastChange
	b.mu.Lock()
	b.bodies = append(b.bodies, l)
	b.mu.Unlock()
}

// reserve takes n bytes of the budget, first giving back those of lists
// whose collections have changed since; false if they are not there.
func (b *listBudget) reserve(n int) bool {
	b.mu.Lock()
	bodies := b.bodies
	ok := b.bytes+n <= listBytesMax
	b.mu.Unlock()
	if !ok {
		for _, l := range bodies {
			l.dropStale()
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

func (b *listBudget) release(n int) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.bytes -= n
	b.mu.Unlock()
}

// dropStale forgets the lists whose collection has changed since.
func (l *listBodies) dropStale() {
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

// get returns the joined items of the collection at prefix if they were
// kept at change, for count items; else it records the sighting, and
// keep says whether the caller should join the items and keep them (the
// second list at one change).
func (l *listBodies) get(prefix string, change int64, count int) (data []byte, keep bool) {
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
	if count == 0 {
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
		l.lists = make(map[string]*listBody)
	}
	l.lists[prefix] = &listBody{change: change, count: count}
	return nil, false
}

// keep keeps data, the joined items of the collection at prefix at change,
// if the budget has room.
func (l *listBodies) keep(prefix string, change int64, count int, data []byte) {
	if data == nil || len(data) > listBodyMax || !l.budget.reserve(len(data)) {
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

// joinElements joins elements given as pieces, per pieces each (see
// storedListPieces), each between open and close, sep between them; nil
// if they would be more than a list kept may hold.
func joinElements(pieces [][]byte, per int, open, sep, close string) []byte {
	n := len(pieces) / per
	size := n*(len(open)+len(close)) + max(n-1, 0)*len(sep)
	for _, p := range pieces {
		size += len(p)
	}
	if size > listBodyMax {
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
