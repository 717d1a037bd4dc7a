package crd

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/names"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

// rootKeywords are a JSONSchemaProps' keywords in the order of its Go
// fields, which is the order kube-apiserver looks at the root of a schema
// in when the status subresource restricts it; allowed says which it
// allows there.
var rootKeywords = []struct {
	name    string
	allowed bool
}{
	{"id", false}, {"$schema", false}, {"$ref", false}, {"description", true}, {"type", true},
	{"format", true}, {"title", true}, {"default", false}, {"maximum", true}, {"exclusiveMaximum", true},
	{"minimum", true}, {"exclusiveMinimum", true}, {"maxLength", true}, {"minLength", true},
	{"pattern", true}, {"maxItems", true}, {"minItems", true}, {"uniqueItems", true},
	{"multipleOf", true}, {"enum", false}, {"maxProperties", false}, {"minProperties", false},
	{"required", true}, {"items", true}, {"allOf", false}, {"oneOf", false}, {"anyOf", false},
	{"not", false}, {"properties", true}, {"additionalProperties", false},
	{"patternProperties", false}, {"dependencies", false}, {"additionalItems", false},
	{"definitions", false}, {"externalDocs", true}, {"example", true}, {"nullable", false},
	{"x-kubernetes-preserve-unknown-fields", true}, {"x-kubernetes-embedded-resource", false},
	{"x-kubernetes-int-or-string", false}, {"x-kubernetes-list-map-keys", false},
	{"x-kubernetes-list-type", false}, {"x-kubernetes-map-type", false},
	{"x-kubernetes-validations", true},
}

const rootAllowedWords = "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]"

// validateSchema checks a version's schema (or the definition's, at
// spec.validation); path ends before openAPIV3Schema.
func validateSchema(raw json.RawMessage, s *schema.Schema, status bool, path string, rules schema.RuleCompiler) []*validation.Error {
	path += ".openAPIV3Schema"
	var errs []*validation.Error
	if status {
		errs = append(errs, statusRootErrors(raw, s, path)...)
	}
	structural := s.Check(path)
	if len(structural) == 0 && rules != nil {
		// Rules are typed from the schema: only a structural one types them.
		return append(errs, rules.CheckRules(s, path)...)
	}
	return append(errs, structural...)
}

// statusRootErrors restricts the root of a schema whose status
// subresource is enabled to keywords that still hold once status is cut
// out of it as properties.status, and its type to object.
func statusRootErrors(raw json.RawMessage, s *schema.Schema, path string) []*validation.Error {
	var root map[string]json.RawMessage
	if json.Unmarshal(raw, &root) != nil {
		return nil
	}
	for _, k := range rootKeywords {
		v, ok := root[k.name]
		if !ok || isZeroKeyword(k.name, v) {
			continue
		}
		if k.name == "type" {
			if s.Type != "object" {
				return []*validation.Error{invalid(path+".type", s.Type, `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`)}
			}
			continue
		}
		if !k.allowed {
			return []*validation.Error{invalid(path, validation.OmittedValue{}, "only "+rootAllowedWords+" fields are allowed at the root of the schema if the status subresource is enabled")}
		}
	}
	return nil
}

// isZeroKeyword says whether kube-apiserver reads a keyword's value as its
// Go field's zero value: null, or false, "" for the fields that are not
// pointers.
func isZeroKeyword(name string, v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	if s == "null" {
		return true
	}
	switch name {
	case "id", "$schema", "description", "type", "format", "title", "pattern":
		return s == `""`
	case "exclusiveMaximum", "exclusiveMinimum", "uniqueItems", "nullable", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string":
		return s == "false"
	}
	return false
}

func validateSubresources(sub *Subresources, path string) []*validation.Error {
	if sub == nil || sub.Scale == nil {
		return nil
	}
	var errs []*validation.Error
	sc := sub.Scale
	for _, p := range []struct{ name, value, prefix string }{
		{"specReplicasPath", sc.SpecReplicasPath, ".spec."}, {"statusReplicasPath", sc.StatusReplicasPath, ".status."},
	} {
		at := path + ".scale." + p.name
		if p.value == "" {
			errs = append(errs, required(at, ""))
		} else if e := simpleJSONPath(p.value, at); e != nil {
			errs = append(errs, e)
		} else if !strings.HasPrefix(p.value, p.prefix) {
			errs = append(errs, invalid(at, p.value, "should be a json path under "+strings.TrimSuffix(p.prefix, ".")))
		}
	}
	if sc.LabelSelectorPath != nil && *sc.LabelSelectorPath != "" {
		at, v := path+".scale.labelSelectorPath", *sc.LabelSelectorPath
		if e := simpleJSONPath(v, at); e != nil {
			errs = append(errs, e)
		} else if !strings.HasPrefix(v, ".spec.") && !strings.HasPrefix(v, ".status.") {
			errs = append(errs, invalid(at, v, "should be a json path under either .spec or .status"))
		}
	}
	return errs
}

