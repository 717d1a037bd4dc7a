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
// buffer per collection and at most listBytesMax bytes in all: a list
// seen once (a collection that changes between lists) costs nothing more
// than before.
type listBodies struct {
	mu    sync.Mutex
	lists map[string]*listBody // by key prefix
	bytes int
}

// listBody is one collection's joined items, at the cache's last change.
type listBody struct {
	change int64
	count  int
	data   []byte // nil until a second list at change
}

const (
	listBodyMax  = 16 << 20 // the largest list kept
	listBytesMax = 64 << 20 // all lists kept, per resource
)

// get returns the joined items of the collection at prefix if they were
// kept at change, for count items.
func (l *listBodies) get(prefix string, change int64, count int) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.lists[prefix]; b != nil && b.change == change && b.count == count {
		return b.data
	}
	return nil
}

// seen records a list of the collection at prefix, at change, made of
// count items in pieces (see storedListPieces); the second at one change
// keeps them joined.
func (l *listBodies) seen(prefix string, change int64, count int, pieces [][]byte) {
	size := max(count-1, 0) // the commas
	for _, p := range pieces {
		size += len(p)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.lists[prefix]
	if b == nil || b.change != change || b.count != count {
		if b != nil {
			l.bytes -= len(b.data)
		}
		if l.lists == nil {
			l.lists = make(map[string]*listBody)
		}
		l.lists[prefix] = &listBody{change: change, count: count}
		return
	}
	if b.data != nil || count == 0 || size > listBodyMax {
		return
	}
	for l.bytes+size > listBytesMax && len(l.lists) > 1 {
		for p, other := range l.lists { // any other: they are few
			if other != b {
				l.bytes -= len(other.data)
				delete(l.lists, p)
				break
			}
		}
	}
	if l.bytes+size > listBytesMax {
		return
	}
	data := make([]byte, 0, size)
	for i, p := range pieces {
		if i > 0 && i%3 == 0 {
			data = append(data, ',')
		}
		data = append(data, p...)
	}
	b.data = data
	l.bytes += size
}
