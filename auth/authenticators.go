package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
)

// errInvalidBearerToken is what kube-apiserver logs for a token no
// authenticator knows; the client only sees 401.
var errInvalidBearerToken = errors.New("invalid bearer token")

// StaticTokens authenticates requests that carry "Authorization: Bearer
// TOKEN" for a token in tokens, as the user it maps to (kube-apiserver's
// --token-auth-file). A bearer token not in the map is an error (401); a
// request without one is left to other authenticators. The map is copied.
func StaticTokens(tokens map[string]User) Authenticator {
	// Keyed by digest, so how long a lookup takes says nothing about how
	// much of a guessed token is right.
	byDigest := make(map[[sha256.Size]byte]User, len(tokens))
	for token, u := range tokens {
		u.Groups = append([]string(nil), u.Groups...)
		u.Extra = maps.Clone(u.Extra)
		byDigest[sha256.Sum256([]byte(token))] = u
	}
	return AuthenticatorFunc(func(r *http.Request) (User, bool, error) {
		token, ok := BearerToken(r)
		if !ok {
			return User{}, false, nil
		}
		u, ok := byDigest[sha256.Sum256([]byte(token))]
		if !ok {
			return User{}, false, errInvalidBearerToken
		}
		return u, true, nil
	})
}

// BearerToken reads the token of "Authorization: Bearer TOKEN" as
// kube-apiserver does: the scheme in any case, what follows a second space
// ignored, and an empty token (as in "Bearer  TOKEN", two spaces) no token.
// Authenticators of bearer tokens share it so that they agree on which
// requests carry one.
func BearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token, _, _ = strings.Cut(token, " ")
	return token, token != ""
}

// ReadTokenFile reads kube-apiserver's static token file, CSV with one
// user per line:
//
//	token,user name,user uid,"group1,group2"
//
// The groups column is optional and further columns are ignored, as
// kube-apiserver does. An empty or repeated token is an error (where
// kube-apiserver only warns), so a typo cannot leave a user out silently.
func ReadTokenFile(r io.Reader) (map[string]User, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	tokens := map[string]User{}
	for {
		record, err := cr.Read()
		if err == io.EOF {
			return tokens, nil
		}
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		line, _ := cr.FieldPos(0)
		switch {
		case len(record) < 3:
			return nil, fmt.Errorf("token file line %d: want at least 3 columns (token, user name, user uid), found %d", line, len(record))
		case record[0] == "":
			return nil, fmt.Errorf("token file line %d: empty token", line)
		}
		if _, dup := tokens[record[0]]; dup {
			return nil, fmt.Errorf("token file line %d: the token of user %q is used before", line, record[1])
		}
		u := User{Name: record[1], UID: record[2]}
		if len(record) > 3 {
			for _, g := range strings.Split(record[3], ",") {
				if g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		tokens[record[0]] = u
	}
}

// ClientCertificates authenticates requests by their TLS client
// certificate, as kube-apiserver's --client-ca-file does: the certificate
// must chain to roots (with the intermediates the client sent) and allow
// client authentication; its subject's common name is the user name, its
// organizations the groups. It verifies the certificate itself, against
// roots only, so a certificate that the host's tls.Config accepted because
// of another CA in its pool (a front proxy's, say) is refused: 401, not a
// user. The host's tls.Config must ask for client certificates: ClientAuth
// tls.RequestClientCert, as kube-apiserver, which leaves verifying them to
// this authenticator, so that a certificate it refuses is not fatal and a
// token on the same connection is still tried (VerifyClientCertIfGiven
// would fail the handshake, token and all). A request without one is left
// to other authenticators. roots must not be nil.
func ClientCertificates(roots *x509.CertPool) (Authenticator, error) {
	if roots == nil {
		return nil, errors.New("auth: client certificates: no CA pool")
	}
	return ClientCertificatesFrom(func() *x509.CertPool { return roots }), nil
}

// ClientCertificatesFrom is ClientCertificates with CAs that may change:
// each request is verified against the pool roots returns then, so a
// reloaded CA bundle takes effect at once. A nil pool refuses every
// certificate.
func ClientCertificatesFrom(roots func() *x509.CertPool) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (User, bool, error) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			return User{}, false, nil
		}
		cert, err := verifyClientCertificate(r.TLS.PeerCertificates, roots())
		if err != nil {
			return User{}, false, err
		}
		if cert.Subject.CommonName == "" {
			return User{}, false, nil
		}
		digest := sha256.Sum256(cert.Raw)
		return User{
			Name:   cert.Subject.CommonName,
			Groups: append([]string(nil), cert.Subject.Organization...),
			// What audit logs in Kubernetes use to tell credentials apart.
			Extra: map[string][]string{"authentication.kubernetes.io/credential-id": {"X509SHA256=" + hex.EncodeToString(digest[:])}},
		}, true, nil
	})
}

// verifyClientCertificate checks the client's chain against roots as
// kube-apiserver's x509 authenticator does, and returns its leaf.
func verifyClientCertificate(chain []*x509.Certificate, roots *x509.CertPool) (*x509.Certificate, error) {
	leaf := chain[0]
	if roots == nil {
		return nil, fmt.Errorf("verifying certificate SN=%s: no CA to verify it against", leaf.SerialNumber)
	}
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return nil, fmt.Errorf("verifying certificate SN=%s, SKID=%X, AKID=%X failed: %w", leaf.SerialNumber, leaf.SubjectKeyId, leaf.AuthorityKeyId, err)
	}
	return leaf, nil
}

// UnionAuthenticator asks each authenticator in turn; the first that
// accepts the request names its user. When none does, the errors of those
// that refused are returned together (nil if every one just found no
// credentials of its kind).
func UnionAuthenticator(authenticators ...Authenticator) Authenticator {
	authenticators = append([]Authenticator(nil), authenticators...)
	return AuthenticatorFunc(func(r *http.Request) (User, bool, error) {
		var errs []error
		for _, a := range authenticators {
			u, ok, err := a.Authenticate(r)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				return u, true, nil
			}
		}
		return User{}, false, errors.Join(errs...)
	})
}
