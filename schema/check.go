package schema

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

// Check says whether the schema may be a CustomResourceDefinition
// version's openAPIV3Schema, as kube-apiserver checks one that is created
// (apiextensions-apiserver's validation of the openAPIV3Schema, with its
// messages): it must be structural — a type everywhere a value is
// specified, allOf, anyOf, oneOf and not only restricting what properties
// and items already specify, metadata restricted to name and generateName
// — its defaults must be pruned and valid, its x-kubernetes-* extensions
// consistent, and keywords JSON Schema has but Kubernetes does not support
// (id, $ref, patternProperties, uniqueItems...) are refused. path is where
// the schema is in its CustomResourceDefinition
// (spec.versions[0].schema.openAPIV3Schema); every error names a field
// under it.
//
// Not checked here: what depends on the rest of the
// CustomResourceDefinition (the status subresource's restriction of the
// root) and the compilation and cost of x-kubernetes-validations rules,
// which need a CEL environment: RuleCompiler.CheckRules.
func (s *Schema) Check(path string) []*validation.Error {
	if s == nil {
		return nil
	}
	var errs []*validation.Error
	if s.Nullable {
		errs = append(errs, forbidden(path+".nullable", "nullable cannot be true at the root"))
	}
	var initErr *validation.Error
	if msg := s.unsupported(); msg != "" {
		initErr = invalid(path, "", msg)
	} else if structural := s.structuralErrors(path); len(structural) > 0 {
		errs = append(errs, structural...)
	} else {
		errs = append(errs, s.checkDefaults(path, s, false, true)...)
	}
	c := apiChecker{allowDefaults: true}
	errs = append(errs, c.check(s, path, true)...)
	if len(errs) == 0 && initErr != nil {
		errs = append(errs, initErr)
	}
	return errs
}

func forbidden(path, detail string) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueForbidden, Field: path, BadValue: "", Detail: detail}
}

func requiredWhy(path, detail string) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueRequired, Field: path, BadValue: "", Detail: detail}
}

func notSupported(path string, value any, supported []string) *validation.Error {
	quoted := make([]string, len(supported))
	for i, s := range supported {
		quoted[i] = strconv.Quote(s)
	}
	return &validation.Error{Type: kapi.CauseTypeFieldValueNotSupported, Field: path, BadValue: value,
		Detail: "supported values: " + strings.Join(quoted, ", ")}
}

func propPath(path, name string) string { return path + ".properties[" + name + "]" }

// unsupported is the first keyword that makes the schema impossible to
// read as a structural one, as kube's NewStructural refuses it ("" if
// none).
func (s *Schema) unsupported() string {
	if s == nil {
		return ""
	}
	switch {
	case s.ID != "":
		return "OpenAPIV3Schema 'id' is not supported"
	case s.SchemaURI != "":
		return "OpenAPIV3Schema 'schema' is not supported"
	case s.Ref != nil && *s.Ref != "":
		return "OpenAPIV3Schema '$ref' is not supported"
	case len(s.PatternProperties) > 0:
		return "OpenAPIV3Schema 'patternProperties' is not supported"
	case len(s.Dependencies) > 0:
		return "OpenAPIV3Schema 'dependencies' is not supported"
	case s.HasAdditionalItems:
		return "OpenAPIV3Schema 'additionalItems' is not supported"
	case len(s.Definitions) > 0:
		return "OpenAPIV3Schema 'definitions' is not supported"
	case len(s.ItemsList) > 0:
		return "OpenAPIV3Schema 'items' must be a schema, but is an array"
	case s.PreserveUnknownFields != nil && !*s.PreserveUnknownFields:
		return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
	}
	for _, sub := range s.children() {
		if msg := sub.unsupported(); msg != "" {
			return msg
		}
	}
	return ""
}

// children are the schemas directly under s.
func (s *Schema) children() []*Schema {
	var out []*Schema
	if s.Not != nil {
		out = append(out, s.Not)
	}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	if s.Items != nil {
		out = append(out, s.Items)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		out = append(out, s.Properties[k])
	}
	if s.AdditionalProperties != nil {
		out = append(out, s.AdditionalProperties)
	}
	return out
}

type level uint8

const (
	rootLevel level = iota
	itemLevel
	fieldLevel
)

