package crd

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/names"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

// Validate checks a CustomResourceDefinition as kube-apiserver does when
// it is created (old is nil) or updated, with its field paths, cause types
// and messages: apiextensions-apiserver's validation of the object as
// served in apiextensions.k8s.io/v1, after the defaults of SetDefaults.
// The name is checked against spec.names.plural and spec.group on create
// only: on update neither may change.
//
// As inside kube-apiserver, a schema, subresources, printer columns or
// selectable fields that every version has alike are reported as the
// definition's own (spec.validation.openAPIV3Schema...,
// spec.subresources..., spec.additionalPrinterColumns[0]...), not per
// version.
//
// Not checked here: metadata other than the name (the request path's),
// the compilation and cost of x-kubernetes-validations rules (Serve has
// the server's rule engine check them, given apiserver.WithRuleEngine
// with an engine that is a schema.RuleCompiler, as validation/cel's is),
// and kapi's own refusal of webhook conversion (see Serve).
func Validate(c, old *CustomResourceDefinition) []*validation.Error {
	return validate(c, old, nil)
}

// validate is Validate with the x-kubernetes-validations rules of every
// schema checked by rules too (compilation and cost, with kube's
// messages), when it is not nil.
func validate(c, old *CustomResourceDefinition, rules schema.RuleCompiler) []*validation.Error {
	var errs []*validation.Error
	if want := c.Spec.Names.Plural + "." + c.Spec.Group; old == nil && c.Name != want {
		errs = append(errs, invalid("metadata.name", c.Name, `must be spec.names.plural+"."+spec.group`))
	}
	o := options{requireOpenAPISchema: true, rules: rules}
	if old != nil {
		o.requireOpenAPISchema = allVersionsHaveSchema(&old.Spec)
		o.immutableNames = conditionTrue(old, Established)
	}
	errs = append(errs, validateSpec(&c.Spec, o)...)
	if old != nil {
		if o.immutableNames {
			errs = append(errs, immutable("spec.scope", c.Spec.Scope, old.Spec.Scope)...)
			errs = append(errs, immutable("spec.names.kind", c.Spec.Names.Kind, old.Spec.Names.Kind)...)
		}
		errs = append(errs, immutable("spec.group", c.Spec.Group, old.Spec.Group)...)
		errs = append(errs, immutable("spec.names.plural", c.Spec.Names.Plural, old.Spec.Names.Plural)...)
	}
	errs = append(errs, validateNames(&c.Status.AcceptedNames, "status.acceptedNames")...)
	errs = append(errs, validateStoredVersions(c.Status.StoredVersions, c.Spec.Versions)...)
	errs = append(errs, validateAPIApproval(c, old)...)
	if c.Spec.PreserveUnknownFields && (old == nil || !old.Spec.PreserveUnknownFields) {
		errs = append(errs, invalid("spec.preserveUnknownFields", true, "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
	}
	return errs
}

// ValidateStatus checks a CustomResourceDefinition whose status is
// written: its accepted names.
func ValidateStatus(c *CustomResourceDefinition) []*validation.Error {
	return validateNames(&c.Status.AcceptedNames, "status.acceptedNames")
}

// SetDefaults sets what kube-apiserver defaults in a
// CustomResourceDefinition: the singular name, the list kind, the
// conversion strategy None, and the storage version as the first stored
// version.
func SetDefaults(c *CustomResourceDefinition) {
	n := &c.Spec.Names
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" && n.Kind != "" {
		n.ListKind = n.Kind + "List"
	}
	if c.Spec.Conversion == nil {
		c.Spec.Conversion = &Conversion{Strategy: NoneConverter}
	}
	addStorageVersion(c)
}

// addStorageVersion adds the storage version to status.storedVersions,
// as kube-apiserver does on every write of the spec.
func addStorageVersion(c *CustomResourceDefinition) {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			for _, s := range c.Status.StoredVersions {
				if s == v.Name {
					return
				}
			}
			c.Status.StoredVersions = append(c.Status.StoredVersions, v.Name)
			return
		}
	}
}

type options struct {
	requireOpenAPISchema bool
	immutableNames       bool
	rules                schema.RuleCompiler // nil: rules are not checked
}

func invalid(path string, value any, detail string) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueInvalid, Field: path, BadValue: value, Detail: detail}
}

func required(path, detail string) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueRequired, Field: path, Detail: detail}
}

func forbidden(path, detail string) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueForbidden, Field: path, Detail: detail}
}

func notSupported(path string, value any, supported ...string) *validation.Error {
	quoted := make([]string, len(supported))
	for i, s := range supported {
		quoted[i] = strconv.Quote(s)
	}
	return &validation.Error{Type: kapi.CauseTypeFieldValueNotSupported, Field: path, BadValue: value, Detail: "supported values: " + strings.Join(quoted, ", ")}
}

