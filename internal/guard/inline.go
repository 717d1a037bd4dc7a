package guard

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"
)

// inline says whether a request with a deadline can have its handler run in
// the request's own goroutine (serveInline) rather than a runner's
// (serveWithin): HTTP/1, whose 504 can be sent whole while the handler
// still runs, to a writer that can flush it. An HTTP/2 stream ends only
// when its handler returns, so a client would wait for a stuck handler's
// return to read the end of its 504.
func inline(w http.ResponseWriter, r *http.Request) bool {
	if r.ProtoMajor >= 2 {
		return false
	}
	for {
		switch u := w.(type) {
		case http.Flusher, interface{ FlushError() error }: // as http.ResponseController flushes
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = u.Unwrap()
		default:
			return false
		}
	}
}

// serveInline runs the handler with a deadline in this goroutine, as
// serveWithin runs it in a runner's, at the cost of no hand-off to another
// goroutine and back (two of a write's five; BENCHMARKS.md). The 504 after
// the deadline comes from the goroutine of a timer of d's own (answerLate),
// while the handler, if it ignores its context, goes on in this one: the
// answer is sent whole (with its Content-Length), flushed, and says
// Connection: close, so that the client has all of it at once and sends
// its next request on another connection, this one being held until the
// handler returns. The handler writes through d.tw, as in a runner; this
// goroutine takes the response back (timeoutWriter.finish) before
// returning it to net/http, so that a 504 is never written into a
// response the server has finished.
//
// The timer is d's, reset for each request and stopped after it, where
// context.AfterFunc on the deadline's context cost four allocations and two
// maps of children more (BenchmarkGuard).
func (g *guard) serveInline(w http.ResponseWriter, r *http.Request, timeout time.Duration, slot *atomic.Int64) {
	d, cancel := g.within(w, r, timeout, slot)
	defer cancel()
	r, rctx := d.r, d.rctx
	deadline, _ := r.Context().Deadline() // the request's own, if sooner
	if d.timer == nil {
		d.timer = time.AfterFunc(time.Until(deadline), d.answerLate)
	} else {
		d.timer.Reset(time.Until(deadline))
	}
	// Two deferred calls, so that the timer is stopped and the slot
	// released even if answering a panic panics (a logger's or a reply's
	// hook): the timer would otherwise write into a finished response.
	defer func() {
		if d.timer.Stop() {
			d.recycle()
		} else {
			// answerLate has run or is running: it may still be using d,
			// which is left to the garbage collector.
			d.tw.finish()
		}
		g.flow.release(slot)
	}()
	defer func() {
		if p := recover(); p != nil && g.recovered(&d.tw, r, p, d.tw.began()) {
			panic(http.ErrAbortHandler)
		}
	}()
	g.next.ServeHTTP(&d.tw, r)
	if rctx != nil { // as the router does with its own once the handler has returned
		routeContexts.Put(rctx)
	}
}

// answerLate answers 504 for a handler run inline (serveInline) whose
// deadline has passed, in the goroutine of d's timer.
func (d *deadlinedRequest) answerLate() {
	g, r := d.g, d.r
	<-r.Context().Done() // at the deadline, a moment after the timer's
	if !errors.Is(r.Context().Err(), context.DeadlineExceeded) {
		// The client went away first: the handler sees its context end
		// and answers what it can, as in serveWithin.
		return
	}
	d.tw.timeout(r, g.flow.config.StatusOf(g.flow.timeoutError(r)), g.flow.replyWhole)
}
