// Package guard is the handler every request of a kapi server passes
// before it is routed: it answers for the server as a whole, as
// kube-apiserver's filter chain does.
//
// # What it owns
//
//   - Draining: while the server shuts down (Flow.Drain), new requests are
//     refused with 503 and Retry-After, watches are ended (Flow.WatchesEnd),
//     and Drain returns once the requests in flight have.
//   - In-flight caps: read-only requests, mutating ones and watches each
//     count against a limit of their own (Limits), sorted by Flow.Classify from
//     the method and path alone; the excess is refused at once with 429 and
//     Retry-After rather than queued until clients time out. With Limits.Fair
//     a fairness controller after the guard takes the place of the first two.
//   - Deadlines: a request other than a watch or a probe has one (the
//     server's, or less with timeout=) and is answered 504 when it passes,
//     even if its handler is stuck in a hook that ignores its context. The
//     handler writes through a writer that discards what comes after the
//     deadline. On HTTP/1 it runs in the request's own goroutine, and the
//     504 is sent from a timer's, whole, with Connection: close (the
//     connection stays the stuck handler's until it returns); on HTTP/2,
//     whose stream ends only when ServeHTTP returns, and when the server's
//     observers wrap the guard and must see the request end at its 504, it
//     runs in a runner goroutine of a small pool, and ServeHTTP returns at
//     the deadline.
//   - Panics: a handler's panic is logged and answered 500 (or the
//     connection aborted, if the response had begun); the server goes on.
//
// # Invariant
//
// A request's slot of its cap and its place in the drain are held until its
// handler returns, even after the client was answered 504: the handler is
// still working. Nothing is written to a response by two goroutines: after
// the deadline the timeout writer takes the response and the handler's
// writes are discarded, unless the handler had begun its answer, which is
// then left to finish.
//
// A handler run in the request's goroutine ends its request for whatever
// wraps the guard (an embedder's middleware, net/http's connection) when it
// returns: after its 504, if it ignored its context.
//
// # The slow, obviously correct path
//
// http.TimeoutHandler with a goroutine per request, and a semaphore per
// class: what the runners and the reused writers do, at the cost of a new
// goroutine's stack growing (a fifth of a GET's time) and an allocation of
// each per request. The limits tests of apiserver hold the guard to that
// behaviour.
package guard
