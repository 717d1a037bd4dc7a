package watchfeed

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/storage"
)

// Watchers that keep up take the events of the last commits from memory
// instead of reading them back from the backend's log: the committer keeps
// them, as it made them, for a while. A watcher further behind reads the
// log.
const (
	recentEvents = 1024    // the most events kept
	recentBytes  = 4 << 20 // the most bytes of values kept
)

// Recent is the events of a backend's last commits, every revision from
// first to rev, and the backend's window as of the last commit. The zero
// value holds nothing; Reset it before use.
type Recent struct {
	mu        sync.Mutex
	events    []storage.Event // revisions first, first+1, ..., rev
	first     int64
	bytes     int
	rev       int64
	compacted int64
}

// Reset starts over at the backend's revision rev and the start of its
// window, compacted, keeping nothing.
func (r *Recent) Reset(rev, compacted int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.events)
	r.events, r.first, r.bytes = r.events[:0], rev+1, 0
	r.rev, r.compacted = rev, compacted
}

// Add records a commit: evs, the events of revisions rev-len(evs)+1 to rev
// in order, and the window after it, which starts at compacted.
func (r *Recent) Add(evs []storage.Event, rev, compacted int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, evs...)
	for _, ev := range evs {
		r.bytes += eventBytes(ev)
	}
	r.rev, r.compacted = rev, compacted
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

// Window returns the revision of the last commit and the start of the
// window after it.
func (r *Recent) Window() (rev, compacted int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rev, r.compacted
}

func eventBytes(ev storage.Event) int {
	n := len(ev.Key) + len(ev.Value)
	if ev.Type != storage.Delete { // a deletion's Value is its Prev
		n += len(ev.Prev)
	}
	return n
}

// Read is a [ReadFunc] from memory, looking at most at scan revisions and
// appending at most most events: held is false if it does not hold
// revision next, which the log then has to give; caughtUp, that nothing
// after next is committed yet.
func (r *Recent) Read(prefix string, next int64, batch []storage.Event, scan, most int) (_ []storage.Event, _ int64, held, caughtUp bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case next <= r.compacted:
		return batch, next, true, false, FellBehind(next, r.compacted)
	case next > r.rev:
		return batch, next, true, true, nil
	case next < r.first:
		return batch, next, false, false, nil
	}
	for scanned := 0; next <= r.rev && scanned < scan && len(batch) < most; scanned++ {
		if ev := r.events[next-r.first]; strings.HasPrefix(ev.Key, prefix) {
			batch = append(batch, ev)
		}
		next++
	}
	return batch, next, true, false, nil
}

// FellBehind is the error that ends a watch whose next revision has left
// the window, which starts at compacted.
func FellBehind(next, compacted int64) error {
	return fmt.Errorf("%w: the watch fell behind: its next revision %d left the history window, which starts at %d",
		storage.ErrExpired, next, compacted)
}
