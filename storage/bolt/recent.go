package bolt

import (
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/storage"
)

// Watchers that keep up take the events of the last commits from memory
// instead of reading them back from the file: the committer keeps them, as
// it made them, for a while. A watcher further behind reads the file.
const (
	recentEvents = 1024    // the most events kept
	recentBytes  = 4 << 20 // the most bytes of values kept
)

// recent is the events of the last commits, every revision from first to
// rev, and the store's window as of the last commit.
type recent struct {
	mu        sync.Mutex
	events    []storage.Event // revisions first, first+1, ..., rev
	first     int64
	bytes     int
	rev       int64
	compacted int64
}

// reset starts over at the file's meta, keeping nothing.
func (r *recent) reset(m meta) {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.events)
	r.events, r.first, r.bytes = r.events[:0], m.rev+1, 0
	r.rev, r.compacted = m.rev, m.compacted
}

// add records a commit: evs, the events of revisions rev-len(evs)+1 to rev
// in order, and the window after it.
func (r *recent) add(evs []storage.Event, m meta) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, evs...)
	for _, ev := range evs {
		r.bytes += eventBytes(ev)
	}
	r.rev, r.compacted = m.rev, m.compacted
	drop := 0
	for len(r.events)-drop > recentEvents || r.bytes > recentBytes {
		r.bytes -= eventBytes(r.events[drop])
		drop++
	}
	if drop > 0 {
		n := copy(r.events, r.events[drop:])
		clear(r.events[n:])
		r.events = r.events[:n]
		r.first += int64(drop)
	}
}

func eventBytes(ev storage.Event) int {
	n := len(ev.Key) + len(ev.Value)
	if ev.Type != storage.Delete { // a deletion's Value is its Prev
		n += len(ev.Prev)
	}
	return n
}

// read is readLog from memory: held is false if it does not hold revision
// next, which the file then has to give; caughtUp, that nothing after next
// is committed yet.
func (r *recent) read(prefix string, next int64, batch []storage.Event) (_ []storage.Event, _ int64, held, caughtUp bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case next <= r.compacted:
		return batch, next, true, false, fellBehind(next, r.compacted)
	case next > r.rev:
		return batch, next, true, true, nil
	case next < r.first:
		return batch, next, false, false, nil
	}
	for scanned := 0; next <= r.rev && scanned < watchScan && len(batch) < watchBatch; scanned++ {
		if ev := r.events[next-r.first]; strings.HasPrefix(ev.Key, prefix) {
			batch = append(batch, ev)
		}
		next++
	}
	return batch, next, true, false, nil
}
