package apiserver

import (
	"context"
	"reflect"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

// This file is the seam to package validation: the constraints a resource
// type declares in its struct tags are defaulted and checked on every write,
// before the resource's own Default and Validate, and shown in its OpenAPI
// schema.

// declare compiles the tags of the resource's type and puts their defaults
// and checks in front of the resource's own hooks.
func (r *resource) declare(engine validation.RuleEngine) error {
	var opts []validation.Option
	if engine != nil {
		opts = append(opts, validation.WithRuleEngine(engine))
	}
	schema, err := validation.For(r.typ, opts...)
	if err != nil || schema.Empty() {
		return err
	}
	own := r.defaulter
	r.defaulter = func(obj kapi.Object) {
		schema.Default(obj)
		if own != nil {
			own(obj)
		}
	}
	r.validate = declaredFirst(schema, r.validate)
	r.validateStatus = declaredFirst(schema, r.validateStatus)
	return nil
}

func declaredFirst(schema *validation.Schema, own func(ctx context.Context, obj, old kapi.Object) FieldErrors) func(ctx context.Context, obj, old kapi.Object) FieldErrors {
	return func(ctx context.Context, obj, old kapi.Object) FieldErrors {
		var oldValue any
		if old != nil {
			oldValue = old
		}
		var errs FieldErrors
		for _, e := range schema.Validate(obj, oldValue) {
			fe := &FieldError{Type: e.Type, Field: e.Field, BadValue: e.BadValue, Detail: e.Detail}
			if e.BadValue == (validation.OmittedValue{}) {
				fe.BadValue = omittedValue{}
			}
			errs = append(errs, fe)
		}
		if own != nil {
			errs = append(errs, own(ctx, obj, old)...)
		}
		return errs
	}
}

// declaredKeywords adds the constraints a struct field declares to its
// schema, and says whether the field is required (true) or optional
// (false) by declaration, or neither (nil).
func declaredKeywords(s *oapiSchema, sf reflect.StructField) (*bool, error) {
	rules, err := validation.RulesOf(sf)
	if err != nil || rules == nil {
		return nil, err
	}
	addKeywords(s, rules)
	if rules.Items != nil && s.Items != nil {
		addKeywords(s.Items, rules.Items)
	}
	if rules.Required || rules.Optional {
		return &rules.Required, nil
	}
	return nil, nil
}

func addKeywords(s *oapiSchema, rules *validation.Rules) {
	s.Enum = rules.Enum
	s.Minimum, s.ExclusiveMinimum = rules.Minimum, rules.ExclusiveMinimum
	s.Maximum, s.ExclusiveMaximum = rules.Maximum, rules.ExclusiveMaximum
	s.MinLength, s.MaxLength = count(rules.MinLength), count(rules.MaxLength)
	s.MinItems, s.MaxItems = count(rules.MinItems), count(rules.MaxItems)
	s.Pattern = rules.Pattern
	if rules.Format != "" {
		s.Format = rules.Format
	}
	if rules.Default != nil {
		s.Default = rules.Default
	}
	if rules.Rule != "" {
		s.XValidations = append(s.XValidations, oapiValidationRule{Rule: rules.Rule, Message: rules.RuleMessage})
	}
	if rules.Immutable {
		// How a CustomResourceDefinition says it (kubebuilder's
		// XValidation:rule="self == oldSelf").
		s.XValidations = append(s.XValidations, oapiValidationRule{Rule: "self == oldSelf", Message: "field is immutable"})
	}
}

func count(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

// oapiValidationRule is one entry of x-kubernetes-validations.
type oapiValidationRule struct {
	Rule    string `json:"rule"`
	Message string `json:"message,omitempty"`
}
