package apiserver

import (
	"context"
	"crypto/x509"
	"io"

	"github.com/kapi-dev/kapi/admission"
	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/observe"
)

// The names below are the ports plugins implement, declared in packages
// auth, admission and observe so that a plugin imports those small
// packages instead of the whole server. apiserver re-declares each one, as
// an alias or a function that calls it, so that code written against
// apiserver's names compiles unchanged.

// User is an alias of auth.User, kept so that code written against
// apiserver compiles unchanged.
type User = auth.User

// Attributes is an alias of auth.Attributes, kept so that code written
// against apiserver compiles unchanged.
type Attributes = auth.Attributes

// SelectorRequirement is an alias of auth.SelectorRequirement, kept so that
// code written against apiserver compiles unchanged.
type SelectorRequirement = auth.SelectorRequirement

// Authenticator is an alias of auth.Authenticator, kept so that code
// written against apiserver compiles unchanged.
type Authenticator = auth.Authenticator

// AuthenticatorFunc is an alias of auth.AuthenticatorFunc, kept so that
// code written against apiserver compiles unchanged.
type AuthenticatorFunc = auth.AuthenticatorFunc

// Decision is an alias of auth.Decision, kept so that code written against
// apiserver compiles unchanged.
type Decision = auth.Decision

// The decisions of auth, kept under their apiserver names so that code
// written against apiserver compiles unchanged.
const (
	DecisionNoOpinion = auth.DecisionNoOpinion
	DecisionAllow     = auth.DecisionAllow
	DecisionDeny      = auth.DecisionDeny
)

// Authorizer is an alias of auth.Authorizer, kept so that code written
// against apiserver compiles unchanged.
type Authorizer = auth.Authorizer

// AuthorizerFunc is an alias of auth.AuthorizerFunc, kept so that code
// written against apiserver compiles unchanged.
type AuthorizerFunc = auth.AuthorizerFunc

// RuleResolver is an alias of auth.RuleResolver, kept so that code written
// against apiserver compiles unchanged.
type RuleResolver = auth.RuleResolver

// Rule is an alias of auth.Rule, kept so that code written against
// apiserver compiles unchanged.
type Rule = auth.Rule

// Binding is an alias of auth.Binding, kept so that code written against
// apiserver compiles unchanged.
type Binding = auth.Binding

// The users and groups Kubernetes gives meaning to, as auth declares them,
// kept under their apiserver names so that code written against apiserver
// compiles unchanged.
const (
	UserAnonymous        = auth.UserAnonymous
	GroupAuthenticated   = auth.GroupAuthenticated
	GroupUnauthenticated = auth.GroupUnauthenticated
)

// WithUser returns a context carrying user, as auth.WithUser does, and
// records the user for the request's observers when it runs inside a
// request of this server (the server calls it once it has authenticated a
// request).
func WithUser(ctx context.Context, user User) context.Context {
	if rec := recordFrom(ctx); rec != nil {
		rec.NoteUser(user)
	}
	return auth.WithUser(ctx, user)
}

// UserFrom returns the user a request runs as, as auth.UserFrom does: the
// one an authenticator found, or system:anonymous under WithAnonymous; ok
// is false when the server authenticates nobody (no WithAuthentication).
func UserFrom(ctx context.Context) (user User, ok bool) { return auth.UserFrom(ctx) }

// StaticTokens is auth.StaticTokens, kept so that code written against
// apiserver compiles unchanged.
func StaticTokens(tokens map[string]User) Authenticator { return auth.StaticTokens(tokens) }

// ReadTokenFile is auth.ReadTokenFile, kept so that code written against
// apiserver compiles unchanged.
func ReadTokenFile(r io.Reader) (map[string]User, error) { return auth.ReadTokenFile(r) }

// ClientCertificates is auth.ClientCertificates, kept so that code written
// against apiserver compiles unchanged.
func ClientCertificates(roots *x509.CertPool) (Authenticator, error) {
	return auth.ClientCertificates(roots)
}

// ClientCertificatesFrom is auth.ClientCertificatesFrom, kept so that code
// written against apiserver compiles unchanged.
func ClientCertificatesFrom(roots func() *x509.CertPool) Authenticator {
	return auth.ClientCertificatesFrom(roots)
}

// UnionAuthenticator is auth.UnionAuthenticator, kept so that code written
// against apiserver compiles unchanged.
func UnionAuthenticator(authenticators ...Authenticator) Authenticator {
	return auth.UnionAuthenticator(authenticators...)
}

// RulesAuthorizer is auth.RulesAuthorizer, kept so that code written
// against apiserver compiles unchanged.
func RulesAuthorizer(bindings ...Binding) (Authorizer, error) {
	return auth.RulesAuthorizer(bindings...)
}

// Operation is an alias of admission.Operation, kept so that code written
// against apiserver compiles unchanged.
type Operation = admission.Operation

// The operations of admission, as admission declares them (admission.Create
// and so on), kept under their apiserver names so that code written against
// apiserver compiles unchanged.
const (
	OperationCreate = admission.Create
	OperationUpdate = admission.Update
	OperationDelete = admission.Delete
)

// AdmissionRequest is an alias of admission.Request, kept so that code
// written against apiserver compiles unchanged.
type AdmissionRequest = admission.Request

// AdmissionFunc is an alias of admission.Func, kept so that code written
// against apiserver compiles unchanged.
type AdmissionFunc = admission.Func

// Observer is an alias of observe.Observer, kept so that code written
// against apiserver compiles unchanged.
type Observer = observe.Observer

// WatchEventObserver is an alias of observe.WatchEventObserver, kept so
// that code written against apiserver compiles unchanged.
type WatchEventObserver = observe.WatchEventObserver

// StepObserver is an alias of observe.StepObserver, kept so that code
// written against apiserver compiles unchanged.
type StepObserver = observe.StepObserver

// RequestRecord is an alias of observe.RequestRecord, kept so that code
// written against apiserver compiles unchanged.
type RequestRecord = observe.RequestRecord
