package apiserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/apiservertest"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/fairness"
	"github.com/kapi-dev/kapi/internal/websocket"
)

// dialWatch opens a watch of the default namespace's widgets over WebSocket.
func dialWatch(t *testing.T, base, query string, header http.Header) *websocket.Client {
	t.Helper()
	if header == nil {
		header = http.Header{}
	}
	header.Set("Origin", "http://console.test")
	c, resp, err := websocket.Dial(context.Background(), base+widgetsIn("default")+"?watch=true"+query, header)
	if err != nil {
		body := ""
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
		}
		t.Fatalf("dial: %v %s", err, body)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestWatchOverWebSocket: each event is one text message holding one JSON
// event, as kube-apiserver sends them; the watch ends when the client
// closes.
func TestWatchOverWebSocket(t *testing.T) {
	srv, c := newTestServer(t)
	c.create(newWidget("default", "a"))
	ws := dialWatch(t, srv.URL, "", http.Header{"Sec-Websocket-Protocol": {"base64.binary.k8s.io"}})
	if p := ws.Response.Header.Get("Sec-WebSocket-Protocol"); p != "base64.binary.k8s.io" {
		t.Errorf("subprotocol %q, want the one offered echoed", p)
	}
	next := func() (string, string) {
		t.Helper()
		text, msg, err := ws.Read()
		if err != nil {
			t.Fatal(err)
		}
		if !text || bytes.Count(msg, []byte("\n")) != 1 || msg[len(msg)-1] != '\n' {
			t.Fatalf("message %q: want one JSON event ending in a line break, as text", msg)
		}
		var ev struct {
			Type   string
			Object widgetapi.Widget
		}
		if err := json.Unmarshal(msg, &ev); err != nil {
			t.Fatalf("message %q: %v", msg, err)
		}
		return ev.Type, ev.Object.Name
	}
	if typ, name := next(); typ != "ADDED" || name != "a" {
		t.Fatalf("first event %s %s, want ADDED a", typ, name)
	}
	c.create(newWidget("default", "b"))
	if typ, name := next(); typ != "ADDED" || name != "b" {
		t.Fatalf("event %s %s, want ADDED b", typ, name)
	}
	c.do(http.MethodDelete, widgetsIn("default")+"/a", nil).mustCode(t, http.StatusOK)
	if typ, name := next(); typ != "DELETED" || name != "a" {
		t.Fatalf("event %s %s, want DELETED a", typ, name)
	}
	// The client closes: the server answers and ends the watch (the
	// package's leak check fails if its goroutine lingers).
	if err := ws.Write(websocket.OpClose, []byte{0x03, 0xe8}); err != nil {
		t.Fatal(err)
	}
	var closed *websocket.CloseError
	if _, _, err := ws.Read(); !errors.As(err, &closed) || closed.Code != websocket.CloseNormal {
		t.Fatalf("after the client's close: %v, want the server's close 1000", err)
	}
}

// TestWatchOverWebSocketFormats: protobuf events are binary messages
// without the length that frames them in an HTTP stream; CBOR events
// binary messages; a Table watch text.
func TestWatchOverWebSocketFormats(t *testing.T) {
	srv, c := newTestServer(t)
	c.create(newWidget("default", "a"))
	for _, tc := range []struct {
		accept string
		text   bool
		check  func(msg []byte) bool
	}{
		// WatchEvent{type = 1: "ADDED", ...}: no 4-byte length first.
		{"application/vnd.kubernetes.protobuf", false, func(m []byte) bool { return bytes.HasPrefix(m, []byte("\x0a\x05ADDED")) }},
		{"application/cbor", false, func(m []byte) bool { return bytes.HasPrefix(m, []byte{0xd9, 0xd9, 0xf7}) }},
		{"application/json;as=Table;g=meta.k8s.io;v=v1", true, func(m []byte) bool {
			return bytes.HasPrefix(m, []byte(`{"type":"ADDED","object":{"kind":"Table"`))
		}},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			ws := dialWatch(t, srv.URL, "", http.Header{"Accept": {tc.accept}})
			text, msg, err := ws.Read()
			if err != nil {
				t.Fatal(err)
			}
			if text != tc.text || !tc.check(msg) {
				t.Fatalf("text %v, message %q", text, msg)
			}
		})
	}
}

