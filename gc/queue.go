package gc

import (
	"context"
	"sync"
	"time"
)

// queue holds the objects to decide on, each at most once, and never
// handed to two workers at once; one whose decision failed comes back
// after a delay that grows with its failures.
type queue struct {
	mu       sync.Mutex
	ready    []identity
	queued   map[identity]bool // in ready or in later
	active   map[identity]bool // with a worker
	dirty    map[identity]bool // added while active: queued again when done
	failures map[identity]int
	later    []delayed
	wake     chan struct{}
}

type delayed struct {
	id  identity
	due time.Time
}

func (q *queue) init() {
	q.queued, q.active, q.dirty, q.failures = map[identity]bool{}, map[identity]bool{}, map[identity]bool{}, map[identity]int{}
	q.wake = make(chan struct{}, 1)
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) add(id identity) {
	q.mu.Lock()
	switch {
	case q.active[id]:
		q.dirty[id] = true
	case !q.queued[id]:
		q.queued[id] = true
		q.ready = append(q.ready, id)
	}
	q.mu.Unlock()
	q.signal()
}

// get waits for an object to decide on; false when ctx ends.
func (q *queue) get(ctx context.Context) (identity, bool) {
	for {
		q.mu.Lock()
		now := time.Now()
		var next time.Time
		q.later = slicesDeleteDue(q.later, now, func(d delayed) { q.ready = append(q.ready, d.id) }, &next)
		if len(q.ready) > 0 {
			id := q.ready[0]
			q.ready = q.ready[1:]
			if len(q.ready) == 0 {
				q.ready = nil
			}
			delete(q.queued, id)
			q.active[id] = true
			more := len(q.ready) > 0
			q.mu.Unlock()
			if more {
				q.signal() // for another worker
			}
			return id, true
		}
		q.mu.Unlock()
		var timer *time.Timer
		var due <-chan time.Time
		if !next.IsZero() {
			timer = time.NewTimer(time.Until(next))
			due = timer.C
		}
		select {
		case <-ctx.Done():
			return identity{}, false
		case <-q.wake:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// slicesDeleteDue moves the entries of later that are due to ready (via
// move) and sets next to the earliest of the others.
func slicesDeleteDue(later []delayed, now time.Time, move func(delayed), next *time.Time) []delayed {
	kept := later[:0]
	for _, d := range later {
		if !d.due.After(now) {
			move(d)
			continue
		}
		if next.IsZero() || d.due.Before(*next) {
			*next = d.due
		}
		kept = append(kept, d)
	}
	return kept
}

// done ends a worker's decision on id; err says it failed.
func (q *queue) done(id identity, err error) {
	q.mu.Lock()
	delete(q.active, id)
	switch {
	case err != nil:
		n := q.failures[id]
		q.failures[id] = n + 1
		delay := min(50*time.Millisecond<<min(n, 10), 30*time.Second)
		if !q.queued[id] {
			q.queued[id] = true
			q.later = append(q.later, delayed{id, time.Now().Add(delay)})
		}
		delete(q.dirty, id)
	default:
		delete(q.failures, id)
		if q.dirty[id] {
			delete(q.dirty, id)
			if !q.queued[id] {
				q.queued[id] = true
				q.ready = append(q.ready, id)
			}
		}
	}
	q.mu.Unlock()
	q.signal()
}
