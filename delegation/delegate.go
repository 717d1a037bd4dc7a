package delegation

import (
	"context"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
)

// Delegate gives a kapi server what k8s.io/apiserver's RecommendedOptions
// give a server behind kube-apiserver: authentication by the cluster's
// extension-apiserver-authentication ConfigMap (front proxy and client
// certificates, reloaded every reload until ctx ends) and TokenReview, and
// authorization by SubjectAccessReview. opts apply to both (WithTimeout,
// WithCacheTTL, WithAudiences, WithAlwaysAllowGroups,
// WithAlwaysAllowPaths). The ConfigMap is read once before Delegate
// returns; an error then is the caller's.
func Delegate(ctx context.Context, cluster Cluster, reload time.Duration, opts ...Option) ([]apiserver.Option, error) {
	auth, err := LoadAuthentication(ctx, cluster)
	if err != nil {
		return nil, err
	}
	authn, err := auth.Authenticator(opts...)
	if err != nil {
		return nil, err
	}
	authz, err := NewSubjectAccessReview(cluster, opts...)
	if err != nil {
		return nil, err
	}
	if reload > 0 {
		go auth.Run(ctx, reload, nil)
	}
	return []apiserver.Option{apiserver.WithAuthentication(authn), apiserver.WithAuthorization(authz)}, nil
}