func immutable(path, value, old string) []*validation.Error {
	if value == old {
		return nil
	}
	return []*validation.Error{invalid(path, value, "field is immutable")}
}

func conditionTrue(c *CustomResourceDefinition, typ string) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == typ {
			return cond.Status == kapi.ConditionTrue
		}
	}
	return false
}

func allVersionsHaveSchema(s *Spec) bool {
	for _, v := range s.Versions {
		if v.Schema == nil || len(v.Schema.OpenAPIV3Schema) == 0 {
			return false
		}
	}
	return true
}

// shared is what every version of a definition has alike, which
// kube-apiserver holds (and reports) as the definition's own.
type shared struct {
	schema, subresources, columns, selectable bool
}

func sharedOf(s *Spec) shared {
	sh := shared{len(s.Versions) > 0, len(s.Versions) > 0, len(s.Versions) > 0, len(s.Versions) > 0}
	for _, v := range s.Versions[min(1, len(s.Versions)):] {
		first := s.Versions[0]
		sh.schema = sh.schema && sameSchema(first.Schema, v.Schema)
		sh.subresources = sh.subresources && reflect.DeepEqual(first.Subresources, v.Subresources)
		sh.columns = sh.columns && reflect.DeepEqual(emptyNil(first.AdditionalPrinterColumns), emptyNil(v.AdditionalPrinterColumns))
		sh.selectable = sh.selectable && reflect.DeepEqual(emptyNil(first.SelectableFields), emptyNil(v.SelectableFields))
	}
	return sh
}

func emptyNil[T any](l []T) []T {
	if len(l) == 0 {
		return nil
	}
	return l
}

// sameSchema compares two versions' schemas as values, not texts.
func sameSchema(a, b *Validation) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.OpenAPIV3Schema) == 0 || len(b.OpenAPIV3Schema) == 0 {
		return len(a.OpenAPIV3Schema) == len(b.OpenAPIV3Schema)
	}
	x, errX := schema.DecodeJSON(a.OpenAPIV3Schema)
	y, errY := schema.DecodeJSON(b.OpenAPIV3Schema)
	return errX == nil && errY == nil && reflect.DeepEqual(x, y)
}

