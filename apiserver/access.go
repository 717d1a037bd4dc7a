package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	ksel "github.com/kapi-dev/kapi/internal/selector"
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
func (s *Server) accessReviewResources(gv groupVersion) []apiResource {
	var out []apiResource
	for _, ar := range accessReviews {
		if s.servesAccessReviews() && ar.group == gv.group && ar.version == gv.version {
			out = append(out, apiResource{Name: ar.plural, SingularName: ar.singular, Kind: ar.kind, Verbs: []string{"create"}})
		}
	}
	return out
}

// accessReviewDiscovery is the reviews' part of aggregated discovery.
func (s *Server) accessReviewDiscovery() []groupDiscovery {
	var groups []groupDiscovery
	for _, gv := range s.accessReviewGroupVersions() {
		vd := versionDiscovery{Version: gv.version, Freshness: "Current"}
		for _, ar := range accessReviews {
			if ar.group == gv.group && ar.version == gv.version {
				vd.Resources = append(vd.Resources, resourceDiscovery{Resource: ar.plural, ResponseKind: groupVersionKind{ar.group, ar.version, ar.kind},
					Scope: "Cluster", SingularResource: ar.singular, Verbs: []string{"create"}})
			}
		}
		g := groupDiscovery{Versions: []versionDiscovery{vd}}
		g.Metadata.Name = gv.group
		groups = append(groups, g)
	}
	return groups
}