// structuralErrors is kube's ValidateStructural, errors sorted by their
// text as kube sorts them.
func (s *Schema) structuralErrors(path string) []*validation.Error {
	errs := s.invariants(rootLevel, path)
	errs = append(errs, s.completeness(s, path, path)...)
	slices.SortStableFunc(errs, func(a, b *validation.Error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

func (s *Schema) invariants(lvl level, path string) []*validation.Error {
	if s == nil {
		return nil
	}
	var errs []*validation.Error
	if s.Type == "array" && s.Items == nil {
		errs = append(errs, requiredWhy(path+".items", "must be specified"))
	}
	errs = append(errs, s.Items.invariants(itemLevel, path+".items")...)
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		errs = append(errs, s.Properties[k].invariants(fieldLevel, propPath(path, k))...)
	}
	if s.HasAdditionalProperties {
		if lvl == rootLevel {
			errs = append(errs, forbidden(path+".additionalProperties", "must not be used at the root"))
		}
		errs = append(errs, s.AdditionalProperties.invariants(fieldLevel, path+".additionalProperties")...)
	}
	preserve := s.PreservesUnknownFields()
	if s.IntOrString && preserve {
		errs = append(errs, invalid(path+".x-kubernetes-preserve-unknown-fields", true, "must be false if x-kubernetes-int-or-string is true"))
	}
	if s.IntOrString && s.EmbeddedResource {
		errs = append(errs, invalid(path+".x-kubernetes-embedded-resource", true, "must be false if x-kubernetes-int-or-string is true"))
	}
	errs = append(errs, s.junctorInvariants(isIntOrStringAnyOf(s.AnyOf), len(s.AllOf) > 0 && isIntOrStringAnyOf(s.AllOf[0].AnyOf), lvl, path)...)

	checkMetadata := lvl == rootLevel || s.EmbeddedResource
	if s.EmbeddedResource && s.Type != "object" {
		if s.Type == "" {
			errs = append(errs, requiredWhy(path+".type", "must be object if x-kubernetes-embedded-resource is true"))
		} else {
			errs = append(errs, invalid(path+".type", s.Type, "must be object if x-kubernetes-embedded-resource is true"))
		}
	} else if s.Type == "" && !s.IntOrString && !preserve {
		switch lvl {
		case rootLevel:
			errs = append(errs, requiredWhy(path+".type", "must not be empty at the root"))
		case itemLevel:
			errs = append(errs, requiredWhy(path+".type", "must not be empty for specified array items"))
		case fieldLevel:
			errs = append(errs, requiredWhy(path+".type", "must not be empty for specified object fields"))
		}
	}
	if s.EmbeddedResource && s.HasAdditionalProperties {
		errs = append(errs, forbidden(path+".additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"))
	}
	if lvl == rootLevel && s.Type != "" && s.Type != "object" {
		errs = append(errs, invalid(path+".type", s.Type, "must be object at the root"))
	}
	if checkMetadata {
		for _, name := range []string{"kind", "apiVersion"} {
			if p, ok := s.Properties[name]; ok && p.Type != "string" {
				errs = append(errs, invalid(propPath(path, name)+".type", p.Type, "must be string"))
			}
		}
	}
	if meta, ok := s.Properties["metadata"]; ok {
		at := propPath(path, "metadata")
		if checkMetadata && meta.Type != "object" {
			errs = append(errs, invalid(at+".type", meta.Type, "must be object"))
		}
		if lvl == rootLevel && !meta.onlyNames() {
			errs = append(errs, forbidden(at, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
		}
	}
	if s.EmbeddedResource && !preserve && len(s.Properties) == 0 {
		errs = append(errs, requiredWhy(path+".properties", "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
	}
	return errs
}

// onlyNames says whether a root's metadata schema restricts nothing but
// name and generateName (and says it is an object).
func (s *Schema) onlyNames() bool {
	c := *s
	_, name := c.Properties["name"]
	_, generateName := c.Properties["generateName"]
	if (name && generateName && len(c.Properties) == 2) || ((name || generateName) && len(c.Properties) == 1) {
		c.Properties = nil
	}
	c.Type, c.Default, c.set, c.walk = "", nil, 0, 0
	return reflect.DeepEqual(c, Schema{})
}

// isIntOrStringAnyOf says whether a list of schemas is the anyOf of
// integer and string that int-or-string allows.
func isIntOrStringAnyOf(l []*Schema) bool {
	if len(l) != 2 {
		return false
	}
	for i, t := range []string{"integer", "string"} {
		got := *l[i]
		got.set, got.walk = 0, 0
		if !reflect.DeepEqual(got, Schema{Type: t}) {
			return false
		}
	}
	return true
}

// junctorInvariants checks the allOf, anyOf, oneOf and not of a schema
// and its pattern.
func (s *Schema) junctorInvariants(skipAnyOf, skipFirstAllOfAnyOf bool, lvl level, path string) []*validation.Error {
	var errs []*validation.Error
	if !skipAnyOf {
		for i, sub := range s.AnyOf {
			errs = append(errs, sub.nestedInvariants(false, lvl, path+".anyOf["+strconv.Itoa(i)+"]")...)
		}
	}
	for i, sub := range s.AllOf {
		errs = append(errs, sub.nestedInvariants(skipFirstAllOfAnyOf && i == 0, lvl, path+".allOf["+strconv.Itoa(i)+"]")...)
	}
	for i, sub := range s.OneOf {
		errs = append(errs, sub.nestedInvariants(false, lvl, path+".oneOf["+strconv.Itoa(i)+"]")...)
	}
	if s.Not != nil {
		errs = append(errs, s.Not.nestedInvariants(false, lvl, path+".not")...)
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			errs = append(errs, invalid(path+".pattern", s.Pattern, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)))
		}
	}
	return errs
}

// nestedInvariants checks a schema under allOf, anyOf, oneOf or not: it
// may only restrict values, not specify them.
func (s *Schema) nestedInvariants(skipAnyOf bool, lvl level, path string) []*validation.Error {
	if s == nil {
		return nil
	}
	errs := s.junctorInvariants(skipAnyOf, false, lvl, path)
	errs = append(errs, s.Items.nestedInvariants(false, lvl, path+".items")...)
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		errs = append(errs, s.Properties[k].nestedInvariants(false, fieldLevel, propPath(path, k))...)
	}
	if s.Type != "" {
		errs = append(errs, forbidden(path+".type", "must be empty to be structural"))
	}
	if s.AdditionalProperties != nil || (s.HasAdditionalProperties && s.AllowsAdditional) {
		errs = append(errs, forbidden(path+".additionalProperties", "must be undefined to be structural"))
	}
	if s.Default != nil {
		errs = append(errs, forbidden(path+".default", "must be undefined to be structural"))
	}
	if s.Title != "" {
		errs = append(errs, forbidden(path+".title", "must be empty to be structural"))
	}
	if s.Description != "" {
		errs = append(errs, forbidden(path+".description", "must be empty to be structural"))
	}
	if s.Nullable {
		errs = append(errs, forbidden(path+".nullable", "must be false to be structural"))
	}
	if s.PreservesUnknownFields() {
		errs = append(errs, forbidden(path+".x-kubernetes-preserve-unknown-fields", "must be false to be structural"))
	}
	if s.EmbeddedResource {
		errs = append(errs, forbidden(path+".x-kubernetes-embedded-resource", "must be false to be structural"))
	}
	if s.IntOrString {
		errs = append(errs, forbidden(path+".x-kubernetes-int-or-string", "must be false to be structural"))
	}
	if len(s.ListMapKeys) > 0 {
		errs = append(errs, forbidden(path+".x-kubernetes-list-map-keys", "must be empty to be structural"))
	}
	if s.ListType != nil {
		errs = append(errs, forbidden(path+".x-kubernetes-list-type", "must be undefined to be structural"))
	}
	if s.MapType != nil {
		errs = append(errs, forbidden(path+".x-kubernetes-map-type", "must be undefined to be structural"))
	}
	if len(s.Validations) > 0 {
		errs = append(errs, forbidden(path+".x-kubernetes-validations", "must be empty to be structural"))
	}
	if _, ok := s.Properties["metadata"]; ok {
		errs = append(errs, forbidden(propPath(path, "metadata"), "must not be specified in a nested context"))
	}
	return errs
}

// completeness checks that what the junctors under v name is specified by
// the structural schema s (kube's validateStructuralCompleteness).
func (v *Schema) completeness(s *Schema, sPath, vPath string) []*validation.Error {
	var errs []*validation.Error
	if v.Not != nil {
		errs = append(errs, v.Not.nestedCompleteness(s, sPath, vPath+".not")...)
	}
	for i, sub := range v.AllOf {
		errs = append(errs, sub.nestedCompleteness(s, sPath, vPath+".allOf["+strconv.Itoa(i)+"]")...)
	}
	for i, sub := range v.AnyOf {
		errs = append(errs, sub.nestedCompleteness(s, sPath, vPath+".anyOf["+strconv.Itoa(i)+"]")...)
	}
	for i, sub := range v.OneOf {
		errs = append(errs, sub.nestedCompleteness(s, sPath, vPath+".oneOf["+strconv.Itoa(i)+"]")...)
	}
	return errs
}

func (v *Schema) nestedCompleteness(s *Schema, sPath, vPath string) []*validation.Error {
	if s == nil {
		return []*validation.Error{requiredWhy(sPath, "because it is defined in "+vPath)}
	}
	errs := v.completeness(s, sPath, vPath)
	if v.Items != nil {
		errs = append(errs, v.Items.nestedCompleteness(s.Items, sPath+".items", vPath+".items")...)
	}
	for _, k := range slices.Sorted(maps.Keys(v.Properties)) {
		if sub, ok := s.Properties[k]; ok {
			errs = append(errs, v.Properties[k].nestedCompleteness(sub, propPath(sPath, k), propPath(vPath, k))...)
		} else {
			errs = append(errs, requiredWhy(propPath(sPath, k), "because it is defined in "+propPath(vPath, k)))
		}
	}
	return errs
}

// checkDefaults is kube's ValidateDefaults: each default, pruned, must be
// what it was, and must pass the schema it is the default of. root is the
// schema the defaults are placed in; insideMeta says whether s is under a
// resource's metadata, apiVersion or kind.
func (s *Schema) checkDefaults(path string, root *Schema, insideMeta, isRoot bool) []*validation.Error {
	if s == nil {
		return nil
	}
	if s.EmbeddedResource {
		insideMeta = false
		root = s
	}
	var errs []*validation.Error
	if s.Default != nil {
		at := path + ".default"
		embedded := s.EmbeddedResource || isRoot
		if insideMeta {
			// kube-apiserver checks such a default inside the object it
			// would be set in; the schema's own keywords are what commonly
			// fail.
			errs = append(errs, s.checkValue(at, s.Default)...)
		} else {
			// kube-apiserver coerces the default's embedded metadata in
			// place after the pruning check, and its errors show the
			// value as it is when they are printed: so do these.
			d := deepCopy(s.Default)
			pruned := deepCopy(d)
			p := pruner{}
			p.prune(pruned, s, embedded)
			if !reflect.DeepEqual(pruned, d) {
				errs = append(errs, invalid(at, d, "must not have unknown fields"))
			}
			if e := coerceStrict(at, d, s, embedded); e != nil {
				errs = append(errs, e)
			} else if es := s.validateEmbedded(at, d, embedded); len(es) > 0 {
				errs = append(errs, es...)
			} else {
				errs = append(errs, s.checkValue(at, d)...)
			}
		}
	}
	errs = append(errs, s.Items.checkDefaults(path+".items", root, insideMeta, false)...)
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		inside := insideMeta || ((s.EmbeddedResource || isRoot) && isMetaField(k))
		errs = append(errs, s.Properties[k].checkDefaults(propPath(path, k), root, inside, false)...)
	}
	return errs
}

// structuralCopy is the schema as kube-apiserver validates a default with
// it (see asStructural).
func (s *Schema) structuralCopy() *Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.asStructural = true
	c.Items = s.Items.structuralCopy()
	c.Not = s.Not.structuralCopy()
	c.AdditionalProperties = s.AdditionalProperties.structuralCopy()
	for _, l := range []*[]*Schema{&c.AllOf, &c.AnyOf, &c.OneOf} {
		copied := make([]*Schema, len(*l))
		for i, sub := range *l {
			copied[i] = sub.structuralCopy()
		}
		*l = copied
	}
	if s.Properties != nil {
		c.Properties = make(map[string]*Schema, len(s.Properties))
		for k, p := range s.Properties {
			c.Properties[k] = p.structuralCopy()
		}
	}
	return &c
}

// checkValue is the schema's keywords alone (kube's ValidateCustomResource),
// as they apply to a default.
func (s *Schema) checkValue(path string, v any) []*validation.Error {
	var errs []*validation.Error
	for _, e := range s.structuralCopy().check(v, "").errs {
		errs = append(errs, e.fieldError(path))
	}
	return errs
}

// coerceStrict makes the metadata of the embedded resources in v what an
// ObjectMeta holds, in place, and returns the first apiVersion, kind or
// metadata that cannot be (kube's objectmeta.Coerce without dropping).
func coerceStrict(path string, v any, s *Schema, embedded bool) *validation.Error {
	if s == nil {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if embedded && (k == "apiVersion" || k == "kind") {
				if _, ok := x[k].(string); !ok {
					return invalid(child(path, k), x[k], "must be a string")
				}
			}
			if embedded && k == "metadata" {
				var meta kapi.ObjectMeta
				if err := decodeMeta(x[k], &meta); err != nil {
					return invalid(child(path, k), x[k], err.Error())
				}
				coerceMeta(child(path, k), x, &pruner{})
			}
			if prop, ok := s.Properties[k]; ok {
				if e := coerceStrict(child(path, k), x[k], prop, prop.EmbeddedResource); e != nil {
					return e
				}
			} else if ap := s.AdditionalProperties; ap != nil {
				if e := coerceStrict(keyPath(path, k), x[k], ap, ap.EmbeddedResource); e != nil {
					return e
				}
			}
		}
	case []any:
		for i, e := range x {
			if s.Items == nil {
				break
			}
			if err := coerceStrict(indexPath(path, i), e, s.Items, s.Items.EmbeddedResource); err != nil {
				return err
			}
		}
	}
	return nil
}
