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
// WithAlwaysAllowPaths), and WithNamespaceLifecycle and WithWebhooks add
// the cluster's admission. The ConfigMap is read once before Delegate
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
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	out := []apiserver.Option{apiserver.WithAuthentication(authn), apiserver.WithAuthorization(authz)}
	if c.namespaceLifecycle {
		lifecycle, err := NamespaceLifecycle(cluster, opts...)
		if err != nil {
			return nil, err
		}
		out = append(out, apiserver.WithValidatingAdmission(lifecycle))
	}
	if c.webhooks {
		mutating, err := MutatingWebhooks(cluster, opts...)
		if err != nil {
			return nil, err
		}
		validating, err := ValidatingWebhooks(cluster, opts...)
		if err != nil {
			return nil, err
		}
		out = append(out, apiserver.WithMutatingAdmission(mutating), apiserver.WithValidatingAdmission(validating))
	}
	if reload > 0 {
		go auth.Run(ctx, reload, nil)
	}
	return out, nil
}

// WithNamespaceLifecycle makes Delegate admit writes with NamespaceLifecycle.
func WithNamespaceLifecycle() Option { return func(c *config) { c.namespaceLifecycle = true } }

// WithWebhooks makes Delegate call the cluster's mutating and validating
// admission webhooks (MutatingWebhooks, ValidatingWebhooks) for every write.
func WithWebhooks() Option { return func(c *config) { c.webhooks = true } }
