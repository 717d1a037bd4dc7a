package reviews

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/auth"
	ksel "github.com/kapi-dev/kapi/internal/selector"
)

// Request is what is read of a review's body: its spec, in any format the
// server reads (kubectl sends the built-in kinds in protobuf).
type Request[Spec any] struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec            Spec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// UserInfo is a user as authentication.k8s.io writes it.
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// SelfSubjectReview is authentication.k8s.io/v1's answer to kubectl auth
// whoami.
type SelfSubjectReview struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata"`
	Status          struct {
		UserInfo UserInfo `json:"userInfo"`
	} `json:"status"`
}

// WhoAmI is the answer to a SelfSubjectReview of user u, made at now.
func WhoAmI(u auth.User, now time.Time) SelfSubjectReview {
	var review SelfSubjectReview
	review.TypeMeta = kapi.TypeMeta{Kind: "SelfSubjectReview", APIVersion: "authentication.k8s.io/v1"}
	review.CreationTimestamp = kapi.NewTime(now)
	review.Status.UserInfo = UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	return review
}

// SelectorRequirement is one requirement of a review's selector.
type SelectorRequirement struct {
	Key      string   `json:"key" protobuf:"bytes,1,opt,name=key"`
	Operator string   `json:"operator" protobuf:"bytes,2,opt,name=operator"`
	Values   []string `json:"values,omitempty" protobuf:"bytes,3,rep,name=values"`
}

// Selector is a review's label or field selector: raw, or requirements.
type Selector struct {
	RawSelector  string                `json:"rawSelector,omitempty" protobuf:"bytes,1,opt,name=rawSelector"`
	Requirements []SelectorRequirement `json:"requirements,omitempty" protobuf:"bytes,2,rep,name=requirements"`
}

// ResourceAttributes are the attributes of a resource request reviewed.
type ResourceAttributes struct {
	Namespace     string    `json:"namespace,omitempty" protobuf:"bytes,1,opt,name=namespace"`
	Verb          string    `json:"verb,omitempty" protobuf:"bytes,2,opt,name=verb"`
	Group         string    `json:"group,omitempty" protobuf:"bytes,3,opt,name=group"`
	Version       string    `json:"version,omitempty" protobuf:"bytes,4,opt,name=version"`
	Resource      string    `json:"resource,omitempty" protobuf:"bytes,5,opt,name=resource"`
	Subresource   string    `json:"subresource,omitempty" protobuf:"bytes,6,opt,name=subresource"`
	Name          string    `json:"name,omitempty" protobuf:"bytes,7,opt,name=name"`
	FieldSelector *Selector `json:"fieldSelector,omitempty" protobuf:"bytes,8,opt,name=fieldSelector"`
	LabelSelector *Selector `json:"labelSelector,omitempty" protobuf:"bytes,9,opt,name=labelSelector"`
}

// NonResourceAttributes are the attributes of a non-resource request
// reviewed.
type NonResourceAttributes struct {
	Path string `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
	Verb string `json:"verb,omitempty" protobuf:"bytes,2,opt,name=verb"`
}

// AccessSpec is a SelfSubjectAccessReview's spec: exactly one of its
// fields is set.
type AccessSpec struct {
	ResourceAttributes    *ResourceAttributes    `json:"resourceAttributes,omitempty" protobuf:"bytes,1,opt,name=resourceAttributes"`
	NonResourceAttributes *NonResourceAttributes `json:"nonResourceAttributes,omitempty" protobuf:"bytes,2,opt,name=nonResourceAttributes"`
}

// SelfSubjectAccessReview is authorization.k8s.io/v1's answer to kubectl
// auth can-i.
type SelfSubjectAccessReview struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata"`
	Spec            AccessSpec `json:"spec"`
	Status          struct {
		Allowed         bool   `json:"allowed"`
		Denied          bool   `json:"denied,omitempty"`
		Reason          string `json:"reason,omitempty"`
		EvaluationError string `json:"evaluationError,omitempty"`
	} `json:"status"`
}

// Invalid is kube-apiserver's validation message of the spec, word for
// word, or "" when the spec is valid: exactly one of its fields must be
// set.
func (spec AccessSpec) Invalid() string {
	ra, nra := spec.ResourceAttributes, spec.NonResourceAttributes
	if (ra == nil) != (nra == nil) {
		return ""
	}
	value := "null" // the value is the spec's nonResourceAttributes
	if nra != nil {
		data, _ := json.Marshal(nra) // plain strings: it marshals
		value = string(data)
	}
	return fmt.Sprintf("Invalid value: %q: exactly one of nonResourceAttributes or resourceAttributes must be specified", value)
}

