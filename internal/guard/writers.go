package guard

import (
	"maps"
	"net/http"
	"strconv"
	"sync"

	"github.com/kapi-dev/kapi"
)

// startedWriter notes whether the response has begun.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (w *startedWriter) WriteHeader(code int) {
	w.started = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *startedWriter) Write(p []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(p)
}

func (w *startedWriter) Flush() {
	w.started = true
	http.NewResponseController(w.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher: nothing to tell
}

func (w *startedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// timeoutWriter is the writer of a handler with a deadline. The handler has
// headers of its own, copied to the response when it writes its header; once
// the deadline has passed, everything it writes is discarded, so that a
// handler that goes on cannot write into a response already answered.
type timeoutWriter struct {
	w      http.ResponseWriter
	header http.Header // the handler's; only the handler's goroutine uses it

	mu          sync.Mutex
	wroteHeader bool
	timedOut    bool
	finished    bool // the handler's goroutine has taken the response back (finish)
}

// reset readies a recycled writer for a response to w: the handler's
// headers start as w's.
func (tw *timeoutWriter) reset(w http.ResponseWriter) {
	tw.w, tw.wroteHeader, tw.timedOut, tw.finished = w, false, false, false
	maps.Copy(tw.header, w.Header())
}

func (tw *timeoutWriter) Header() http.Header { return tw.header }

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.writeHeaderLocked(code)
}

func (tw *timeoutWriter) writeHeaderLocked(code int) {
	if tw.timedOut || tw.wroteHeader {
		return
	}
	tw.wroteHeader = true
	h := tw.w.Header()
	clear(h)
	maps.Copy(h, tw.header)
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	tw.writeHeaderLocked(http.StatusOK)
	return tw.w.Write(p)
}

func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return
	}
	tw.writeHeaderLocked(http.StatusOK)
	http.NewResponseController(tw.w).Flush() //nolint:errcheck // as http.Flusher: nothing to tell
}

// began says whether the handler has begun its response.
func (tw *timeoutWriter) began() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return tw.wroteHeader
}

// timeout ends the handler's use of the response and answers st with
// reply, unless the handler has begun its response or given it back to
// the server (finish): then it returns false and changes nothing.
func (tw *timeoutWriter) timeout(r *http.Request, st kapi.Status, reply func(http.ResponseWriter, *http.Request, kapi.Status)) bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.wroteHeader || tw.finished {
		return false
	}
	tw.timedOut = true
	reply(tw.w, r, st)
	return true
}

// finish says that the handler has returned and its goroutine gives the
// response back to the server: a timeout still to come leaves it alone.
// If one is being answered, finish waits until it has been.
func (tw *timeoutWriter) finish() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.finished = true
}

// replyWhole is f's Reply for a handler that runs in the goroutine the server
// answers in (serveInline): the answer is sent while the handler still
// runs, and the server finishes the response only once it returns. So the
// answer carries its length, so that a client reads it whole now, and
// Connection: close, so that the client does not send its next request on
// a connection the handler holds; and it is flushed. The headers set on w
// before the guard (an embedder's middleware's) stay, as Reply keeps them.
func (f *Flow) replyWhole(w http.ResponseWriter, r *http.Request, st kapi.Status) {
	whole := &wholeWriter{header: http.Header{}, code: http.StatusOK}
	f.config.Reply(whole, r, st)
	h := w.Header()
	maps.Copy(h, whole.header)
	h.Del("Transfer-Encoding")
	h.Set("Content-Length", strconv.Itoa(len(whole.body)))
	h.Set("Connection", "close")
	w.WriteHeader(whole.code)
	_, _ = w.Write(whole.body)
	http.NewResponseController(w).Flush() //nolint:errcheck // nothing to tell: inline checked it can flush
}

// wholeWriter keeps a response whole, to be sent with its length.
type wholeWriter struct {
	header http.Header
	code   int
	body   []byte
	wrote  bool
}

func (w *wholeWriter) Header() http.Header { return w.header }

func (w *wholeWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
}

func (w *wholeWriter) Write(p []byte) (int, error) {
	w.wrote = true
	w.body = append(w.body, p...)
	return len(p), nil
}
