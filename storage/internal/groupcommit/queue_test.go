package groupcommit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage/internal/groupcommit"
)

type req struct {
	n        int
	answered atomic.Int32 // batches that held it
}

// TestEveryRequestAnsweredOnce hands requests from many writers to a queue
// whose commits are slow, and checks the package's invariant: every request
// is in exactly one batch, batches hold at most MaxBatch, each writer's
// requests come in the order it sent them, and Do returns only after the
// request's batch was committed.
func TestEveryRequestAnsweredOnce(t *testing.T) {
	const writers, each, maxBatch = 16, 200, 8
	closing := make(chan struct{})
	var (
		batches, biggest int
		lastOf           = map[int]int{} // writer -> last n seen
		mu               sync.Mutex
	)
	q := groupcommit.New(groupcommit.Config[*req]{
		MaxBatch: maxBatch,
		Commit: func(batch []*req) {
			mu.Lock()
			defer mu.Unlock()
			batches++
			biggest = max(biggest, len(batch))
			for _, r := range batch {
				w, i := r.n/each, r.n%each
				if last, ok := lastOf[w]; ok && i <= last {
					t.Errorf("writer %d's request %d after its %d", w, i, last)
				}
				lastOf[w] = i
				r.answered.Add(1)
			}
			time.Sleep(100 * time.Microsecond)
		},
		Linger: func(took time.Duration) time.Duration { return took },
	}, closing)
	done := make(chan struct{})
	go func() { defer close(done); q.Run() }()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := &req{n: w*each + i}
				if err := q.Do(context.Background(), r); err != nil {
					t.Error(err)
					return
				}
				if n := r.answered.Load(); n != 1 {
					t.Errorf("request %d answered after %d commits, want 1", r.n, n)
				}
			}
		})
	}
	wg.Wait()
	close(closing)
	<-done
	if biggest > maxBatch {
		t.Errorf("a batch of %d, the most is %d", biggest, maxBatch)
	}
	if batches >= writers*each {
		t.Errorf("%d batches for %d requests: none shared a commit", batches, writers*each)
	}
	t.Logf("%d requests in %d batches, the biggest %d, %d lingered", writers*each, batches, biggest, q.Lingers())
}

