package auth

import (
	"context"
	"fmt"
	"net/http"
)

// The users and groups Kubernetes gives meaning to, so that rules written
// for kube-apiserver read the same here.
const (
	// UserAnonymous is who a request without credentials runs as when the
	// server lets such requests in (apiserver.WithAnonymous).
	UserAnonymous = "system:anonymous"
	// GroupAuthenticated is added to every user an authenticator accepts.
	GroupAuthenticated = "system:authenticated"
	// GroupUnauthenticated is the group of UserAnonymous.
	GroupUnauthenticated = "system:unauthenticated"
)

// Authenticator finds who sent a request.
type Authenticator interface {
	// Authenticate returns the user the request's credentials name. ok is
	// false with a nil error when the request carries no credentials this
	// authenticator knows; an error means credentials it knows but refuses,
	// or could not check. The request is 401 Unauthorized unless some
	// authenticator accepts it.
	Authenticate(r *http.Request) (user User, ok bool, err error)
}

// AuthenticatorFunc lets a function be an Authenticator.
type AuthenticatorFunc func(r *http.Request) (User, bool, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (User, bool, error) { return f(r) }

var _ Authenticator = AuthenticatorFunc(nil)

// Decision is an authorizer's answer.
type Decision int

const (
	// DecisionNoOpinion leaves the request to the next authorizer; when
	// every authorizer has none, the request is denied. It is the zero
	// value, so an authorizer that forgets to decide denies.
	DecisionNoOpinion Decision = iota
	// DecisionAllow lets the request through; later authorizers are not asked.
	DecisionAllow
	// DecisionDeny refuses the request; later authorizers are not asked.
	DecisionDeny
)

// String names d: Allow, Deny or NoOpinion.
func (d Decision) String() string {
	switch d {
	case DecisionNoOpinion:
		return "NoOpinion"
	case DecisionAllow:
		return "Allow"
	case DecisionDeny:
		return "Deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Authorizer decides whether a user may do what a request asks.
type Authorizer interface {
	// Authorize decides on a. The reason is appended to the 403 message
	// the client sees (leave it empty to say nothing). An error with any
	// decision but Allow is a 500: the authorizer could not decide.
	Authorize(ctx context.Context, a Attributes) (d Decision, reason string, err error)
}

// AuthorizerFunc lets a function be an Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Decision, string, error)

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

var _ Authorizer = AuthorizerFunc(nil)

// Attributes are what an authorizer decides on, read from the request's
// method, path and query as kube-apiserver reads them, so that rules
// written for Kubernetes mean the same here.
type Attributes struct {
	// User is who sent the request; the zero User when the server has no
	// authenticator.
	User User
	// Verb is, for resource requests, one of get, list, watch, create,
	// update, patch, delete and deletecollection (a list with watch=true is
	// watch; a delete without a name is deletecollection). For other
	// requests it is the HTTP method in lower case.
	Verb string
	// ResourceRequest is true for paths under /api/{version}/ and
	// /apis/{group}/{version}/ that name a resource; discovery, OpenAPI,
	// /version and health checks are not resource requests.
	ResourceRequest bool
	// APIGroup is "" for the core group (/api/v1).
	APIGroup    string
	APIVersion  string
	Namespace   string // "" for cluster-scoped resources and lists across namespaces
	Resource    string // the plural, as widgets
	Subresource string // as status
	// Name is the object's name; for a list or watch, the name a field
	// selector metadata.name=NAME restricts it to, as Kubernetes does (so
	// a rule's ResourceNames can allow watching one object).
	Name string
	// Path is the request's path as kapi routes it (below the prefix a
	// parent chi router mounted kapi at).
	Path string
	// LabelSelector and FieldSelector are the requirements of a list's,
	// watch's or deletecollection's selectors, as kube's
	// authorizer.Attributes GetLabelSelector and GetFieldSelector give
	// them, so that an authorizer may allow a narrower request (or pass
	// them on in a SubjectAccessReview). A selector that does not parse is
	// nil here with its error in SelectorError; the request itself is then
	// 400, should the authorizer allow it.
	LabelSelector []SelectorRequirement
	FieldSelector []SelectorRequirement
	SelectorError error
}

// SelectorRequirement is one requirement of a label or field selector.
type SelectorRequirement struct {
	Key string
	// Operator is one of kube's selection operators: "=" (for = and ==),
	// "!=", "in", "notin", "exists", "!" (does not exist), "gt", "lt"; a
	// field selector has only "=" and "!=".
	Operator string
	Values   []string
}

// RuleResolver is what an Authorizer may also be: one that can list what
// a user may do in a namespace, for SelfSubjectRulesReview (kubectl auth
// can-i --list). An authorizer that is not one makes the review's answer
// incomplete, as kube-apiserver's webhook authorizer does.
type RuleResolver interface {
	// RulesFor returns the rules that apply to user in namespace (those
	// limited to other namespaces left out). incomplete says that the user
	// may be allowed more than the rules say.
	RulesFor(ctx context.Context, user User, namespace string) (rules []Rule, incomplete bool, err error)
}
