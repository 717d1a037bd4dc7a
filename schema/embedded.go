package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

// validateEmbedded checks the apiVersion, kind and metadata of the
// embedded resources in obj (apiextensions-apiserver's objectmeta.Validate);
// root says whether obj itself is one.
func (s *Schema) validateEmbedded(path string, obj any, root bool) []*validation.Error {
	if s == nil || (!root && !s.walks(walkEmbedded)) {
		return nil
	}
	var errs []*validation.Error
	switch x := obj.(type) {
	case map[string]any:
		if root || s.EmbeddedResource {
			errs = append(errs, validateResource(path, x)...)
		}
		for k := range x {
			if prop, ok := s.Properties[k]; ok {
				errs = append(errs, prop.validateEmbedded(child(path, k), x[k], false)...)
			} else if s.AdditionalProperties != nil {
				errs = append(errs, s.AdditionalProperties.validateEmbedded(keyPath(path, k), x[k], false)...)
			}
		}
	case []any:
		for i, v := range x {
			errs = append(errs, s.Items.validateEmbedded(indexPath(path, i), v, false)...)
		}
	}
	return errs
}

func invalid(path string, value any, detail string) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueInvalid, Field: path, BadValue: value, Detail: detail}
}

func required(path string) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueRequired, Field: path, BadValue: ""}
}

var (
	dns1035Label = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

const (
	dns1035Message = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
	dns1123Message = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

func labelProblems(value string, re *regexp.Regexp, message string) []string {
	var out []string
	if len(value) > 63 {
		out = append(out, "must be no more than 63 characters")
	}
	if !re.MatchString(value) {
		out = append(out, message)
	}
	return out
}

// validateResource checks one embedded resource's apiVersion, kind and
// metadata as kube-apiserver does.
func validateResource(path string, x map[string]any) []*validation.Error {
	var errs []*validation.Error
	if _, ok := x["apiVersion"]; !ok {
		errs = append(errs, required(child(path, "apiVersion")))
	}
	if _, ok := x["kind"]; !ok {
		errs = append(errs, required(child(path, "kind")))
	}
	for _, k := range slices.Sorted(maps.Keys(x)) {
		v := x[k]
		at := child(path, k)
		switch k {
		case "apiVersion":
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, invalid(at, v, "must be a string"))
			case s == "":
				errs = append(errs, invalid(at, s, "must not be empty"))
			case s != "/" && strings.Count(s, "/") > 1:
				errs = append(errs, invalid(at, s, "unexpected GroupVersion string: "+s))
			}
		case "kind":
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, invalid(at, v, "must be a string"))
			case s == "":
				errs = append(errs, invalid(at, s, "must not be empty"))
			default:
				if p := labelProblems(strings.ToLower(s), dns1035Label, dns1035Message); len(p) > 0 {
					errs = append(errs, invalid(at, s, "may have mixed case, but should otherwise match: "+strings.Join(p, ",")))
				}
			}
		case "metadata":
			var meta kapi.ObjectMeta
			if err := decodeMeta(v, &meta); err != nil {
				errs = append(errs, invalid(at, v, err.Error()))
				continue
			}
			errs = append(errs, validateMeta(at, &meta)...)
		}
	}
	return errs
}

// validateMeta checks the names of an embedded resource's metadata (part
// of what kube-apiserver's ValidateObjectMeta checks; see the package
// documentation).
func validateMeta(path string, meta *kapi.ObjectMeta) []*validation.Error {
	var errs []*validation.Error
	name := meta.Name
	if name == "" {
		name = "fakename" // as kube-apiserver does, so that an absent name passes
	}
	if meta.GenerateName != "" {
		for _, msg := range pathSegmentProblems(meta.GenerateName, true) {
			errs = append(errs, invalid(child(path, "generateName"), meta.GenerateName, msg))
		}
	}
	for _, msg := range pathSegmentProblems(name, false) {
		errs = append(errs, invalid(child(path, "name"), name, msg))
	}
	if meta.Namespace != "" {
		for _, msg := range labelProblems(meta.Namespace, dns1123Label, dns1123Message) {
			errs = append(errs, invalid(child(path, "namespace"), meta.Namespace, msg))
		}
	}
	return errs
}

