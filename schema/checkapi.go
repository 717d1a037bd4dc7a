package schema

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/validation"
)

// apiChecker is kube's ValidateCustomResourceDefinitionOpenAPISchema
// without CEL: the keywords a CustomResourceDefinition refuses and the
// consistency of the x-kubernetes-* extensions.
type apiChecker struct {
	allowDefaults  bool
	defaultsReason string
	insideMeta     bool
}

var openAPITypes = []string{"array", "boolean", "integer", "number", "object", "string"}

var ruleReasons = []string{"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"}

func (c apiChecker) check(s *Schema, path string, isRoot bool) []*validation.Error {
	if s == nil {
		return nil
	}
	var errs []*validation.Error
	if s.Type != "" && !slices.Contains(openAPITypes, s.Type) {
		errs = append(errs, notSupported(path+".type", s.Type, openAPITypes))
	}
	if s.Default != nil && !c.allowDefaults {
		detail := "must not be set"
		if c.defaultsReason != "" {
			detail += " " + c.defaultsReason
		}
		errs = append(errs, forbidden(path+".default", detail))
	}
	if s.ID != "" {
		errs = append(errs, forbidden(path+".id", "id is not supported"))
	}
	if s.HasAdditionalItems {
		errs = append(errs, forbidden(path+".additionalItems", "additionalItems is not supported"))
	}
	if len(s.PatternProperties) > 0 {
		errs = append(errs, forbidden(path+".patternProperties", "patternProperties is not supported"))
	}
	if len(s.Definitions) > 0 {
		errs = append(errs, forbidden(path+".definitions", "definitions is not supported"))
	}
	if s.Dependencies != nil {
		errs = append(errs, forbidden(path+".dependencies", "dependencies is not supported"))
	}
	if s.Ref != nil {
		errs = append(errs, forbidden(path+".$ref", "$ref is not supported"))
	}
	if s.Type == "null" {
		errs = append(errs, forbidden(path+".type", "type cannot be set to null, use nullable as an alternative"))
	}
	if len(s.ItemsList) > 0 {
		errs = append(errs, forbidden(path+".items", "items must be a schema object and not an array"))
	}
	if c.insideMeta && s.EmbeddedResource {
		errs = append(errs, forbidden(path+".x-kubernetes-embedded-resource", "must not be used inside of resource meta"))
	}
	if s.UniqueItems {
		errs = append(errs, forbidden(path+".uniqueItems", "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
	}
	if s.HasAdditionalProperties {
		if len(s.Properties) != 0 && (!s.AllowsAdditional || s.AdditionalProperties != nil) {
			errs = append(errs, forbidden(path+".additionalProperties", "additionalProperties and properties are mutual exclusive"))
		}
		sub := c
		if c.insideMeta {
			sub.allowDefaults, sub.defaultsReason = false, "inside additionalProperties applying to object metadata"
		}
		errs = append(errs, sub.check(s.AdditionalProperties, path+".additionalProperties", false)...)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		sub := c
		if (isRoot || s.EmbeddedResource) && isMetaField(k) {
			sub.insideMeta = true
			if isRoot {
				sub.allowDefaults, sub.defaultsReason = false, "in top-level "+k
			}
		}
		errs = append(errs, sub.check(s.Properties[k], propPath(path, k), false)...)
	}
	errs = append(errs, c.check(s.Not, path+".not", false)...)
	for i, sub := range s.AllOf {
		errs = append(errs, c.check(sub, path+".allOf["+strconv.Itoa(i)+"]", false)...)
	}
	for i, sub := range s.OneOf {
		errs = append(errs, c.check(sub, path+".oneOf["+strconv.Itoa(i)+"]", false)...)
	}
	for i, sub := range s.AnyOf {
		errs = append(errs, c.check(sub, path+".anyOf["+strconv.Itoa(i)+"]", false)...)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Definitions)) {
		errs = append(errs, c.check(s.Definitions[k], path+".definitions["+k+"]", false)...)
	}
	errs = append(errs, c.check(s.Items, path+".items", false)...)
	for i, sub := range s.ItemsList {
		errs = append(errs, c.check(sub, path+".items["+strconv.Itoa(i)+"]", false)...)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		errs = append(errs, c.check(s.Dependencies[k].Schema, path+".dependencies["+k+"]", false)...)
	}
	errs = append(errs, s.extensionErrors(path)...)
	return errs
}

// extensionErrors checks the x-kubernetes-* extensions of one schema.
func (s *Schema) extensionErrors(path string) []*validation.Error {
	var errs []*validation.Error
	if s.PreserveUnknownFields != nil && !*s.PreserveUnknownFields {
		errs = append(errs, invalid(path+".x-kubernetes-preserve-unknown-fields", false, "must be true or undefined"))
	}
	if s.MapType != nil && s.Type != "object" {
		if s.Type == "" {
			errs = append(errs, requiredWhy(path+".type", "must be object if x-kubernetes-map-type is specified"))
		} else {
			errs = append(errs, invalid(path+".type", s.Type, "must be object if x-kubernetes-map-type is specified"))
		}
	}
	if s.MapType != nil && *s.MapType != MapAtomic && *s.MapType != MapGranular {
		errs = append(errs, notSupported(path+".x-kubernetes-map-type", *s.MapType, []string{MapAtomic, MapGranular}))
	}
	if s.ListType != nil && s.Type != "array" {
		if s.Type == "" {
			errs = append(errs, requiredWhy(path+".type", "must be array if x-kubernetes-list-type is specified"))
		} else {
			errs = append(errs, invalid(path+".type", s.Type, "must be array if x-kubernetes-list-type is specified"))
		}
	} else if s.ListType != nil && *s.ListType == ListSet && s.Items != nil {
		switch is := s.Items; is.Type {
		case "array":
			if is.ListType != nil && *is.ListType != ListAtomic {
				errs = append(errs, invalid(path+".items.x-kubernetes-list-type", *is.ListType, "must be atomic as item of a list with x-kubernetes-list-type=set"))
			}
		case "object":
			if is.MapType == nil || *is.MapType != MapAtomic {
				var shown any // kube shows the items' list type here
				if is.ListType != nil {
					shown = *is.ListType
				}
				errs = append(errs, invalid(path+".items.x-kubernetes-map-type", shown, "must be atomic as item of a list with x-kubernetes-list-type=set"))
			}
		}
	}
	if s.ListType != nil && *s.ListType != ListAtomic && *s.ListType != ListSet && *s.ListType != ListMap {
		errs = append(errs, notSupported(path+".x-kubernetes-list-type", *s.ListType, []string{ListAtomic, ListSet, ListMap}))
	}
	if len(s.ListMapKeys) > 0 {
		if s.ListType == nil {
			errs = append(errs, requiredWhy(path+".x-kubernetes-list-type", "must be map if x-kubernetes-list-map-keys is non-empty"))
		} else if *s.ListType != ListMap {
			errs = append(errs, invalid(path+".x-kubernetes-list-type", *s.ListType, "must be map if x-kubernetes-list-map-keys is non-empty"))
		}
	}
	if s.ListType != nil && *s.ListType == ListMap {
		if len(s.ListMapKeys) == 0 {
			errs = append(errs, requiredWhy(path+".x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"))
		}
		if s.Items == nil && len(s.ItemsList) == 0 {
			errs = append(errs, requiredWhy(path+".items", "must have a schema if x-kubernetes-list-type is map"))
		}
		if s.Items == nil && len(s.ItemsList) > 0 {
			errs = append(errs, invalid(path+".items", s.ItemsList, "must only have a single schema if x-kubernetes-list-type is map"))
		}
		if s.Items != nil && s.Items.Type != "object" {
			errs = append(errs, invalid(path+".items.type", s.Items.Type, "must be object if parent array's x-kubernetes-list-type is map"))
		}
		if s.Items != nil && s.Items.Type == "object" {
			seen := map[string]bool{}
			for _, k := range s.ListMapKeys {
				if p, ok := s.Items.Properties[k]; ok {
					if p.Type == "array" || p.Type == "object" {
						errs = append(errs, invalid(propPath(path+".items", k)+".type", s.Items.Type, "must be a scalar type if parent array's x-kubernetes-list-type is map"))
					}
				} else {
					errs = append(errs, invalid(path+".x-kubernetes-list-map-keys", s.ListMapKeys, "entries must all be names of item properties"))
				}
				if seen[k] {
					errs = append(errs, invalid(path+".x-kubernetes-list-map-keys", s.ListMapKeys, "must not contain duplicate entries"))
				}
				seen[k] = true
			}
		}
	}
	if s.Items != nil && s.ListType != nil && (*s.ListType == ListSet || *s.ListType == ListMap) {
		if s.Items.Nullable {
			errs = append(errs, forbidden(path+".items.nullable", "cannot be nullable when x-kubernetes-list-type is "+*s.ListType))
		}
		if *s.ListType == ListMap {
			for _, k := range s.ListMapKeys {
				p, ok := s.Items.Properties[k]
				if !ok {
					continue
				}
				if !slices.Contains(s.Items.Required, k) && p.Default == nil {
					errs = append(errs, requiredWhy(propPath(path+".items", k)+".default", "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
				}
				if p.Nullable {
					errs = append(errs, forbidden(propPath(path+".items", k)+".nullable", "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
				}
			}
		}
	}
	for i, r := range s.Validations {
		at := path + ".x-kubernetes-validations[" + strconv.Itoa(i) + "]"
		rule, msg := strings.TrimSpace(r.Rule), strings.TrimSpace(r.Message)
		switch {
		case rule == "":
			errs = append(errs, requiredWhy(at+".rule", "rule is not specified"))
		case r.Message != "" && msg == "":
			errs = append(errs, invalid(at+".message", r.Message, "must be non-empty if specified"))
		case strings.ContainsAny(msg, "\n\r"):
			errs = append(errs, invalid(at+".message", r.Message, "must not contain line breaks"))
		case strings.ContainsAny(rule, "\n\r") && msg == "":
			errs = append(errs, requiredWhy(at+".message", "message must be specified if rule contains line breaks"))
		}
		if r.MessageExpression != "" && strings.TrimSpace(r.MessageExpression) == "" {
			errs = append(errs, requiredWhy(at+".messageExpression", "messageExpression must be non-empty if specified"))
		}
		if r.Reason != nil && !slices.Contains(ruleReasons, *r.Reason) {
			errs = append(errs, notSupported(at+".reason", *r.Reason, ruleReasons))
		}
		if r.FieldPath != "" && strings.TrimSpace(r.FieldPath) == "" {
			errs = append(errs, invalid(at+".fieldPath", r.FieldPath, "must be non-empty if specified"))
		}
		if strings.ContainsAny(r.FieldPath, "\n\r") {
			errs = append(errs, invalid(at+".fieldPath", r.FieldPath, "must not contain line breaks"))
		}
		if r.FieldPath != "" && !s.ValidFieldPath(r.FieldPath) {
			errs = append(errs, invalid(at+".fieldPath", r.FieldPath, "must be a valid path"))
		}
	}
	return errs
}
