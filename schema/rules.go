package schema

import (
	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

// A RuleCompiler compiles the x-kubernetes-validations rules of a schema,
// which are CEL and so need an environment this module does not carry.
// Package github.com/kapi-dev/kapi/validation/cel has one; its Engine is
// also the validation.RuleEngine given to apiserver.WithRuleEngine, so a
// request path finds it there by type assertion.
type RuleCompiler interface {
	// CompileRules compiles every rule of s, the openAPIV3Schema of a
	// resource, once for all the objects it validates. A rule that does
	// not compile fails each object it applies to, as in kube-apiserver;
	// CheckRules is how a CustomResourceDefinition is refused for it.
	// The result is nil when s has no rules.
	CompileRules(s *Schema) RuleSet
	// CheckRules is what kube-apiserver requires of the rules of a
	// CustomResourceDefinition's schema, with its messages: that each
	// compiles to a bool (its messageExpression to a string), that the
	// estimated cost of each and of all is within budget, and that oldSelf
	// is read only where an old value can be found. path is where s is
	// (spec.versions[0].schema.openAPIV3Schema). Check should pass first:
	// kube-apiserver compiles rules only in a structural schema.
	CheckRules(s *Schema, path string) []*validation.Error
}

// A RuleSet is the compiled rules of a schema. It is safe for concurrent
// use.
type RuleSet interface {
	// Validate evaluates the rules on obj, pruned and defaulted, with old
	// its value before an update (nil on create), as kube-apiserver does
	// after schema validation: transition rules run only where an old
	// value exists, and with old given, a rule that fails on a value the
	// update left unchanged is ratcheted away. The errors have the rules'
	// messages, reasons and field paths, sorted by field path.
	Validate(obj, old any) []*validation.Error
}

// ValidateRules appends to errs, the errors Validate or ValidateUpdate
// gave obj, those of rules on obj (old is nil on create), as
// kube-apiserver does after schema validation: unless errs has an error
// that makes the rules' view of the object unreliable (an unsupported
// value, a missing required field, a value too long, too many items, a
// value of the wrong type), in which case the rules do not run and one
// error says so. A nil rules leaves errs as they are.
func ValidateRules(rules RuleSet, errs []*validation.Error, obj, old any) []*validation.Error {
	if rules == nil {
		return errs
	}
	for _, e := range errs {
		switch e.Type {
		case kapi.CauseTypeFieldValueNotSupported, kapi.CauseTypeFieldValueRequired, kapi.CauseTypeFieldValueTooLong,
			kapi.CauseTypeTooMany, kapi.CauseTypeFieldValueTypeInvalid:
			return append(errs, &validation.Error{Type: kapi.CauseTypeFieldValueInvalid, Field: "<nil>", BadValue: nil,
				Detail: "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"})
		}
	}
	return append(errs, rules.Validate(obj, old)...)
}
