package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// ParseError is a schema document that is not a JSONSchemaProps: an
// unknown keyword, or a keyword whose value has the wrong JSON type. Path
// names the keyword from the schema's root (properties.spec.properties.x.type).
type ParseError struct {
	Path string
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Parse reads a JSONSchemaProps (a CustomResourceDefinition's
// openAPIV3Schema) from JSON. An unknown keyword is an error, as in a
// strictly decoded CustomResourceDefinition; so is a keyword whose value
// has the wrong type.
func Parse(data []byte) (*Schema, error) {
	v, err := DecodeJSON(data)
	if err != nil {
		return nil, &ParseError{Msg: err.Error()}
	}
	return FromValue(v)
}

// DecodeJSON reads one JSON value as the rest of this package expects
// values: objects as map[string]any, arrays as []any, integral numbers
// that fit as int64, other numbers as float64 (as Kubernetes' unstructured
// decoding does, and as package patch decodes).
func DecodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return Normalize(v), nil
}

// Normalize turns the numbers of a decoded JSON value into int64 (integral
// and in range) or float64, in place where it can: json.Number, int,
// int32, uint and float32 values are converted. Maps and lists are changed
// in place; the value returned replaces v.
func Normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = Normalize(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = Normalize(x)
		}
		return v
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case int16:
		return int64(v)
	case int8:
		return int64(v)
	case uint:
		return uintNumber(uint64(v))
	case uint64:
		return uintNumber(v)
	case uint32:
		return int64(v)
	case float32:
		return float64(v)
	}
	return v
}

func uintNumber(u uint64) any {
	if u > math.MaxInt64 {
		return float64(u)
	}
	return int64(u)
}

// FromValue reads a JSONSchemaProps from a decoded JSON value (as held in
// a CustomResourceDefinition decoded without a Go type).
func FromValue(v any) (*Schema, error) {
	p := parser{}
	return p.schema(v)
}

type parser struct {
	path []string
}

func (p *parser) errorf(key, format string, args ...any) error {
	path := joinPath(p.path, key)
	return &ParseError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

func joinPath(parts []string, last string) string {
	var b []byte
	for _, s := range append(slices.Clip(parts), last) {
		if s == "" {
			continue
		}
		if len(b) > 0 && s[0] != '[' {
			b = append(b, '.')
		}
		b = append(b, s...)
	}
	return string(b)
}

func (p *parser) sub(key string, v any) (*Schema, error) {
	p.path = append(p.path, key)
	s, err := p.schema(v)
	p.path = p.path[:len(p.path)-1]
	return s, err
}

func (p *parser) schema(v any) (*Schema, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, p.errorf("", "must be an object, not %s", jsonKind(v))
	}
	s := &Schema{}
	for key, x := range m {
		if x == nil {
			// A null keyword is an absent one, as in Kubernetes' decoding
			// into pointers and zero values.
			continue
		}
		if err := p.keyword(s, key, x); err != nil {
			return nil, err
		}
	}
	// An empty list or map is an absent one, as Kubernetes reads them.
	if len(s.Enum) == 0 {
		s.Enum = nil
	}
	if len(s.AllOf) == 0 {
		s.AllOf = nil
	}
	if len(s.AnyOf) == 0 {
		s.AnyOf = nil
	}
	if len(s.OneOf) == 0 {
		s.OneOf = nil
	}
	if len(s.Properties) == 0 {
		s.Properties = nil
	}
	s.setWalks()
	return s, nil
}

