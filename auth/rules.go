package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/internal/pathpattern"
)

// Rule allows some verbs on some resources, or on some non-resource paths,
// as a Kubernetes RBAC PolicyRule does. "*" in a list matches anything.
// A rule is either about resources (Verbs, APIGroups and Resources, and
// optionally ResourceNames and Namespaces) or about paths (Verbs and
// NonResourceURLs), never both.
type Rule struct {
	// Verbs are Attributes verbs: get, list, watch, create, update, patch,
	// delete, deletecollection; for paths, lower-case HTTP methods.
	Verbs []string
	// APIGroups are group names; "" is the core group.
	APIGroups []string
	// Resources are plurals; "widgets/status" names a subresource, which
	// "widgets" does not cover (as in RBAC); "*/status" is that
	// subresource of every resource.
	Resources []string
	// ResourceNames, if any, limit the rule to these objects. Requests
	// without a name (list, watch, create, deletecollection) then match
	// only when a name is known, as a list with the field selector
	// metadata.name=NAME.
	ResourceNames []string
	// Namespaces, if any, limit the rule to requests in these namespaces,
	// as a RoleBinding limits a Role: it then matches neither cluster-scoped
	// requests nor lists across namespaces. Empty means everywhere.
	Namespaces []string
	// NonResourceURLs are paths such as /healthz or /apis; one ending in
	// "*" matches every path it is a prefix of.
	NonResourceURLs []string
}

// Binding grants rules to users and groups, as an RBAC (Cluster)RoleBinding
// grants a role.
type Binding struct {
	Users  []string
	Groups []string
	Rules  []Rule
}

// RulesAuthorizer allows a request when a rule of a binding that names its
// user, or one of the user's groups, matches it; otherwise it has no
// opinion, so the request is denied unless a later authorizer allows it.
// Like RBAC, it only ever allows. Rules that cannot match what they seem
// to mean are an error.
func RulesAuthorizer(bindings ...Binding) (Authorizer, error) {
	var errs []error
	bindings = slices.Clone(bindings)
	for i, b := range bindings {
		bindings[i] = b.clone()
		if len(b.Users) == 0 && len(b.Groups) == 0 {
			errs = append(errs, fmt.Errorf("binding %d names no user or group", i))
		}
		for j, r := range b.Rules {
			if err := r.check(); err != nil {
				errs = append(errs, fmt.Errorf("binding %d, rule %d: %w", i, j, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("auth: rules: %w", err)
	}
	return rulesAuthorizer(bindings), nil
}

// rulesAuthorizer is what RulesAuthorizer returns: it can also list a
// user's rules (kubectl auth can-i --list).
type rulesAuthorizer []Binding

var (
	_ Authorizer   = rulesAuthorizer(nil)
	_ RuleResolver = rulesAuthorizer(nil)
)

// Authorize allows a when a rule of a binding of its user matches it, and
// has no opinion otherwise.
func (bindings rulesAuthorizer) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	for _, b := range bindings {
		if !b.binds(a.User) {
			continue
		}
		for _, r := range b.Rules {
			if r.allows(a) {
				return DecisionAllow, "", nil
			}
		}
	}
	return DecisionNoOpinion, "", nil
}

// RulesFor lists the rules of the bindings that name user or one of its
// groups and apply in namespace, as RBAC lists the rules of a user's
// cluster role bindings and of its role bindings in the namespace. The
// list is complete.
func (bindings rulesAuthorizer) RulesFor(_ context.Context, user User, namespace string) ([]Rule, bool, error) {
	var rules []Rule
	for _, b := range bindings {
		if !b.binds(user) {
			continue
		}
		for _, r := range b.Rules {
			if len(r.Namespaces) == 0 || slices.Contains(r.Namespaces, "*") || slices.Contains(r.Namespaces, namespace) {
				r = Binding{Rules: []Rule{r}}.clone().Rules[0] // the caller's to keep
				r.Namespaces = nil
				rules = append(rules, r)
			}
		}
	}
	return rules, false, nil
}

// clone copies every list, so that the caller's changes do not reach the
// authorizer.
func (b Binding) clone() Binding {
	b.Users, b.Groups, b.Rules = slices.Clone(b.Users), slices.Clone(b.Groups), slices.Clone(b.Rules)
	for i, r := range b.Rules {
		b.Rules[i] = Rule{
			Verbs: slices.Clone(r.Verbs), APIGroups: slices.Clone(r.APIGroups), Resources: slices.Clone(r.Resources),
			ResourceNames: slices.Clone(r.ResourceNames), Namespaces: slices.Clone(r.Namespaces), NonResourceURLs: slices.Clone(r.NonResourceURLs),
		}
	}
	return b
}

// binds says whether b names u, or one of u's groups.
func (b Binding) binds(u User) bool {
	if slices.Contains(b.Users, u.Name) {
		return true
	}
	for _, g := range u.Groups {
		if slices.Contains(b.Groups, g) {
			return true
		}
	}
	return false
}

// check refuses what Kubernetes' RBAC validation refuses, and "*" inside
// a path.
func (r Rule) check() error {
	if len(r.Verbs) == 0 {
		return errors.New("no verbs")
	}
	if len(r.NonResourceURLs) > 0 {
		if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 || len(r.Namespaces) > 0 {
			return errors.New("rules cannot apply to both regular resources and non-resource URLs")
		}
		for _, u := range r.NonResourceURLs {
			if err := pathpattern.Check(u); err != nil {
				return fmt.Errorf("non-resource URL %w", err)
			}
		}
		return nil
	}
	switch {
	case len(r.APIGroups) == 0:
		return errors.New("no API groups (\"\" is the core group, \"*\" any) and no non-resource URLs")
	case len(r.Resources) == 0:
		return errors.New("no resources (\"*\" is any)")
	}
	return nil
}

// allows matches a request as RBAC's RuleAllows does.
func (r Rule) allows(a Attributes) bool {
	if !matchesAny(r.Verbs, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		for _, u := range r.NonResourceURLs {
			if u == "*" || pathpattern.Match(u, a.Path) {
				return true
			}
		}
		return false
	}
	if len(r.Resources) == 0 || !matchesAny(r.APIGroups, a.APIGroup) || !r.resourceMatches(a.Resource, a.Subresource) {
		return false
	}
	if len(r.ResourceNames) > 0 && !slices.Contains(r.ResourceNames, a.Name) {
		return false
	}
	return len(r.Namespaces) == 0 || slices.Contains(r.Namespaces, "*") || a.Namespace != "" && slices.Contains(r.Namespaces, a.Namespace)
}

// resourceMatches says whether one of r's resources names resource (with
// its subresource), as RBAC's ResourceMatches does.
func (r Rule) resourceMatches(resource, subresource string) bool {
	combined := resource
	if subresource != "" {
		combined += "/" + subresource
	}
	for _, rr := range r.Resources {
		switch {
		case rr == "*", rr == combined:
			return true
		case subresource != "" && strings.HasPrefix(rr, "*/") && rr[2:] == subresource:
			return true
		}
	}
	return false
}

// matchesAny says whether patterns hold s or "*".
func matchesAny(patterns []string, s string) bool {
	return slices.Contains(patterns, "*") || slices.Contains(patterns, s)
}