// Attributes are what an authorizer decides on for user u asking the
// valid spec (see Invalid). Selectors are read as kube-apiserver reads
// them: the raw selector if given, else the requirements (In, NotIn,
// Exists, DoesNotExist); one that cannot be read is the SelectorError.
func (spec AccessSpec) Attributes(u auth.User) auth.Attributes {
	ra, nra := spec.ResourceAttributes, spec.NonResourceAttributes
	if ra == nil {
		return auth.Attributes{User: u, Verb: nra.Verb, Path: nra.Path}
	}
	a := auth.Attributes{User: u, Verb: ra.Verb, ResourceRequest: true, APIGroup: ra.Group, APIVersion: ra.Version,
		Namespace: ra.Namespace, Resource: ra.Resource, Subresource: ra.Subresource, Name: ra.Name}
	a.LabelSelector, a.SelectorError = requirements(ra.LabelSelector, ksel.ParseLabels)
	var err error
	a.FieldSelector, err = requirements(ra.FieldSelector, ksel.ParseFields)
	a.SelectorError = errors.Join(a.SelectorError, err)
	return a
}

func requirements(sel *Selector, parse func(string) ([]ksel.Requirement, error)) ([]auth.SelectorRequirement, error) {
	if sel == nil {
		return nil, nil
	}
	if sel.RawSelector != "" {
		reqs, err := parse(sel.RawSelector)
		return ksel.AuthRequirements(reqs), err
	}
	var out []auth.SelectorRequirement
	for _, rq := range sel.Requirements {
		op, ok := map[string]string{"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}[rq.Operator]
		if !ok {
			return nil, fmt.Errorf("%q is not a valid selector operator", rq.Operator)
		}
		out = append(out, auth.SelectorRequirement{Key: rq.Key, Operator: op, Values: rq.Values})
	}
	return out, nil
}

// AccessAnswer is the answer to a review of spec, given the authorizers'
// decision, their reason and their error.
func AccessAnswer(spec AccessSpec, d auth.Decision, reason string, err error) SelfSubjectAccessReview {
	review := SelfSubjectAccessReview{Spec: spec}
	review.TypeMeta = kapi.TypeMeta{Kind: "SelfSubjectAccessReview", APIVersion: "authorization.k8s.io/v1"}
	review.Status.Allowed, review.Status.Denied, review.Status.Reason = d == auth.DecisionAllow, d == auth.DecisionDeny, reason
	if err != nil {
		review.Status.EvaluationError = err.Error()
	}
	return review
}

// ResourceRule is a rule on resources, as a rules review lists it.
type ResourceRule struct {
	Verbs         []string `json:"verbs"`
	APIGroups     []string `json:"apiGroups,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// NonResourceRule is a rule on non-resource paths.
type NonResourceRule struct {
	Verbs           []string `json:"verbs"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// RulesSpec is a SelfSubjectRulesReview's spec.
type RulesSpec struct {
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,1,opt,name=namespace"`
}

// SelfSubjectRulesReview is authorization.k8s.io/v1's answer to kubectl
// auth can-i --list.
type SelfSubjectRulesReview struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata"`
	Spec            RulesSpec `json:"spec"`
	Status          struct {
		ResourceRules    []ResourceRule    `json:"resourceRules"`
		NonResourceRules []NonResourceRule `json:"nonResourceRules"`
		Incomplete       bool              `json:"incomplete"`
		EvaluationError  string            `json:"evaluationError,omitempty"`
	} `json:"status"`
}

// RulesAnswer is the answer to a rules review of spec, given the rules
// found (see RulesFor), whether they are incomplete, and the error of
// those who could not say.
func RulesAnswer(spec RulesSpec, rules []auth.Rule, incomplete bool, err error) SelfSubjectRulesReview {
	review := SelfSubjectRulesReview{Spec: spec}
	review.TypeMeta = kapi.TypeMeta{Kind: "SelfSubjectRulesReview", APIVersion: "authorization.k8s.io/v1"}
	st := &review.Status
	st.ResourceRules, st.NonResourceRules, st.Incomplete = []ResourceRule{}, []NonResourceRule{}, incomplete
	for _, rule := range rules {
		if len(rule.NonResourceURLs) > 0 {
			st.NonResourceRules = append(st.NonResourceRules, NonResourceRule{Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs})
		} else {
			st.ResourceRules = append(st.ResourceRules, ResourceRule{Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames})
		}
	}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return review
}

// AllowAll are the rules of a server without authorizers: everyone may do
// everything.
func AllowAll() []auth.Rule {
	return []auth.Rule{
		{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
		{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
	}
}

// RulesFor gathers the rules of u in namespace from every authorizer that
// can list them, as kube-apiserver's union rule resolver: incomplete when
// one cannot (it is not an auth.RuleResolver) or says it is, and the
// errors of all.
func RulesFor(ctx context.Context, authorizers []auth.Authorizer, u auth.User, namespace string) ([]auth.Rule, bool, error) {
	var all []auth.Rule
	var errs []error
	incomplete := false
	for _, az := range authorizers {
		resolver, ok := az.(auth.RuleResolver)
		if !ok {
			incomplete = true
			continue
		}
		rules, inc, err := resolver.RulesFor(ctx, u, namespace)
		all, incomplete = append(all, rules...), incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return all, incomplete, errors.Join(errs...)
}