func validateSpec(s *Spec, o options) []*validation.Error {
	var errs []*validation.Error
	switch msgs := names.IsDNS1123Subdomain(s.Group); {
	case s.Group == "":
		errs = append(errs, required("spec.group", ""))
	case len(msgs) > 0:
		errs = append(errs, invalid("spec.group", s.Group, strings.Join(msgs, ",")))
	case !strings.Contains(s.Group, "."):
		errs = append(errs, invalid("spec.group", s.Group, "should be a domain with at least one dot"))
	}
	switch s.Scope {
	case "":
		errs = append(errs, required("spec.scope", ""))
	case ClusterScoped, NamespaceScoped:
	default:
		errs = append(errs, notSupported("spec.scope", s.Scope, ClusterScoped, NamespaceScoped))
	}

	sh := sharedOf(s)
	topSchema := sh.schema && s.Versions[0].Schema != nil
	if !topSchema && (o.requireOpenAPISchema || !s.PreserveUnknownFields) {
		for i, v := range s.Versions {
			if v.Schema != nil && len(v.Schema.OpenAPIV3Schema) > 0 {
				continue
			}
			if o.requireOpenAPISchema {
				errs = append(errs, required(versionPath(i)+".schema.openAPIV3Schema", ""))
			} else if v.Served {
				errs = append(errs, required(versionPath(i)+".schema.openAPIV3Schema", "because otherwise all fields are pruned"))
			}
		}
	}
	parsed := make([]*schema.Schema, len(s.Versions))
	var parseErrs []*validation.Error
	for i, v := range s.Versions {
		if v.Schema == nil || len(v.Schema.OpenAPIV3Schema) == 0 {
			continue
		}
		sc, err := schema.Parse(v.Schema.OpenAPIV3Schema)
		if err != nil {
			at := schemaPath(i, sh)
			if !sh.schema || i == 0 {
				parseErrs = append(parseErrs, invalid(at, "", err.Error()))
			}
			continue
		}
		parsed[i] = sc
	}
	errs = append(errs, parseErrs...)
	if s.PreserveUnknownFields && hasDefaults(parsed) {
		errs = append(errs, invalid("spec.preserveUnknownFields", true, "must be false in order to use defaults in the schema"))
	}

	storage, seen, unique := 0, map[string]bool{}, true
	anyStatus := false
	for _, v := range s.Versions {
		anyStatus = anyStatus || v.Subresources != nil && v.Subresources.Status != nil
	}
	for i, v := range s.Versions {
		if v.Storage {
			storage++
		}
		if seen[v.Name] {
			unique = false
		}
		seen[v.Name] = true
		at := versionPath(i)
		if msgs := names.IsDNS1035Label(v.Name); len(msgs) > 0 {
			errs = append(errs, invalid(at+".name", v.Name, strings.Join(msgs, ",")))
		}
		for _, msg := range deprecationWarningProblems(v.Deprecated, v.DeprecationWarning) {
			errs = append(errs, invalid(at+".deprecationWarning", *v.DeprecationWarning, msg))
		}
		status := v.Subresources != nil && v.Subresources.Status != nil
		if !sh.schema && parsed[i] != nil {
			errs = append(errs, validateSchema(v.Schema.OpenAPIV3Schema, parsed[i], status, at+".schema", o.rules)...)
		}
		if !sh.subresources {
			errs = append(errs, validateSubresources(v.Subresources, at+".subresources")...)
		}
		if !sh.columns {
			for j := range v.AdditionalPrinterColumns {
				errs = append(errs, validateColumn(&v.AdditionalPrinterColumns[j], at+".additionalPrinterColumns["+strconv.Itoa(j)+"]")...)
			}
		}
		if !sh.selectable && len(v.SelectableFields) > 0 {
			if v.Schema == nil || len(v.Schema.OpenAPIV3Schema) == 0 {
				errs = append(errs, invalid(at+".selectableFields", "", "may only be set when `version.schema.openAPIV3Schema` is not included"))
			} else {
				errs = append(errs, validateSelectableFields(v.SelectableFields, parsed[i], at+".selectableFields")...)
			}
		}
	}
	if !unique {
		errs = append(errs, invalid("spec.versions", validation.OmittedValue{}, "must contain unique version names"))
	}
	if storage != 1 {
		errs = append(errs, invalid("spec.versions", validation.OmittedValue{}, "must have exactly one version marked as storage version"))
	}
	if len(s.Versions) > 0 {
		// kube-apiserver holds the first version's name as spec.version
		// too, and checks it there again.
		if msgs := names.IsDNS1035Label(s.Versions[0].Name); len(msgs) > 0 {
			errs = append(errs, invalid("spec.version", s.Versions[0].Name, strings.Join(msgs, ",")))
		}
	}

	for _, n := range []struct{ path, value string }{
		{"spec.names.plural", s.Names.Plural}, {"spec.names.singular", s.Names.Singular},
		{"spec.names.kind", s.Names.Kind}, {"spec.names.listKind", s.Names.ListKind},
	} {
		if n.value == "" {
			errs = append(errs, required(n.path, ""))
		}
	}
	errs = append(errs, validateNames(&s.Names, "spec.names")...)

	if len(s.Versions) > 0 {
		first := s.Versions[0]
		if topSchema && parsed[0] != nil {
			errs = append(errs, validateSchema(first.Schema.OpenAPIV3Schema, parsed[0], anyStatus, "spec.validation", o.rules)...)
		}
		if sh.subresources {
			errs = append(errs, validateSubresources(first.Subresources, "spec.subresources")...)
		}
		if sh.columns {
			for j := range first.AdditionalPrinterColumns {
				errs = append(errs, validateColumn(&first.AdditionalPrinterColumns[j], "spec.additionalPrinterColumns["+strconv.Itoa(j)+"]")...)
			}
		}
		if sh.selectable && len(first.SelectableFields) > 0 {
			if !topSchema {
				errs = append(errs, invalid("spec.selectableFields", "", "may only be set when validations.schema is included"))
			} else if parsed[0] != nil {
				errs = append(errs, validateSelectableFields(first.SelectableFields, parsed[0], "spec.selectableFields")...)
			}
		}
	}
	errs = append(errs, validateConversion(s)...)
	return errs
}

func versionPath(i int) string { return "spec.versions[" + strconv.Itoa(i) + "]" }

// schemaPath is where kube-apiserver reports version i's schema.
func schemaPath(i int, sh shared) string {
	if sh.schema {
		return "spec.validation.openAPIV3Schema"
	}
	return versionPath(i) + ".schema.openAPIV3Schema"
}

func hasDefaults(parsed []*schema.Schema) bool {
	var has func(s *schema.Schema) bool
	has = func(s *schema.Schema) bool {
		if s == nil {
			return false
		}
		if s.Default != nil {
			return true
		}
		for _, l := range [][]*schema.Schema{{s.Items, s.AdditionalProperties, s.Not}, s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range l {
				if has(sub) {
					return true
				}
			}
		}
		for _, sub := range s.Properties {
			if has(sub) {
				return true
			}
		}
		return false
	}
	for _, s := range parsed {
		if has(s) {
			return true
		}
	}
	return false
}