// TestWatchOverWebSocketEnds: a watch whose time is up sends its last
// bookmark and closes normally.
func TestWatchOverWebSocketEnds(t *testing.T) {
	srv, _ := newTestServer(t)
	ws := dialWatch(t, srv.URL, "&timeoutSeconds=3&allowWatchBookmarks=true", nil)
	var types []string
	for {
		_, msg, err := ws.Read()
		var closed *websocket.CloseError
		if errors.As(err, &closed) {
			if closed.Code != websocket.CloseNormal {
				t.Fatalf("closed with %d", closed.Code)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var ev struct{ Type string }
		_ = json.Unmarshal(msg, &ev)
		types = append(types, ev.Type)
	}
	if len(types) != 2 || types[0] != "BOOKMARK" || types[1] != "BOOKMARK" {
		t.Errorf("events %v, want the initial-events bookmark and the last one", types)
	}
}

// TestWatchOverWebSocketRefused: a handshake kube-apiserver refuses is
// refused with its code, as a Status; a GET with Upgrade that is no watch
// is answered as a GET.
func TestWatchOverWebSocketRefused(t *testing.T) {
	_, c := newTestServer(t)
	c.create(newWidget("default", "a"))
	good := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
		"Sec-WebSocket-Version": "13", "Origin": "http://console.test"}
	for _, tc := range []struct {
		name   string
		change map[string]string
		code   int
		reason kapi.StatusReason
	}{
		{"no Origin", map[string]string{"Origin": ""}, 403, kapi.StatusReasonForbidden},
		{"Origin null", map[string]string{"Origin": "null"}, 403, kapi.StatusReasonForbidden},
		{"version 8", map[string]string{"Sec-WebSocket-Version": "8"}, 400, kapi.StatusReasonBadRequest},
		{"bad key", map[string]string{"Sec-WebSocket-Key": "x"}, 400, kapi.StatusReasonBadRequest},
		{"two subprotocols", map[string]string{"Sec-WebSocket-Protocol": "base64.binary.k8s.io, binary.k8s.io"}, 400, kapi.StatusReasonBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			for k, v := range good {
				if w, ok := tc.change[k]; ok {
					v = w
				}
				if v != "" {
					h = append(h, k, v)
				}
			}
			for k, v := range tc.change {
				if _, ok := good[k]; !ok {
					h = append(h, k, v)
				}
			}
			r := c.do(http.MethodGet, widgetsIn("default")+"?watch=true", nil, h...)
			if st := r.failure(t, tc.code, tc.reason); !strings.HasPrefix(st.Message, "websocket: ") {
				t.Errorf("status %+v", st)
			}
			if tc.name == "version 8" && r.Header.Get("Sec-WebSocket-Version") != "13" {
				t.Errorf("Sec-WebSocket-Version %q, want 13", r.Header.Get("Sec-WebSocket-Version"))
			}
		})
	}
	// Not a watch: the Upgrade is ignored, as kube-apiserver ignores it.
	var h []string
	for k, v := range good {
		h = append(h, k, v)
	}
	c.do(http.MethodGet, widgetsIn("default")+"/a", nil, h...).mustCode(t, http.StatusOK)
}

