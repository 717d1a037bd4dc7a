package websocket

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client is the client's side of a WebSocket, for tests: it reads the
// server's messages and sends masked frames.
type Client struct {
	conn net.Conn
	r    *bufio.Reader
	// Response is the server's 101 answer (headers only).
	Response *http.Response
}

// Dial opens a WebSocket to rawURL (http:// or ws://; no TLS) with the
// extra request headers in header (Origin, Sec-WebSocket-Protocol,
// Authorization...). A server that answers anything but 101 gives
// ErrHandshake and its response, whose body the caller reads and closes.
func Dial(ctx context.Context, rawURL string, header http.Header) (*Client, *http.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, err
	}
	u.Scheme = strings.NewReplacer("ws", "http").Replace(u.Scheme)
	if u.Scheme != "http" {
		return nil, nil, fmt.Errorf("websocket: Dial speaks plain HTTP, not %s", u.Scheme)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	key := base64.StdEncoding.EncodeToString(raw[:])
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Key", key)
	if req.Header.Get("Sec-WebSocket-Version") == "" {
		req.Header.Set("Sec-WebSocket-Version", "13")
	}
	if err := req.Write(conn); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != acceptKey(key) {
		body, _ := io.ReadAll(resp.Body)
		_ = conn.Close()
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		return nil, resp, ErrHandshake
	}
	_ = conn.SetDeadline(time.Time{})
	return &Client{conn: conn, r: br, Response: resp}, resp, nil
}

// Read returns the next data message, text or binary, joining fragments;
// it answers pings, and returns a *CloseError when the server closes.
func (c *Client) Read() (text bool, msg []byte, err error) {
	var op byte
	for {
		h, err := readHeader(c.r, false)
		if err != nil {
			return false, nil, err
		}
		if h.length > 64<<20 {
			return false, nil, ErrTooBig
		}
		p := make([]byte, h.length)
		if _, err := io.ReadFull(c.r, p); err != nil {
			return false, nil, io.ErrUnexpectedEOF
		}
		switch h.op {
		case OpClose:
			cerr, err := parseClose(p)
			if err != nil {
				return false, nil, err
			}
			_ = c.Write(OpClose, p)
			return false, nil, cerr
		case OpPing:
			if err := c.Write(OpPong, p); err != nil {
				return false, nil, err
			}
			continue
		case OpPong:
			continue
		case OpText, OpBinary:
			op, msg = h.op, nil
		}
		msg = append(msg, p...)
		if h.fin {
			return op == OpText, msg, nil
		}
	}
}

// Write sends one masked frame (any opcode, for tests of the server's
// reader).
func (c *Client) Write(op byte, p []byte) error {
	return c.WriteRaw(appendFrame(nil, op, p, &[4]byte{1, 2, 3, 4}))
}

// WriteRaw sends bytes as they are: hostile frames, for tests.
func (c *Client) WriteRaw(b []byte) error {
	_, err := c.conn.Write(b)
	return err
}

// CloseWrite ends what the client sends, without a closing frame (a
// client gone mid-frame), and keeps reading the server's.
func (c *Client) CloseWrite() error {
	if cw, ok := c.conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.conn.Close()
}

// Close closes the connection without a closing handshake.
func (c *Client) Close() error { return c.conn.Close() }
