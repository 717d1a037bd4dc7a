// Package lastwrite records the revision of a server's last write of each
// key, so that a write starting from the watch cache waits for the cache
// only when the cache has not shown that server's own last write of the
// same key (apiserver's latest).
package lastwrite

import "sync"

// Max is how many keys a Record holds. When full, the keys whose write the
// cache has reached go, and if none has, all do: a key forgotten costs a
// failed compare and a read of the store, no more.
const Max = 4096

// Record is the revision of the last write of each key. The zero value is
// empty and ready; it is safe for concurrent use.
type Record struct {
	mu  sync.Mutex
	rev map[string]int64
}

// Wrote records a write of key at rev; reached says whether the cache has
// reached a revision (to make room).
func (r *Record) Wrote(key string, rev int64, reached func(int64) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.rev) >= Max {
		for k, at := range r.rev {
			if reached(at) {
				delete(r.rev, k)
			}
		}
		if len(r.rev) >= Max {
			clear(r.rev)
		}
	}
	if r.rev == nil {
		r.rev = make(map[string]int64)
	}
	r.rev[key] = max(r.rev[key], rev)
}

// At is the revision of the last write of key recorded, or 0.
func (r *Record) At(key string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rev[key]
}
