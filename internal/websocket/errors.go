package websocket

import (
	"errors"
	"fmt"
)

// Sentinel errors of the handshake, each wrapped in a HandshakeError that
// says the HTTP code to answer with.
var (
	ErrMethod     = errors.New("websocket: the handshake must be a GET")
	ErrNotUpgrade = errors.New("websocket: not a WebSocket upgrade request")
	ErrKey        = errors.New("websocket: Sec-WebSocket-Key must be 16 bytes in base64")
	ErrVersion    = errors.New("websocket: Sec-WebSocket-Version must be 13")
	ErrOrigin     = errors.New("websocket: the Origin header must be an absolute URL")
	ErrProtocols  = errors.New("websocket: more than one subprotocol offered")
	ErrHijack     = errors.New("websocket: the connection cannot be taken over")
)

// Errors of the connection, after the handshake.
var (
	// ErrProtocol is a frame that breaks RFC 6455 (closed with 1002).
	ErrProtocol = errors.New("websocket: protocol error")
	// ErrTooBig is a message over MaxMessage (closed with 1009).
	ErrTooBig = errors.New("websocket: message too big")
	// ErrClosed is a write after Close, or after the client closed.
	ErrClosed = errors.New("websocket: connection closed")
	// ErrHandshake is Dial's error for a server that did not switch.
	ErrHandshake = errors.New("websocket: the server did not switch protocols")
)

// HandshakeError is a refused handshake: Code is the HTTP status to answer
// with, Err one of the sentinels above.
type HandshakeError struct {
	Code int
	Err  error
}

func (e *HandshakeError) Error() string { return e.Err.Error() }
func (e *HandshakeError) Unwrap() error { return e.Err }

// CloseError is the closing frame the peer sent: its status code (1005 when
// it sent none) and reason.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("websocket: closed by the peer: %d %s", e.Code, e.Reason)
}

// protocolError is ErrProtocol with what was wrong.
func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}
