package websocket

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"
)

// bearerPrefix starts the subprotocol that carries a bearer token, as
// kube-apiserver reads it: a browser cannot set an Authorization header
// on a WebSocket, but can offer subprotocols.
const bearerPrefix = "base64url.bearer.authorization.k8s.io."

// ErrBearerProtocol is a bearer-token subprotocol kube-apiserver refuses:
// two of them, one not in unpadded base64url or not UTF-8, or one offered
// without another subprotocol to echo.
var ErrBearerProtocol = errors.New("websocket: bad base64url.bearer.authorization.k8s.io subprotocol")

// BearerProtocol moves the token of a handshake's subprotocol
// base64url.bearer.authorization.k8s.io.<token in unpadded base64url> to
// an Authorization header of a copy of r, and keeps the other
// subprotocols, one of which the handshake echoes; the token never goes
// back to the client. A request that is no upgrade, offers no such
// subprotocol or already has an Authorization header is returned as it
// is.
func BearerProtocol(r *http.Request) (*http.Request, error) {
	if !IsUpgrade(r) || r.Header.Get("Authorization") != "" {
		return r, nil
	}
	var token string
	var rest []string
	for _, p := range Protocols(r) {
		encoded, ok := strings.CutPrefix(p, bearerPrefix)
		if !ok {
			rest = append(rest, p)
			continue
		}
		raw, err := base64.RawURLEncoding.DecodeString(encoded)
		if token != "" || err != nil || len(raw) == 0 || !utf8.Valid(raw) {
			return nil, ErrBearerProtocol
		}
		token = string(raw)
	}
	if token == "" {
		return r, nil
	}
	if len(rest) == 0 {
		return nil, ErrBearerProtocol
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Sec-WebSocket-Protocol", strings.Join(rest, ", "))
	return r, nil
}
