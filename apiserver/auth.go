package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/internal/pathpattern"
	"github.com/kapi-dev/kapi/internal/requestinfo"
	"github.com/kapi-dev/kapi/internal/websocket"
)

// This file is the request path's authentication and authorization: it
// asks the authenticators and authorizers of package auth about every
// request, applies impersonation (impersonate), and answers 401 and 403
// as kube-apiserver does.

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
		if err := pathpattern.Check(p); err != nil {
			errs = append(errs, fmt.Errorf("always allowed path: %w", err))
		}
	}
	return errors.Join(errs...)
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
		attrs := requestinfo.Of(r)
		for _, p := range c.alwaysAllow {
			if pathpattern.Match(p, attrs.Path) {
				next.ServeHTTP(w, r)
				return
			}
		}
		ctx := r.Context()
		authenticated := false
		if authenticate {
			// A browser's WebSocket carries its token in a subprotocol
			// (internal/websocket), as kube-apiserver reads it.
			upgrade, err := websocket.BearerProtocol(r)
			if err != nil {
				writeStatus(w, r, nil, unauthorized().Status)
				return
			}
			r = upgrade
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
				if rec := recordFrom(ctx); rec != nil {
					rec.NoteRequestor(user)
				}
				r = r.Clone(ctx)
				auth.StripImpersonation(r.Header)
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

// authorizeAlso checks that the request's user may also do verb to what
// the request names, as kube-apiserver asks before a PUT or an apply
// creates a missing object (verb "create"): 403 with kube's message if not.
func (rq *request) authorizeAlso(ctx context.Context, verb string) error {
	authorizers := rq.s.config.auth.authorizers
	if len(authorizers) == 0 {
		return nil
	}
	attrs := requestinfo.Of(rq.r)
	attrs.User, _ = UserFrom(ctx)
	attrs.Verb = verb
	d, reason, err := authorize(ctx, authorizers, attrs)
	switch {
	case d == DecisionAllow:
		return nil
	case err != nil:
		return fmt.Errorf("authorizing %s %s: %w", verb, attrs.Path, err)
	}
	return forbidden(attrs, reason)
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

// impersonate returns the user a request acts as: requestor, or the one
// its impersonation headers name (auth.ReadImpersonation) when the
// authorizers allow requestor to impersonate each part of it. Headers
// without a user are 400; a part not allowed is 403 with kube-apiserver's
// message. impersonating says whether the headers named anyone.
func impersonate(ctx context.Context, authorizers []Authorizer, requestor User, h http.Header) (u User, impersonating bool, err error) {
	imp, ok, err := auth.ReadImpersonation(requestor, h)
	if err != nil {
		return requestor, false, badRequest("%v", err)
	}
	if !ok {
		return requestor, false, nil
	}
	if len(authorizers) > 0 {
		for _, a := range imp.Checks {
			if d, reason, _ := authorize(ctx, authorizers, a); d != DecisionAllow {
				return User{}, false, forbidden(a, reason)
			}
		}
	}
	return imp.User, true, nil
}
