package kinds

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/internal/jsonpath"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
)

// shape is what one version's schema says of its objects, made once when
// the kind is registered: the apiserver.Shape of the version.
type shape struct {
	schema      *schema.Schema // nil: any object, unknown fields kept
	defaults    *schema.Schema // schema with its defaults pruned, as kube-apiserver serves them
	hasDefaults bool
	patch       *patch.Schema
	openAPI     map[string]any
}

var _ apiserver.Shape = (*shape)(nil)

func newShape(s *schema.Schema) (*shape, error) {
	sh := &shape{schema: s}
	if s != nil {
		sh.defaults = s.PrunedDefaults()
		sh.hasDefaults = hasDefault(sh.defaults)
	}
	meta, err := patch.SchemaOf(reflect.TypeFor[kapi.ObjectMeta]())
	if err != nil {
		return nil, err
	}
	root := patchSchema(s, meta, false)
	if root.Kind != patch.Struct {
		root = &patch.Schema{Kind: patch.Struct, Elem: root.Elem, MapType: root.MapType}
		if s == nil || s.PreservesUnknownFields() {
			root.Elem = &patch.Schema{Kind: patch.Deduced}
		}
	}
	fields := maps.Clone(root.Fields)
	if fields == nil {
		fields = map[string]*patch.Schema{}
	}
	fields["apiVersion"], fields["kind"] = &patch.Schema{Kind: patch.Scalar}, &patch.Schema{Kind: patch.Scalar}
	fields["metadata"] = meta
	root.Fields = fields
	sh.patch = root
	sh.openAPI = openAPISchema(s)
	if s == nil {
		sh.openAPI = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	return sh, nil
}

// Prune drops what the schema does not specify, and the members of
// metadata an ObjectMeta does not hold. It reports them in
// kube-apiserver's order (its unstructuredSchemaCoercer's): metadata's
// sorted (it re-encodes metadata as a map before its strict decoding),
// then the pruned ones sorted.
func (sh *shape) Prune(obj kapi.Object) []string {
	o := obj.(*Object)
	unknown := o.unknownMeta
	o.unknownMeta = nil
	slices.Sort(unknown)
	if sh.schema != nil {
		body := o.body()
		pruned := sh.schema.Prune(body)
		slices.Sort(pruned)
		unknown = append(unknown, pruned...)
		o.setBody(body)
	}
	return unknown
}

// Read defaults an object read from storage, as kube-apiserver does, and
// says whether that changed it.
func (sh *shape) Read(obj kapi.Object) bool {
	if !sh.hasDefaults {
		return false
	}
	o := obj.(*Object)
	before := deepCopy(o.body())
	sh.setDefaults(o)
	return !reflect.DeepEqual(before, o.body())
}

// hasDefault says whether a default is declared anywhere in s.
func hasDefault(s *schema.Schema) bool {
	if s == nil {
		return false
	}
	if s.Default != nil || hasDefault(s.Items) || hasDefault(s.AdditionalProperties) {
		return true
	}
	for _, p := range s.Properties {
		if hasDefault(p) {
			return true
		}
	}
	return false
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}

func (sh *shape) setDefaults(o *Object) {
	if sh.defaults == nil {
		return
	}
	body := o.body()
	sh.defaults.SetDefaults(body)
	o.setBody(body)
}

func (sh *shape) Patch() *patch.Schema { return sh.patch }

func (sh *shape) OpenAPI() map[string]any { return sh.openAPI }

// Field reads a selectable field: a string, boolean or integer the schema
// specifies, as a field selector compares it ("" when absent).
func (sh *shape) Field(path string) (func(kapi.Object) string, error) {
	p, err := jsonpath.Parse("." + path)
	if err != nil {
		return nil, err
	}
	names, ok := p.Members()
	if !ok {
		return nil, fmt.Errorf("%q is not a path of member names", path)
	}
	if sh.schema != nil {
		at := sh.schema.At(names...)
		if at == nil {
			return nil, fmt.Errorf("%q is not a field of the schema", path)
		}
		if t := at.Type; t != "string" && t != "boolean" && t != "integer" {
			return nil, fmt.Errorf("%q is of type %q, not a string, boolean or integer", path, t)
		}
	}
	return func(obj kapi.Object) string {
		found := p.Find(obj.(*Object).value(false))
		if len(found) == 0 {
			return ""
		}
		switch v := found[0].(type) {
		case string:
			return v
		case bool:
			return strconv.FormatBool(v)
		case int64:
			return strconv.FormatInt(v, 10)
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return ""
	}, nil
}

// patchSchema is what patches and server-side apply need of a schema, as
// kube-apiserver makes structured-merge-diff's of it (apiextensions'
// OpenAPI builder, then kube-openapi's schemaconv): objects with
// properties are structs, with additionalProperties maps, arrays lists
// with their x-kubernetes-list-type and keys. What a schema leaves open is
// Deduced (each member of an object owned apart, a list or scalar whole):
// an object without properties, a node without a type, and the unknown
// members of an object under x-kubernetes-preserve-unknown-fields, which
// holds for every object below it (schemaconv's preserveUnknownFields is
// inherited). An x-kubernetes-embedded-resource object has apiVersion,
// kind and metadata (meta, an ObjectMeta) as fields.
func patchSchema(s *schema.Schema, meta *patch.Schema, preserve bool) *patch.Schema {
	if s == nil {
		return &patch.Schema{Kind: patch.Deduced}
	}
	preserve = preserve || s.PreservesUnknownFields()
	mapType := s.MapStrategy()
	switch {
	case s.IntOrString:
		return &patch.Schema{Kind: patch.Scalar}
	case s.Type == "object" || len(s.Properties) > 0 || s.EmbeddedResource:
		if len(s.Properties) == 0 && s.AdditionalProperties != nil {
			return &patch.Schema{Kind: patch.Map, Elem: patchSchema(s.AdditionalProperties, meta, preserve), MapType: mapType}
		}
		if len(s.Properties) == 0 && !s.EmbeddedResource {
			if mapType == "atomic" {
				return &patch.Schema{Kind: patch.Untyped}
			}
			return &patch.Schema{Kind: patch.Deduced}
		}
		st := &patch.Schema{Kind: patch.Struct, Fields: make(map[string]*patch.Schema, len(s.Properties)+3), MapType: mapType}
		for name, p := range s.Properties {
			st.Fields[name] = patchSchema(p, meta, preserve)
		}
		if s.EmbeddedResource {
			st.Fields["apiVersion"], st.Fields["kind"] = &patch.Schema{Kind: patch.Scalar}, &patch.Schema{Kind: patch.Scalar}
			st.Fields["metadata"] = meta
		}
		if preserve || s.HasAdditionalProperties && s.AllowsAdditional {
			st.Elem = &patch.Schema{Kind: patch.Deduced}
		}
		return st
	case s.Type == "array":
		listType, keys := s.ListStrategy()
		l := &patch.Schema{Kind: patch.List, Elem: patchSchema(s.Items, meta, preserve), ListType: listType, ListMapKeys: keys}
		if listType == patch.ListMap && len(keys) > 0 {
			l.PatchMergeKey = keys[0]
		}
		return l
	case s.Type == "":
		return &patch.Schema{Kind: patch.Deduced}
	}
	return &patch.Schema{Kind: patch.Scalar}
}

// openAPISchema writes a schema as OpenAPI v3 publishes it, keyword by
// keyword.
func openAPISchema(s *schema.Schema) map[string]any {
	if s == nil {
		return nil
	}
	m := map[string]any{}
	set := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	set("type", s.Type, s.Type != "")
	set("format", s.Format, s.Format != "")
	set("title", s.Title, s.Title != "")
	set("description", s.Description, s.Description != "")
	set("default", s.Default, s.Default != nil)
	set("example", s.Example, s.Example != nil)
	set("nullable", true, s.Nullable)
	for k, p := range map[string]*float64{"maximum": s.Maximum, "minimum": s.Minimum, "multipleOf": s.MultipleOf} {
		if p != nil {
			m[k] = *p
		}
	}
	set("exclusiveMaximum", true, s.ExclusiveMaximum)
	set("exclusiveMinimum", true, s.ExclusiveMinimum)
	for k, p := range map[string]*int64{"maxLength": s.MaxLength, "minLength": s.MinLength, "maxItems": s.MaxItems,
		"minItems": s.MinItems, "maxProperties": s.MaxProperties, "minProperties": s.MinProperties} {
		if p != nil {
			m[k] = *p
		}
	}
	set("pattern", s.Pattern, s.Pattern != "")
	set("enum", s.Enum, len(s.Enum) > 0)
	set("required", s.Required, len(s.Required) > 0)
	set("items", openAPISchema(s.Items), s.Items != nil)
	if len(s.Properties) > 0 {
		props := make(map[string]any, len(s.Properties))
		for name, p := range s.Properties {
			props[name] = openAPISchema(p)
		}
		m["properties"] = props
	}
	switch {
	case s.AdditionalProperties != nil:
		m["additionalProperties"] = openAPISchema(s.AdditionalProperties)
	case s.HasAdditionalProperties:
		m["additionalProperties"] = s.AllowsAdditional
	}
	for k, l := range map[string][]*schema.Schema{"allOf": s.AllOf, "oneOf": s.OneOf, "anyOf": s.AnyOf} {
		if len(l) > 0 {
			out := make([]any, len(l))
			for i, x := range l {
				out[i] = openAPISchema(x)
			}
			m[k] = out
		}
	}
	set("not", openAPISchema(s.Not), s.Not != nil)
	set("x-kubernetes-preserve-unknown-fields", true, s.PreservesUnknownFields())
	set("x-kubernetes-embedded-resource", true, s.EmbeddedResource)
	set("x-kubernetes-int-or-string", true, s.IntOrString)
	if s.ListType != nil {
		m["x-kubernetes-list-type"] = *s.ListType
	}
	set("x-kubernetes-list-map-keys", s.ListMapKeys, len(s.ListMapKeys) > 0)
	if s.MapType != nil {
		m["x-kubernetes-map-type"] = *s.MapType
	}
	if len(s.Validations) > 0 {
		rules := make([]any, len(s.Validations))
		for i, r := range s.Validations {
			rule := map[string]any{"rule": r.Rule}
			if r.Message != "" {
				rule["message"] = r.Message
			}
			if r.MessageExpression != "" {
				rule["messageExpression"] = r.MessageExpression
			}
			if r.Reason != nil {
				rule["reason"] = *r.Reason
			}
			if r.FieldPath != "" {
				rule["fieldPath"] = r.FieldPath
			}
			rules[i] = rule
		}
		m["x-kubernetes-validations"] = rules
	}
	return m
}

// stripDot is a JSON path without its leading dot, as field selectors and
// apiserver name fields.
func stripDot(path string) string { return strings.TrimPrefix(path, ".") }

// Scale maps the scale subresource onto the paths p names: integers under
// spec and status, and a string under status for the selector.
func (sh *shape) Scale(p apiserver.ScalePaths) (read func(kapi.Object) (int32, int32, string), set func(kapi.Object, int32), err error) {
	path := func(s, under, typ string) ([]string, error) {
		jp, err := jsonpath.Parse(s)
		names, ok := jp.Members()
		switch {
		case err != nil:
			return nil, err
		case !ok || len(names) < 2 || names[0] != under:
			return nil, fmt.Errorf("scale path %q must be a path of member names under .%s", s, under)
		case sh.schema != nil && (sh.schema.At(names...) == nil || sh.schema.At(names...).Type != typ):
			return nil, fmt.Errorf("scale path %q must lead to a field of type %s", s, typ)
		}
		return names, nil
	}
	spec, err := path(p.SpecReplicas, "spec", "integer")
	if err != nil {
		return nil, nil, err
	}
	status, err := path(p.StatusReplicas, "status", "integer")
	if err != nil {
		return nil, nil, err
	}
	var selector []string
	if p.LabelSelector != "" {
		if selector, err = path(p.LabelSelector, "status", "string"); err != nil {
			return nil, nil, err
		}
	}
	read = func(obj kapi.Object) (int32, int32, string) {
		body := obj.(*Object).body()
		n := func(names []string) int32 {
			v, _ := lookup(body, names).(int64)
			return int32(v)
		}
		sel, _ := lookup(body, selector).(string)
		return n(spec), n(status), sel
	}
	set = func(obj kapi.Object, n int32) {
		o := obj.(*Object)
		body := o.body() // a new map: what o shares stays as it is
		m := body
		for _, name := range spec[:len(spec)-1] {
			next, _ := m[name].(map[string]any)
			next = maps.Clone(next)
			if next == nil {
				next = map[string]any{}
			}
			m[name], m = next, next
		}
		m[spec[len(spec)-1]] = int64(n)
		o.setBody(body)
	}
	return read, set, nil
}

// lookup follows member names in v; nil where they lead nowhere.
func lookup(v any, names []string) any {
	if len(names) == 0 {
		return nil
	}
	for _, name := range names {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}
