package listcache

import (
	"context"
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
	// making is the list making the items' bytes (see Share); nil when
	// none is. waiting counts the lists that wait for it; sighted that one made
	// them before; noKeep that they are too large to keep.
	making          *making
	waiting         int
	sighted, noKeep bool
}

// making is one list's making of a collection's bytes: done is closed
// when it ends, data then holds what it joined (kept or not), for the
// lists that waited to write.
type making struct {
	done chan struct{}
	data []byte
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

// Share returns the joined items of the collection at prefix at change,
// count of them, if they are kept; else the pieces make returns (per
// pieces an item, each item between open and close once joined), and
// data joined from them when it keeps them: from the second list at one
// change on, or at the first if another asked for them while it made
// them. A list that comes while another makes them waits for it (until
// ctx ends), so that the informers of a fleet starting at once make them
// once between them, not once each.
func (l *Bodies) Share(ctx context.Context, prefix string, change int64, count int, makePieces func() ([][]byte, error), per int, open, close string) (data []byte, pieces [][]byte, err error) {
	var b *body
	for {
		var wait *making
		if data, b, wait = l.get(prefix, change, count); wait == nil {
			break
		}
		select {
		case <-wait.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if wait.data != nil { // what the maker joined, kept or not (a full budget)
			return wait.data, nil, nil
		}
	}
	if data != nil {
		return data, nil, nil
	}
	join := false
	defer func() { l.done(prefix, b, data, join) }()
	if pieces, err = makePieces(); err != nil || b == nil {
		return nil, pieces, err
	}
	l.mu.Lock()
	join = b.sighted || b.waiting > 0
	l.mu.Unlock()
	if join {
		data = Join(pieces, per, open, "", close)
	}
	return data, pieces, nil
}

// get returns the kept bytes of the collection at prefix at change, or
// the body the caller is to make them for (nil: make them, keep nothing)
// and must end with done, or a channel to wait on while another makes
// them. A first sighting is recorded, with the caller making the bytes:
// its making is open (b.making), which says done not to keep them unless
// another list came meanwhile.
func (l *Bodies) get(prefix string, change int64, count int) (data []byte, mk *body, wait *making) {
	if l.budget == nil {
		return nil, nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.lists[prefix]
	if b != nil && b.change == change && b.count == count {
		switch {
		case b.data != nil || b.noKeep:
			return b.data, nil, nil
		case b.making != nil:
			b.waiting++
			return nil, nil, b.making
		}
		b.making = &making{done: make(chan struct{})} // the second list: it keeps them
		return nil, b, nil
	}
	if b != nil {
		l.budget.release(len(b.data))
		delete(l.lists, prefix)
	}
	if count == 0 || l.left {
		return nil, nil, nil // nothing to keep: no sighting either (a namespace that is not there)
	}
	if len(l.lists) >= listsMax {
		// Sightings of many collections (namespaces, each listed once):
		// those that keep nothing go.
		for p, other := range l.lists {
			if other.data == nil && other.making == nil {
				delete(l.lists, p)
			}
		}
		if len(l.lists) >= listsMax {
			return nil, nil, nil
		}
	}
	if l.lists == nil {
		l.lists = map[string]*body{}
	}
	b = &body{change: change, count: count, making: &making{done: make(chan struct{})}}
	l.lists[prefix] = b
	return nil, b, nil
}

// done ends the making of b's bytes, keeping data if it is not nil and
// the budget has room, and wakes the lists waiting for them, which write
// data whether it was kept or not; joined says the maker was to keep
// them.
func (l *Bodies) done(prefix string, b *body, data []byte, joined bool) {
	if b == nil {
		return
	}
	kept := data != nil && len(data) <= BodyMax && l.budget.reserve(len(data))
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case kept && l.lists[prefix] == b:
		b.data = data
	case kept:
		l.budget.release(len(data)) // the collection changed meanwhile
	case joined && data == nil:
		b.noKeep = true // too large to keep: the others make their own
	}
	b.making.data = data
	close(b.making.done)
	b.making, b.waiting, b.sighted = nil, 0, true
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
