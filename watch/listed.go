package watch

import (
	"sync"
	"time"
)

// Lists read in pages. A continue token names the revision its list was
// read at, and its next page is read from the store at that revision. As
// kube-apiserver's storage is compacted, such a token expires: here when
// no list at its revision has been read for longer than the history's age.
// Tokens stay opaque and the same for every list at one revision; the
// hub, not the token, remembers when.

// listClock remembers when a list at each revision was last read, for
// the history's age.
type listClock struct {
	mu     sync.Mutex
	at     map[int64]time.Duration // since the hub's epoch
	pruned time.Duration
	// expiredTo is the highest revision whose list was forgotten for its
	// age: a token at it or below has expired, though no longer in at.
	expiredTo int64
}

// Listed records that a list at revision rev was read now, whose pages
// continue from it.
func (h *Hub) Listed(rev int64) {
	now, age := h.now(), h.config.historyAge
	c := &h.lists
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[int64]time.Duration{}
	}
	c.at[rev] = now
	if age > 0 && now-c.pruned > age {
		for r, t := range c.at {
			if now-t > age {
				delete(c.at, r)
				c.expiredTo = max(c.expiredTo, r)
			}
		}
		c.pruned = now
	}
}

// ListExpired says whether the pages of a list read at revision rev have
// expired: a list at rev was read, but longer ago than the history's age,
// or rev is no later than a revision whose list was forgotten for its age
// (a list's revision is the latest when its first page is read, so one
// at an earlier revision was read earlier still). Another revision this
// hub has no list of (one read by another server over the same store, or
// before a restart) has not expired: the store's own history decides.
func (h *Hub) ListExpired(rev int64) bool {
	age := h.config.historyAge
	if age <= 0 {
		return false
	}
	c := &h.lists
	c.mu.Lock()
	t, ok := c.at[rev]
	expiredTo := c.expiredTo
	c.mu.Unlock()
	if !ok {
		return rev <= expiredTo
	}
	return h.now()-t > age
}
