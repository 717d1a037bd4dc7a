package schema

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/validation"
)

// Validate checks an object (a decoded JSON value: map[string]any,
// []any, string, bool, int64, float64 or nil) against the schema as
// kube-apiserver checks a custom resource: the schema's keywords as
// apiextensions-apiserver has kube-openapi check them, then the
// apiVersion, kind and metadata of embedded resources, then the
// uniqueness of x-kubernetes-list-type set and map items. Each failure is
// one validation.Error with Kubernetes' cause type, field path and
// message ("spec.replicas: Invalid value: \"string\": spec.replicas in body
// must be of type integer: \"string\"").
//
// Call it on an object already pruned and defaulted, as kube-apiserver
// does. The object's own metadata, apiVersion and kind are the request
// path's to check; x-kubernetes-validations rules are not evaluated here.
// Errors are sorted by field path (kube-apiserver's order is Go's random
// map order); the errors of one field stay in the order kube-apiserver
// finds them.
func (s *Schema) Validate(obj any) []*validation.Error {
	return s.ValidateAt("", obj)
}

// ValidateAt is Validate of a value found at path in its object (status,
// for a status subresource's update), whose errors name fields from there.
func (s *Schema) ValidateAt(path string, obj any) []*validation.Error {
	if s == nil {
		return nil
	}
	var errs []*validation.Error
	r := s.check(obj, "")
	for _, e := range r.errs {
		errs = append(errs, e.fieldError(path))
	}
	if s.walks(walkEmbedded) {
		errs = append(errs, s.validateEmbedded(path, obj, false)...)
	}
	if s.walks(walkLists) {
		errs = append(errs, s.validateLists(path, obj)...)
	}
	// Where kube-apiserver's order is Go's random map order, ours is by
	// field; a field's errors stay in the order they were found.
	slices.SortStableFunc(errs, func(a, b *validation.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

// kind is the JSON kind of a value as kube-openapi tells them apart.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindString
	kindInt
	kindFloat
	kindArray
	kindObject
	kindOther
)

func kindOf(v any) kind {
	switch v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case string:
		return kindString
	case int64, int:
		return kindInt
	case float64:
		return kindFloat
	case []any:
		return kindArray
	case map[string]any:
		return kindObject
	}
	return kindOther
}

// types is the schema's type as kube-openapi sees it: int-or-string is
// integer and string.
func (s *Schema) types() []string {
	if s.IntOrString && !s.asStructural {
		return intOrString
	}
	if s.Type != "" {
		if t, ok := typeLists[s.Type]; ok {
			return t
		}
		return []string{s.Type}
	}
	return nil
}

var typeLists = map[string][]string{
	"object": {"object"}, "array": {"array"}, "string": {"string"},
	"integer": {"integer"}, "number": {"number"}, "boolean": {"boolean"},
}

var intOrString = []string{"integer", "string"}

// format is the schema's format as apiextensions-apiserver gives it to
// kube-openapi: a format it does not support for the type is dropped.
func (s *Schema) format() string {
	if s.Format == "" || s.asStructural {
		return s.Format
	}
	t := ""
	if types := s.types(); len(types) == 1 {
		t = types[0]
	}
	switch t {
	case "", "string":
		if _, ok := stringFormats[strings.ReplaceAll(s.Format, "-", "")]; ok {
			return s.Format
		}
	case "integer":
		if s.Format == "int32" || s.Format == "int64" {
			return s.Format
		}
	case "number":
		if s.Format == "float" || s.Format == "double" {
			return s.Format
		}
	}
	return ""
}

// check is kube-openapi's SchemaValidator.Validate: every validator that
// applies to the value's kind, in its order, none stopping the others.
func (s *Schema) check(data any, path string) *result {
	return s.checkRatcheting(data, path, nil)
}

// checkRatcheting is check where c correlates data with its old value on
// an update: if data is what it was, its errors are dropped
// (kube-apiserver's ratcheting validation). The children of a correlated
// value are correlated where they can be; those of an uncorrelated one,
// and the branches of allOf, anyOf, oneOf and not, are not.
func (s *Schema) checkRatcheting(data any, path string, c *Correlation) *result {
	res := s.checkAll(data, path, c)
	if c != nil && !res.valid() && c.unchanged() {
		res.errs = nil
	}
	return res
}

func (s *Schema) checkAll(data any, path string, c *Correlation) *result {
	res := &result{}
	if data == nil {
		res.merge(s.checkType(nil, path))
		res.merge(s.checkEnum(nil, path))
		return res
	}
	k := kindOf(data)
	format := s.format()
	if len(s.types()) > 0 || format != "" {
		res.merge(s.checkType(data, path))
		res.match++
	}
	res.merge(s.checkJunctors(data, path))
	res.match++
	if k == kindString {
		res.merge(s.checkString(data.(string), path))
		res.match++
		if _, known := stringFormats[strings.ReplaceAll(format, "-", "")]; known {
			res.merge(checkFormat(format, data.(string), path))
			res.match++
		}
	}
	if k == kindInt || k == kindFloat {
		res.merge(s.checkNumber(data, path))
		res.match++
	}
	if k == kindArray {
		res.merge(s.checkArray(data.([]any), path, c))
		res.match++
	}
	res.merge(s.checkEnum(data, path))
	res.match++
	if k == kindObject {
		res.merge(s.checkObject(data.(map[string]any), path, c))
		res.match++
	}
	res.match++
	return res
}

func typeFail(path, typeName, got string) *result {
	return one(fail{code: failType, name: path, value: got,
		msg: fmt.Sprintf("%s in body must be of type %s: %q", path, typeName, got)})
}

func (s *Schema) checkType(data any, path string) *result {
	types := s.types()
	if data == nil {
		if len(types) > 0 && !slices.Contains(types, "null") && !s.Nullable {
			return typeFail(path, strings.Join(types, ","), "null")
		}
		return &result{match: 1}
	}
	k := kindOf(data)
	var got, gotFormat string
	switch k {
	case kindBool:
		got = "boolean"
	case kindString:
		got = "string"
	case kindInt:
		got, gotFormat = "integer", "int64"
	case kindFloat:
		got, gotFormat = "number", "float64"
	case kindArray:
		got = "array"
	case kindObject:
		got = "object"
	}
	format := s.format()
	floatInt := k == kindFloat && isJSONInteger(data.(float64)) && slices.Contains(types, "integer")
	intFloat := k == kindInt && slices.Contains(types, "number")
	if k != kindString && k != kindArray && format != "" &&
		!(slices.Contains(types, got) || gotFormat == format || floatInt || intFloat) {
		return typeFail(path, format, gotFormat)
	}
	if !(slices.Contains(types, "number") || slices.Contains(types, "integer")) && format != "" && (k == kindString || k == kindArray) {
		return &result{match: 1}
	}
	if !(slices.Contains(types, got) || floatInt || intFloat) {
		return typeFail(path, strings.Join(types, ","), got)
	}
	return &result{match: 1}
}

// isJSONInteger is go-openapi's IsFloat64AJSONInteger: an integer in
// [-(2^53-1), 2^53-1], within a relative 1e-9.
func isJSONInteger(f float64) bool {
	const limit = float64(1<<53 - 1)
	if math.IsNaN(f) || math.IsInf(f, 0) || f < -limit || f > limit {
		return false
	}
	r := math.Round(f)
	if f == r {
		return true
	}
	if r == 0 {
		return false
	}
	return math.Abs(f-r) < 1e-9*math.Abs(r)
}

// checkJunctors is allOf, anyOf, oneOf and not.
func (s *Schema) checkJunctors(data any, path string) *result {
	res := &result{}
	if len(s.AnyOf) > 0 {
		var best, firstSuccess *result
		succeeded := false
		for _, sub := range s.AnyOf {
			r := sub.check(data, path)
			if r.valid() {
				best, succeeded = nil, true
				firstSuccess = r
				break
			}
			if best == nil || r.match > best.match {
				best = r
			}
		}
		if !succeeded {
			res.add(fail{msg: fmt.Sprintf("%q must validate at least one schema (anyOf)", path)})
		}
		if best != nil {
			res.merge(best)
		} else {
			res.merge(firstSuccess)
		}
	}
	if len(s.OneOf) > 0 {
		var best, firstSuccess *result
		validated := 0
		for _, sub := range s.OneOf {
			r := sub.check(data, path)
			if r.valid() {
				validated++
				best = nil
				if firstSuccess == nil {
					firstSuccess = r
				}
				continue
			}
			if validated == 0 && (best == nil || r.match > best.match) {
				best = r
			}
		}
		if validated != 1 {
			more := "Found none valid"
			if validated > 1 {
				more = fmt.Sprintf("Found %d valid alternatives", validated)
			}
			res.add(fail{msg: fmt.Sprintf("%q must validate one and only one schema (oneOf). %s", path, more)})
			res.merge(best)
		} else {
			res.merge(firstSuccess)
		}
	}
	if len(s.AllOf) > 0 {
		validated := 0
		for _, sub := range s.AllOf {
			r := sub.check(data, path)
			if r.valid() {
				validated++
			}
			res.merge(r)
		}
		if validated != len(s.AllOf) {
			more := ""
			if validated == 0 {
				more = ". None validated"
			}
			res.add(fail{msg: fmt.Sprintf("%q must validate all the schemas (allOf)%s", path, more)})
		}
	}
	if s.Not != nil {
		if s.Not.check(data, path).valid() {
			res.add(fail{msg: fmt.Sprintf("%q must not validate the schema (not)", path)})
		}
	}
	if len(s.Dependencies) > 0 {
		if m, ok := data.(map[string]any); ok {
			for key := range m {
				dep, ok := s.Dependencies[key]
				if !ok {
					continue
				}
				if dep.Schema != nil {
					res.merge(dep.Schema.check(data, path+"."+key))
					continue
				}
				for _, need := range dep.Property {
					if _, ok := m[need]; !ok {
						res.add(fail{msg: fmt.Sprintf("%q has a dependency on %s", path, need)})
					}
				}
			}
		}
	}
	res.match++
	return res
}

func (s *Schema) checkArray(l []any, path string, c *Correlation) *result {
	res := &result{}
	if s.Items != nil {
		for i, v := range l {
			res.merge(s.Items.checkRatcheting(v, path+"["+strconv.Itoa(i)+"]", c.index(i)))
		}
	}
	for i, sub := range s.ItemsList {
		if i >= len(l) {
			break
		}
		res.merge(sub.checkRatcheting(l[i], path+"["+strconv.Itoa(i)+"]", c.index(i)))
	}
	size := int64(len(l))
	if s.MinItems != nil && size < *s.MinItems {
		res.add(fail{code: failOther, name: path, value: size,
			msg: fmt.Sprintf("%s in body should have at least %d items", path, *s.MinItems)})
	}
	if s.MaxItems != nil && size > *s.MaxItems {
		res.add(fail{code: failMaxItems, name: path, value: size, actual: size, max: *s.MaxItems,
			msg: fmt.Sprintf("%s in body should have at most %d items", path, *s.MaxItems)})
	}
	if s.UniqueItems {
		for i := range l {
			if slices.ContainsFunc(l[:i], func(u any) bool { return reflect.DeepEqual(u, l[i]) }) {
				res.add(fail{code: failOther, name: path,
					msg: fmt.Sprintf("%s in body shouldn't contain duplicates", path)})
				break
			}
		}
	}
	res.match++
	return res
}

// checkEnum is kube-openapi's basicCommonValidator: a value matches an
// enum value it converts to as a Go value (an integer matches a float, and
// a float an integer it truncates to), and null matches none.
func (s *Schema) checkEnum(data any, path string) *result {
	if len(s.Enum) == 0 {
		return nil
	}
	dv := reflect.ValueOf(data)
	for _, e := range s.Enum {
		t := reflect.TypeOf(e)
		if t == nil || !dv.IsValid() || !dv.Type().ConvertibleTo(t) {
			continue
		}
		if reflect.DeepEqual(dv.Convert(t).Interface(), e) {
			return nil
		}
	}
	return one(fail{code: failEnum, name: path, value: data, values: s.Enum,
		msg: fmt.Sprintf("%s in body should be one of %v", path, s.Enum)})
}

func (s *Schema) checkObject(m map[string]any, path string, c *Correlation) *result {
	// kube-apiserver does not ratchet the apiVersion and kind of the root.
	key := func(name string) *Correlation {
		if path == "" && (name == "apiVersion" || name == "kind") {
			return nil
		}
		return c.key(name)
	}
	res := &result{}
	n := int64(len(m))
	if s.MinProperties != nil && n < *s.MinProperties {
		res.add(fail{code: failOther, name: path, value: n,
			msg: fmt.Sprintf("%s in body should have at least %d properties", path, *s.MinProperties)})
	}
	if s.MaxProperties != nil && n > *s.MaxProperties {
		res.add(fail{code: failTooManyProperties, name: path, value: n, actual: n, max: *s.MaxProperties,
			msg: fmt.Sprintf("%s in body should have at most %d properties", path, *s.MaxProperties)})
	}
	if s.HasAdditionalProperties && !s.AllowsAdditional {
		for k := range m {
			if _, ok := s.Properties[k]; ok || s.matchesPattern(k) {
				continue
			}
			res.add(fail{code: failOther, name: path, value: k,
				msg: fmt.Sprintf("%s.%s in body is a forbidden property", path, k)})
		}
	} else if s.AdditionalProperties != nil || len(s.PatternProperties) > 0 {
		for k := range m {
			_, regular := s.Properties[k]
			matched := s.checkPatterns(res, k, m[k], path, key(k))
			if !regular && !matched && s.AdditionalProperties != nil {
				res.merge(s.AdditionalProperties.checkRatcheting(m[k], path+"."+k, key(k)))
			}
		}
	}
	for name, sub := range s.Properties {
		v, ok := m[name]
		if !ok {
			continue
		}
		at := name
		if path != "" {
			at = path + "." + name
		}
		res.merge(sub.checkRatcheting(v, at, key(name)))
	}
	for _, k := range s.Required {
		if _, ok := m[k]; !ok {
			res.add(fail{code: failRequired, name: path + "." + k, msg: fmt.Sprintf("%s.%s in body is required", path, k)})
		}
	}
	if len(s.PatternProperties) > 0 {
		for k := range m {
			if _, regular := s.Properties[k]; regular {
				continue
			}
			for p, sub := range s.PatternProperties {
				if re, err := compiled(p); err == nil && re.MatchString(k) {
					res.merge(sub.checkRatcheting(m[k], path+"."+k, key(k)))
				}
			}
		}
	}
	return res
}

func (s *Schema) matchesPattern(key string) bool {
	for p := range s.PatternProperties {
		if re, err := compiled(p); err == nil && re.MatchString(key) {
			return true
		}
	}
	return false
}

// checkPatterns checks a member against the patternProperties its name
// matches, as kube-openapi does before deciding it is an additional one.
func (s *Schema) checkPatterns(res *result, key string, value any, path string, c *Correlation) bool {
	matched := false
	for p, sub := range s.PatternProperties {
		if re, err := compiled(p); err == nil && re.MatchString(key) {
			matched = true
			res.merge(sub.checkRatcheting(value, path+"."+key, c))
		}
	}
	return matched
}
