package crd

import (
	"context"
	"errors"
	"slices"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/kinds"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

// ErrWebhookConversion refuses a CustomResourceDefinition whose versions
// convert through a webhook: kapi converts custom resources with the
// strategy None only, so far.
var ErrWebhookConversion = errors.New("kapi does not do webhook conversion yet: use the strategy None")

// controllerUser is who the controller's writes are made as, for
// admission and authorization hooks: kube-apiserver's own loopback user.
var controllerUser = apiserver.User{Name: "system:apiserver", Groups: []string{"system:authenticated", "system:masters"}}

// Serve makes s serve apiextensions.k8s.io/v1 CustomResourceDefinitions
// (kubectl get crd), and serve the kind each defines while it exists: see
// the package documentation. Call it, as apiserver.Register, before s
// starts serving.
func Serve(s *apiserver.Server) error { return serve(s, nil) }

// ServeWith is Serve with each kind served by kinds.Register with opts
// (kinds.WithRules has x-kubernetes-validations rules evaluated), for
// apiservertest.New, crdtest.Environment.Register and the like.
func ServeWith(opts ...kinds.Option) func(*apiserver.Server) error {
	return func(s *apiserver.Server) error { return serve(s, opts) }
}

func serve(s *apiserver.Server, opts []kinds.Option) error {
	// The server's rule engine, if it compiles schemas' rules (validation/cel
	// does), refuses a definition whose rules do not compile, as
	// kube-apiserver does; the kinds served find it themselves.
	rules, _ := s.RuleEngine().(schema.RuleCompiler)
	err := apiserver.Register(s, apiserver.Resource[CustomResourceDefinition]{
		Group: Group, Version: Version, Kind: "CustomResourceDefinition",
		Plural: "customresourcedefinitions", Singular: "customresourcedefinition",
		ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
		Status:  true,
		Default: SetDefaults,
		// As apiextensions-apiserver's strategy for definitions.
		UpdateNeedsResourceVersion: true,
		Validate: func(_ context.Context, c, old *CustomResourceDefinition) apiserver.FieldErrors {
			errs := validate(c, old, rules)
			if conv := c.Spec.Conversion; conv != nil && conv.Strategy == WebhookConverter {
				errs = append(errs, &validation.Error{Type: kapi.CauseTypeFieldValueForbidden, Field: "spec.conversion.strategy", Detail: ErrWebhookConversion.Error()})
			}
			return fieldErrors(errs)
		},
		ValidateStatus: func(_ context.Context, c, _ *CustomResourceDefinition) apiserver.FieldErrors {
			return fieldErrors(ValidateStatus(c))
		},
		OnDelete: markForCleanup,
	})
	if err != nil {
		return err
	}
	if rules != nil {
		// Checked already, as each definition was validated: compiled
		// only (a later WithRules in opts wins).
		compiled := kinds.WithRules(func(sc *schema.Schema) (kinds.Rules, error) { return rules.CompileRules(sc), nil })
		opts = append([]kinds.Option{compiled}, opts...)
	}
	// As kube-apiserver's apiextensions-controllers, which write through
	// its loopback client: their field manager is kube-apiserver.
	return s.RunController("apiextensions-controllers", controllerUser, newController(s, opts).run, apiserver.ControllerUserAgent("kube-apiserver"))
}

// markForCleanup is what a first DELETE does to a CustomResourceDefinition,
// as in kube-apiserver: the cleanup finalizer holds it while the controller
// deletes the objects of its kind. It sets the deletionTimestamp itself: the
// REST Delete of definitions in apiextensions-apiserver (registry/
// customresourcedefinition/etcd.go) sets only it, where the generic store
// would also set deletionGracePeriodSeconds 0 and bump the generation.
func markForCleanup(c *CustomResourceDefinition) error {
	now := kapi.Now()
	c.DeletionTimestamp = &now
	if !slices.Contains(c.Finalizers, CleanupFinalizer) {
		c.Finalizers = append(c.Finalizers, CleanupFinalizer)
	}
	setCondition(c, Condition{Type: Terminating, Status: kapi.ConditionTrue, Reason: "InstanceDeletionPending",
		Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"})
	return nil
}

// setCondition sets a condition, its transition time only when its status
// changes, and says whether anything changed.
func setCondition(c *CustomResourceDefinition, cond Condition) bool {
	for i := range c.Status.Conditions {
		old := &c.Status.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			return false
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		} else {
			cond.LastTransitionTime = kapi.Now()
		}
		*old = cond
		return true
	}
	cond.LastTransitionTime = kapi.Now()
	c.Status.Conditions = append(c.Status.Conditions, cond)
	return true
}

// removeCondition removes a condition, and says whether there was one.
func removeCondition(c *CustomResourceDefinition, typ string) bool {
	n := len(c.Status.Conditions)
	c.Status.Conditions = slices.DeleteFunc(c.Status.Conditions, func(cond Condition) bool { return cond.Type == typ })
	return len(c.Status.Conditions) != n
}

func condition(c *CustomResourceDefinition, typ string) *Condition {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == typ {
			return &c.Status.Conditions[i]
		}
	}
	return nil
}

func fieldErrors(errs []*validation.Error) apiserver.FieldErrors {
	if len(errs) == 0 {
		return nil
	}
	out := make(apiserver.FieldErrors, len(errs))
	for i, e := range errs {
		out[i] = &apiserver.FieldError{Type: e.Type, Field: e.Field, BadValue: e.BadValue, Detail: e.Detail}
	}
	return out
}
