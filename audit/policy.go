package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kapi-dev/kapi/auth"
)

// Level is how much of a request an event records.
type Level string

// The levels, from least to most.
const (
	LevelNone            Level = "None"
	LevelMetadata        Level = "Metadata"
	LevelRequest         Level = "Request"
	LevelRequestResponse Level = "RequestResponse"
)

func (l Level) rank() int {
	return slices.Index([]Level{LevelNone, LevelMetadata, LevelRequest, LevelRequestResponse}, l)
}

// Stage is when in a request an event is written.
type Stage string

// The stages, in the order a request passes them.
const (
	StageRequestReceived  Stage = "RequestReceived"
	StageResponseStarted  Stage = "ResponseStarted"
	StageResponseComplete Stage = "ResponseComplete"
	StagePanic            Stage = "Panic"
)

// Policy is kube-apiserver's audit policy (audit.k8s.io/v1 Policy): the
// first rule that matches a request sets its level.
type Policy struct {
	APIVersion string       `yaml:"apiVersion" json:"apiVersion"`
	Kind       string       `yaml:"kind" json:"kind"`
	Metadata   yaml.Node    `yaml:"metadata,omitempty" json:"-"`
	Rules      []PolicyRule `yaml:"rules" json:"rules"`
	// OmitStages are written for no request.
	OmitStages []Stage `yaml:"omitStages,omitempty" json:"omitStages,omitempty"`
	// OmitManagedFields leaves metadata.managedFields out of the request
	// and response bodies recorded, unless a rule says otherwise.
	OmitManagedFields bool `yaml:"omitManagedFields,omitempty" json:"omitManagedFields,omitempty"`
}

// PolicyRule matches requests by user, group, verb, resource, namespace
// or path; an empty list matches everything.
type PolicyRule struct {
	Level      Level    `yaml:"level" json:"level"`
	Users      []string `yaml:"users,omitempty" json:"users,omitempty"`
	UserGroups []string `yaml:"userGroups,omitempty" json:"userGroups,omitempty"`
	Verbs      []string `yaml:"verbs,omitempty" json:"verbs,omitempty"`
	// Resources match resource requests only; "*" is any group, a
	// resource "*", "widgets/status", "*/status" or "widgets/*".
	Resources []GroupResources `yaml:"resources,omitempty" json:"resources,omitempty"`
	// Namespaces match resource requests only; "" is cluster-scoped.
	Namespaces []string `yaml:"namespaces,omitempty" json:"namespaces,omitempty"`
	// NonResourceURLs match other requests: a path, or a prefix before
	// a trailing "*".
	NonResourceURLs   []string `yaml:"nonResourceURLs,omitempty" json:"nonResourceURLs,omitempty"`
	OmitStages        []Stage  `yaml:"omitStages,omitempty" json:"omitStages,omitempty"`
	OmitManagedFields *bool    `yaml:"omitManagedFields,omitempty" json:"omitManagedFields,omitempty"`
}

// GroupResources names resources of one API group ("" is the core group).
type GroupResources struct {
	Group         string   `yaml:"group" json:"group"`
	Resources     []string `yaml:"resources,omitempty" json:"resources,omitempty"`
	ResourceNames []string `yaml:"resourceNames,omitempty" json:"resourceNames,omitempty"`
}

// ParsePolicy reads a policy in kube's format, YAML or JSON (JSON is YAML),
// and checks it as kube-apiserver does: apiVersion audit.k8s.io/v1, kind
// Policy, known fields, levels and stages, and no rule for both resources
// and non-resource URLs.
func ParsePolicy(data []byte) (*Policy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Policy
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("audit: the policy is empty")
		}
		return nil, fmt.Errorf("audit: policy: %w", err)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("audit: policy: %w", err)
	}
	return &p, nil
}

