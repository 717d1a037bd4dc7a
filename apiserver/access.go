package apiserver

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/actions"
	"github.com/kapi-dev/kapi/internal/reviews"
)

// The access reviews kube-apiserver serves to every user about itself:
// kubectl auth whoami, auth can-i and auth can-i --list. kapi serves them
// when it authenticates (WithAuthentication or WithAnonymous), answered
// by the configured authorizers, as kinds answered and never stored
// (endpoints.go); who may create them is for those authorizers to say
// (Kubernetes' default RBAC lets every authenticated user, role
// system:basic-user).
func (s *Server) addAccessReviews() error {
	if len(s.config.auth.authenticators) == 0 && !s.config.auth.anonymous {
		return nil
	}
	review := func(group, plural, kind string, in, out kapi.Object, answer func(ctx context.Context, in kapi.Object) (kapi.Object, error)) error {
		*in.GetTypeMeta() = kapi.TypeMeta{Kind: kind, APIVersion: group + "/v1"}
		*out.GetTypeMeta() = *in.GetTypeMeta()
		ep, err := newEndpoint(actions.Endpoint{Group: group, Version: "v1", Resource: plural, Kind: kind, Verbs: map[string]actions.Verb{
			"create": {In: in, Out: out, Answer: func(ctx context.Context, _ actions.Request, in kapi.Object) (kapi.Object, error) {
				return answer(ctx, in)
			}},
		}})
		s.endpoints = append(s.endpoints, ep)
		return err
	}
	return errors.Join(
		review("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", &reviews.Request[struct{}]{}, &reviews.SelfSubjectReview{}, whoAmI),
		review("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", &reviews.Request[reviews.AccessSpec]{}, &reviews.SelfSubjectAccessReview{}, s.canI),
		review("authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview", &reviews.Request[reviews.RulesSpec]{}, &reviews.SelfSubjectRulesReview{}, s.rules),
	)
}

// whoAmI answers kubectl auth whoami: the user the request runs as,
// impersonation applied.
func whoAmI(ctx context.Context, _ kapi.Object) (kapi.Object, error) {
	u, _ := UserFrom(ctx)
	review := reviews.WhoAmI(u, time.Now())
	return &review, nil
}

// canI answers kubectl auth can-i: what the authorizers decide for the
// request's user on the attributes asked.
func (s *Server) canI(ctx context.Context, in kapi.Object) (kapi.Object, error) {
	spec := in.(*reviews.Request[reviews.AccessSpec]).Spec
	if detail := spec.Invalid(); detail != "" {
		e := NewStatusError(http.StatusUnprocessableEntity, kapi.StatusReasonInvalid,
			`SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec: `+detail)
		e.Status.Details = &kapi.StatusDetails{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview",
			Causes: []kapi.StatusCause{{Type: kapi.CauseTypeFieldValueInvalid, Field: "spec", Message: detail}}}
		return nil, e
	}
	u, _ := UserFrom(ctx)
	d, reason, err := s.decide(ctx, spec.Attributes(u))
	review := reviews.AccessAnswer(spec, d, reason, err)
	return &review, nil
}

// decide asks the server's authorizers, or allows everything when it has
// none.
func (s *Server) decide(ctx context.Context, a Attributes) (Decision, string, error) {
	if len(s.config.auth.authorizers) == 0 {
		return DecisionAllow, "", nil
	}
	return authorize(ctx, s.config.auth.authorizers, a)
}

// rules answers kubectl auth can-i --list: the rules of every authorizer
// that can list them, incomplete when one cannot; with no authorizer,
// everyone may do everything.
func (s *Server) rules(ctx context.Context, in kapi.Object) (kapi.Object, error) {
	spec := in.(*reviews.Request[reviews.RulesSpec]).Spec
	if spec.Namespace == "" {
		return nil, badRequest("no namespace on request")
	}
	rules, incomplete, err := reviews.AllowAll(), false, error(nil)
	if len(s.config.auth.authorizers) > 0 {
		u, _ := UserFrom(ctx)
		rules, incomplete, err = reviews.RulesFor(ctx, s.config.auth.authorizers, u, spec.Namespace)
	}
	review := reviews.RulesAnswer(spec, rules, incomplete, err)
	return &review, nil
}