// TestCORS: preflights of allowed origins are answered before
// authentication; other origins get no CORS headers.
func TestCORS(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register,
		apiserver.WithCORSAllowedOrigins(`^http://console\.test$`),
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"t": {Name: "alice"}})))
	do := func(method, origin, token string) *http.Response {
		r, err := http.NewRequest(method, srv.URL+widgetsIn("default"), nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", "POST")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}
	if resp := do(http.MethodOptions, "http://console.test", ""); resp.StatusCode != http.StatusNoContent ||
		resp.Header.Get("Access-Control-Allow-Origin") != "http://console.test" || resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := do(http.MethodGet, "http://console.test", "t"); resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "http://console.test" {
		t.Errorf("GET: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := do(http.MethodOptions, "http://evil.test", ""); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of another origin: %d %v", resp.StatusCode, resp.Header)
	}
	if _, err := apiserver.New(apiserver.WithCORSAllowedOrigins(`(`)); err == nil || !strings.Contains(err.Error(), `"("`) {
		t.Errorf("a bad pattern: %v", err)
	}
	if _, err := apiserver.New(apiserver.WithCORSAllowedOrigins()); err == nil {
		t.Error("no pattern: no error")
	}
}

// FuzzWebSocketHandshake sends watches with any handshake headers: the
// answer is 101 (a WebSocket), 200 (no upgrade asked: an HTTP watch) or a
// 4xx Status, never a 5xx.
func FuzzWebSocketHandshake(f *testing.F) {
	f.Add("Upgrade", "websocket", "dGhlIHNhbXBsZSBub25jZQ==", "13", "http://console.test", "")
	f.Add("keep-alive, Upgrade", "WebSocket", "dGhlIHNhbXBsZSBub25jZQ==", "13", "http://console.test", "base64.binary.k8s.io")
	f.Add("Upgrade", "websocket", "AAAA", "8", "null", "a,b")
	f.Add("upgrade", "h2c", "", "", "", "")
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, connection, upgrade, key, version, origin, protocol string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // ends the watch once its answer has begun
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+widgetsIn(corpusNS)+"?watch=true", nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"Connection": connection, "Upgrade": upgrade, "Sec-WebSocket-Key": key,
			"Sec-WebSocket-Version": version, "Origin": origin, "Sec-WebSocket-Protocol": protocol} {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		resp, err := s.hc.Do(r)
		if err != nil {
			if strings.Contains(err.Error(), "invalid header field") || strings.Contains(err.Error(), "invalid Upgrade") {
				return // the client refused to send it
			}
			t.Fatalf("no answer: %v", err)
		}
		defer resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode == http.StatusOK:
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			body, _ := io.ReadAll(resp.Body)
			var st kapi.Status
			if json.Unmarshal(body, &st) != nil || st.Kind != "Status" || st.Code != int32(resp.StatusCode) {
				t.Fatalf("%d: %q is no Status", resp.StatusCode, body)
			}
		default:
			t.Fatalf("answered %d to %q", resp.StatusCode, r.Header)
		}
	})
}

// TestWatchOverWebSocketBearerProtocol: a browser's WebSocket carries its
// token in the subprotocol base64url.bearer.authorization.k8s.io.<token>,
// which authenticates it as kube-apiserver reads it; the other subprotocol
// is echoed, never the token's.
func TestWatchOverWebSocketBearerProtocol(t *testing.T) {
	srv := apiservertest.New(t, widgetapi.Register,
		apiserver.WithAuthentication(apiserver.StaticTokens(map[string]apiserver.User{"s3cret": {Name: "alice"}})))
	token := func(tok string) string {
		return "base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte(tok))
	}
	ws := dialWatch(t, srv.URL, "", http.Header{"Sec-Websocket-Protocol": {token("s3cret") + ", base64.binary.k8s.io"}})
	if p := ws.Response.Header.Get("Sec-WebSocket-Protocol"); p != "base64.binary.k8s.io" {
		t.Errorf("subprotocol %q, want base64.binary.k8s.io", p)
	}
	for _, tc := range []struct {
		name, protocols string
	}{
		{"a wrong token", token("wrong") + ", base64.binary.k8s.io"},
		{"no other subprotocol", token("s3cret")},
		{"two tokens", token("s3cret") + ", " + token("s3cret") + ", binary.k8s.io"},
		{"not base64url", "base64url.bearer.authorization.k8s.io.!!, binary.k8s.io"},
		{"no token at all", "binary.k8s.io"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, resp, err := websocket.Dial(context.Background(), srv.URL+widgetsIn("default")+"?watch=true",
				http.Header{"Origin": {"http://console.test"}, "Sec-Websocket-Protocol": {tc.protocols}})
			if !errors.Is(err, websocket.ErrHandshake) || resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%v %v, want 401", err, resp)
			}
		})
	}
}