func (p *Policy) check() error {
	var errs []error
	if p.APIVersion != "audit.k8s.io/v1" {
		errs = append(errs, fmt.Errorf("apiVersion %q: want audit.k8s.io/v1", p.APIVersion))
	}
	if p.Kind != "Policy" {
		errs = append(errs, fmt.Errorf("kind %q: want Policy", p.Kind))
	}
	errs = append(errs, checkStages("omitStages", p.OmitStages)...)
	for i, r := range p.Rules {
		field := fmt.Sprintf("rules[%d]", i)
		if r.Level.rank() < 0 {
			errs = append(errs, fmt.Errorf("%s.level: %q is not one of None, Metadata, Request, RequestResponse", field, r.Level))
		}
		if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
			errs = append(errs, fmt.Errorf("%s: rules cannot apply to both regular resources and non-resource URLs", field))
		}
		for j, u := range r.NonResourceURLs {
			if u != "*" && !strings.HasPrefix(u, "/") {
				errs = append(errs, fmt.Errorf("%s.nonResourceURLs[%d]: %q must start with '/' or be '*'", field, j, u))
			} else if k := strings.IndexByte(u, '*'); k >= 0 && k != len(u)-1 {
				errs = append(errs, fmt.Errorf("%s.nonResourceURLs[%d]: %q: '*' is only allowed at the end", field, j, u))
			}
		}
		for j, gr := range r.Resources {
			for k, res := range gr.Resources {
				if res == "" {
					errs = append(errs, fmt.Errorf("%s.resources[%d].resources[%d]: empty", field, j, k))
				}
			}
			if len(gr.ResourceNames) > 0 && len(gr.Resources) == 0 {
				errs = append(errs, fmt.Errorf("%s.resources[%d].resourceNames: needs resources", field, j))
			}
		}
		errs = append(errs, checkStages(field+".omitStages", r.OmitStages)...)
	}
	return errors.Join(errs...)
}

func checkStages(field string, stages []Stage) []error {
	var errs []error
	for i, s := range stages {
		switch s {
		case StageRequestReceived, StageResponseStarted, StageResponseComplete, StagePanic:
		default:
			errs = append(errs, fmt.Errorf("%s[%d]: %q is not a stage", field, i, s))
		}
	}
	return errs
}

// decide is the level of a request and the stages it omits: the first
// matching rule's, else None.
func (p *Policy) decide(a auth.Attributes, userKnown bool) (Level, []Stage, bool) {
	for i := range p.Rules {
		r := &p.Rules[i]
		if r.matches(a, userKnown) {
			omitMF := p.OmitManagedFields
			if r.OmitManagedFields != nil {
				omitMF = *r.OmitManagedFields
			}
			return r.Level, append(slices.Clip(p.OmitStages), r.OmitStages...), omitMF
		}
	}
	return LevelNone, nil, false
}

// maxLevel is the most any rule could give a request whose user is not yet
// known: what to capture for it.
func (p *Policy) maxLevel(a auth.Attributes) Level {
	best := LevelNone
	for i := range p.Rules {
		r := p.Rules[i]
		r.Users, r.UserGroups = nil, nil
		if r.matches(a, true) && r.Level.rank() > best.rank() {
			best = r.Level
		}
	}
	return best
}

// matches is kube-apiserver's rule match (audit/policy/checker.go).
func (r *PolicyRule) matches(a auth.Attributes, userKnown bool) bool {
	if len(r.Users) > 0 && (!userKnown || !slices.Contains(r.Users, a.User.Name)) {
		return false
	}
	if len(r.UserGroups) > 0 {
		if !userKnown || !slices.ContainsFunc(a.User.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
			return false
		}
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return r.matchesResource(a)
	}
	if len(r.NonResourceURLs) > 0 {
		if a.ResourceRequest {
			return false
		}
		for _, spec := range r.NonResourceURLs {
			if spec == "*" || spec == a.Path || strings.HasSuffix(spec, "*") && strings.HasPrefix(a.Path, strings.TrimSuffix(spec, "*")) {
				return true
			}
		}
		return false
	}
	return true
}

func (r *PolicyRule) matchesResource(a auth.Attributes) bool {
	if !a.ResourceRequest {
		return false
	}
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != a.APIGroup && gr.Group != "*" {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, a.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == combined || res == "*":
				return true
			case a.Subresource != "" && strings.HasPrefix(res, "*/") && a.Subresource == res[2:]:
				return true
			case strings.HasSuffix(res, "/*") && a.Resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}
