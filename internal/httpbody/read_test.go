package httpbody

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"testing/iotest"
)

// Read reads what io.ReadAll reads, whatever size the request claims,
// and stops at the same error.
func TestReadBodyIsReadAll(t *testing.T) {
	broken := errors.New("connection reset")
	for _, n := range []int{0, 1, 511, 512, 513, 600, 4096, MaxHint, MaxHint + 1, 200 << 10} {
		body := strings.Repeat("x", n)
		for _, claim := range []int64{-1, 0, 1, int64(n) - 1, int64(n), int64(n) + 1, 2 * int64(n), MaxHint + 1} {
			readers := map[string]func() io.Reader{
				"whole":        func() io.Reader { return strings.NewReader(body) },
				"byte a time":  func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) },
				"data and EOF": func() io.Reader { return iotest.DataErrReader(strings.NewReader(body)) },
				"broken":       func() io.Reader { return io.MultiReader(strings.NewReader(body), iotest.ErrReader(broken)) },
			}
			for name, reader := range readers {
				want, wantErr := io.ReadAll(reader())
				got, err := Read(io.NopCloser(reader()), claim)
				if !bytes.Equal(got, want) || !errors.Is(err, wantErr) {
					t.Errorf("%d bytes claiming %d, %s: %d bytes, %v; io.ReadAll: %d bytes, %v", n, claim, name, len(got), err, len(want), wantErr)
				}
			}
		}
	}
}

// A body of the size it claims, up to MaxHint, is read into one
// allocation.
func TestReadBodyAllocatesOnce(t *testing.T) {
	body := strings.Repeat("x", 700)
	r := strings.NewReader(body)
	rc := io.NopCloser(r)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(body)
		if _, err := Read(rc, int64(len(body))); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 1 {
		t.Errorf("%v allocations, want 1", allocs)
	}
}

// closeCounter is a body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// A body read to its end is closed once, so that net/http does not drain
// it again; one that broke off is left open, for net/http to deal with.
func TestReadClosesBodyAtItsEnd(t *testing.T) {
	broken := errors.New("connection reset")
	for _, tc := range []struct {
		name   string
		body   io.Reader
		claim  int64
		closed int
	}{
		{"claimed", strings.NewReader("{}"), 2, 1},
		{"unknown length", strings.NewReader("{}"), -1, 1},
		{"larger than the hint", strings.NewReader(strings.Repeat("x", MaxHint+1)), MaxHint + 1, 1},
		{"broken", io.MultiReader(strings.NewReader("{"), iotest.ErrReader(broken)), 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &closeCounter{Reader: tc.body}
			_, err := Read(body, tc.claim)
			if body.closed != tc.closed {
				t.Errorf("closed %d times (err %v), want %d", body.closed, err, tc.closed)
			}
		})
	}
}

// Read's close costs no connection: net/http ends a keep-alive connection
// after the reply when its handler closed a body before its end, and a
// body Read closed is at its end, so the next requests reuse it (checked
// against net/http itself, whose rule this relies on).
func TestReadKeepsConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := Read(r.Body, r.ContentLength)
		if err != nil || string(data) != `{"a":1}` {
			t.Errorf("read %q, %v", data, err)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	client := srv.Client()
	reused := 0
	for range 3 {
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			if info.Reused {
				reused++
			}
		}}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, srv.URL, strings.NewReader(`{"a":1}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if reused != 2 {
		t.Errorf("%d of the 2 later requests reused the connection", reused)
	}
}