func simpleJSONPath(s, path string) *validation.Error {
	switch {
	case s == "":
		return invalid(path, s, "must not be empty")
	case s[0] != '.':
		return invalid(path, s, "must be a simple json path starting with .")
	}
	return nil
}

// The types and formats of printer columns.
const (
	columnTypes   = "boolean,date,integer,number,string"
	columnFormats = "byte,date,date-time,double,float,int32,int64,password"
)

func validateColumn(c *ColumnDefinition, path string) []*validation.Error {
	var errs []*validation.Error
	if c.Name == "" {
		errs = append(errs, required(path+".name", ""))
	}
	if c.Type == "" {
		errs = append(errs, required(path+".type", "must be one of "+columnTypes))
	} else if !strings.Contains(","+columnTypes+",", ","+c.Type+",") {
		errs = append(errs, invalid(path+".type", c.Type, "must be one of "+columnTypes))
	}
	if c.Format != "" && !strings.Contains(","+columnFormats+",", ","+c.Format+",") {
		errs = append(errs, invalid(path+".format", c.Format, "must be one of "+columnFormats))
	}
	if c.JSONPath == "" {
		errs = append(errs, required(path+".JSONPath", ""))
	} else if e := simpleJSONPath(c.JSONPath, path+".JSONPath"); e != nil {
		errs = append(errs, e)
	}
	return errs
}

// maxSelectableFields is how many selectable fields a version may have.
const maxSelectableFields = 8

