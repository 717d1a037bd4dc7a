// Package websocket is the server side of RFC 6455 that a watch needs: the
// opening handshake as kube-apiserver answers it (its watch handler uses
// golang.org/x/net/websocket), messages written one per watch event, and a
// reader that answers pings and the closing handshake and throws away
// whatever else a client sends. A small client (Dial) serves the tests.
//
// # The handshake
//
// Accept checks a request as x/net's websocket.Handler does, so that a
// client kube-apiserver accepts is accepted and one it refuses is refused
// with the same code: not a GET is 405; no Sec-WebSocket-Key (or one that is
// not 16 bytes in base64) is 400; a Sec-WebSocket-Version other than 13 is
// 400 with Sec-WebSocket-Version: 13; no Origin header, or one that is not
// an absolute URL ("null" included), is 403; more than one subprotocol
// offered is 400, and the one offered is echoed, whatever its name, as
// x/net echoes it. The caller answers a refusal as it answers other bad
// requests (apiserver: a Status); HandshakeError carries the code.
//
// # Tokens
//
// A browser cannot give a WebSocket an Authorization header. As
// kube-apiserver, BearerProtocol takes the token from a subprotocol
// base64url.bearer.authorization.k8s.io.<token in unpadded base64url>,
// offered beside the one to echo (new WebSocket(url,
// ["base64url.bearer.authorization.k8s.io." + token, "base64.binary.k8s.io"])),
// before authentication; the token is not echoed.
//
// # Frames
//
// The server's frames are unmasked and never fragmented: a watch event is
// one message. The client's frames must be masked (else the connection is
// closed with 1002), control frames at most 125 bytes and unfragmented;
// data messages are read and discarded up to MaxMessage bytes each (a
// larger one closes the connection with 1009), so that a client cannot
// make the server hold what it sends.
//
// # Ownership
//
// A Conn owns one goroutine, its reader, from Accept until Close; Done is
// closed when the client has closed, gone away or broken the protocol,
// and the caller then ends what it writes and calls Close, which sends the
// closing frame, waits a moment for the client's, and closes the
// connection.
package websocket
