package websocket

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/kapi-dev/kapi/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

func TestCheck(t *testing.T) {
	good := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/apis/example.com/v1/widgets?watch=true", nil)
		r.Header.Set("Connection", "keep-alive, Upgrade")
		r.Header.Set("Upgrade", "WebSocket")
		r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		r.Header.Set("Sec-WebSocket-Version", "13")
		r.Header.Set("Origin", "http://localhost:8080")
		return r
	}
	for _, tc := range []struct {
		name   string
		change func(r *http.Request)
		err    error
		code   int
	}{
		{"good", func(r *http.Request) {}, nil, 0},
		{"one protocol", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Protocol", "base64.binary.k8s.io") }, nil, 0},
		{"POST", func(r *http.Request) { r.Method = http.MethodPost }, ErrMethod, 405},
		{"no Upgrade", func(r *http.Request) { r.Header.Del("Upgrade") }, ErrNotUpgrade, 400},
		{"Upgrade: h2c", func(r *http.Request) { r.Header.Set("Upgrade", "h2c") }, ErrNotUpgrade, 400},
		{"Connection without upgrade", func(r *http.Request) { r.Header.Set("Connection", "upgrade-ish") }, ErrNotUpgrade, 400},
		{"no key", func(r *http.Request) { r.Header.Del("Sec-WebSocket-Key") }, ErrKey, 400},
		{"short key", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Key", "c2hvcnQ=") }, ErrKey, 400},
		{"key not base64", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Key", "!!!!") }, ErrKey, 400},
		{"version 8", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Version", "8") }, ErrVersion, 400},
		{"no version", func(r *http.Request) { r.Header.Del("Sec-WebSocket-Version") }, ErrVersion, 400},
		{"no Origin", func(r *http.Request) { r.Header.Del("Origin") }, ErrOrigin, 403},
		{"Origin null", func(r *http.Request) { r.Header.Set("Origin", "null") }, ErrOrigin, 403},
		{"Origin not a URL", func(r *http.Request) { r.Header.Set("Origin", "%zz") }, ErrOrigin, 403},
		{"two protocols", func(r *http.Request) { r.Header.Set("Sec-WebSocket-Protocol", "a, b") }, ErrProtocols, 400},
		{"two protocol headers", func(r *http.Request) {
			r.Header.Add("Sec-WebSocket-Protocol", "a")
			r.Header.Add("Sec-WebSocket-Protocol", "b")
		}, ErrProtocols, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.change(r)
			accept, protocol, err := check(r)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if err != nil {
				if code := err.(*HandshakeError).Code; code != tc.code {
					t.Errorf("code %d, want %d", code, tc.code)
				}
				return
			}
			// RFC 6455's example key and answer.
			if accept != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
				t.Errorf("accept %q", accept)
			}
			if want := r.Header.Get("Sec-WebSocket-Protocol"); protocol != want {
				t.Errorf("protocol %q, want %q", protocol, want)
			}
		})
	}
}

// server serves a WebSocket that sends msgs, then waits for the client to
// go or for stop.
func server(t *testing.T, msgs []string, stop <-chan struct{}) (*httptest.Server, chan error) {
	ended := make(chan error, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r)
		if err != nil {
			w.WriteHeader(err.(*HandshakeError).Code)
			return
		}
		for _, m := range msgs {
			_ = c.WriteMessage(true, []byte(m))
		}
		_ = c.Flush()
		select {
		case <-c.Done():
		case <-stop:
		}
		ended <- c.Close()
	}))
	t.Cleanup(ts.Close)
	return ts, ended
}

