package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi"
)

// The users and groups Kubernetes gives meaning to, so that rules written
// for kube-apiserver read the same here.
const (
	// UserAnonymous is who a request without credentials runs as when
	// WithAnonymous is set.
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

// WithAuthentication makes every request prove who sent it: the
// authenticators are asked in order and the first that accepts the request
// names its user (with GroupAuthenticated added), which handlers and hooks
// read with UserFrom. A request no authenticator accepts is 401
// Unauthorized, unless it carries no credentials and WithAnonymous is set.
// Paths given to WithAlwaysAllowPaths are exempt.
//
// With authentication but no authorizer, every authenticated user may do
// everything.
func WithAuthentication(authenticators ...Authenticator) Option {
	return func(c *config) { c.auth.authenticators = append(c.auth.authenticators, authenticators...) }
}

// WithAuthorization asks the authorizers, in order, whether each request
// may proceed: the first Allow or Deny decides; when all have no opinion,
// the request is denied. A denied request is 403 Forbidden with
// Kubernetes' message, for example
//
//	widgets.example.com "a" is forbidden: User "bob" cannot get resource "widgets" in API group "example.com" in the namespace "default"
//
// Every request is authorized — reads, watches, writes, subresources,
// discovery, OpenAPI, /version — except those WithAlwaysAllowPaths exempts.
func WithAuthorization(authorizers ...Authorizer) Option {
	return func(c *config) { c.auth.authorizers = append(c.auth.authorizers, authorizers...) }
}

// WithAnonymous lets requests that carry no credentials in: they run as
// UserAnonymous in GroupUnauthenticated, and the authorizers decide what
// that user may do (kube-apiserver's --anonymous-auth). Requests whose
// credentials an authenticator refuses are still 401. Without this option,
// a server with an authenticator answers every request without credentials
// with 401, so nothing is open by accident.
func WithAnonymous() Option { return func(c *config) { c.auth.anonymous = true } }

// WithAlwaysAllowPaths serves the given paths without authentication or
// authorization, replacing the default /healthz, /livez and /readyz (so
// that load balancers and kubelet-style probes need no credentials, as
// Kubernetes' default RBAC lets anyone read them). A path ending in "*"
// matches every path it is a prefix of; no other "*" is allowed. Call it
// with no paths to authorize the health checks too.
func WithAlwaysAllowPaths(paths ...string) Option {
	return func(c *config) {
		c.auth.alwaysAllow = append([]string{}, paths...)
	}
}

// authConfig is the authentication and authorization part of config.
type authConfig struct {
	authenticators []Authenticator
	authorizers    []Authorizer
	anonymous      bool
	alwaysAllow    []string // nil: the default
}

var defaultAlwaysAllowPaths = []string{"/healthz", "/livez", "/readyz"}

// check reports settings that cannot work.
func (c *authConfig) check() error {
	var errs []error
	for i, a := range c.authenticators {
		if a == nil {
			errs = append(errs, fmt.Errorf("authenticator %d is nil", i))
		}
	}
	for i, a := range c.authorizers {
		if a == nil {
			errs = append(errs, fmt.Errorf("authorizer %d is nil", i))
		}
	}
	if c.alwaysAllow == nil {
		c.alwaysAllow = defaultAlwaysAllowPaths
	}
	for _, p := range c.alwaysAllow {
		if err := checkPathPattern(p); err != nil {
			errs = append(errs, fmt.Errorf("always allowed path: %w", err))
		}
	}
	return errors.Join(errs...)
}

// checkPathPattern accepts a path, or a path prefix ending in "*".
func checkPathPattern(p string) error {
	if !strings.HasPrefix(p, "/") && p != "*" {
		return fmt.Errorf("%q must start with '/'", p)
	}
	if i := strings.IndexByte(p, '*'); i >= 0 && i != len(p)-1 {
		return fmt.Errorf("%q: '*' is only allowed at the end", p)
	}
	return nil
}

// pathMatches says whether path is pattern, or starts with a pattern's
// prefix before its trailing "*".
func pathMatches(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(path, prefix)
	}
	return path == pattern
}

