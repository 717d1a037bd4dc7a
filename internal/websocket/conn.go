package websocket

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// closeWait is how long Close waits for the client's closing frame after
// sending its own, so that the client reads the server's before the
// connection goes (closing with unread input would reset it).
const closeWait = 2 * time.Second

// Conn is the server's side of a WebSocket. Writes are safe from one
// goroutine besides the Conn's own reader.
type Conn struct {
	conn     net.Conn
	protocol string

	mu        sync.Mutex // guards w, err and closeSent: the reader answers pings too
	w         *bufio.Writer
	err       error // the first write error: every later write fails with it
	closeSent bool

	done       chan struct{} // closed when the reader ends
	ctx        context.Context
	cancel     context.CancelFunc // called when the reader ends
	readerDone sync.WaitGroup
	closeOnce  sync.Once
}

func newConn(ctx context.Context, conn net.Conn, r *bufio.Reader, w *bufio.Writer, protocol string) *Conn {
	c := &Conn{conn: conn, protocol: protocol, w: w, done: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.readerDone.Go(func() { c.read(r) })
	return c
}

// Protocol is the subprotocol the handshake echoed, or "".
func (c *Conn) Protocol() string { return c.protocol }

// Done is closed when the client has closed the connection, gone away or
// broken the protocol: what the server writes from then on is lost.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Context is the request's context, cancelled also when Done is closed:
// what serves the connection stops when the client has gone.
func (c *Conn) Context() context.Context { return c.ctx }

// WriteMessage buffers p as one message, text (UTF-8) or binary; Flush
// sends it.
func (c *Conn) WriteMessage(text bool, p []byte) error {
	op := byte(OpBinary)
	if text {
		op = OpText
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeSent {
		return ErrClosed
	}
	if c.err == nil {
		var b [10]byte
		if _, c.err = c.w.Write(appendFrameHeader(b[:0], op, len(p))); c.err == nil {
			_, c.err = c.w.Write(p)
		}
	}
	return c.err
}

// EndWrites bounds every write from now on, and one blocked on a client
// that reads nothing, to closeWait: the server calls it when the stream
// ends (a watch's timeout, shutdown), so that such a client cannot hold
// the connection, its goroutine and Close for ever.
func (c *Conn) EndWrites() { _ = c.conn.SetWriteDeadline(time.Now().Add(closeWait)) }

// Flush sends what WriteMessage buffered.
func (c *Conn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && !c.closeSent {
		c.err = c.w.Flush()
	}
	return c.err
}

// writeControl sends a control frame at once.
func (c *Conn) writeControl(op byte, p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeSent {
		return ErrClosed
	}
	if op == OpClose {
		c.closeSent = true
	}
	if c.err == nil {
		var b [2 + maxControl]byte
		if _, c.err = c.w.Write(appendFrame(b[:0], op, p, nil)); c.err == nil {
			c.err = c.w.Flush()
		}
	}
	return c.err
}

// closePayload is a close frame's payload for code.
func closePayload(code int) []byte {
	return binary.BigEndian.AppendUint16(nil, uint16(code))
}

// read is the Conn's reader: it answers pings, answers the client's close,
// closes with 1002 or 1009 a client that breaks the protocol or says too
// much, and discards the rest.
func (c *Conn) read(r *bufio.Reader) {
	defer close(c.done)
	defer c.cancel()
	err := readFrames(r, MaxMessage, func(op byte, p []byte) error {
		if op == OpPing {
			return c.writeControl(OpPong, p)
		}
		return nil
	})
	var closed *CloseError
	switch {
	case errors.As(err, &closed):
		code := closed.Code
		if code == CloseNoStatus {
			code = CloseNormal
		}
		_ = c.writeControl(OpClose, closePayload(code)) // ErrClosed if the server closed first: this was the reply
	case errors.Is(err, ErrProtocol):
		_ = c.writeControl(OpClose, closePayload(CloseProtocol))
	case errors.Is(err, ErrTooBig):
		_ = c.writeControl(OpClose, closePayload(CloseTooBig))
	}
}

// Close ends the connection with a normal closing frame (unless the
// client's closing handshake already answered), waits up to two seconds
// for the client's, and closes the connection. It waits for the reader to
// end, so no goroutine outlives it.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.EndWrites() // a write blocked on the client now ends, and so does the closing frame's
		if c.writeControl(OpClose, closePayload(CloseNormal)) == nil {
			_ = c.conn.SetReadDeadline(time.Now().Add(closeWait))
			<-c.done
		}
		err = c.conn.Close()
		c.readerDone.Wait()
	})
	return err
}

// MessageWriter is an http.ResponseWriter over c whose every Write is one
// message, text or binary, less its first skip bytes (a stream's framing
// that a WebSocket's own replaces); Flush sends what was written. Header
// and WriteHeader are for handlers that set them: the handshake has
// answered.
func (c *Conn) MessageWriter(text bool, skip int) *MessageWriter {
	return &MessageWriter{conn: c, text: text, skip: skip, header: http.Header{}}
}

// MessageWriter: see Conn.MessageWriter.
type MessageWriter struct {
	conn   *Conn
	text   bool
	skip   int
	header http.Header
}

// Header is a header nobody sends.
func (m *MessageWriter) Header() http.Header { return m.header }

// WriteHeader does nothing: the handshake answered 101.
func (m *MessageWriter) WriteHeader(int) {}

// Write sends p, less its first skip bytes, as one message.
func (m *MessageWriter) Write(p []byte) (int, error) {
	if len(p) < m.skip {
		return 0, fmt.Errorf("websocket: a write of %d bytes, shorter than its framing", len(p))
	}
	return len(p), m.conn.WriteMessage(m.text, p[m.skip:])
}

// Flush sends the messages written.
func (m *MessageWriter) Flush() { _ = m.conn.Flush() }
