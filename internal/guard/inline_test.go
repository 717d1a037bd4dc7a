package guard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/guard"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// goroutineID is the current goroutine's number, from its stack's first
// line.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	return string(buf[:bytes.IndexByte(buf, ' ')])
}

// flushless is a ResponseWriter that cannot flush.
type flushless struct{ w http.ResponseWriter }

func (f flushless) Header() http.Header         { return f.w.Header() }
func (f flushless) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f flushless) WriteHeader(code int)        { f.w.WriteHeader(code) }

// codeFlow is a guard of c, answering with a status code alone (every
// error a 504), ended with the test.
func codeFlow(t *testing.T, c guard.Config) *guard.Flow {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c.Logger = slog.New(slog.DiscardHandler)
	c.Reply = func(w http.ResponseWriter, _ *http.Request, st kapi.Status) { w.WriteHeader(int(st.Code)) }
	c.StatusOf = func(error) kapi.Status { return kapi.Status{Code: http.StatusGatewayTimeout} }
	return guard.New(ctx, c)
}

// TestServedInRequestGoroutine: an HTTP/1 request with a deadline, to a
// writer that flushes (net/http's), has its handler run in its own
// goroutine, sparing the hand-off to a runner and back; an HTTP/2 one, one
// to a writer that cannot flush its 504, and every one of a server whose
// observers wrap the guard (Config.Observed), in a runner's. A guard that
// handed every request to a runner fails the first case.
func TestServedInRequestGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name      string
		major     int
		flushes   bool
		observed  bool
		wantHere  bool
		unwrapped bool
		flushErr  bool
	}{
		{name: "HTTP/1", major: 1, flushes: true, wantHere: true},
		{name: "HTTP/1 through a writer that unwraps", major: 1, flushes: true, unwrapped: true, wantHere: true},
		{name: "HTTP/1 to a writer with FlushError only", major: 1, flushes: true, flushErr: true, wantHere: true},
		{name: "HTTP/2", major: 2, flushes: true},
		{name: "a writer that cannot flush", major: 1},
		{name: "observed", major: 1, flushes: true, observed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := codeFlow(t, guard.Config{Limits: guard.DefaultLimits(), Observed: tc.observed})
			var handler string
			h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				handler = goroutineID()
				w.WriteHeader(http.StatusNoContent)
			}), nil)
			r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/a/pods", nil)
			r.ProtoMajor = tc.major
			rec := httptest.NewRecorder()
			var w http.ResponseWriter = rec
			switch {
			case !tc.flushes:
				w = flushless{rec}
			case tc.unwrapped:
				w = unwrapping{flushless{rec}, rec}
			case tc.flushErr:
				w = flushErrOnly{flushless{rec}}
			}
			h.ServeHTTP(w, r)
			if rec.Code != http.StatusNoContent {
				t.Fatalf("HTTP %d", rec.Code)
			}
			if here := handler == goroutineID(); here != tc.wantHere {
				t.Errorf("the handler ran in the request's goroutine: %v, want %v", here, tc.wantHere)
			}
		})
	}
}

// unwrapping is a writer that cannot flush itself but unwraps to one
// that can, as http.ResponseController finds it.
type unwrapping struct {
	flushless
	inner http.ResponseWriter
}

func (u unwrapping) Unwrap() http.ResponseWriter { return u.inner }

// flushErrOnly is a writer that flushes through FlushError alone, which
// http.ResponseController calls before Flush.
type flushErrOnly struct{ flushless }

func (f flushErrOnly) FlushError() error { return nil }

