package groupcommit

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"
)

// ErrClosed is Submit's error once the queue's closing channel is closed:
// the request was not handed over, so it was not applied.
var ErrClosed = errors.New("groupcommit: closed")

// Config is what a backend's committer does with the batches.
type Config[R any] struct {
	// MaxBatch bounds the requests of one batch; at least 1.
	MaxBatch int
	// Commit commits a batch, and records each request's outcome in it.
	// It runs on the committer goroutine only; the queue answers the
	// batch's requests when it returns.
	Commit func(batch []R)
	// AfterAnswer, if set, runs on the committer after a batch's requests
	// are answered: for work no writer should wait for.
	AfterAnswer func()
	// Linger, if set, is how long a batch waits for the writers the
	// committer expects (see the package doc), given the moving average of
	// the commits' durations. nil: never wait.
	Linger func(took time.Duration) time.Duration
	// Pending and Idle, if set, are the backend's work between writes:
	// while Pending returns true and no request waits, the committer calls
	// Idle. Both run on the committer goroutine only.
	Pending func() bool
	Idle    func()
}

// Queue hands requests to one committer goroutine, which runs Run.
type Queue[R any] struct {
	cfg      Config[R]
	requests chan item[R]
	closing  <-chan struct{}
	// queued counts the requests handed over and not yet taken into a
	// batch; lingers, the times a batch waited for writers (for tests).
	queued  atomic.Int64
	lingers atomic.Int64
	// slow is closed once the batch being gathered or committed has taken
	// longer than slowAfter (see Do); the committer makes a new one for
	// each batch before it takes the batch's first request.
	slow atomic.Pointer[chan struct{}]
}

// slowAfter is how long a batch may take before its writers ask their
// contexts for Done.
const slowAfter = 100 * time.Millisecond

type item[R any] struct {
	r    R
	done chan struct{}
}

// New returns a queue whose committer stops when closing is closed.
func New[R any](cfg Config[R], closing <-chan struct{}) *Queue[R] {
	cfg.MaxBatch = max(cfg.MaxBatch, 1)
	q := &Queue[R]{cfg: cfg, requests: make(chan item[R]), closing: closing}
	// Closed until Run makes the first batch's: a request handed over
	// before the committer runs waits as for a slow batch, asking ctx.
	close(q.nextSlow())
	return q
}

// nextSlow makes the slow signal of the next batch.
func (q *Queue[R]) nextSlow() chan struct{} {
	slow := make(chan struct{})
	q.slow.Store(&slow)
	return slow
}

// Submit hands r to the committer and returns the channel closed once r's
// outcome is recorded. It fails, and r is not applied, if ctx ends or the
// queue closes before the committer takes r.
func (q *Queue[R]) Submit(ctx context.Context, r R) (<-chan struct{}, error) {
	it := item[R]{r, make(chan struct{})}
	q.queued.Add(1) // until the committer takes it
	// A committer waiting for requests, as it is while it gathers a
	// batch, takes r at once; only a request that has to wait asks ctx for
	// its Done channel, which a wrapped context may make at a cost: kapi's
	// store guard arms a timer and a derived context for it.
	select {
	case q.requests <- it:
		return it.done, nil
	default:
	}
	// Nor does one that waits while the committer commits a batch that is
	// not slow: the batch's slow signal also closes once it is answered
	// (after the next batch's is in place), and the committer then takes
	// requests again. A request waits so through the batch under way and
	// the next at most; past a slow one, or an ended ctx, it asks ctx.
	var (
		slow  = q.slow.Load()
		ended <-chan struct{} // ctx's Done, once asked
	)
	for turns := 0; ; turns++ {
		var over <-chan struct{}
		switch {
		case ended != nil:
		case turns < 2 && ctx.Err() == nil:
			over = *slow
		default:
			ended = ctx.Done()
		}
		select {
		case q.requests <- it:
			return it.done, nil
		case <-q.closing:
			q.queued.Add(-1)
			return nil, ErrClosed
		case <-ended:
			q.queued.Add(-1)
			return nil, ctx.Err()
		case <-over:
			if next := q.slow.Load(); next != slow {
				slow = next
			} else {
				turns = 2 // slow, not over
			}
		}
	}
}