func dial(t *testing.T, ts *httptest.Server, header http.Header) *Client {
	t.Helper()
	if header == nil {
		header = http.Header{"Origin": {"http://localhost"}}
	}
	c, _, err := Dial(context.Background(), ts.URL, header)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestMessagesAndServerClose(t *testing.T) {
	stop := make(chan struct{})
	ts, ended := server(t, []string{"one", "", string(bytes.Repeat([]byte("x"), 70000))}, stop)
	c := dial(t, ts, http.Header{"Origin": {"http://localhost"}, "Sec-Websocket-Protocol": {"base64.binary.k8s.io"}})
	if p := c.Response.Header.Get("Sec-WebSocket-Protocol"); p != "base64.binary.k8s.io" {
		t.Errorf("protocol %q, want the one offered", p)
	}
	for _, want := range []int{3, 0, 70000} {
		text, msg, err := c.Read()
		if err != nil || !text || len(msg) != want {
			t.Fatalf("read %v %d bytes %v, want a text message of %d", text, len(msg), err, want)
		}
	}
	// A ping is answered while the server idles.
	if err := c.Write(OpPing, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	h, err := readHeader(c.r, false)
	if err != nil || h.op != OpPong || h.length != 2 {
		t.Fatalf("after a ping: %+v %v, want a pong of 2 bytes", h, err)
	}
	_, _ = c.r.Discard(2)
	close(stop)
	var cerr *CloseError
	if _, _, err := c.Read(); !errors.As(err, &cerr) || cerr.Code != CloseNormal {
		t.Fatalf("after the server closed: %v, want close 1000", err)
	}
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
}

func TestClientCloses(t *testing.T) {
	// An application's code, and the IANA-registered 1012 to 1014, are
	// echoed, not refused as a protocol error.
	for _, code := range []int{4000, 1012, 1013, 1014} {
		ts, ended := server(t, nil, nil)
		c := dial(t, ts, nil)
		if err := c.Write(OpClose, closePayload(code)); err != nil {
			t.Fatal(err)
		}
		var cerr *CloseError
		if _, _, err := c.Read(); !errors.As(err, &cerr) || cerr.Code != code {
			t.Fatalf("the server's answer to close %d: %v", code, err)
		}
		<-ended
	}
}

func TestHostileFrames(t *testing.T) {
	big := appendFrameHeader(nil, OpBinary, MaxMessage+1)
	big[1] |= 0x80
	for _, tc := range []struct {
		name  string
		frame []byte
		code  int
	}{
		{"unmasked", appendFrame(nil, OpText, []byte("x"), nil), CloseProtocol},
		{"reserved bit", func() []byte { b := appendFrame(nil, OpText, []byte("x"), &[4]byte{}); b[0] |= 0x40; return b }(), CloseProtocol},
		{"unknown opcode", appendFrame(nil, 0x3, nil, &[4]byte{}), CloseProtocol},
		{"huge frame", append(big, 0, 0, 0, 0), CloseTooBig},
		{"long ping", appendFrame(nil, OpPing, make([]byte, 126), &[4]byte{}), CloseProtocol},
		{"fragmented ping", func() []byte { b := appendFrame(nil, OpPing, nil, &[4]byte{}); b[0] &^= 0x80; return b }(), CloseProtocol},
		{"continuation first", appendFrame(nil, OpContinuation, []byte("x"), &[4]byte{}), CloseProtocol},
		{"close code 1005", appendFrame(nil, OpClose, closePayload(1005), &[4]byte{}), CloseProtocol},
		{"close of one byte", appendFrame(nil, OpClose, []byte{3}, &[4]byte{}), CloseProtocol},
		{"close reason not UTF-8", appendFrame(nil, OpClose, append(closePayload(1000), 0xff), &[4]byte{}), CloseProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, ended := server(t, nil, nil)
			c := dial(t, ts, nil)
			if err := c.WriteRaw(tc.frame); err != nil {
				t.Fatal(err)
			}
			var cerr *CloseError
			if _, _, err := c.Read(); !errors.As(err, &cerr) || cerr.Code != tc.code {
				t.Fatalf("%v, want close %d", err, tc.code)
			}
			<-ended
		})
	}
}

func TestHandshakeRefused(t *testing.T) {
	ts, _ := server(t, nil, nil)
	_, resp, err := Dial(context.Background(), ts.URL, http.Header{})
	if !errors.Is(err, ErrHandshake) || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("without Origin: %v %v, want 403", err, resp)
	}
}

