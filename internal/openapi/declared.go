package openapi

import (
	"reflect"

	"github.com/kapi-dev/kapi/validation"
)

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