// withAuth wraps the routes in authentication and authorization; without
// either it adds nothing to a request's path.
func (s *Server) withAuth(next http.Handler) http.Handler {
	c := s.config.auth
	if len(c.authenticators) == 0 && len(c.authorizers) == 0 && !c.anonymous {
		return next
	}
	authenticator := UnionAuthenticator(c.authenticators...)
	authenticate := len(c.authenticators) > 0 || c.anonymous
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attrs := requestAttributes(r)
		for _, p := range c.alwaysAllow {
			if pathMatches(p, attrs.Path) {
				next.ServeHTTP(w, r)
				return
			}
		}
		ctx := r.Context()
		authenticated := false
		if authenticate {
			user, ok, err := authenticator.Authenticate(r)
			if (err != nil || !ok) && r.ProtoMajor == 2 {
				// An HTTP/2 connection is costly to keep and prone to abuse
				// (CVE-2023-44487): kube-apiserver lets a client without
				// credentials have one request on it, then closes it.
				w.Header().Set("Connection", "close")
			}
			switch {
			case err != nil:
				s.config.logger.Debug("kapi: authentication failed", "method", r.Method, "path", r.URL.Path, "err", err)
				writeStatus(w, r, nil, unauthorized().Status)
				return
			case !ok && !c.anonymous:
				writeStatus(w, r, nil, unauthorized().Status)
				return
			case !ok:
				user = User{Name: UserAnonymous, Groups: []string{GroupUnauthenticated}}
			default:
				user, authenticated = withAuthenticatedGroup(user), true
			}
			impersonated, impersonating, err := impersonate(ctx, c.authorizers, user, r.Header)
			if err != nil {
				writeStatus(w, r, nil, statusOf(err, target{}))
				return
			}
			if impersonating {
				r = r.Clone(ctx)
				withoutImpersonation(r.Header)
				user = impersonated
			}
			ctx = WithUser(ctx, user)
			attrs.User = user
		}
		if len(c.authorizers) > 0 {
			d, reason, err := authorize(ctx, c.authorizers, attrs)
			if d != DecisionAllow {
				if err != nil {
					writeStatus(w, r, nil, statusOf(fmt.Errorf("authorizing %s %s: %w", attrs.Verb, attrs.Path, err), target{}))
					return
				}
				writeStatus(w, r, nil, forbidden(attrs, reason).Status)
				return
			}
		}
		r = r.WithContext(ctx)
		if _, ok := r.Header["Authorization"]; ok && authenticated {
			// Handlers and hooks have the user; the credentials stay out
			// of their reach, as kube-apiserver removes them. The host's
			// request keeps its header.
			r.Header = r.Header.Clone()
			r.Header.Del("Authorization")
		}
		next.ServeHTTP(w, r)
	})
}

// authorize asks each authorizer until one allows or denies, as
// kube-apiserver's union authorizer: when none decides, the reasons and
// errors of all are returned.
func authorize(ctx context.Context, authorizers []Authorizer, a Attributes) (Decision, string, error) {
	var reasons []string
	var errs []error
	for _, az := range authorizers {
		d, reason, err := az.Authorize(ctx, a)
		if d == DecisionAllow || d == DecisionDeny {
			return d, reason, err
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return DecisionNoOpinion, strings.Join(reasons, "\n"), errors.Join(errs...)
}

// withAuthenticatedGroup adds GroupAuthenticated as kube-apiserver does:
// not to the anonymous user, nor to a user already in either group.
func withAuthenticatedGroup(u User) User {
	if u.Name == UserAnonymous {
		return u
	}
	for _, g := range u.Groups {
		if g == GroupAuthenticated || g == GroupUnauthenticated {
			return u
		}
	}
	u.Groups = append(u.Groups[:len(u.Groups):len(u.Groups)], GroupAuthenticated)
	return u
}

func unauthorized() *StatusError {
	return NewStatusError(http.StatusUnauthorized, kapi.StatusReasonUnauthorized, "Unauthorized")
}

// htmlSanitizer keeps a message from looking like HTML, as kube-apiserver's
// forbidden responder does.
var htmlSanitizer = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// forbidden is kube-apiserver's 403 for a denied request, message and
// details alike.
func forbidden(a Attributes, reason string) *StatusError {
	var msg string
	if !a.ResourceRequest {
		msg = fmt.Sprintf("User %q cannot %s path %q", a.User.Name, a.Verb, a.Path)
	} else {
		resource := a.Resource
		if a.Subresource != "" {
			resource += "/" + a.Subresource
		}
		if a.Namespace != "" {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", a.User.Name, a.Verb, resource, a.APIGroup, a.Namespace)
		} else {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", a.User.Name, a.Verb, resource, a.APIGroup)
		}
	}
	msg = htmlSanitizer.Replace(msg)
	if reason != "" {
		msg += ": " + reason
	}
	// The qualified resource and name lead the message, as in every
	// Kubernetes error about a resource (GroupResource.String).
	qualified := a.Resource
	if a.APIGroup != "" {
		qualified += "." + a.APIGroup
	}
	switch {
	case a.Resource == "" && a.APIGroup == "":
		msg = "forbidden: " + msg
	case a.Name == "":
		msg = fmt.Sprintf("%s is forbidden: %s", qualified, msg)
	default:
		msg = fmt.Sprintf("%s %q is forbidden: %s", qualified, a.Name, msg)
	}
	e := NewStatusError(http.StatusForbidden, kapi.StatusReasonForbidden, msg)
	e.Status.Details = &kapi.StatusDetails{Name: a.Name, Group: a.APIGroup, Kind: a.Resource}
	return e
}
