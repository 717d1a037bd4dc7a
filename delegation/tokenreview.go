package delegation

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/kapi-dev/kapi/auth"
)

// errInvalidToken is a token the cluster refused.
var errInvalidToken = errors.New("invalid bearer token")

type tokenReview struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Spec       tokenReviewSpec   `json:"spec"`
	Status     tokenReviewStatus `json:"status"`
}

type tokenReviewSpec struct {
	Token     string   `json:"token"`
	Audiences []string `json:"audiences,omitempty"`
}

type tokenReviewStatus struct {
	Authenticated bool     `json:"authenticated"`
	User          userInfo `json:"user"`
	Audiences     []string `json:"audiences,omitempty"`
	Error         string   `json:"error,omitempty"`
}

type userInfo struct {
	Username string              `json:"username"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// tokenAnswer is a remembered TokenReview: a user, or the error.
type tokenAnswer struct {
	user auth.User
	err  error
}

type tokenReviewAuthenticator struct {
	cluster Cluster
	config  config
	cache   *cache[tokenAnswer]
}

var _ auth.Authenticator = (*tokenReviewAuthenticator)(nil)

// NewTokenReview authenticates requests that carry a bearer token by
// asking the cluster with a TokenReview, as k8s.io/apiserver's delegated
// authentication does. A request without a bearer token is left to other
// authenticators; a token the cluster refuses, or that it could not check
// in time, is an error (401). Options: WithTimeout, WithCacheTTL,
// WithAudiences.
func NewTokenReview(cluster Cluster, opts ...Option) (auth.Authenticator, error) {
	c, err := newConfig(opts)
	if err == nil {
		err = cluster.check()
	}
	if err != nil {
		return nil, err
	}
	return &tokenReviewAuthenticator{cluster: cluster, config: c, cache: newCache[tokenAnswer](c.maxCached, c.now)}, nil
}

func (a *tokenReviewAuthenticator) Authenticate(r *http.Request) (auth.User, bool, error) {
	token, ok := auth.BearerToken(r)
	if !ok {
		return auth.User{}, false, nil
	}
	spec := tokenReviewSpec{Token: token, Audiences: a.config.audiences}
	key := cacheKey(spec)
	if answer, ok := a.cache.get(key); ok {
		return answer.user, answer.err == nil, answer.err
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.config.timeout)
	defer cancel()
	review := tokenReview{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview", Spec: spec}
	var answer tokenReview
	if err := a.cluster.post(ctx, "/apis/authentication.k8s.io/v1/tokenreviews", review, &answer); err != nil {
		return auth.User{}, false, err // not remembered: the next request asks again
	}
	st := answer.Status
	switch {
	case !st.Authenticated && st.Error != "":
		err := errors.New(st.Error)
		a.cache.put(key, tokenAnswer{err: err}, a.config.failureTTL)
		return auth.User{}, false, err
	case !st.Authenticated:
		a.cache.put(key, tokenAnswer{err: errInvalidToken}, a.config.failureTTL)
		return auth.User{}, false, errInvalidToken
	case len(a.config.audiences) > 0 && !slices.ContainsFunc(st.Audiences, func(aud string) bool { return slices.Contains(a.config.audiences, aud) }):
		// As kube's webhook authenticator: a token for other audiences.
		err := errors.New("token audiences don't intersect with the audiences the server accepts")
		a.cache.put(key, tokenAnswer{err: err}, a.config.failureTTL)
		return auth.User{}, false, err
	}
	u := auth.User{Name: st.User.Username, UID: st.User.UID, Groups: st.User.Groups, Extra: st.User.Extra}
	a.cache.put(key, tokenAnswer{user: u}, a.config.successTTL)
	return u, true, nil
}