func (p *parser) keyword(s *Schema, key string, x any) error {
	var err error
	switch key {
	case "id":
		s.ID, err = p.str(key, x)
	case "$schema":
		s.SchemaURI, err = p.str(key, x)
	case "$ref":
		var r string
		r, err = p.str(key, x)
		s.Ref = &r
	case "description":
		s.Description, err = p.str(key, x)
		s.set |= kwDescription
	case "type":
		s.Type, err = p.str(key, x)
		s.set |= kwType
	case "format":
		s.Format, err = p.str(key, x)
	case "title":
		s.Title, err = p.str(key, x)
		s.set |= kwTitle
	case "default":
		s.Default = x
		s.set |= kwDefault
	case "example":
		s.Example = x
		s.set |= kwExample
	case "maximum":
		s.Maximum, err = p.float(key, x)
	case "minimum":
		s.Minimum, err = p.float(key, x)
	case "multipleOf":
		s.MultipleOf, err = p.float(key, x)
	case "exclusiveMaximum":
		s.ExclusiveMaximum, err = p.boolean(key, x)
	case "exclusiveMinimum":
		s.ExclusiveMinimum, err = p.boolean(key, x)
	case "maxLength":
		s.MaxLength, err = p.integer(key, x)
	case "minLength":
		s.MinLength, err = p.integer(key, x)
	case "maxItems":
		s.MaxItems, err = p.integer(key, x)
	case "minItems":
		s.MinItems, err = p.integer(key, x)
	case "maxProperties":
		s.MaxProperties, err = p.integer(key, x)
	case "minProperties":
		s.MinProperties, err = p.integer(key, x)
	case "pattern":
		s.Pattern, err = p.str(key, x)
	case "uniqueItems":
		s.UniqueItems, err = p.boolean(key, x)
	case "enum":
		l, ok := x.([]any)
		if !ok {
			return p.errorf(key, "must be an array, not %s", jsonKind(x))
		}
		s.Enum = l
	case "required":
		s.Required, err = p.strings(key, x)
	case "items":
		if l, ok := x.([]any); ok {
			s.ItemsList, err = p.list(key, l)
		} else {
			s.Items, err = p.sub(key, x)
		}
	case "allOf":
		s.AllOf, err = p.schemaList(key, x)
	case "oneOf":
		s.OneOf, err = p.schemaList(key, x)
	case "anyOf":
		s.AnyOf, err = p.schemaList(key, x)
	case "not":
		s.Not, err = p.sub(key, x)
	case "properties":
		s.Properties, err = p.schemaMap(key, x)
	case "patternProperties":
		s.PatternProperties, err = p.schemaMap(key, x)
	case "definitions":
		s.Definitions, err = p.schemaMap(key, x)
	case "additionalProperties":
		s.HasAdditionalProperties = true
		if b, ok := x.(bool); ok {
			s.AllowsAdditional = b
		} else {
			s.AllowsAdditional = true
			s.AdditionalProperties, err = p.sub(key, x)
		}
	case "additionalItems":
		s.HasAdditionalItems = true
		if _, ok := x.(bool); !ok {
			s.AdditionalItems, err = p.sub(key, x)
		}
	case "dependencies":
		m, ok := x.(map[string]any)
		if !ok {
			return p.errorf(key, "must be an object, not %s", jsonKind(x))
		}
		s.Dependencies = make(map[string]Dependency, len(m))
		for name, d := range m {
			var dep Dependency
			p.path = append(p.path, key)
			if _, ok := d.([]any); ok {
				dep.Property, err = p.strings(name, d)
			} else {
				dep.Schema, err = p.sub(name, d)
			}
			p.path = p.path[:len(p.path)-1]
			if err != nil {
				return err
			}
			s.Dependencies[name] = dep
		}
	case "externalDocs":
		m, ok := x.(map[string]any)
		if !ok {
			return p.errorf(key, "must be an object, not %s", jsonKind(x))
		}
		s.ExternalDocs = &ExternalDocs{}
		s.set |= kwExternalDocs
		p.path = append(p.path, key)
		for k, v := range m {
			switch k {
			case "description":
				s.ExternalDocs.Description, err = p.str(k, v)
			case "url":
				s.ExternalDocs.URL, err = p.str(k, v)
			default:
				err = p.errorf("", "unknown field %q", k)
			}
			if err != nil {
				break
			}
		}
		p.path = p.path[:len(p.path)-1]
	case "nullable":
		s.Nullable, err = p.boolean(key, x)
		s.set |= kwNullable
	case "x-kubernetes-preserve-unknown-fields":
		var b bool
		b, err = p.boolean(key, x)
		s.PreserveUnknownFields = &b
	case "x-kubernetes-embedded-resource":
		s.EmbeddedResource, err = p.boolean(key, x)
	case "x-kubernetes-int-or-string":
		s.IntOrString, err = p.boolean(key, x)
	case "x-kubernetes-list-map-keys":
		s.ListMapKeys, err = p.strings(key, x)
	case "x-kubernetes-list-type":
		var t string
		t, err = p.str(key, x)
		s.ListType = &t
	case "x-kubernetes-map-type":
		var t string
		t, err = p.str(key, x)
		s.MapType = &t
	case "x-kubernetes-validations":
		s.Validations, err = p.rules(key, x)
	default:
		return p.errorf("", "unknown field %q", key)
	}
	return err
}

