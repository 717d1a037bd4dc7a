package apiserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/discovery"
	"github.com/kapi-dev/kapi/internal/reviews"
)

// The access reviews kube-apiserver serves to every user about itself:
// kubectl auth whoami, auth can-i and auth can-i --list. kapi serves them
// when it authenticates (WithAuthentication or WithAnonymous), answered
// by the configured authorizers; who may create them is for those
// authorizers to say (Kubernetes' default RBAC lets every authenticated
// user, role system:basic-user).
var accessReviews = []struct {
	group, version, plural, singular, kind string
	serve                                  func(s *Server, w http.ResponseWriter, r *http.Request)
}{
	{"authentication.k8s.io", "v1", "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview", (*Server).serveSelfSubjectReview},
	{"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview", "SelfSubjectAccessReview", (*Server).serveSelfSubjectAccessReview},
	{"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "selfsubjectrulesreview", "SelfSubjectRulesReview", (*Server).serveSelfSubjectRulesReview},
}

// servesAccessReviews says whether the server has users to review.
func (s *Server) servesAccessReviews() bool {
	return len(s.config.auth.authenticators) > 0 || s.config.auth.anonymous
}

// accessReviewGroupVersions are the group versions of the reviews, for
// discovery, in the order kube-apiserver lists them.
func (s *Server) accessReviewGroupVersions() []groupVersion {
	if !s.servesAccessReviews() {
		return nil
	}
	return []groupVersion{{"authentication.k8s.io", "v1"}, {"authorization.k8s.io", "v1"}}
}

// accessReviewResources are the reviews of gv in discovery: cluster-scoped,
// create only.
func (s *Server) accessReviewResources(gv groupVersion) []discovery.Resource {
	var out []discovery.Resource
	for _, ar := range accessReviews {
		if s.servesAccessReviews() && ar.group == gv.group && ar.version == gv.version {
			out = append(out, discovery.Resource{Kind: ar.kind, Plural: ar.plural, Singular: ar.singular, Verbs: []string{"create"}})
		}
	}
	return out
}

// accessReviewRoutes adds the reviews' endpoints; their discovery documents
// are the registry's.
func (s *Server) accessReviewRoutes(r interface {
	Get(string, http.HandlerFunc)
	Post(string, http.HandlerFunc)
	Method(string, string, http.Handler)
}, notAllowed http.HandlerFunc) {
	for _, ar := range accessReviews {
		if s.servesAccessReviews() {
			serve := ar.serve
			path := "/apis/" + ar.group + "/" + ar.version + "/" + ar.plural
			r.Post(path, func(w http.ResponseWriter, r *http.Request) { serve(s, w, r) })
			for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete} {
				r.Method(m, path, notAllowed) // not the resource paths' handler
			}
		}
	}
}

// readReview decodes a review's body into v, checking its kind.
func (s *Server) readReview(w http.ResponseWriter, r *http.Request, apiVersion, kind string, v interface{ GetTypeMeta() *kapi.TypeMeta }) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	f, err := codec.ForContentType(ct, true)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.config.maxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return err
		}
		return badRequest("the request body could not be read: %v", err)
	}
	jsonData, ok, err := f.ToJSON(data)
	switch {
	case err != nil:
	case ok:
		err = codec.UnmarshalJSON(jsonData, v)
	default:
		err = f.Unmarshal(data, v)
	}
	if err != nil {
		return badRequest("the body is not a %s: %v", kind, err)
	}
	if tm := v.GetTypeMeta(); tm.Kind != "" && tm.Kind != kind || tm.APIVersion != "" && tm.APIVersion != apiVersion {
		return badRequest("the body is a %s %s, not a %s %s", tm.APIVersion, tm.Kind, apiVersion, kind)
	}
	return nil
}

// writeReview answers 201 Created with the review, as kube-apiserver does.
func writeReview(w http.ResponseWriter, r *http.Request, review any) {
	writeJSONCode(w, r, http.StatusCreated, review)
}

// serveSelfSubjectReview answers kubectl auth whoami: the user the request
// runs as, impersonation applied.
func (s *Server) serveSelfSubjectReview(w http.ResponseWriter, r *http.Request) {
	if err := s.readReview(w, r, "authentication.k8s.io/v1", "SelfSubjectReview", &reviews.Request[struct{}]{}); err != nil {
		writeStatus(w, r, nil, statusOf(err, target{}))
		return
	}
	u, _ := UserFrom(r.Context())
	writeReview(w, r, reviews.WhoAmI(u, time.Now()))
}

// serveSelfSubjectAccessReview answers kubectl auth can-i: what the
// authorizers decide for the request's user on the attributes asked.
func (s *Server) serveSelfSubjectAccessReview(w http.ResponseWriter, r *http.Request) {
	var req reviews.Request[reviews.AccessSpec]
	if err := s.readReview(w, r, "authorization.k8s.io/v1", "SelfSubjectAccessReview", &req); err != nil {
		writeStatus(w, r, nil, statusOf(err, target{}))
		return
	}
	if detail := req.Spec.Invalid(); detail != "" {
		e := NewStatusError(http.StatusUnprocessableEntity, kapi.StatusReasonInvalid,
			`SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec: `+detail)
		e.Status.Details = &kapi.StatusDetails{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview",
			Causes: []kapi.StatusCause{{Type: kapi.CauseTypeFieldValueInvalid, Field: "spec", Message: detail}}}
		writeStatus(w, r, nil, e.Status)
		return
	}
	u, _ := UserFrom(r.Context())
	d, reason, err := s.decide(r.Context(), req.Spec.Attributes(u))
	writeReview(w, r, reviews.AccessAnswer(req.Spec, d, reason, err))
}

// decide asks the server's authorizers, or allows everything when it has
// none.
func (s *Server) decide(ctx context.Context, a Attributes) (Decision, string, error) {
	if len(s.config.auth.authorizers) == 0 {
		return DecisionAllow, "", nil
	}
	return authorize(ctx, s.config.auth.authorizers, a)
}

// serveSelfSubjectRulesReview answers kubectl auth can-i --list: the rules
// of every authorizer that can list them, incomplete when one cannot; with
// no authorizer, everyone may do everything.
func (s *Server) serveSelfSubjectRulesReview(w http.ResponseWriter, r *http.Request) {
	var req reviews.Request[reviews.RulesSpec]
	if err := s.readReview(w, r, "authorization.k8s.io/v1", "SelfSubjectRulesReview", &req); err != nil {
		writeStatus(w, r, nil, statusOf(err, target{}))
		return
	}
	if req.Spec.Namespace == "" {
		writeStatus(w, r, nil, badRequest("no namespace on request").Status)
		return
	}
	rules, incomplete, err := reviews.AllowAll(), false, error(nil)
	if len(s.config.auth.authorizers) > 0 {
		u, _ := UserFrom(r.Context())
		rules, incomplete, err = reviews.RulesFor(r.Context(), s.config.auth.authorizers, u, req.Spec.Namespace)
	}
	writeReview(w, r, reviews.RulesAnswer(req.Spec, rules, incomplete, err))
}