func deprecationWarningProblems(deprecated bool, warning *string) []string {
	if !deprecated && warning != nil {
		return []string{"can only be set for deprecated versions"}
	}
	if warning == nil {
		return nil
	}
	var msgs []string
	if len(*warning) > 256 {
		msgs = append(msgs, "must be <= 256 characters long")
	}
	if len(*warning) == 0 {
		msgs = append(msgs, "must not be an empty string")
	}
	for i, r := range *warning {
		if !unicode.IsPrint(r) {
			msgs = append(msgs, fmt.Sprintf("must only contain printable UTF-8 characters; non-printable character found at index %d", i))
			break
		}
		if unicode.IsControl(r) {
			msgs = append(msgs, fmt.Sprintf("must only contain printable UTF-8 characters; control character found at index %d", i))
			break
		}
	}
	if !utf8.ValidString(*warning) {
		msgs = append(msgs, "must only contain printable UTF-8 characters")
	}
	return msgs
}

func validateNames(n *Names, path string) []*validation.Error {
	var errs []*validation.Error
	label := func(field, value, prefix string, lower bool) {
		check := value
		if lower {
			check = strings.ToLower(value)
		}
		if msgs := names.IsDNS1035Label(check); value != "" && len(msgs) > 0 {
			errs = append(errs, invalid(path+"."+field, value, prefix+strings.Join(msgs, ",")))
		}
	}
	label("plural", n.Plural, "", false)
	label("singular", n.Singular, "", false)
	label("kind", n.Kind, "may have mixed case, but should otherwise match: ", true)
	label("listKind", n.ListKind, "may have mixed case, but should otherwise match: ", true)
	for i, s := range n.ShortNames {
		if msgs := names.IsDNS1035Label(s); len(msgs) > 0 {
			errs = append(errs, invalid(path+".shortNames["+strconv.Itoa(i)+"]", s, strings.Join(msgs, ",")))
		}
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, invalid(path+".listKind", n.ListKind, "kind and listKind may not be the same"))
	}
	for i, c := range n.Categories {
		if msgs := names.IsDNS1035Label(c); len(msgs) > 0 {
			errs = append(errs, invalid(path+".categories["+strconv.Itoa(i)+"]", c, strings.Join(msgs, ",")))
		}
	}
	return errs
}

func validateStoredVersions(stored []string, versions []SpecVersion) []*validation.Error {
	const path = "status.storedVersions"
	if len(stored) == 0 {
		return []*validation.Error{invalid(path, stored, "must have at least one stored version")}
	}
	var errs []*validation.Error
	left := map[string]int{}
	for i, v := range stored {
		left[v] = i
	}
	for _, v := range versions {
		_, ok := left[v.Name]
		if v.Storage && !ok {
			errs = append(errs, invalid(path, stored, "must have the storage version "+v.Name))
		}
		delete(left, v.Name)
	}
	for i, v := range stored {
		if j, ok := left[v]; ok && j == i {
			errs = append(errs, invalid(path+"["+strconv.Itoa(i)+"]", v, fmt.Sprintf("missing from spec.versions; %[1]s was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in %[1]s and removes %[1]s from status.storedVersions", v)))
		}
	}
	return errs
}

// approvalAnnotation is the annotation that CustomResourceDefinitions of
// Kubernetes' own groups (k8s.io, kubernetes.io) need.
const approvalAnnotation = "api-approved.kubernetes.io"

func validateAPIApproval(c, old *CustomResourceDefinition) []*validation.Error {
	g := c.Spec.Group
	if g != "k8s.io" && !strings.HasSuffix(g, ".k8s.io") && g != "kubernetes.io" && !strings.HasSuffix(g, ".kubernetes.io") {
		return nil
	}
	state, reason := approval(c.Annotations)
	if old != nil {
		if oldState, _ := approval(old.Annotations); oldState == state {
			return nil
		}
	}
	path := "metadata.annotations[" + approvalAnnotation + "]"
	switch state {
	case "missing":
		return []*validation.Error{required(path, reason)}
	case "invalid":
		return []*validation.Error{invalid(path, c.Annotations[approvalAnnotation], reason)}
	}
	return nil
}

func approval(annotations map[string]string) (state, reason string) {
	a := annotations[approvalAnnotation]
	u, err := url.ParseRequestURI(a)
	switch {
	case a == "":
		return "missing", fmt.Sprintf("protected groups must have approval annotation %q, see https://github.com/kubernetes/enhancements/pull/1111", approvalAnnotation)
	case strings.HasPrefix(a, "unapproved"):
		return "bypassed", ""
	case err == nil && u.Host != "" && u.Scheme != "":
		return "approved", ""
	}
	return "invalid", fmt.Sprintf("protected groups must have approval annotation %q with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111", approvalAnnotation)
}
