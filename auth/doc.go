// Package auth is the port through which a server learns who sent a
// request and whether that user may do what the request asks. Plugins
// (package delegation, a service's own token or policy checks) implement
// its interfaces and import nothing else of kapi's server; package
// apiserver calls them on every request and re-declares these names as
// aliases, so code written against apiserver.User or apiserver.Authorizer
// keeps compiling.
//
// # Users
//
// User is who made a request; WithUser and UserFrom carry it in a context,
// where handlers, hooks and admission read it. The well-known names
// UserAnonymous, GroupAuthenticated and GroupUnauthenticated mean here what
// they mean to kube-apiserver, so that rules written for Kubernetes read
// the same.
//
// # Authentication
//
// An Authenticator finds the user a request's credentials name. This
// package has those of kube-apiserver's own flags: StaticTokens and
// ReadTokenFile (--token-auth-file), ClientCertificates and
// ClientCertificatesFrom (--client-ca-file); UnionAuthenticator tries
// several in turn, and AuthenticatorFunc makes any function one.
//
// # Authorization
//
// An Authorizer decides on a request's Attributes — user, verb, API group,
// resource, namespace, name, selectors, or the path of a non-resource
// request — with a Decision: allow, deny, or no opinion. RulesAuthorizer
// takes Bindings of Rules shaped like RBAC's; it is also a RuleResolver,
// which lets a server list a user's rules for kubectl auth can-i --list.
// AuthorizerFunc makes any function an Authorizer.
//
// # Impersonation
//
// ReadImpersonation reads the headers with which a client acts as another
// user (kubectl --as, --as-group, --as-uid): the checks an authorizer must
// allow, one per part of that user, and the user the request then acts as,
// with the groups kube-apiserver adds. StripImpersonation removes the
// headers once they are applied.
//
// # What stays in the server
//
// Reading the Attributes from a request, the order of authentication and
// authorization, anonymous requests, asking the authorizers about an
// impersonation, the 400, 401 and 403 answers and the access reviews are
// the server's request path, in package apiserver.
package auth