// accessReviewRoutes adds the reviews' discovery documents and endpoints.
func (s *Server) accessReviewRoutes(r interface {
	Get(string, http.HandlerFunc)
	Post(string, http.HandlerFunc)
	Method(string, string, http.Handler)
}, notAllowed http.HandlerFunc) {
	for _, gv := range s.accessReviewGroupVersions() {
		base := "/apis/" + gv.group + "/" + gv.version
		r.Get("/apis/"+gv.group, s.serveGroup(&registry{}, gv.group))
		r.Get(base, s.serveResources(&registry{}, gv))
	}
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

// reviewRequest is what kapi reads of a review's body: its spec, in any
// format the server reads (kubectl sends the built-in kinds in protobuf).
type reviewRequest[Spec any] struct {
	kapi.TypeMeta `json:",inline"`
	Spec          Spec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
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

// reviewMeta is a review's metadata: kube-apiserver answers with the
// request's, and a creation time.
type reviewMeta struct {
	Name              string `json:"name,omitempty"`
	CreationTimestamp any    `json:"creationTimestamp"`
}

type userInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

type selfSubjectReview struct {
	kapi.TypeMeta `json:",inline"`
	Metadata      reviewMeta `json:"metadata"`
	Status        struct {
		UserInfo userInfo `json:"userInfo"`
	} `json:"status"`
}

// serveSelfSubjectReview answers kubectl auth whoami: the user the request
// runs as, impersonation applied.
func (s *Server) serveSelfSubjectReview(w http.ResponseWriter, r *http.Request) {
	var review selfSubjectReview
	if err := s.readReview(w, r, "authentication.k8s.io/v1", "SelfSubjectReview", &reviewRequest[struct{}]{}); err != nil {
		writeStatus(w, r, nil, statusOf(err, target{}))
		return
	}
	u, _ := UserFrom(r.Context())
	review.TypeMeta = kapi.TypeMeta{Kind: "SelfSubjectReview", APIVersion: "authentication.k8s.io/v1"}
	review.Metadata.CreationTimestamp = time.Now().UTC().Format(time.RFC3339)
	review.Status.UserInfo = userInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	writeReview(w, r, review)
}

type selectorRequirementJSON struct {
	Key      string   `json:"key" protobuf:"bytes,1,opt,name=key"`
	Operator string   `json:"operator" protobuf:"bytes,2,opt,name=operator"`
	Values   []string `json:"values,omitempty" protobuf:"bytes,3,rep,name=values"`
}

type reviewSelector struct {
	RawSelector  string                    `json:"rawSelector,omitempty" protobuf:"bytes,1,opt,name=rawSelector"`
	Requirements []selectorRequirementJSON `json:"requirements,omitempty" protobuf:"bytes,2,rep,name=requirements"`
}

type resourceAttributes struct {
	Namespace     string          `json:"namespace,omitempty" protobuf:"bytes,1,opt,name=namespace"`
	Verb          string          `json:"verb,omitempty" protobuf:"bytes,2,opt,name=verb"`
	Group         string          `json:"group,omitempty" protobuf:"bytes,3,opt,name=group"`
	Version       string          `json:"version,omitempty" protobuf:"bytes,4,opt,name=version"`
	Resource      string          `json:"resource,omitempty" protobuf:"bytes,5,opt,name=resource"`
	Subresource   string          `json:"subresource,omitempty" protobuf:"bytes,6,opt,name=subresource"`
	Name          string          `json:"name,omitempty" protobuf:"bytes,7,opt,name=name"`
	FieldSelector *reviewSelector `json:"fieldSelector,omitempty" protobuf:"bytes,8,opt,name=fieldSelector"`
	LabelSelector *reviewSelector `json:"labelSelector,omitempty" protobuf:"bytes,9,opt,name=labelSelector"`
}

type nonResourceAttributes struct {
	Path string `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
	Verb string `json:"verb,omitempty" protobuf:"bytes,2,opt,name=verb"`
}

type accessReviewSpec struct {
	ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty" protobuf:"bytes,1,opt,name=resourceAttributes"`
	NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty" protobuf:"bytes,2,opt,name=nonResourceAttributes"`
}

type selfSubjectAccessReview struct {
	kapi.TypeMeta `json:",inline"`
	Metadata      reviewMeta       `json:"metadata"`
	Spec          accessReviewSpec `json:"spec"`
	Status        struct {
		Allowed         bool   `json:"allowed"`
		Denied          bool   `json:"denied,omitempty"`
		Reason          string `json:"reason,omitempty"`
		EvaluationError string `json:"evaluationError,omitempty"`
	} `json:"status"`
}

// serveSelfSubjectAccessReview answers kubectl auth can-i: what the
// authorizers decide for the request's user on the attributes asked.
func (s *Server) serveSelfSubjectAccessReview(w http.ResponseWriter, r *http.Request) {
	var req reviewRequest[accessReviewSpec]
	if err := s.readReview(w, r, "authorization.k8s.io/v1", "SelfSubjectAccessReview", &req); err != nil {
		writeStatus(w, r, nil, statusOf(err, target{}))
		return
	}
	review := selfSubjectAccessReview{Spec: req.Spec}
	ra, nra := review.Spec.ResourceAttributes, review.Spec.NonResourceAttributes
	if (ra == nil) == (nra == nil) {
		// kube-apiserver's validation, word for word (the value is the
		// spec's nonResourceAttributes).
		value := "null"
		if nra != nil {
			data, _ := json.Marshal(nra) // plain strings: it marshals
			value = string(data)
		}
		detail := fmt.Sprintf("Invalid value: %q: exactly one of nonResourceAttributes or resourceAttributes must be specified", value)
		e := NewStatusError(http.StatusUnprocessableEntity, kapi.StatusReasonInvalid,
			`SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec: `+detail)
		e.Status.Details = &kapi.StatusDetails{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview",
			Causes: []kapi.StatusCause{{Type: kapi.CauseTypeFieldValueInvalid, Field: "spec", Message: detail}}}
		writeStatus(w, r, nil, e.Status)
		return
	}
	u, _ := UserFrom(r.Context())
	a := Attributes{User: u}
	if ra != nil {
		a = Attributes{User: u, Verb: ra.Verb, ResourceRequest: true, APIGroup: ra.Group, APIVersion: ra.Version,
			Namespace: ra.Namespace, Resource: ra.Resource, Subresource: ra.Subresource, Name: ra.Name}
		a.LabelSelector, a.SelectorError = reviewRequirements(ra.LabelSelector, ksel.ParseLabels)
		var err error
		a.FieldSelector, err = reviewRequirements(ra.FieldSelector, ksel.ParseFields)
		a.SelectorError = errors.Join(a.SelectorError, err)
	} else {
		a.Verb, a.Path = nra.Verb, nra.Path
	}
	d, reason, err := s.decide(r.Context(), a)
	review.TypeMeta = kapi.TypeMeta{Kind: "SelfSubjectAccessReview", APIVersion: "authorization.k8s.io/v1"}
	review.Metadata.CreationTimestamp = nil
	review.Status.Allowed, review.Status.Denied, review.Status.Reason = d == DecisionAllow, d == DecisionDeny, reason
	if err != nil {
		review.Status.EvaluationError = err.Error()
	}
	writeReview(w, r, review)
}

// reviewRequirements reads a review's selector as kube-apiserver does: the
// raw selector if given, else its requirements (In, NotIn, Exists,
// DoesNotExist).
func reviewRequirements(sel *reviewSelector, parse func(string) ([]ksel.Requirement, error)) ([]SelectorRequirement, error) {
	if sel == nil {
		return nil, nil
	}
	if sel.RawSelector != "" {
		reqs, err := parse(sel.RawSelector)
		return exportRequirements(reqs), err
	}
	var out []SelectorRequirement
	for _, rq := range sel.Requirements {
		op, ok := map[string]string{"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}[rq.Operator]
		if !ok {
			return nil, fmt.Errorf("%q is not a valid selector operator", rq.Operator)
		}
		out = append(out, SelectorRequirement{Key: rq.Key, Operator: op, Values: rq.Values})
	}
	return out, nil
}

// decide asks the server's authorizers, or allows everything when it has
// none.
func (s *Server) decide(ctx context.Context, a Attributes) (Decision, string, error) {
	if len(s.config.auth.authorizers) == 0 {
		return DecisionAllow, "", nil
	}
	return authorize(ctx, s.config.auth.authorizers, a)
}

type resourceRule struct {
	Verbs         []string `json:"verbs"`
	APIGroups     []string `json:"apiGroups,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

type nonResourceRule struct {
	Verbs           []string `json:"verbs"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

type rulesReviewSpec struct {
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,1,opt,name=namespace"`
}

type selfSubjectRulesReview struct {
	kapi.TypeMeta `json:",inline"`
	Metadata      reviewMeta      `json:"metadata"`
	Spec          rulesReviewSpec `json:"spec"`
	Status        struct {
		ResourceRules    []resourceRule    `json:"resourceRules"`
		NonResourceRules []nonResourceRule `json:"nonResourceRules"`
		Incomplete       bool              `json:"incomplete"`
		EvaluationError  string            `json:"evaluationError,omitempty"`
	} `json:"status"`
}

// serveSelfSubjectRulesReview answers kubectl auth can-i --list: the rules
// of every authorizer that can list them, incomplete when one cannot.
func (s *Server) serveSelfSubjectRulesReview(w http.ResponseWriter, r *http.Request) {
	var req reviewRequest[rulesReviewSpec]
	if err := s.readReview(w, r, "authorization.k8s.io/v1", "SelfSubjectRulesReview", &req); err != nil {
		writeStatus(w, r, nil, statusOf(err, target{}))
		return
	}
	review := selfSubjectRulesReview{Spec: req.Spec}
	if review.Spec.Namespace == "" {
		writeStatus(w, r, nil, badRequest("no namespace on request").Status)
		return
	}
	u, _ := UserFrom(r.Context())
	rules, incomplete, err := s.rulesFor(r.Context(), u, review.Spec.Namespace)
	review.TypeMeta = kapi.TypeMeta{Kind: "SelfSubjectRulesReview", APIVersion: "authorization.k8s.io/v1"}
	review.Metadata.CreationTimestamp = nil
	st := &review.Status
	st.ResourceRules, st.NonResourceRules, st.Incomplete = []resourceRule{}, []nonResourceRule{}, incomplete
	for _, rule := range rules {
		if len(rule.NonResourceURLs) > 0 {
			st.NonResourceRules = append(st.NonResourceRules, nonResourceRule{Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs})
		} else {
			st.ResourceRules = append(st.ResourceRules, resourceRule{Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames})
		}
	}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	writeReview(w, r, review)
}

// rulesFor gathers the rules of every authorizer, as kube-apiserver's
// union rule resolver; with no authorizer, everyone may do everything.
func (s *Server) rulesFor(ctx context.Context, u User, namespace string) ([]Rule, bool, error) {
	if len(s.config.auth.authorizers) == 0 {
		return []Rule{
			{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
		}, false, nil
	}
	var all []Rule
	var errs []error
	incomplete := false
	for _, az := range s.config.auth.authorizers {
		resolver, ok := az.(RuleResolver)
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