// TestLateAnswerWhileStuck: over HTTP/1, a handler that ignores its
// context holds the request's goroutine past the deadline, yet the client
// reads the whole 504 at the deadline: it carries its length (a response
// without one would end only when the handler returns) and Connection:
// close, so the client's next request goes on another connection and is
// answered while the stuck handler still holds the first.
func TestLateAnswerWhileStuck(t *testing.T) {
	f := newFlow(t, guard.Limits{RequestTimeout: time.Hour}, new(any))
	release := make(chan struct{})
	h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stuck" {
			<-r.Context().Done()
			<-release // a hook that ignores its context
			w.Header().Set("X-Late", "1")
			_, _ = w.Write([]byte("too late"))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}), nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer close(release) // before srv.Close, which waits for the handler
	resp, err := srv.Client().Get(srv.URL + "/stuck?timeout=10ms")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body) // returns before release only if the answer is whole
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var st kapi.Status
	if resp.StatusCode != http.StatusGatewayTimeout || json.Unmarshal(body, &st) != nil || st.Code != http.StatusGatewayTimeout {
		t.Errorf("HTTP %d, body %q; want 504 and its Status", resp.StatusCode, body)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) || !resp.Close || resp.Header.Get("X-Late") != "" {
		// Fatal: the next request would wait on the connection the
		// stuck handler holds.
		t.Fatalf("Content-Length %q for %d bytes, Connection: close %v, X-Late %q; want the length, close, none",
			cl, len(body), resp.Close, resp.Header.Get("X-Late"))
	}
	next, err := srv.Client().Get(srv.URL + "/next")
	if err != nil {
		t.Fatal(err)
	}
	next.Body.Close()
	if next.StatusCode != http.StatusNoContent {
		t.Errorf("the next request: HTTP %d, want 204", next.StatusCode)
	}
}

// TestDeadlineAsHandlerReturns: requests whose deadline passes as their
// handler returns are answered once, by the handler or by the guard's
// 504, and never written after the guard has returned: the race
// detector, or a response of both, would tell. Without the handler's
// goroutine taking the response back (timeoutWriter.finish) before it
// returns, the 504 of a deadline that passed a moment after the
// handler's return is written into a response already handed back.
func TestDeadlineAsHandlerReturns(t *testing.T) {
	for _, proto := range protos {
		t.Run(proto.name, func(t *testing.T) {
			f := newFlow(t, guard.Limits{RequestTimeout: time.Hour}, new(any))
			h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("write") == "1" {
					w.WriteHeader(http.StatusNoContent)
				}
			}), nil)
			for i := range race.Cases(2000) {
				// Deadlines from 1 to 50 µs: some pass before the
				// handler runs, some as it returns, some after.
				r := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/x?timeout=%dus&write=%d", i%50+1, i%2), nil)
				r.ProtoMajor = proto.major
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				want := http.StatusOK // net/http's for a handler that writes nothing
				if i%2 == 1 {
					want = http.StatusNoContent
				}
				if rec.Code != want && rec.Code != http.StatusGatewayTimeout {
					t.Fatalf("request %d: HTTP %d, want %d or 504", i, rec.Code, want)
				}
				if rec.Code == http.StatusGatewayTimeout && !json.Valid(rec.Body.Bytes()) {
					t.Fatalf("request %d: a 504 of %q", i, rec.Body.Bytes())
				}
			}
		})
	}
}

// TestSlotFreedWhenAnsweringPanicPanics: on HTTP/1, where the handler runs
// in the request's goroutine, a panic while a handler's panic is answered
// (here the Panicked hook's; a logger's or a reply's would do the same)
// leaves the request's slot released and its timer stopped: the next
// request under a cap of one is served, not refused 429, and the flow
// drains.
func TestSlotFreedWhenAnsweringPanicPanics(t *testing.T) {
	f := codeFlow(t, guard.Config{
		Limits:   guard.Limits{Mutating: 1, RequestTimeout: time.Hour},
		Panicked: func(*http.Request, any) { panic("the hook broke too") },
	})
	h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic("boom")
		}
		w.WriteHeader(http.StatusNoContent)
	}), nil)
	serve := func(path string) (code int, p any) {
		defer func() { p = recover() }()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
		return rec.Code, nil
	}
	if _, p := serve("/panic"); p == nil {
		t.Fatal("the hook's panic did not reach the caller")
	}
	if code, p := serve("/ok"); p != nil || code != http.StatusNoContent {
		t.Errorf("the next request: HTTP %d, panic %v; want 204 (its slot was not released)", code, p)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer dcancel()
	if err := f.Drain(dctx); err != nil {
		t.Errorf("Drain: %v", err)
	}
}
