// Package reviews is the content of the access reviews kube-apiserver
// serves every user about itself: SelfSubjectReview (kubectl auth whoami),
// SelfSubjectAccessReview (kubectl auth can-i) and SelfSubjectRulesReview
// (kubectl auth can-i --list). It holds their wire types, reads a review's
// spec into the auth.Attributes an authorizer decides on, and writes the
// answers; apiserver routes them, reads the bodies, asks its authorizers
// and writes the responses.
//
// # Invariant
//
// An answer says what the server's authorizers decide for the request's
// user, and nothing else: the reviews are never a second policy. The
// attributes read from an access review are those the server reads from a
// request with the same verb, resource and selectors, so that "can-i"
// answers what the request would get. A rules review lists the rules of
// every authorizer that can list them (auth.RuleResolver), and is
// incomplete when one cannot, as kube-apiserver's union rule resolver.
//
// # The slow, obviously correct path
//
// There is no faster path here to compare with: the answers are built
// field by field, and the e2e tests hold them to what kubectl shows.
package reviews