func validateSelectableFields(fields []SelectableField, s *schema.Schema, path string) []*validation.Error {
	var errs []*validation.Error
	seen := map[string]bool{}
	for i, f := range fields {
		at := path + "[" + strconv.Itoa(i) + "].jsonPath"
		if f.JSONPath == "" {
			errs = append(errs, required(at, ""))
			continue
		}
		found, root, key, err := fieldAt(s, f.JSONPath)
		if err != nil {
			errs = append(errs, invalid(at, f.JSONPath, "is an invalid path: "+err.Error()))
			continue
		}
		if root == "metadata" {
			errs = append(errs, invalid(at, f.JSONPath, "must not point to fields in metadata"))
		}
		if found == nil || found.Type != "string" && found.Type != "boolean" && found.Type != "integer" {
			errs = append(errs, invalid(at, f.JSONPath, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
		}
		if seen[key] {
			errs = append(errs, &validation.Error{Type: kapi.CauseTypeFieldValueDuplicate, Field: at, BadValue: f.JSONPath})
		}
		seen[key] = true
	}
	if len(seen) > maxSelectableFields {
		errs = append(errs, &validation.Error{Type: kapi.CauseTypeTooMany, Field: path, BadValue: int64(len(seen)),
			Detail: fmt.Sprintf("must have at most %d items", maxSelectableFields)})
	}
	return errs
}

// fieldAt follows a selectable field's path (.spec.color, dots only)
// through a schema, as kube-apiserver does, and returns the schema it
// leads to, its first field and the path as a key.
func fieldAt(s *schema.Schema, path string) (found *schema.Schema, root, key string, err error) {
	var b strings.Builder
	for rest := path; rest != ""; {
		switch rest[0] {
		case '[':
			return nil, "", "", fmt.Errorf("array notation is not allowed")
		case ']':
			return nil, "", "", fmt.Errorf("expected [ or . but got: ]")
		case '.':
		default:
			name, _, _ := strings.Cut(rest, ".")
			name, _, _ = strings.Cut(name, "[")
			return nil, "", "", fmt.Errorf("expected [ or . but got: %s", name)
		}
		rest = rest[1:]
		end := strings.IndexAny(rest, ".[]")
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			if rest == "" {
				return nil, "", "", fmt.Errorf("unexpected end of JSON path")
			}
			end = 1 // a delimiter taken as a name, as kube's scanner does
		}
		name := rest[:end]
		rest = rest[end:]
		switch {
		case s == nil:
			return nil, "", "", fmt.Errorf("does not refer to a valid field")
		case s.Properties != nil:
			next, ok := s.Properties[name]
			if !ok {
				return nil, "", "", fmt.Errorf("does not refer to a valid field")
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name)
			s = next
		case s.AdditionalProperties != nil:
			b.WriteString("[" + name + "]")
			s = s.AdditionalProperties
		default:
			return nil, "", "", fmt.Errorf("does not refer to a valid field")
		}
		if root == "" {
			root = name
		}
	}
	return s, root, b.String(), nil
}

// acceptedReviewVersions are the ConversionReview versions a webhook may
// be asked in.
const acceptedReviewVersions = "v1, v1beta1"

func validateConversion(s *Spec) []*validation.Error {
	var errs []*validation.Error
	c := s.Conversion
	if c != nil && c.Strategy != NoneConverter && s.PreserveUnknownFields {
		errs = append(errs, invalid("spec.conversion.strategy", c.Strategy, "must be None if spec.preserveUnknownFields is true"))
	}
	if c == nil {
		return errs
	}
	var cc *WebhookClientConfig
	var reviews []string
	if c.Webhook != nil {
		cc, reviews = c.Webhook.ClientConfig, c.Webhook.ConversionReviewVersions
	}
	const path = "spec.conversion"
	switch c.Strategy {
	case "":
		errs = append(errs, required(path+".strategy", ""))
	case NoneConverter, WebhookConverter:
	default:
		errs = append(errs, notSupported(path+".strategy", c.Strategy, NoneConverter, WebhookConverter))
	}
	if c.Strategy != WebhookConverter {
		if cc != nil {
			errs = append(errs, forbidden(path+".webhookClientConfig", "should not be set when strategy is not set to Webhook"))
		}
		if len(reviews) > 0 {
			errs = append(errs, forbidden(path+".conversionReviewVersions", "should not be set when strategy is not set to Webhook"))
		}
		return errs
	}
	switch {
	case cc == nil:
		errs = append(errs, required(path+".webhookClientConfig", "required when strategy is set to Webhook"))
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, required(path+".webhookClientConfig", "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, webhookURLErrors(*cc.URL, path+".webhookClientConfig.url")...)
	default:
		errs = append(errs, webhookServiceErrors(cc.Service, path+".webhookClientConfig.service")...)
	}
	at := path + ".conversionReviewVersions"
	if len(reviews) == 0 {
		return append(errs, required(at, ""))
	}
	seen, accepted := map[string]bool{}, false
	for i, v := range reviews {
		vi := at + "[" + strconv.Itoa(i) + "]"
		if seen[v] {
			errs = append(errs, invalid(vi, v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range names.IsDNS1035Label(v) {
			errs = append(errs, invalid(vi, v, msg))
		}
		accepted = accepted || v == "v1" || v == "v1beta1"
	}
	if !accepted {
		errs = append(errs, invalid(at, reviews, "must include at least one of "+acceptedReviewVersions))
	}
	return errs
}

func webhookURLErrors(raw, path string) []*validation.Error {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return []*validation.Error{required(path, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs []*validation.Error
	if u.Scheme != "https" {
		errs = append(errs, invalid(path, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, invalid(path, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, invalid(path, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, invalid(path, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, invalid(path, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

// webhookServiceErrors checks a webhook's service. kube-apiserver passes
// the service's name where its check takes the namespace and the other way
// round, so an empty name is reported as the namespace; kept, as clients
// see that.
func webhookServiceErrors(svc *ServiceReference, path string) []*validation.Error {
	var errs []*validation.Error
	if svc.Namespace == "" {
		errs = append(errs, required(path+".name", ""))
	}
	if svc.Name == "" {
		errs = append(errs, required(path+".namespace", ""))
	}
	port := int32(443)
	if svc.Port != nil {
		port = *svc.Port
	}
	if port < 1 || port > 65535 {
		errs = append(errs, invalid(path+".port", port, "port is not valid: must be between 1 and 65535, inclusive"))
	}
	if svc.Path == nil || *svc.Path == "/" || *svc.Path == "" {
		return errs
	}
	p := *svc.Path
	if p == "//" {
		return append(errs, invalid(path+".path", p, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(p, "/") {
		errs = append(errs, invalid(path+".path", p, "must start with a '/'"))
	}
	check := strings.TrimSuffix(p[1:], "/")
	for i, step := range strings.Split(check, "/") {
		if step == "" {
			errs = append(errs, invalid(path+".path", p, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range names.IsDNS1123Subdomain(step) {
			errs = append(errs, invalid(path+".path", p, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}
