// Package recorder makes what the observers of package observe see of
// each request a kapi server serves: it fills the request's
// observe.RequestRecord as the request is read, authenticated, answered
// and ended, wraps the response writer to see its code, size and (when an
// observer asks) body, and calls the observers as the request starts,
// answers and ends. Package apiserver wraps its handler in Handler and
// notes, through the Recording in a request's context (From), what only
// the request path knows: the user, the Status answered, a panic, each
// watch event sent, each step.
//
// # Invariant
//
// A Recording is written by the request's goroutine and read by the
// observers after the request ended; the fields a handler sets while it
// runs (user, requestor, Status, panic) are guarded by a lock and are no
// longer set once the request ended (a handler past its deadline sets
// nothing). An observer sees a record with no unexported state.
//
// # The slow, obviously correct path
//
// Without observers there is no recording at all: Handler returns the
// server's handler itself and From returns nil, which every method of
// Recording accepts (Step) or the caller checks. apiserver's observe
// tests hold the records to what kube-apiserver's metrics and audit log
// would say of the same requests.
package recorder