func (p *parser) str(key string, x any) (string, error) {
	s, ok := x.(string)
	if !ok {
		return "", p.errorf(key, "must be a string, not %s", jsonKind(x))
	}
	return s, nil
}

func (p *parser) boolean(key string, x any) (bool, error) {
	b, ok := x.(bool)
	if !ok {
		return false, p.errorf(key, "must be a boolean, not %s", jsonKind(x))
	}
	return b, nil
}

func (p *parser) float(key string, x any) (*float64, error) {
	switch n := x.(type) {
	case int64:
		f := float64(n)
		return &f, nil
	case float64:
		return &n, nil
	}
	return nil, p.errorf(key, "must be a number, not %s", jsonKind(x))
}

func (p *parser) integer(key string, x any) (*int64, error) {
	switch n := x.(type) {
	case int64:
		return &n, nil
	case float64:
		// encoding/json refuses a fraction or exponent for an int64 field.
		return nil, p.errorf(key, "must be an integer, not %v", n)
	}
	return nil, p.errorf(key, "must be an integer, not %s", jsonKind(x))
}

func (p *parser) strings(key string, x any) ([]string, error) {
	l, ok := x.([]any)
	if !ok {
		return nil, p.errorf(key, "must be an array of strings, not %s", jsonKind(x))
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, p.errorf(key+"["+strconv.Itoa(i)+"]", "must be a string, not %s", jsonKind(e))
		}
		out[i] = s
	}
	return out, nil
}

func (p *parser) list(key string, l []any) ([]*Schema, error) {
	out := make([]*Schema, len(l))
	for i, e := range l {
		s, err := p.sub(key+"["+strconv.Itoa(i)+"]", e)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (p *parser) schemaList(key string, x any) ([]*Schema, error) {
	l, ok := x.([]any)
	if !ok {
		return nil, p.errorf(key, "must be an array, not %s", jsonKind(x))
	}
	return p.list(key, l)
}

func (p *parser) schemaMap(key string, x any) (map[string]*Schema, error) {
	m, ok := x.(map[string]any)
	if !ok {
		return nil, p.errorf(key, "must be an object, not %s", jsonKind(x))
	}
	out := make(map[string]*Schema, len(m))
	p.path = append(p.path, key)
	defer func() { p.path = p.path[:len(p.path)-1] }()
	for name, e := range m {
		s, err := p.sub(name, e)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

func (p *parser) rules(key string, x any) ([]Rule, error) {
	l, ok := x.([]any)
	if !ok {
		return nil, p.errorf(key, "must be an array, not %s", jsonKind(x))
	}
	out := make([]Rule, len(l))
	for i, e := range l {
		at := key + "[" + strconv.Itoa(i) + "]"
		m, ok := e.(map[string]any)
		if !ok {
			return nil, p.errorf(at, "must be an object, not %s", jsonKind(e))
		}
		p.path = append(p.path, at)
		var err error
		for k, v := range m {
			if v == nil {
				continue
			}
			r := &out[i]
			switch k {
			case "rule":
				r.Rule, err = p.str(k, v)
			case "message":
				r.Message, err = p.str(k, v)
			case "messageExpression":
				r.MessageExpression, err = p.str(k, v)
			case "reason":
				var s string
				s, err = p.str(k, v)
				r.Reason = &s
			case "fieldPath":
				r.FieldPath, err = p.str(k, v)
			case "optionalOldSelf":
				var b bool
				b, err = p.boolean(k, v)
				r.OptionalOldSelf = &b
			default:
				err = p.errorf("", "unknown field %q", k)
			}
			if err != nil {
				break
			}
		}
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// jsonKind names the JSON type of a decoded value, as messages show it.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64, float64, json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
