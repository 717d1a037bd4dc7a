package apiserver

import (
	"cmp"
	"context"
	"errors"
	"net/http"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/websocket"
)

// acceptWebSocket answers the handshake of a watch that asks to be served
// over WebSocket, as kube-apiserver's watch handler serves one: each event
// one message, text for JSON and binary for the other formats, without the
// 4-byte length that frames protobuf events in an HTTP stream. The watch
// ends when the client goes (the returned context). A refused handshake is
// a Status with its code.
func (rq *request) acceptWebSocket(ctx context.Context) (context.Context, *websocket.Conn, error) {
	conn, err := websocket.Accept(rq.w, rq.r)
	var refused *websocket.HandshakeError
	if errors.As(err, &refused) {
		reason := map[int]kapi.StatusReason{http.StatusBadRequest: kapi.StatusReasonBadRequest, http.StatusForbidden: kapi.StatusReasonForbidden,
			http.StatusMethodNotAllowed: kapi.StatusReasonMethodNotAllowed}[refused.Code]
		return ctx, nil, NewStatusError(refused.Code, cmp.Or(reason, kapi.StatusReasonInternalError), err.Error())
	}
	if err != nil {
		return ctx, nil, err
	}
	if rq.rec != nil {
		rq.rec.Code = http.StatusSwitchingProtocols
	}
	skip := 0
	if rq.out.MediaType() == codec.MediaTypeProtobuf {
		skip = 4
	}
	rq.w = conn.MessageWriter(rq.out.MediaType() == codec.MediaTypeJSON, skip)
	return conn.Context(), conn, nil
}

// messages says each write of the response is one message (a watch over
// WebSocket): bursts and initial events joined in one write are off.
func (rq *request) messages() bool {
	_, ok := rq.w.(*websocket.MessageWriter)
	return ok
}
