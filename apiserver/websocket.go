package apiserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/websocket"
)

// A watch over WebSocket, as kube-apiserver's watch handler serves one to
// a request with Upgrade: websocket: each event is one message, text for
// JSON and binary for the other formats, without the 4-byte length that
// frames protobuf events in an HTTP stream (kube's framer there is the
// WebSocket's). Package internal/websocket holds the protocol.

// acceptWebSocket answers the handshake of a watch and makes each write
// of the stream one message; a refused handshake is a Status.
func (rq *request) acceptWebSocket(ctx context.Context) (context.Context, *websocket.Conn, error) {
	conn, err := websocket.Accept(rq.w, rq.r)
	if err != nil {
		var refused *websocket.HandshakeError
		if !errors.As(err, &refused) {
			return ctx, nil, err
		}
		reason := map[int]kapi.StatusReason{http.StatusBadRequest: kapi.StatusReasonBadRequest, http.StatusForbidden: kapi.StatusReasonForbidden,
			http.StatusMethodNotAllowed: kapi.StatusReasonMethodNotAllowed}[refused.Code]
		if reason == "" {
			reason = kapi.StatusReasonInternalError
		}
		return ctx, nil, NewStatusError(refused.Code, reason, err.Error())
	}
	if rq.rec != nil {
		rq.rec.Code = http.StatusSwitchingProtocols
	}
	prefix := 0
	if rq.out.MediaType() == codec.MediaTypeProtobuf {
		prefix = 4
	}
	rq.w = &messageWriter{conn: conn, text: rq.out.MediaType() == codec.MediaTypeJSON, prefix: prefix, header: http.Header{}}
	// The watch ends when the client goes: the hijacked connection no
	// longer tells the request's context, the reader tells the Conn's.
	return conn.Context(), conn, nil
}

// messages says each write of the response is one message: bursts and
// initial events joined in one write are off.
func (rq *request) messages() bool {
	_, ok := rq.w.(*messageWriter)
	return ok
}

// messageWriter writes each frame of a watch stream as one message.
type messageWriter struct {
	conn   *websocket.Conn
	text   bool
	prefix int // the stream framing before each event, dropped
	header http.Header
}

func (m *messageWriter) Header() http.Header { return m.header }

func (m *messageWriter) WriteHeader(int) {} // the handshake answered 101

func (m *messageWriter) Write(frame []byte) (int, error) {
	if len(frame) < m.prefix {
		return 0, errors.New("apiserver: a watch frame shorter than its framing")
	}
	return len(frame), m.conn.WriteMessage(m.text, frame[m.prefix:])
}

func (m *messageWriter) Flush() { _ = m.conn.Flush() }
