package kinds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/internal/jsonpath"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

// Rules checks what a version's schema cannot by itself: its
// x-kubernetes-validations (CEL) rules. old is nil on create; on update
// the rules that name oldSelf see it. Package validation/cel makes them.
type Rules interface {
	Validate(obj, old any) []*validation.Error
}

// Option configures Register.
type Option func(*options)

type options struct {
	rules func(*schema.Schema) (Rules, error)
}

// WithRules has each version's x-kubernetes-validations rules compiled by
// compile when the kind is registered (an error fails Register), and
// checked on every write after the schema's own validation, their errors
// joining the same 422 Invalid. Without it, the server's rule engine
// (apiserver.WithRuleEngine) checks and compiles them if it is a
// schema.RuleCompiler, as validation/cel's engine is: a rule
// kube-apiserver would refuse a CustomResourceDefinition for (one that
// does not compile, or cannot be typed) fails Register with its
// messages. With neither, the rules are not evaluated.
func WithRules(compile func(s *schema.Schema) (Rules, error)) Option {
	return func(o *options) { o.rules = compile }
}

// ErrDefinition is the error of a Definition that cannot be served.
var ErrDefinition = errors.New("kinds: invalid definition")

// Register serves the kind def describes on srv, before or while srv
// serves. A kind registered before with the same Group and Kind is
// replaced (its watches end; its objects stay). Once Register returns
// while serving, the kind is in discovery and OpenAPI and every verb
// works on it.
func Register(srv *apiserver.Server, def Definition, opts ...Option) error {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if rc, ok := srv.RuleEngine().(schema.RuleCompiler); ok && o.rules == nil {
		o.rules = func(s *schema.Schema) (Rules, error) { return checkedRules(rc, s) }
	}
	rs, err := resources(def, &o)
	if err != nil {
		return err
	}
	return apiserver.RegisterKind(srv, rs...)
}

// checkedRules are the compiled rules of s, a schema of a kind
// registered from Go, which nothing has checked as a
// CustomResourceDefinition's are: a rule kube-apiserver would refuse the
// definition for (one that does not compile, or that cannot be typed)
// refuses the kind, with kube-apiserver's messages, rather than fail each
// write or be left out.
func checkedRules(rc schema.RuleCompiler, s *schema.Schema) (Rules, error) {
	if errs := rc.CheckRules(s, "openAPIV3Schema"); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	return rc.CompileRules(s), nil
}

// Remove stops serving a kind: its resources answer 404, discovery and
// OpenAPI no longer list it, and its watches end. Its objects stay in
// storage: package crd deletes them first, as kube-apiserver's
// customresourcecleanup finalizer does.
func Remove(srv *apiserver.Server, group, kind string) error { return srv.Remove(group, kind) }

// resources are the registrations of def's versions.
func resources(def Definition, o *options) ([]apiserver.Resource[Object], error) {
	if def.ListKind != "" && def.ListKind != def.Kind+"List" {
		return nil, fmt.Errorf("%w: %s: list kind %q: only %sList is served", ErrDefinition, def.Kind, def.ListKind, def.Kind)
	}
	var storage *Version
	for i := range def.Versions {
		if def.Versions[i].Storage {
			storage = &def.Versions[i]
		}
	}
	if storage == nil {
		return nil, fmt.Errorf("%w: %s: no storage version", ErrDefinition, def.Kind)
	}
	var rs []apiserver.Resource[Object]
	for i := range def.Versions {
		v := &def.Versions[i]
		sh, err := newShape(def.Kind, v.Schema)
		if err != nil {
			return nil, err
		}
		r := apiserver.Resource[Object]{
			Group: def.Group, Version: v.Name, Kind: def.Kind, Plural: def.Plural, Singular: def.Singular,
			Namespaced: def.Namespaced, ShortNames: def.ShortNames, Categories: def.Categories,
			Status: v.Status, Storage: v.Storage, NotServed: !v.Served,
			Deprecated: v.Deprecated, DeprecationWarning: v.DeprecationWarning,
			Default: sh.setDefaults,
			Shape:   sh,
			// Custom resources refuse unconditional updates
			// (apiextensions-apiserver's customResourceStrategy).
			UpdateNeedsResourceVersion: true,
		}
		if def.Terminating != nil {
			r.RefuseCreate = refuseWhile(def.Terminating, def.Group, def.Plural)
		}
		if v.Scale != nil {
			r.Scale = &apiserver.ScalePaths{SpecReplicas: v.Scale.SpecReplicasPath, StatusReplicas: v.Scale.StatusReplicasPath, LabelSelector: v.Scale.LabelSelectorPath}
		}
		if r.Singular == "" {
			r.Singular = strings.ToLower(def.Kind)
		}
		for _, f := range v.SelectableFields {
			r.SelectableFields = append(r.SelectableFields, stripDot(f))
		}
		if r.Columns, err = columns(v.PrinterColumns); err != nil {
			return nil, fmt.Errorf("%w: %s %s: %v", ErrDefinition, def.Kind, v.Name, err)
		}
		// Each version validates with its own schema and rules, as
		// kube-apiserver validates a custom resource in the version it
		// was sent in.
		validate, err := validator(sh, o)
		if err != nil {
			return nil, fmt.Errorf("%w: %s %s: %v", ErrDefinition, def.Kind, v.Name, err)
		}
		r.Validate, r.ValidateStatus = validate(v.Scale, true), validate(v.Scale, false)
		rs = append(rs, r)
	}
	return rs, nil
}