// pathSegmentProblems is what makes a name unfit to be a path segment.
func pathSegmentProblems(name string, prefix bool) []string {
	if !prefix && (name == "." || name == "..") {
		return []string{fmt.Sprintf("may not be '%s'", name)}
	}
	var out []string
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(name, bad) {
			out = append(out, fmt.Sprintf("may not contain '%s'", bad))
		}
	}
	return out
}

// metaJSON decodes as Kubernetes decodes an ObjectMeta: names match
// exactly.
var metaJSON = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.MatchCaseInsensitiveNames(false))

func decodeMeta(v any, meta *kapi.ObjectMeta) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	err = jsonv2.Unmarshal(b, meta, metaJSON)
	if err == nil {
		return nil
	}
	// The words of encoding/json's error, which Kubernetes' decoder
	// shares, with Kubernetes' package name for the types.
	var again kapi.ObjectMeta
	if plain := json.Unmarshal(b, &again); plain != nil {
		err = plain
	}
	return errors.New(strings.ReplaceAll(err.Error(), "kapi.", "v1."))
}

// metaFields are the members of an ObjectMeta.
var metaFields = map[string]bool{
	"name": true, "generateName": true, "namespace": true, "selfLink": true, "uid": true,
	"resourceVersion": true, "generation": true, "creationTimestamp": true, "deletionTimestamp": true,
	"deletionGracePeriodSeconds": true, "labels": true, "annotations": true, "ownerReferences": true,
	"finalizers": true, "managedFields": true,
}

// coerceEmbedded makes the metadata of the embedded resources in x what
// an ObjectMeta holds, as kube-apiserver does by decoding it into one and
// back: unknown members are dropped and reported, members an ObjectMeta
// cannot hold dropped, empty ones left out. An apiVersion or kind that is
// not a string is dropped. root says whether x itself is an embedded
// resource.
func coerceEmbedded(x any, s *Schema, p *pruner, root bool) {
	coerceAt("", x, s, p, root)
}

// coerceAt is coerceEmbedded of x found at path; the fields dropped from
// metadata are named from it as kube-apiserver names them (field path
// style: a map's key in brackets).
func coerceAt(path string, x any, s *Schema, p *pruner, root bool) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if root || s.EmbeddedResource {
				switch k {
				case "apiVersion", "kind":
					if _, ok := v.(string); !ok {
						delete(x, k)
					}
				case "metadata":
					coerceMeta(child(path, "metadata"), x, p)
				}
			}
			if prop, ok := s.Properties[k]; ok {
				coerceAt(child(path, k), v, prop, p, false)
			} else if s.AdditionalProperties != nil {
				coerceAt(keyPath(path, k), v, s.AdditionalProperties, p, false)
			}
		}
	case []any:
		for i, v := range x {
			coerceAt(indexPath(path, i), v, s.Items, p, false)
		}
	}
}

func coerceMeta(path string, obj map[string]any, p *pruner) {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		if obj["metadata"] != nil {
			return // kube-apiserver leaves metadata that is no object
		}
		m = map[string]any{}
	}
	var meta kapi.ObjectMeta
	selfLink := ""
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !metaFields[k] {
			p.unknown = append(p.unknown, path+"."+k)
			continue
		}
		if k == "selfLink" {
			if s, ok := m[k].(string); ok {
				selfLink = s
			}
			continue
		}
		var one kapi.ObjectMeta
		if decodeMeta(map[string]any{k: m[k]}, &one) == nil {
			_ = decodeMeta(map[string]any{k: m[k]}, &meta)
		}
	}
	b, _ := json.Marshal(&meta)
	out, _ := DecodeJSON(b)
	om, _ := out.(map[string]any)
	if meta.CreationTimestamp.IsZero() {
		delete(om, "creationTimestamp")
	}
	if selfLink != "" {
		om["selfLink"] = selfLink
	}
	obj["metadata"] = om
}
