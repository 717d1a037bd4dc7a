package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/internal/guard"
	"github.com/kapi-dev/kapi/internal/leakcheck"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name, method, target string
		want                 guard.Class
	}{
		{"get", http.MethodGet, "/apis/g/v1/namespaces/a/widgets/w", guard.ReadOnly},
		{"list", http.MethodGet, "/api/v1/pods", guard.ReadOnly},
		{"watch", http.MethodGet, "/api/v1/namespaces/a/pods?watch=true", guard.Watch},
		{"watch of all namespaces", http.MethodGet, "/apis/g/v1/widgets?watch=1", guard.Watch},
		{"watch false", http.MethodGet, "/api/v1/pods?watch=false", guard.ReadOnly},
		{"watch of an item", http.MethodGet, "/api/v1/namespaces/a/pods/p?watch=true", guard.ReadOnly},
		{"create", http.MethodPost, "/api/v1/namespaces/a/pods", guard.Mutating},
		{"delete", http.MethodDelete, "/api/v1/namespaces/a/pods/p", guard.Mutating},
		{"probe", http.MethodGet, "/readyz", guard.Probe},
		{"log", http.MethodGet, "/api/v1/namespaces/a/pods/p/log", guard.Watch},
		{"stream held", http.MethodGet, "/apis/g/v1/namespaces/a/widgets/w/output", guard.Watch},
		{"stream held, cluster-scoped", http.MethodHead, "/apis/g/v1/gadgets/w/output/", guard.Watch},
		{"stream of another resource", http.MethodGet, "/apis/g/v1/namespaces/a/sprockets/w/output", guard.ReadOnly},
		{"stream of another version", http.MethodGet, "/apis/g/v2/namespaces/a/widgets/w/output", guard.ReadOnly},
		{"stream written", http.MethodPost, "/apis/g/v1/namespaces/a/widgets/w/output", guard.Mutating},
		{"item named as a stream", http.MethodGet, "/apis/g/v1/namespaces/a/widgets/output", guard.ReadOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFlow(t, guard.DefaultLimits(), new(any))
			f.HoldStreams(auth.Attributes{APIGroup: "g", APIVersion: "v1", Resource: "widgets", Subresource: "output"},
				auth.Attributes{APIGroup: "g", APIVersion: "v1", Resource: "gadgets", Subresource: "output"})
			if got := f.Classify(httptest.NewRequest(tc.method, tc.target, nil)); got != tc.want {
				t.Errorf("Classify(%s %s) = %v, want %v", tc.method, tc.target, got, tc.want)
			}
		})
	}
}

// protos are the two ways the guard serves a request with a deadline:
// in the request's goroutine on HTTP/1, in a runner's on HTTP/2.
var protos = []struct {
	name  string
	major int
}{{"HTTP/1", 1}, {"HTTP/2", 2}}

// newFlow is a guard answering with JSON Statuses, ended with the test.
func newFlow(t testing.TB, l guard.Limits, panicked *any) *guard.Flow {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return guard.New(ctx, guard.Config{
		Limits: l,
		Logger: slog.New(slog.DiscardHandler),
		Reply: func(w http.ResponseWriter, r *http.Request, st kapi.Status) {
			w.WriteHeader(int(st.Code))
			_ = json.NewEncoder(w).Encode(st)
		},
		StatusOf: func(err error) kapi.Status { return kapi.Status{Code: http.StatusGatewayTimeout, Message: err.Error()} },
		Panicked: func(_ *http.Request, p any) { *panicked = p },
	})
}

