package websocket

import (
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// acceptGUID is RFC 6455's constant for Sec-WebSocket-Accept.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// IsUpgrade says r asks to switch to WebSocket (Connection names upgrade,
// Upgrade is websocket), as kube-apiserver's wsstream.IsWebSocketRequest
// decides before serving a watch over one.
func IsUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && strings.EqualFold(strings.TrimSpace(r.Header.Get("Upgrade")), "websocket")
}

// headerHasToken says a comma-separated header lists token.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// Protocols lists the subprotocols r offers, from every
// Sec-WebSocket-Protocol header.
func Protocols(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// check refuses a handshake as x/net's websocket.Handler refuses it (see
// the package documentation), and returns the accept key and the
// subprotocol to echo.
func check(r *http.Request) (accept, protocol string, err error) {
	if r.Method != http.MethodGet {
		return "", "", &HandshakeError{http.StatusMethodNotAllowed, ErrMethod}
	}
	if !IsUpgrade(r) {
		return "", "", &HandshakeError{http.StatusBadRequest, ErrNotUpgrade}
	}
	key := r.Header.Get("Sec-WebSocket-Key")
	if raw, err := base64.StdEncoding.DecodeString(key); err != nil || len(raw) != 16 {
		return "", "", &HandshakeError{http.StatusBadRequest, ErrKey}
	}
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		return "", "", &HandshakeError{http.StatusBadRequest, ErrVersion}
	}
	if origin := r.Header.Get("Origin"); origin == "" {
		return "", "", &HandshakeError{http.StatusForbidden, ErrOrigin}
	} else if _, err := url.ParseRequestURI(origin); err != nil {
		return "", "", &HandshakeError{http.StatusForbidden, ErrOrigin}
	}
	protocols := Protocols(r)
	if len(protocols) > 1 {
		return "", "", &HandshakeError{http.StatusBadRequest, ErrProtocols}
	}
	if len(protocols) == 1 {
		protocol = protocols[0]
	}
	return acceptKey(key), protocol, nil
}

// acceptKey is Sec-WebSocket-Accept for a Sec-WebSocket-Key.
func acceptKey(key string) string {
	sum := sha1.Sum([]byte(key + acceptGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Accept answers a WebSocket handshake with 101 Switching Protocols and
// takes the connection over; the handler must not use w afterwards. A
// refused handshake is a *HandshakeError, and w is left to the caller to
// answer. The returned Conn's reader runs until Close.
func Accept(w http.ResponseWriter, r *http.Request) (*Conn, error) {
	accept, protocol, err := check(r)
	if err != nil {
		if err.(*HandshakeError).Err == ErrVersion {
			w.Header().Set("Sec-WebSocket-Version", "13")
		}
		return nil, err
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, &HandshakeError{http.StatusInternalServerError, ErrHijack}
	}
	// The server's read and write deadlines, if any, were for a request.
	_ = conn.SetDeadline(time.Time{})
	bw := brw.Writer
	_, _ = bw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ")
	_, _ = bw.WriteString(accept)
	if protocol != "" {
		_, _ = bw.WriteString("\r\nSec-WebSocket-Protocol: ")
		_, _ = bw.WriteString(protocol)
	}
	_, _ = bw.WriteString("\r\n\r\n")
	if err := bw.Flush(); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return newConn(r.Context(), conn, brw.Reader, bw, protocol), nil
}