// Do is Submit, then a wait for r's outcome however long it takes: once
// handed over, a write is waited for even if ctx ends, so that its outcome
// says whether it happened.
//
// A wait longer than slowAfter asks ctx for Done, as a wait in Submit does:
// kapi's store guard arms its timer for calls that hang (an fsync stuck on
// a failing disk) only then. Asking at every write would cost that guard a
// timer and a derived context per write; the committer's one timer per
// batch tells the writers of a slow one instead.
func (q *Queue[R]) Do(ctx context.Context, r R) error {
	done, err := q.Submit(ctx, r)
	if err != nil {
		return err
	}
	if !q.fast(done) {
		_ = ctx.Done()
		<-done
	}
	return nil
}

// Wait waits for the outcome of a request Submit handed over (done is
// Submit's channel) or for ctx to end, whichever comes first, and says
// whether the outcome came: for a backend whose writer may stop waiting
// (postgres, whose writer withdraws a request not yet sent). As Do, it
// asks ctx for Done only once the batch has been slow, so that a write
// answered in time costs kapi's store guard no timer and no derived
// context.
func (q *Queue[R]) Wait(ctx context.Context, done <-chan struct{}) bool {
	if q.fast(done) {
		return true
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// fast waits for done or for the slow signal of the batch that holds its
// request, and says whether done came first. The signal loaded is that
// batch's: the committer makes the next one only after closing done.
func (q *Queue[R]) fast(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	case <-*q.slow.Load():
		// Slow, or over: the committer closes a batch's signal after
		// its outcomes too (see Submit).
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}

// Queued is how many requests are being handed over and not yet taken
// into a batch.
func (q *Queue[R]) Queued() int64 { return q.queued.Load() }

// Lingers is how many batches waited for writers.
func (q *Queue[R]) Lingers() int64 { return q.lingers.Load() }

// Run is the committer: it commits batches until the closing channel is
// closed. A request is either taken into a batch and answered, or refused
// by Submit: none is left waiting when Run returns.
func (q *Queue[R]) Run() {
	var (
		batch   = make([]R, 0, q.cfg.MaxBatch)
		dones   = make([]chan struct{}, 0, q.cfg.MaxBatch)
		writers int           // writers known when the last commit ended
		took    time.Duration // a moving average of the commits' durations
	)
	take := func(it item[R]) {
		batch, dones = append(batch, it.r), append(dones, it.done)
	}
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	// The next batch's slow signal, in place before its first request is
	// taken, so that every writer of the batch finds it.
	slow := q.nextSlow()
	for {
		if q.cfg.Pending != nil && q.cfg.Pending() {
			select {
			case it := <-q.requests:
				take(it)
			case <-q.closing:
				return
			default:
				q.cfg.Idle()
				continue
			}
		} else {
			select {
			case it := <-q.requests:
				take(it)
			case <-q.closing:
				return
			}
		}
		batchSlow := slow
		slowTimer := time.AfterFunc(slowAfter, func() { close(batchSlow) })
		runtime.Gosched()
	gather:
		for len(batch) < q.cfg.MaxBatch {
			select {
			case it := <-q.requests:
				take(it)
			default:
				break gather
			}
		}
		if want := min(writers, q.cfg.MaxBatch); q.cfg.Linger != nil && len(batch) < want {
			q.lingers.Add(1)
			linger.Reset(q.cfg.Linger(took))
		fill:
			for len(batch) < want {
				select {
				case it := <-q.requests:
					take(it)
				case <-linger.C:
					break fill
				case <-q.closing:
					break fill
				}
			}
			linger.Stop()
		}
		q.queued.Add(-int64(len(batch)))
		start := time.Now()
		q.cfg.Commit(batch)
		took += (time.Since(start) - took) / 8
		// Counted before answering, so that no writer of this batch is
		// back yet: those answered will likely write again, and those
		// that queued up meanwhile are writing now.
		writers = len(batch) + int(q.queued.Load())
		for _, d := range dones {
			close(d)
		}
		slow = q.nextSlow()
		// The batch is over: a Submit waiting for it (see there) goes on,
		// to the next batch's signal. Closed here unless the timer has.
		if slowTimer.Stop() {
			close(batchSlow)
		}
		clear(batch)
		clear(dones)
		batch, dones = batch[:0], dones[:0]
		if q.cfg.AfterAnswer != nil {
			q.cfg.AfterAnswer()
		}
	}
}