func TestGuard(t *testing.T) {
	leakcheck.Check(t)
	var panicked any
	release := make(chan struct{})
	entered := make(chan struct{})
	f := newFlow(t, guard.Limits{Mutating: 1, RequestTimeout: 1 << 40}, &panicked)
	h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hold":
			entered <- struct{}{}
			<-release
		case "/panic":
			panic("oops")
		case "/began":
			w.WriteHeader(http.StatusOK)
			panic("oops")
		}
		w.WriteHeader(http.StatusNoContent)
	}), nil)
	serve := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec
	}
	for _, proto := range protos {
		t.Run("a panic is answered 500, "+proto.name, func(t *testing.T) {
			panicked = nil
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, "/panic", nil)
			r.ProtoMajor = proto.major
			h.ServeHTTP(rec, r)
			if rec.Code != http.StatusInternalServerError || panicked != "oops" {
				t.Errorf("HTTP %d, observer told %v; want 500, oops", rec.Code, panicked)
			}
		})
	}
	t.Run("a panic after the answer began aborts", func(t *testing.T) {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("panicked with %v, want http.ErrAbortHandler", p)
			}
		}()
		serve(http.MethodGet, "/began")
		t.Error("no panic")
	})
	t.Run("a bad timeout is answered 400", func(t *testing.T) {
		if rec := serve(http.MethodGet, "/x?timeout=soon"); rec.Code != http.StatusBadRequest {
			t.Errorf("HTTP %d, want 400", rec.Code)
		}
	})
	t.Run("over the cap is answered 429", func(t *testing.T) {
		done := make(chan int)
		go func() { done <- serve(http.MethodPost, "/hold").Code }()
		<-entered
		rec := serve(http.MethodPost, "/other")
		close(release)
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("HTTP %d, Retry-After %q; want 429, 1", rec.Code, rec.Header().Get("Retry-After"))
		}
		if code := <-done; code != http.StatusNoContent {
			t.Errorf("the request holding the slot: HTTP %d", code)
		}
		if rec := serve(http.MethodGet, "/read"); rec.Code != http.StatusNoContent {
			t.Errorf("a read: HTTP %d, want 204: reads have a cap of their own", rec.Code)
		}
	})
	t.Run("draining is answered 503", func(t *testing.T) {
		if err := f.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(f.WatchesEnd().Err(), context.Canceled) {
			t.Error("watches go on after Drain")
		}
		if rec := serve(http.MethodGet, "/read"); rec.Code != http.StatusServiceUnavailable {
			t.Errorf("HTTP %d, want 503", rec.Code)
		}
	})
}

// TestRequestContextEnds: the handler's context ends with the request's:
// when the client goes away (Canceled, with the cause an embedding
// middleware gave, as a child context would have it), and at a deadline the
// request's context had, sooner than the server's (DeadlineExceeded,
// answered 504).
func TestRequestContextEnds(t *testing.T) {
	f := newFlow(t, guard.Limits{RequestTimeout: 1 << 40}, new(any))
	entered := make(chan struct{}, 1)
	seen := make(chan [2]error, 1) // the handler context's Err and Cause
	h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-r.Context().Done()
		seen <- [2]error{r.Context().Err(), context.Cause(r.Context())}
	}), nil)
	for _, cause := range []error{nil, errors.New("tenant evicted")} {
		t.Run(fmt.Sprintf("client gone, cause %v", cause), func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil).WithContext(ctx))
			}()
			<-entered
			cancel(cause)
			want := cause
			if want == nil {
				want = context.Canceled
			}
			if got := <-seen; !errors.Is(got[0], context.Canceled) || !errors.Is(got[1], want) {
				t.Errorf("the handler's context ended with %v, cause %v; want Canceled, cause %v", got[0], got[1], want)
			}
			<-done
		})
	}
	for _, proto := range protos {
		t.Run("the request's deadline, "+proto.name, func(t *testing.T) {
			// A handler returning as its deadline passes has its own answer
			// kept (the guard takes whichever it sees first): this one waits
			// until the guard has answered, so that the answer is the guard's.
			// Were the deadline taken for the client gone, the guard would
			// wait for the handler instead, which then returns after a minute
			// and answers nothing (200).
			answered := make(chan struct{})
			seen := make(chan error, 1)
			h := f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done()
				seen <- r.Context().Err()
				select {
				case <-answered:
				case <-time.After(time.Minute):
				}
			}), nil)
			dl := time.Now().Add(-time.Second) // passed: no timing in the test
			ctx, cancel := context.WithDeadline(context.Background(), dl)
			defer cancel()
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, "/x", nil).WithContext(ctx)
			r.ProtoMajor = proto.major
			h.ServeHTTP(headerSignal{rec, answered}, r)
			if err := <-seen; !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("the handler's context ended with %v, want DeadlineExceeded", err)
			}
			if rec.Code != http.StatusGatewayTimeout {
				t.Errorf("HTTP %d, want 504", rec.Code)
			}
		})
	}
}

// headerSignal is a ResponseRecorder that closes wrote when a header is
// written.
type headerSignal struct {
	*httptest.ResponseRecorder
	wrote chan struct{}
}

func (h headerSignal) WriteHeader(code int) {
	h.ResponseRecorder.WriteHeader(code)
	select {
	case <-h.wrote:
	default:
		close(h.wrote)
	}
}