// refuseWhile refuses creates while terminating says so, with
// kube-apiserver's answer: a MethodNotSupported whose message it replaces.
func refuseWhile(terminating func() bool, group, plural string) func() error {
	return func() error {
		if !terminating() {
			return nil
		}
		e := apiserver.NewStatusError(http.StatusMethodNotAllowed, kapi.StatusReasonMethodNotAllowed,
			"create not allowed while custom resource definition is terminating")
		e.Status.Details = &kapi.StatusDetails{Group: group, Kind: plural}
		return e
	}
}

// validator is a version's validation: its schema's, with ratcheting on
// update, then the scale subresource's fields' (scale's; the spec's too
// unless of a status write), then its rules'.
func validator(sh *shape, o *options) (func(scale *Scale, spec bool) func(ctx context.Context, obj, old *Object) apiserver.FieldErrors, error) {
	var rules Rules
	if o.rules != nil && sh.schema != nil {
		var err error
		if rules, err = o.rules(sh.schema); err != nil {
			return nil, err
		}
	}
	return func(scale *Scale, spec bool) func(ctx context.Context, obj, old *Object) apiserver.FieldErrors {
		// Even without a schema, rules or scale: an object of another
		// kind is refused.
		return func(_ context.Context, obj, old *Object) apiserver.FieldErrors {
			return validate(sh, rules, scale, spec, obj, old)
		}
	}, nil
}

func validate(sh *shape, rules Rules, scale *Scale, spec bool, obj, old *Object) apiserver.FieldErrors {
	body := obj.schemaView()
	var oldBody any
	var errs []*validation.Error
	switch {
	case !sh.own(obj):
		// kube-apiserver's customResourceValidator checks the kind first
		// and, when it is another, nothing else of the schema's or the
		// scale's: the rules see the object undefaulted.
		errs = []*validation.Error{invalid("kind", obj.Kind, "must be "+sh.kind)}
		scale = nil
	case sh.schema == nil:
	case old == nil:
		errs = sh.schema.Validate(body)
	default:
		oldBody = old.schemaView()
		errs = sh.schema.ValidateUpdate(body, oldBody)
	}
	if !spec {
		// kube-apiserver validates a status write with the schema of
		// status as the root: its messages name fields from there.
		for _, e := range errs {
			if rel, ok := strings.CutPrefix(e.Field, "status."); ok {
				e.Detail = strings.Replace(e.Detail, e.Field+" in body", rel+" in body", 1)
			}
		}
	}
	errs = append(errs, scale.check(body, spec)...)
	if rules != nil {
		// The rules see the whole object, as kube-apiserver's do:
		// self.metadata.name at the root.
		var oldView any
		if old != nil {
			oldView = old.ruleView()
		}
		errs = schema.ValidateRules(rules, errs, obj.ruleView(), oldView)
	}
	out := make(apiserver.FieldErrors, len(errs))
	for i, e := range errs {
		out[i] = &apiserver.FieldError{Type: e.Type, Field: e.Field, BadValue: e.BadValue, Detail: e.Detail}
	}
	return out
}

// columns are the Table columns of a version's additionalPrinterColumns;
// without any, Age, as kube-apiserver shows a custom resource.
func columns(pcs []PrinterColumn) ([]apiserver.Column[Object], error) {
	if len(pcs) == 0 {
		pcs = []PrinterColumn{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
	}
	var cols []apiserver.Column[Object]
	for _, pc := range pcs {
		p, err := jsonpath.Parse(pc.JSONPath)
		if err != nil {
			return nil, fmt.Errorf("printer column %q: %v", pc.Name, err)
		}
		withMeta := strings.HasPrefix(pc.JSONPath, ".metadata")
		typ := pc.Type
		cols = append(cols, apiserver.Column[Object]{
			Name: pc.Name, Type: pc.Type, Format: pc.Format, Description: pc.Description, Priority: pc.Priority,
			Value: func(o *Object) any { return cell(p.Find(o.value(withMeta)), typ) },
		})
	}
	return cols, nil
}

// cell is the value of a column of type typ from what its path found, as
// kube-apiserver's table convertor makes it: the first value only; nil
// (kubectl prints <none>) when nothing, or when the value is not of the
// column's type; a string column shows any value as text.
func cell(found []any, typ string) any {
	if len(found) == 0 || found[0] == nil {
		return nil
	}
	switch v := found[0].(type) {
	case string:
		switch typ {
		case "string":
			return v
		case "date":
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return "<invalid>"
			}
			return t
		}
	case int64:
		switch typ {
		case "integer":
			return v
		case "number":
			return float64(v)
		}
	case float64:
		switch typ {
		case "integer":
			return int64(v)
		case "number":
			return v
		}
	case bool:
		if typ == "boolean" {
			return v
		}
	}
	if typ == "string" {
		return text(found[0])
	}
	return nil
}

// text is a value as a string column shows it: a string as it is, anything
// else as JSON.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, _ := json.Marshal(v)
	return string(data)
}
