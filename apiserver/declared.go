package apiserver

import (
	"context"

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
			errs = append(errs, &FieldError{Type: e.Type, Field: e.Field, BadValue: e.BadValue, Detail: e.Detail})
		}
		if own != nil {
			errs = append(errs, own(ctx, obj, old)...)
		}
		return errs
	}
}