// TestClosedRefuses checks that a request sent once the queue has closed
// is refused, not left waiting, and that an ended context refuses it too.
func TestClosedRefuses(t *testing.T) {
	closing := make(chan struct{})
	q := groupcommit.New(groupcommit.Config[*req]{Commit: func([]*req) {}}, closing)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Submit(ctx, &req{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Submit with an ended context: %v, want context.Canceled", err)
	}
	close(closing)
	q.Run() // returns at once
	if err := q.Do(context.Background(), &req{}); !errors.Is(err, groupcommit.ErrClosed) {
		t.Errorf("Do after closing: %v, want ErrClosed", err)
	}
	if n := q.Queued(); n != 0 {
		t.Errorf("%d queued after refusals, want 0", n)
	}
}

// TestIdleWorkBetweenWrites checks that Idle runs while Pending says there
// is work, and that a waiting request goes before it.
func TestIdleWorkBetweenWrites(t *testing.T) {
	closing := make(chan struct{})
	var left atomic.Int32
	left.Store(50)
	var committed atomic.Int32
	q := groupcommit.New(groupcommit.Config[*req]{
		MaxBatch: 4,
		Commit:   func(b []*req) { committed.Add(int32(len(b))) },
		Pending:  func() bool { return left.Load() > 0 },
		Idle:     func() { left.Add(-1) },
	}, closing)
	done := make(chan struct{})
	go func() { defer close(done); q.Run() }()
	for range 10 {
		if err := q.Do(context.Background(), &req{}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); left.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	close(closing)
	<-done
	if n := left.Load(); n != 0 {
		t.Errorf("%d pieces of idle work left undone", n)
	}
	if n := committed.Load(); n != 10 {
		t.Errorf("%d requests committed, want 10", n)
	}
}

// doneCounter is a context that counts the calls to Done.
type doneCounter struct {
	context.Context
	calls atomic.Int32
}

func (c *doneCounter) Done() <-chan struct{} {
	c.calls.Add(1)
	return c.Context.Done()
}

// TestSubmitToWaitingCommitter checks that a request handed to a committer
// waiting for one does not ask its context for Done: kapi's store guard
// makes a timer and a derived context for that, which a write that never
// waits need not pay for. The committer is waiting once it has answered a
// first request and gone back for more, which Submit cannot observe, so
// the test tries until one request goes through without Done.
func TestSubmitToWaitingCommitter(t *testing.T) {
	someWithoutDone(t, func(q *groupcommit.Queue[*req], ctx context.Context, r *req) {
		if err := q.Do(ctx, r); err != nil {
			t.Fatal(err)
		}
	})
}

// someWithoutDone writes through write, one request at a time, to a
// committer whose commits take no time, until one write did not ask its
// context for Done; it fails the test if none of 1000 did.
func someWithoutDone(t *testing.T, write func(q *groupcommit.Queue[*req], ctx context.Context, r *req)) {
	t.Helper()
	q := runOneByOne(t, func([]*req) {})
	for i := range 1000 {
		ctx := &doneCounter{Context: context.Background()}
		write(q, ctx, &req{n: i})
		if ctx.calls.Load() == 0 {
			return
		}
		time.Sleep(time.Millisecond) // for the committer to wait again
	}
	t.Fatal("every request asked its context for Done, even those handed to a waiting committer and answered at once")
}

// TestSlowCommitAsksForDone checks that a write whose commit hangs asks its
// context for Done, even though it was handed to a waiting committer
// without asking: kapi's store guard arms the timer that makes a hung
// store suspect only then. The commit returns only once Done was asked,
// so without it the test fails at its deadline. (A first write gets the
// committer going, and waiting for the next, as a server's is.)
func TestSlowCommitAsksForDone(t *testing.T) {
	ctx := &doneCounter{Context: context.Background()}
	deadline := time.Now().Add(time.Minute)
	q := runOneByOne(t, func(batch []*req) {
		for batch[0].n == 1 && ctx.calls.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	})
	if err := q.Do(context.Background(), &req{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // for the committer to wait again
	if err := q.Do(ctx, &req{n: 1}); err != nil {
		t.Fatal(err)
	}
	if ctx.calls.Load() == 0 {
		t.Fatal("a write waiting on a hung commit never asked its context for Done")
	}
}

// TestWaitAnsweredInTimeDoesNotAskForDone checks Wait as
// TestSubmitToWaitingCommitter checks Do: a request handed to a waiting
// committer and answered before its batch is slow never asks its context
// for Done (postgres' writes wait this way).
func TestWaitAnsweredInTimeDoesNotAskForDone(t *testing.T) {
	someWithoutDone(t, func(q *groupcommit.Queue[*req], ctx context.Context, r *req) {
		answered, err := q.Submit(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if !q.Wait(ctx, answered) {
			t.Fatal("Wait returned before the outcome, with the context still live")
		}
	})
}

// TestWaitReturnsWhenContextEnds checks that a writer whose context ends
// while its commit hangs stops waiting (once the batch is slow), and is
// told its outcome did not come: the commit returns only after Wait did
// (or at the test's deadline, when Wait would wrongly say it came).
func TestWaitReturnsWhenContextEnds(t *testing.T) {
	release := make(chan struct{})
	q := runOneByOne(t, func(batch []*req) {
		if batch[0].n == 1 {
			select {
			case <-release:
			case <-time.After(time.Minute):
			}
		}
	})
	if err := q.Do(context.Background(), &req{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	answered, err := q.Submit(ctx, &req{n: 1})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if q.Wait(ctx, answered) {
		t.Fatal("Wait said the outcome came while the commit still hung")
	}
	close(release)
	<-answered // answered all the same, once its commit returns
}

// runOneByOne runs a queue of batches of one request, each committed by
// commit, until the test ends.
func runOneByOne(t *testing.T, commit func([]*req)) *groupcommit.Queue[*req] {
	closing := make(chan struct{})
	q := groupcommit.New(groupcommit.Config[*req]{MaxBatch: 1, Commit: commit}, closing)
	done := make(chan struct{})
	go func() { defer close(done); q.Run() }()
	t.Cleanup(func() { close(closing); <-done })
	return q
}

// TestSubmitBehindACommitDoesNotAskForDone checks that a request handed
// over while the committer commits another batch, one answered before it
// is slow, does not ask its context for Done either: under load a writer
// usually comes while a commit is under way, and kapi's store guard would
// arm a timer and a derived context for each (postgres' writers, measured
// on the load harness). The first commit returns once the second request
// waits in Submit.
func TestSubmitBehindACommitDoesNotAskForDone(t *testing.T) {
	waiting := make(chan struct{})
	q := runOneByOne(t, func(batch []*req) {
		if batch[0].n == 0 {
			<-waiting
		}
	})
	first, err := q.Submit(context.Background(), &req{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &doneCounter{Context: context.Background()}
	second := make(chan error, 1)
	go func() {
		answered, err := q.Submit(ctx, &req{n: 1})
		if err == nil && !q.Wait(ctx, answered) {
			err = errors.New("Wait returned before the outcome, with the context still live")
		}
		second <- err
	}()
	for q.Queued() == 0 {
		time.Sleep(time.Millisecond) // until the second is handed over
	}
	time.Sleep(10 * time.Millisecond) // for it to wait in Submit
	close(waiting)
	<-first
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if n := ctx.calls.Load(); n != 0 {
		t.Fatalf("a request that waited behind a commit answered in time asked its context for Done %d times", n)
	}
}

// TestSubmitBehindAHungCommitAsksForDone checks the other side: a request
// waiting to be handed over while a commit hangs asks its still-live
// context for Done once that batch is slow, so that a writer whose
// context then ends is not held until the commit returns. The commit
// hangs until Done was asked, ends the context, and returns only once
// Submit has (or at the test's deadline).
func TestSubmitBehindAHungCommitAsksForDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	counted := &doneCounter{Context: ctx}
	deadline := time.Now().Add(time.Minute)
	submitted := make(chan struct{})
	q := runOneByOne(t, func(batch []*req) {
		if batch[0].n != 0 {
			return
		}
		for counted.calls.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cancel()
		select {
		case <-submitted:
		case <-time.After(time.Until(deadline)):
		}
	})
	if _, err := q.Submit(context.Background(), &req{}); err != nil {
		t.Fatal(err)
	}
	for q.Queued() != 0 {
		time.Sleep(time.Millisecond) // until the committer has taken it
	}
	_, err := q.Submit(counted, &req{n: 1})
	close(submitted)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Submit behind a hung commit whose context ended while it waited: %v, want context.Canceled", err)
	}
}