// TestWatchOverWebSocketObserved: the handshake takes the connection over
// through every writer the server wraps a request's in (observers,
// fairness), and the request log sees the switch.
func TestWatchOverWebSocketObserved(t *testing.T) {
	var log syncBuffer
	srv := apiservertest.New(t, widgetapi.Register, apiserver.WithFairness(fairness.Default(600)),
		apiserver.WithRequestLog(slog.New(slog.NewTextHandler(&log, nil))))
	ws := dialWatch(t, srv.URL, "", nil)
	if err := ws.Write(websocket.OpClose, []byte{0x03, 0xe8}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(); err == nil {
		t.Fatal("no close")
	}
	// The server sends its close reply before the handler returns, and the
	// request is logged once it has returned: wait for the line, not for
	// Close, which does not wait for hijacked connections.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), "resp=101"); {
		if time.Now().After(deadline) {
			t.Fatalf("request log:\n%s", log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// FuzzWebSocketFrames writes any bytes as a client's frames into a watch
// served over WebSocket, then ends the client's side: the watch ends, with
// a closing frame whose code may be sent (1000, 1002 for a broken frame,
// 1009 for a message over the limit, or the client's own code echoed) or
// with the connection closed, never a hang, and the server answers the
// next request. The frames are the client's: masked, fragmented,
// oversized, control frames out of place.
func FuzzWebSocketFrames(f *testing.F) {
	mask := []byte{1, 2, 3, 4}
	frame := func(b0 byte, payload []byte) []byte { // masked, payload under 126 bytes
		out := append([]byte{b0, 0x80 | byte(len(payload))}, mask...)
		for i, c := range payload {
			out = append(out, c^mask[i%4])
		}
		return out
	}
	f.Add(frame(0x81, []byte("hello")))                                        // a text message
	f.Add(append(frame(0x01, []byte("frag")), frame(0x80, []byte("ment"))...)) // fragmented, then ended
	f.Add(frame(0x01, []byte("never ended")))                                  // fragmented, never ended
	f.Add(frame(0x80, []byte("continuation first")))                           // a continuation with nothing to continue
	f.Add([]byte{0x81, 0x05, 'h', 'e', 'l', 'l', 'o'})                         // unmasked
	f.Add(append([]byte{0x82, 0xff, 0, 0, 0, 0, 0x10, 0, 0, 0}, mask...))      // 256 MiB announced
	f.Add(append([]byte{0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0}, mask...))      // a length with the top bit set
	f.Add(frame(0x89, make([]byte, 125)))                                      // the longest ping
	f.Add(append([]byte{0x89, 0x80 | 126, 0, 126}, mask...))                   // a ping over 125 bytes
	f.Add(frame(0x09, nil))                                                    // a fragmented ping
	f.Add(frame(0x88, []byte{0x0f, 0xa0}))                                     // close 4000
	f.Add(frame(0x88, []byte{0x03, 0xed}))                                     // close 1005, never on the wire
	f.Add(frame(0x88, []byte{0x03, 0xe8, 0xff}))                               // a reason not UTF-8
	f.Add(frame(0xc1, []byte("x")))                                            // a reserved bit
	f.Add(frame(0x83, nil))                                                    // an unknown opcode
	f.Add(append(frame(0x81, []byte("a")), 0x81))                              // a frame cut short
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang, not a measurement
		defer cancel()
		ws, resp, err := websocket.Dial(ctx, s.base+widgetsIn(corpusNS)+"?watch=true", http.Header{"Origin": {"http://console.test"}})
		if err != nil {
			t.Fatalf("dial: %v %v", err, resp)
		}
		defer ws.Close()
		go func() { <-ctx.Done(); _ = ws.Close() }()
		_ = ws.WriteRaw(data) // the server may have closed already
		_ = ws.CloseWrite()
		for {
			_, _, err := ws.Read()
			if err == nil {
				continue // an event
			}
			var closed *websocket.CloseError
			if errors.As(err, &closed) && (closed.Code < 1000 || closed.Code >= 5000 || closed.Code == 1005 || closed.Code == 1006 || closed.Code == 1015 || closed.Code == 1011) {
				t.Fatalf("closed with %d", closed.Code)
			}
			if ctx.Err() != nil {
				t.Fatal("the watch did not end after the client's side did")
			}
			break
		}
		r, err := s.hc.Get(s.base + corpusItem)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("GET after: %d", r.StatusCode)
		}
	})
}
