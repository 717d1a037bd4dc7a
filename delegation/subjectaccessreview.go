package delegation

import (
	"context"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/auth"
)

type subjectAccessReview struct {
	APIVersion string                    `json:"apiVersion"`
	Kind       string                    `json:"kind"`
	Spec       subjectAccessReviewSpec   `json:"spec"`
	Status     subjectAccessReviewStatus `json:"status"`
}

type subjectAccessReviewSpec struct {
	ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty"`
	NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty"`
	User                  string                 `json:"user,omitempty"`
	Groups                []string               `json:"groups,omitempty"`
	Extra                 map[string][]string    `json:"extra,omitempty"`
	UID                   string                 `json:"uid,omitempty"`
}

type resourceAttributes struct {
	Namespace     string             `json:"namespace,omitempty"`
	Verb          string             `json:"verb,omitempty"`
	Group         string             `json:"group,omitempty"`
	Version       string             `json:"version,omitempty"`
	Resource      string             `json:"resource,omitempty"`
	Subresource   string             `json:"subresource,omitempty"`
	Name          string             `json:"name,omitempty"`
	FieldSelector *selectorAttribute `json:"fieldSelector,omitempty"`
	LabelSelector *selectorAttribute `json:"labelSelector,omitempty"`
}

type selectorAttribute struct {
	Requirements []selectorRequirement `json:"requirements,omitempty"`
}

type selectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

type nonResourceAttributes struct {
	Path string `json:"path,omitempty"`
	Verb string `json:"verb,omitempty"`
}

type subjectAccessReviewStatus struct {
	Allowed         bool   `json:"allowed"`
	Denied          bool   `json:"denied,omitempty"`
	Reason          string `json:"reason,omitempty"`
	EvaluationError string `json:"evaluationError,omitempty"`
}

type sarAuthorizer struct {
	cluster Cluster
	config  config
	cache   *cache[subjectAccessReviewStatus]
}

var _ auth.Authorizer = (*sarAuthorizer)(nil)

// NewSubjectAccessReview decides each request by asking the cluster with
// a SubjectAccessReview, as k8s.io/apiserver's delegated authorization
// does: allowed is Allow, denied is Deny, neither is no opinion (with the
// cluster's reason). A call that fails or times out has no opinion and an
// error, so the request is 500 unless a later authorizer allows it.
// Options: WithTimeout, WithCacheTTL (allowed, denied),
// WithAlwaysAllowGroups, WithAlwaysAllowPaths.
func NewSubjectAccessReview(cluster Cluster, opts ...Option) (auth.Authorizer, error) {
	c, err := newConfig(opts)
	if err == nil {
		err = cluster.check()
	}
	if err != nil {
		return nil, err
	}
	return &sarAuthorizer{cluster: cluster, config: c, cache: newCache[subjectAccessReviewStatus](c.maxCached, c.now)}, nil
}

func (a *sarAuthorizer) Authorize(ctx context.Context, attrs auth.Attributes) (auth.Decision, string, error) {
	for _, g := range attrs.User.Groups {
		if slices.Contains(a.config.alwaysAllowGroups, g) {
			return auth.DecisionAllow, "", nil
		}
	}
	if !attrs.ResourceRequest {
		for _, p := range a.config.alwaysAllowPaths {
			if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(attrs.Path, prefix) || p == attrs.Path {
				return auth.DecisionAllow, "", nil
			}
		}
	}
	spec := reviewSpec(attrs)
	key := cacheKey(spec)
	if st, ok := a.cache.get(key); ok {
		return decision(st)
	}
	ctx, cancel := context.WithTimeout(ctx, a.config.timeout)
	defer cancel()
	var answer subjectAccessReview
	review := subjectAccessReview{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview", Spec: spec}
	if err := a.cluster.post(ctx, "/apis/authorization.k8s.io/v1/subjectaccessreviews", review, &answer); err != nil {
		return auth.DecisionNoOpinion, "", err
	}
	ttl := a.config.failureTTL
	if answer.Status.Allowed {
		ttl = a.config.successTTL
	}
	a.cache.put(key, answer.Status, ttl)
	return decision(answer.Status)
}

func decision(st subjectAccessReviewStatus) (auth.Decision, string, error) {
	switch {
	case st.Allowed:
		return auth.DecisionAllow, st.Reason, nil
	case st.Denied:
		return auth.DecisionDeny, st.Reason, nil
	}
	return auth.DecisionNoOpinion, st.Reason, nil
}

// reviewSpec is what a SubjectAccessReview asks for attrs, selectors
// passed on as kube's webhook authorizer passes them: equality and set
// requirements, others left out (which only asks about more).
func reviewSpec(attrs auth.Attributes) subjectAccessReviewSpec {
	u := attrs.User
	spec := subjectAccessReviewSpec{User: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	if !attrs.ResourceRequest {
		spec.NonResourceAttributes = &nonResourceAttributes{Path: attrs.Path, Verb: attrs.Verb}
		return spec
	}
	spec.ResourceAttributes = &resourceAttributes{
		Namespace: attrs.Namespace, Verb: attrs.Verb, Group: attrs.APIGroup, Version: attrs.APIVersion,
		Resource: attrs.Resource, Subresource: attrs.Subresource, Name: attrs.Name,
		FieldSelector: selectorOf(attrs.FieldSelector), LabelSelector: selectorOf(attrs.LabelSelector),
	}
	return spec
}

func selectorOf(reqs []auth.SelectorRequirement) *selectorAttribute {
	var out []selectorRequirement
	for _, r := range reqs {
		op, ok := map[string]string{"=": "In", "in": "In", "!=": "NotIn", "notin": "NotIn", "exists": "Exists", "!": "DoesNotExist"}[r.Operator]
		if !ok {
			continue
		}
		out = append(out, selectorRequirement{Key: r.Key, Operator: op, Values: r.Values})
	}
	if len(out) == 0 {
		return nil
	}
	return &selectorAttribute{Requirements: out}
}
