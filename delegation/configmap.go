package delegation

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/auth"
)

// ConfigMapPath is where kube-apiserver publishes what extension servers
// need to authenticate the requests it proxies.
const ConfigMapPath = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"

// Authentication is what the cluster's extension-apiserver-authentication
// ConfigMap says: the client CA, and the front proxy's CA, allowed names
// and headers. Reload reads it again; what it read counts for the next
// request.
type Authentication struct {
	cluster Cluster
	current atomic.Pointer[authSettings]
}

// authSettings are one reading of the ConfigMap.
type authSettings struct {
	clientCAs, proxyCAs *x509.CertPool
	allowedNames        []string
	user, group, uid    []string
	extraPrefixes       []string
}

// LoadAuthentication reads the ConfigMap from the cluster (the server's
// credentials must allow reading it: kube's role
// extension-apiserver-authentication-reader).
func LoadAuthentication(ctx context.Context, cluster Cluster) (*Authentication, error) {
	if err := cluster.check(); err != nil {
		return nil, err
	}
	a := &Authentication{cluster: cluster}
	if err := a.Reload(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// Reload reads the ConfigMap again. On an error, what was read before
// stays.
func (a *Authentication) Reload(ctx context.Context) error {
	code, data, err := a.cluster.get(ctx, ConfigMapPath)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("HTTP %d", code)
	}
	if err != nil {
		return fmt.Errorf("delegation: reading %s: %w", ConfigMapPath, err)
	}
	s, err := parseAuthConfigMap(data)
	if err != nil {
		return fmt.Errorf("delegation: %s: %w", ConfigMapPath, err)
	}
	a.current.Store(s)
	return nil
}

// Run reloads the ConfigMap every interval until ctx ends, reporting
// failures to onError (which may be nil).
func (a *Authentication) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := a.Reload(ctx); err != nil && onError != nil {
				onError(err)
			}
		}
	}
}

// parseAuthConfigMap reads the ConfigMap's data as kube-apiserver writes
// it: PEM bundles, and JSON lists of strings.
func parseAuthConfigMap(data []byte) (*authSettings, error) {
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(data, &cm); err != nil {
		return nil, fmt.Errorf("not a ConfigMap: %w", err)
	}
	s := &authSettings{}
	var errs []error
	pool := func(key string) *x509.CertPool {
		pem, ok := cm.Data[key]
		if !ok {
			return nil
		}
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM([]byte(pem)) {
			errs = append(errs, fmt.Errorf("%s holds no PEM certificate", key))
			return nil
		}
		return p
	}
	list := func(key string) []string {
		raw, ok := cm.Data[key]
		if !ok || raw == "" {
			return nil
		}
		var l []string
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			errs = append(errs, fmt.Errorf("%s: want a JSON list of strings: %w", key, err))
		}
		return l
	}
	s.clientCAs, s.proxyCAs = pool("client-ca-file"), pool("requestheader-client-ca-file")
	s.allowedNames = list("requestheader-allowed-names")
	s.user, s.group = canonical(list("requestheader-username-headers")), canonical(list("requestheader-group-headers"))
	s.uid, s.extraPrefixes = canonical(list("requestheader-uid-headers")), canonical(list("requestheader-extra-headers-prefix"))
	if s.proxyCAs != nil && len(s.user) == 0 {
		errs = append(errs, errors.New("requestheader-client-ca-file without requestheader-username-headers"))
	}
	return s, errors.Join(errs...)
}

// Authenticator authenticates as a k8s.io/apiserver server delegating to
// the cluster does: the front proxy by the ConfigMap's request-header
// settings, client certificates by its client CA, and bearer tokens by
// TokenReview (opts as NewTokenReview takes). The ConfigMap's contents of
// the moment apply to each request.
func (a *Authentication) Authenticator(opts ...Option) (auth.Authenticator, error) {
	tokens, err := NewTokenReview(a.cluster, opts...)
	if err != nil {
		return nil, err
	}
	proxy := &requestHeader{
		proxies: auth.ClientCertificatesFrom(func() *x509.CertPool { return a.current.Load().proxyCAs }),
		settings: func() headerSettings {
			s := a.current.Load()
			return headerSettings{user: s.user, group: s.group, uid: s.uid, extraPrefixes: s.extraPrefixes, allowedNames: s.allowedNames}
		},
	}
	certs := auth.ClientCertificatesFrom(func() *x509.CertPool { return a.current.Load().clientCAs })
	return auth.UnionAuthenticator(proxy, certs, tokens), nil
}