// FuzzReadFrames reads hostile bytes as a client's frames: no panic, no
// control payload over 125 bytes, and an end.
func FuzzReadFrames(f *testing.F) {
	mask := &[4]byte{9, 8, 7, 6}
	f.Add(appendFrame(nil, OpText, []byte("hello"), mask))
	f.Add(appendFrame(appendFrame(nil, OpPing, []byte("p"), mask), OpClose, closePayload(1000), mask))
	f.Add(append(appendFrameHeader(nil, OpBinary, 1<<20), 1, 2, 3, 4))
	f.Add([]byte{0x81, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		err := readFrames(bufio.NewReader(bytes.NewReader(data)), 1<<10, func(op byte, p []byte) error {
			if op < OpClose || len(p) > maxControl {
				t.Fatalf("control %#x of %d bytes", op, len(p))
			}
			return nil
		})
		var cerr *CloseError
		if err == nil || !(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrProtocol) || errors.Is(err, ErrTooBig) || errors.As(err, &cerr)) {
			t.Fatalf("unexpected end %v", err)
		}
	})
}

// FuzzFrameRoundTrip: a frame a client writes reads back as written.
func FuzzFrameRoundTrip(f *testing.F) {
	f.Add(byte(OpPing), []byte("x"), uint32(7))
	f.Add(byte(OpBinary), bytes.Repeat([]byte{1}, 300), uint32(0))
	f.Fuzz(func(t *testing.T, op byte, p []byte, m uint32) {
		op = []byte{OpText, OpBinary, OpPing, OpPong}[op%4]
		if op >= OpClose && len(p) > maxControl {
			p = p[:maxControl]
		}
		mask := &[4]byte{byte(m), byte(m >> 8), byte(m >> 16), byte(m >> 24)}
		var got []byte
		err := readFrames(bufio.NewReader(bytes.NewReader(appendFrame(nil, op, p, mask))), 1<<20, func(_ byte, q []byte) error {
			got = append([]byte{}, q...)
			return nil
		})
		if !errors.Is(err, io.EOF) {
			t.Fatalf("after one frame: %v", err)
		}
		if op >= OpClose && !bytes.Equal(got, p) {
			t.Fatalf("payload %q, want %q", got, p)
		}
	})
}

func TestBearerProtocol(t *testing.T) {
	upgrade := func(protocols ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Connection", "Upgrade")
		r.Header.Set("Upgrade", "websocket")
		for _, p := range protocols {
			r.Header.Add("Sec-WebSocket-Protocol", p)
		}
		return r
	}
	const tok = "base64url.bearer.authorization.k8s.io.dG9rZW4" // "token"
	r, err := BearerProtocol(upgrade(tok, "base64.binary.k8s.io"))
	if err != nil || r.Header.Get("Authorization") != "Bearer token" || r.Header.Get("Sec-WebSocket-Protocol") != "base64.binary.k8s.io" {
		t.Fatalf("%v %v", r.Header, err)
	}
	for _, p := range [][]string{{tok}, {tok + "," + tok, "x"}, {"base64url.bearer.authorization.k8s.io.dG9rZW4=", "x"}, {"base64url.bearer.authorization.k8s.io.", "x"}, {"base64url.bearer.authorization.k8s.io._w", "x"}} {
		if _, err := BearerProtocol(upgrade(p...)); !errors.Is(err, ErrBearerProtocol) {
			t.Errorf("%q: %v", p, err)
		}
	}
	plain := upgrade("x")
	if r, err := BearerProtocol(plain); r != plain || err != nil {
		t.Errorf("no token: %v %v", r, err)
	}
}
