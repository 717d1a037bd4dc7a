package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/httpbody"
	"github.com/kapi-dev/kapi/internal/splice"
	"github.com/kapi-dev/kapi/internal/websocket"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Watch: a parsed watch request, and the stream of its events, written from
// the watch cache's shared elements in bursts.

// validateWatchOptions refuses the combinations of watch parameters that
// kube-apiserver refuses, with its words.
func validateWatchOptions(match, token string, sendInitialEvents bool) FieldErrors {
	var errs FieldErrors
	if sendInitialEvents && match != "NotOlderThan" {
		errs = append(errs, Forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
	}
	if match != "" {
		if !sendInitialEvents {
			errs = append(errs, Forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		if match != "NotOlderThan" {
			errs = append(errs, NotSupported("resourceVersionMatch", match, "NotOlderThan"))
		}
		if token != "" {
			errs = append(errs, Forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
		}
	}
	return errs
}

// watchSpec is what a watch request asks for, parsed.
type watchSpec struct {
	opts      watch.WatchOptions
	timeout   time.Duration
	bookmarks bool
	rv        string
}

// parseWatch reads a watch request. It is apart from streamWatch so that
// its frame has left the stack when the stream starts: an idle watch holds
// its handler's stack for its whole life, and the runtime halves a stack
// only while a quarter of it is in use (see TestIdleWatcherCost).
func (rq *request) parseWatch(ctx context.Context) (*watchSpec, error) {
	q := rq.query
	sel, err := rq.parseSelectors()
	if err != nil {
		return nil, err
	}
	bookmarks, _ := rq.boolParam("allowWatchBookmarks")
	initial, initialSet := rq.boolParam("sendInitialEvents")
	rv, match := q.Get("resourceVersion"), q.Get("resourceVersionMatch")
	if errs := validateWatchOptions(match, q.Get("continue"), initialSet); len(errs) > 0 {
		return nil, listOptionsInvalid(errs...)
	}
	// Without timeoutSeconds, a random time in [min, 2·min) spreads the
	// reconnects of many watchers, as kube-apiserver's.
	timeout := rq.s.config.minWatchTimeout + rand.N(rq.s.config.minWatchTimeout)
	if s := q.Get("timeoutSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, badRequest("timeoutSeconds must be a non-negative integer, not %q", s)
		}
		if n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}

	opts := watch.WatchOptions{Prefix: rq.res.keyPrefix(rq.namespace), Filter: sel.filter()}
	if bookmarks {
		opts.BookmarkInterval = rq.s.config.bookmarkInterval
	}
	switch {
	case initial || !initialSet && (rv == "" || rv == "0"):
		// Synthetic ADDED events for the state at rv first; with bookmarks,
		// the bookmark that says they are over.
		if err := rq.consistent(ctx, rv); err != nil {
			return nil, err
		}
		opts.InitialEvents, opts.InitialEventsEnd = true, bookmarks
	case rv == "" || rv == "0":
		// sendInitialEvents=false: only the changes from now on.
		if err := rq.consistent(ctx, rv); err != nil {
			return nil, err
		}
		opts.Revision = rq.s.hub.Revision()
	default:
		rev, err := parseRevision(rv)
		if err != nil {
			return nil, err
		}
		opts.Revision = rev
	}

	// The list's answer, before any event: initial events without an
	// unreadable object would tell a watch-list informer that it holds the
	// whole collection, and a watch resumed after a relist that failed
	// would go on from a state it never had. kube-apiserver's cacher
	// cannot initialize over a corrupt object and refuses every watch of
	// the resource until it can (storage/cacher Cacher.Watch, 429 while not
	// ready); here the cache holds the rest, so only a watch that covers an
	// unreadable object is refused, as its list is.
	if bad := rq.res.cache.Unreadable(opts.Prefix); len(bad) > 0 {
		return nil, unreadableList(rq.res, bad)
	}

	return &watchSpec{opts: opts, timeout: timeout, bookmarks: bookmarks, rv: rv}, nil
}

// streamWatch serves a parsed watch until it ends.
func (rq *request) streamWatch(ctx context.Context, spec *watchSpec) error {
	// The watcher is registered before the headers (or a WebSocket's 101)
	// go out, as kube-apiserver does: a client that writes once it has
	// them sees its write.
	watcher, err := rq.res.cache.Watch(spec.opts)
	var conn *websocket.Conn
	if websocket.IsUpgrade(rq.r) { // websocket.go
		var wsErr error
		if ctx, conn, wsErr = rq.acceptWebSocket(ctx); wsErr != nil {
			return wsErr // the watcher holds nothing: it only reads the log when asked
		}
		defer conn.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, spec.timeout)
	defer cancel()
	stop := context.AfterFunc(rq.s.flow.WatchesEnd(), cancel) // Shutdown or Close
	defer stop()
	if conn != nil {
		// net/http cannot end a write to a hijacked connection whose client
		// reads nothing: the watch's end bounds its writes.
		defer context.AfterFunc(ctx, conn.EndWrites)()
	}

	rq.buf.streaming = true
	w := rq.w
	w.Header().Set("Content-Type", rq.out.StreamContentType())
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	rq.flush()
	if err == nil && spec.opts.InitialEvents && spec.opts.Filter == nil {
		if err = rq.writeInitial(ctx, watcher); err == nil && !watcher.Buffered() {
			rq.flush()
		}
	}

	for err == nil {
		var ev watch.Event
		if ev, err = watcher.Next(ctx); err == nil {
			if rq.buf.burst == nil && watcher.Buffered() {
				rq.startBurst()
			}
			err = rq.writeEvent(ev)
		}
		if !watcher.Buffered() { // as kube-apiserver: one flush per burst, not per event
			rq.endBurst()
			rq.flush()
		}
	}
	rq.endBurst()
	rq.endWatch(watcher, err, spec)
	return nil // the stream has begun: it ends, it does not fail
}

// writeInitial writes the initial events of a watch without a selector
// itself when they are JSON frames of the storage version, as a LIST
// writes its items (see storedListPieces): from the stored values, or
// from the frames of the whole collection kept joined by the watches that
// started at the same state (listcache.Bodies.Share), as the informers of
// a fleet restarting start at once: one of them makes them, the others
// wait for it.
func (rq *request) writeInitial(ctx context.Context, watcher *watch.Watcher) error {
	if rq.messages() || rq.out.MediaType() != codec.MediaTypeJSON || rq.out.View != codec.ViewObject || !rq.res.objType.plainMetadata || rq.res.converts() {
		return nil // Next delivers them
	}
	open, close := string(codec.AppendJSONEventOpen(nil, string(watch.Added))), codec.JSONEventClose
	items, whole := watcher.TakeInitial()
	makePieces := func() ([][]byte, error) { return rq.storedListPieces(items, make([][]byte, 0, 3*len(items))) }
	var data []byte
	var pieces [][]byte
	var err error
	if whole > 0 {
		data, pieces, err = rq.res.storageVersion().frames.Share(ctx, rq.res.cache.Prefix()+watcher.Prefix(), whole, len(items), makePieces, 3, open, close)
	} else {
		pieces, err = makePieces()
	}
	if err != nil {
		return err
	}
	if data == nil {
		rq.startBurst()
		defer rq.endBurst()
		for i := 0; i+2 < len(pieces); i += 3 {
			_, _ = rq.buf.burst.WriteString(open)
			_, _ = rq.buf.burst.Write(pieces[i])
			_, _ = rq.buf.burst.Write(pieces[i+1])
			_, _ = rq.buf.burst.Write(pieces[i+2])
			if _, err := rq.buf.burst.WriteString(close); err != nil {
				return err
			}
			if rq.rec != nil {
				rq.rec.WatchEvent(string(watch.Added), len(open)+len(pieces[i])+len(pieces[i+1])+len(pieces[i+2])+len(close))
			}
		}
		return nil
	}
	if rq.rec != nil {
		rq.recordFrames(data)
	}
	_, err = rq.w.Write(data)
	return err
}

// recordFrames tells the request's record of each event in data, JSON
// frames joined (see writeInitial), each ending with the stream's only
// line break: compact JSON has none.
func (rq *request) recordFrames(data []byte) {
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		if n == 0 {
			n = len(data)
		}
		rq.rec.WatchEvent(string(watch.Added), n)
		data = data[n:]
	}
}

// startBurst gathers the events of a burst (the initial events of a
// streaming list, a write that many objects follow) into writes of 32 KiB
// until endBurst: written one by one, each would go through net/http's
// small buffer and chunk writer, a syscall per 4 KiB. An idle watch holds
// no such buffer: it comes from a pool and goes back after each burst.
func (rq *request) startBurst() {
	if rq.messages() {
		return // one write per event
	}
	rq.buf.burst = httpbody.Buffer(rq.w)
}

// endBurst writes what the burst's buffer holds and gives it back.
func (rq *request) endBurst() {
	if rq.buf.burst == nil {
		return
	}
	_ = httpbody.Release(rq.buf.burst) // a broken connection fails the next write too
	rq.buf.burst = nil
}

// endWatch writes what ends a stream that err ended.
func (rq *request) endWatch(watcher *watch.Watcher, err error, spec *watchSpec) {
	if watcher != nil && spec.bookmarks && spec.timeout > 2*time.Second && !errors.Is(err, storage.ErrExpired) && rq.r.Context().Err() == nil {
		// The server ends the stream (timeout, shutdown): tell the client
		// how far it got, so that it resumes without a gap. kube-apiserver's
		// cacher sends this 2s before the deadline, so never with a shorter
		// timeout (cacheWatcher.nextBookmarkTime).
		if rq.writeEvent(watcher.Bookmark()) == nil {
			rq.flush()
		}
	}
	if errors.Is(err, storage.ErrExpired) {
		st := NewStatusError(http.StatusGone, kapi.StatusReasonExpired,
			fmt.Sprintf("too old resource version: %s (%d)", spec.rv, rq.s.hub.Revision())).Status
		if element, err := rq.out.Marshal(&st); err == nil {
			if rq.writeFrame("ERROR", st.TypeMeta, element) == nil {
				rq.flush()
			}
		}
	}
}

// flush sends what the response holds so far.
func (rq *request) flush() {
	if f, ok := rq.w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeEvent writes one watch event around the item's shared element.
func (rq *request) writeEvent(ev watch.Event) error {
	var it *watch.Item
	switch {
	case ev.Type == watch.Bookmark:
		it = watch.NewItem("", ev.Revision, rq.bookmarkObject(ev))
	case ev.Item.Revision != ev.Revision:
		// An object that stopped matching the selector: its last matching
		// state, stamped with the event's revision as kube-apiserver does.
		last, err := rq.res.versioned(ev.Item)
		if err != nil {
			return err
		}
		cur, err := cachedObject(last)
		if err != nil {
			return err
		}
		obj := shallowCopy(cur)
		obj.GetObjectMeta().ResourceVersion = formatRevision(ev.Revision)
		it = watch.NewItem(ev.Item.Key, ev.Revision, obj)
	default:
		var err error
		if it, err = rq.res.versioned(ev.Item); err != nil {
			return err
		}
	}
	var element []byte
	var err error
	switch rq.out.View {
	case codec.ViewTable:
		var obj kapi.Object
		if obj, err = cachedObject(it); err != nil {
			return err
		}
		if ev.Type == watch.Bookmark {
			// No cells for a bookmark: the registration's columns are for
			// objects, not for an empty one.
			element, err = rq.bookmarkTable(obj)
		} else {
			element, err = rq.table(kapi.ListMeta{ResourceVersion: obj.GetObjectMeta().ResourceVersion}, []*watch.Item{it})
		}
	case codec.ViewObject:
		if rq.out.MediaType() == codec.MediaTypeJSON {
			// The frame is made from the stored value's halves: no element
			// copied for this watcher first.
			var room [splice.MemberRoom]byte
			if before, rv, after, ok := rq.storedPieces(it, room[:]); ok {
				// A JSON frame names no type (typeOf builds strings).
				return rq.writeFrame(string(ev.Type), kapi.TypeMeta{}, before, rv, after)
			}
		}
		element, err = rq.element(it, rq.out.Format, false)
	default:
		element, err = rq.element(it, rq.out.Format, rq.out.View == codec.ViewMetadata)
	}
	if err != nil {
		return err
	}
	err = rq.writeFrame(string(ev.Type), rq.typeOf(), element)
	rq.buf.elements = rq.buf.elements[:0] // the frame holds a copy: a watch reuses one buffer
	return err
}

// writeFrame writes one framed event around its element's pieces.
func (rq *request) writeFrame(eventType string, tm kapi.TypeMeta, element ...[]byte) error {
	frame, err := rq.out.AppendEvent(rq.buf.frame[:0], eventType, tm, element...)
	if err != nil {
		return err
	}
	rq.buf.frame = frame // reused: one buffer per watch
	if rq.rec != nil {
		rq.rec.WatchEvent(eventType, len(frame))
	}
	if rq.buf.burst != nil {
		_, err = rq.buf.burst.Write(frame)
	} else {
		_, err = rq.w.Write(frame)
	}
	return err
}

// bookmarkObject is the object of a BOOKMARK: only kind, apiVersion and the
// resourceVersion, plus the annotation that ends initial events.
func (rq *request) bookmarkObject(ev watch.Event) kapi.Object {
	obj := rq.res.newObject()
	*obj.GetTypeMeta() = kapi.TypeMeta{Kind: rq.res.Kind, APIVersion: rq.res.apiVersion()}
	meta := obj.GetObjectMeta()
	meta.ResourceVersion = formatRevision(ev.Revision)
	if ev.InitialEventsEnd {
		meta.Annotations = map[string]string{"k8s.io/initial-events-end": "true"}
	}
	return obj
}

// bookmarkTable is the Table of a BOOKMARK: one row without cells whose
// object, the bookmark's metadata, carries its annotations.
func (rq *request) bookmarkTable(obj kapi.Object) ([]byte, error) {
	object, err := json.Marshal(rq.partial(obj))
	if err != nil {
		return nil, err
	}
	t := kapi.Table{
		TypeMeta: kapi.TypeMeta{Kind: "Table", APIVersion: rq.out.APIVersion()},
		ListMeta: kapi.ListMeta{ResourceVersion: obj.GetObjectMeta().ResourceVersion},
		Rows:     []kapi.TableRow{{Cells: []any{}, Object: object}},
	}
	data, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return rq.out.Transcode(data)
}

// listOptionsInvalid is kube-apiserver's 422 for a bad combination of list or
// watch parameters.
func listOptionsInvalid(errs ...*FieldError) error {
	return optionsInvalid("ListOptions", errs)
}
