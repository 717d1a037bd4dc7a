package delegation

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/auth"
)

// WithAllowedNames limits NewRequestHeader to front proxies whose
// certificate has one of these common names
// (requestheader-allowed-names); none allows any the CA signed.
func WithAllowedNames(names ...string) Option {
	return func(c *config) { c.allowedNames = append([]string(nil), names...) }
}

// WithHeaders replaces the headers NewRequestHeader reads the user from
// (requestheader-username-headers, -group-headers, -uid-headers,
// -extra-headers-prefix): the first non-empty user header names the user;
// every group header adds groups; the first uid header gives the UID; each
// header under an extra prefix adds a value to the extra named by the rest
// of its name (lower case, percent-decoded). Defaults: X-Remote-User,
// X-Remote-Group, X-Remote-Uid, X-Remote-Extra-.
func WithHeaders(user, group, uid, extraPrefix []string) Option {
	return func(c *config) {
		c.usernameHeaders, c.groupHeaders, c.uidHeader, c.extraPrefixes = canonical(user), canonical(group), canonical(uid), canonical(extraPrefix)
	}
}

func canonical(headers []string) []string {
	out := make([]string, 0, len(headers))
	for _, h := range headers {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, textproto.CanonicalMIMEHeaderKey(h))
		}
	}
	return out
}

type requestHeader struct {
	proxies  auth.Authenticator    // the proxy's certificate, as a user named by its CN
	settings func() headerSettings // of the moment
}

// headerSettings are the allowed names and headers of a front proxy.
type headerSettings struct {
	user, group, uid, extraPrefixes []string
	allowedNames                    []string
}

var _ auth.Authenticator = (*requestHeader)(nil)

// NewRequestHeader authenticates requests a front proxy (kube-apiserver's
// aggregator) forwards, as k8s.io/apiserver's request-header authenticator
// does: the client certificate must chain to proxyCAs (which returns the
// pool of the moment, so a reloaded CA bundle counts at once) and carry an
// allowed name; the user is read from the headers, which are then removed
// from the request so that handlers and hooks cannot mistake them for
// anything else. A request without a client certificate, or without a
// user header, is left to other authenticators; a certificate the pool
// does not verify or a name not allowed is an error (401). Options:
// WithAllowedNames, WithHeaders.
func NewRequestHeader(proxyCAs func() *x509.CertPool, opts ...Option) (auth.Authenticator, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if proxyCAs == nil {
		return nil, errors.New("delegation: request header: no CA pool")
	}
	settings := headerSettings{user: c.usernameHeaders, group: c.groupHeaders, uid: c.uidHeader, extraPrefixes: c.extraPrefixes, allowedNames: c.allowedNames}
	return &requestHeader{proxies: auth.ClientCertificatesFrom(proxyCAs), settings: func() headerSettings { return settings }}, nil
}

func (a *requestHeader) Authenticate(r *http.Request) (auth.User, bool, error) {
	s := a.settings()
	name := ""
	for _, h := range s.user {
		if name = r.Header.Get(h); name != "" {
			break
		}
	}
	if name == "" || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return auth.User{}, false, nil
	}
	proxy, ok, err := a.proxies.Authenticate(r)
	if err != nil {
		return auth.User{}, false, fmt.Errorf("unable to verify the front proxy's certificate: %w", err)
	}
	if !ok || len(s.allowedNames) > 0 && !slices.Contains(s.allowedNames, proxy.Name) {
		return auth.User{}, false, fmt.Errorf("x509: subject with cn=%s is not in the allowed list", proxy.Name)
	}
	u := auth.User{Name: name}
	for _, h := range s.group {
		u.Groups = append(u.Groups, r.Header.Values(h)...)
	}
	for _, h := range s.uid {
		if u.UID = r.Header.Get(h); u.UID != "" {
			break
		}
	}
	for header, values := range r.Header {
		for _, prefix := range s.extraPrefixes {
			if key, ok := strings.CutPrefix(header, prefix); ok && key != "" {
				if u.Extra == nil {
					u.Extra = map[string][]string{}
				}
				key = strings.ToLower(key)
				if unescaped, err := url.PathUnescape(key); err == nil {
					key = unescaped
				}
				u.Extra[key] = append(u.Extra[key], values...)
			}
		}
	}
	s.strip(r.Header)
	return u, true, nil
}

// strip removes the user headers, as kube's authenticator does once it
// has read them.
func (s headerSettings) strip(h http.Header) {
	for _, names := range [][]string{s.user, s.group, s.uid} {
		for _, n := range names {
			h.Del(n)
		}
	}
	for header := range h {
		for _, prefix := range s.extraPrefixes {
			if strings.HasPrefix(header, prefix) {
				delete(h, header)
			}
		}
	}
}
