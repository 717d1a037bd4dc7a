package lifecycle

import (
	"context"
	"sync"
	"time"
)

// queue holds the names of things to look at, each once however often it
// is added, handed to one worker at a time.
type queue struct {
	mu      sync.Mutex
	pending map[string]bool
	order   []string
	wake    chan struct{} // has a value when pending is not empty
	timers  map[*time.Timer]bool
}

func newQueue() *queue {
	return &queue{pending: map[string]bool{}, wake: make(chan struct{}, 1), timers: map[*time.Timer]bool{}}
}

func (q *queue) add(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending[name] {
		return
	}
	q.pending[name] = true
	q.order = append(q.order, name)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// addAfter adds name after d, unless ctx has ended by then.
func (q *queue) addAfter(ctx context.Context, name string, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		q.mu.Lock()
		delete(q.timers, t)
		q.mu.Unlock()
		if ctx.Err() == nil {
			q.add(name)
		}
	})
	q.timers[t] = true
}

// stop stops the timers of addAfter.
func (q *queue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for t := range q.timers {
		t.Stop()
	}
	clear(q.timers)
}

// next waits for a name, or for ctx to end ("", false).
func (q *queue) next(ctx context.Context) (string, bool) {
	for {
		q.mu.Lock()
		if len(q.order) > 0 {
			name := q.order[0]
			q.order = q.order[1:]
			delete(q.pending, name)
			if len(q.order) > 0 {
				select {
				case q.wake <- struct{}{}:
				default:
				}
			}
			q.mu.Unlock()
			return name, true
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return "", false
		}
	}
}
