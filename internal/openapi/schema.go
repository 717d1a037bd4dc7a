package openapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// Schemas by reflection.

// structSchema is the object schema of a struct type's JSON fields. path is
// the JSON path of the struct, for errors.
func (b *openAPIBuilder) structSchema(t reflect.Type, path string) (*oapiSchema, error) {
	descriptions := oapiMetaDescriptions[t]
	s := &oapiSchema{Type: "object", Description: descriptions[""]}
	for _, f := range jsonfields.Of(t) {
		fieldPath := f.Name
		if path != "" {
			fieldPath = path + "." + f.Name
		}
		fs, err := b.schemaOf(f.Type, fieldPath)
		if err != nil {
			return nil, err
		}
		if f.Quoted {
			// `json:",string"` writes a number or bool as a string.
			fs = &oapiSchema{Type: "string"}
		}
		if fs.Ref != "" {
			// A $ref has no siblings in OpenAPI 3.0: wrap it to describe the field.
			fs = &oapiSchema{AllOf: []*oapiSchema{fs}}
		}
		fs.Description = f.StructField.Tag.Get("description")
		if d := oapiMetaDescriptions[f.Owner][f.Name]; d != "" && fs.Description == "" {
			fs.Description = d
		}
		fs.PatchStrategy = f.StructField.Tag.Get("patchStrategy")
		fs.PatchMergeKey = f.StructField.Tag.Get("patchMergeKey")
		if lt, ok := f.StructField.Tag.Lookup("listType"); ok {
			fs.ListType = lt
		} else if lt := oapiMetaListTypes[f.Owner][f.Name]; lt != "" {
			fs.ListType = lt
		}
		if keys := f.StructField.Tag.Get("listMapKey"); keys != "" {
			fs.ListMapKeys = strings.Split(keys, ",")
		} else if fs.ListType == "map" && fs.PatchMergeKey != "" {
			fs.ListMapKeys = []string{fs.PatchMergeKey}
		}
		if mt := f.StructField.Tag.Get("mapType"); mt != "" {
			fs.MapType = mt
		}
		declared, err := declaredKeywords(fs, f.StructField)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", fieldPath, err)
		}
		if s.Properties == nil {
			s.Properties = map[string]*oapiSchema{}
		}
		s.Properties[f.Name] = fs
		if declared != nil && *declared || declared == nil && kubesOwn(t) && kubeRequired(t, f) {
			s.Required = append(s.Required, f.Name)
		}
	}
	if t == reflect.TypeFor[kapi.OwnerReference]() {
		s.MapType = "atomic"
	}
	return s, nil
}

// A field is required when the server refuses an object without it, so
// that the schema says what the server holds. A registered type's field is
// required when it declares so (validate:"required"), which the server
// enforces (an absent field decodes to an empty value, refused with
// "Required value"). Leaving out omitempty does not make it required, as
// it does for a CustomResourceDefinition made by controller-gen: a decoded
// Go value cannot tell an absent field from a zero one, so the server
// could not refuse its absence with kube's cause. Kubernetes' own types
// (kapi's meta types, package builtin's kinds) keep the schema
// kube-openapi gives them, derived from omitempty, where kapi validates
// them as kube-apiserver does.

// kubesOwn says whether t is one of Kubernetes' own types, as kapi and
// its package builtin declare them.
func kubesOwn(t reflect.Type) bool {
	pkg := t.PkgPath()
	return pkg == kapiPackage || pkg == kapiPackage+"/builtin"
}

var kapiPackage = reflect.TypeFor[kapi.Object]().PkgPath()

// kubeRequired is kube-openapi's rule: a field is required unless it may
// be left out of the JSON or is a pointer, save the exceptions where the
// server accepts its absence.
func kubeRequired(t reflect.Type, f jsonfields.Field) bool {
	return !f.OmitEmpty && !f.OmitZero && !f.Optional && f.Type.Kind() != reflect.Pointer && !oapiMetaOptional[t] &&
		!oapiNotRequired[t][f.Name]
}

// oapiNotRequired are fields of meta types that kube-openapi lists as
// required but kube-apiserver accepts without: a Condition's message
// (metav1 ValidateCondition checks only its length).
var oapiNotRequired = map[reflect.Type]map[string]bool{
	reflect.TypeFor[kapi.Condition](): {"message": true},
}

var (
	oapiJSONMarshaler = reflect.TypeFor[json.Marshaler]()
	oapiTextMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// schemaOf is the schema of a value of type t at the JSON path path.
func (b *openAPIBuilder) schemaOf(t reflect.Type, path string) (*oapiSchema, error) {
	target, ok := jsonfields.Deref(t, nil)
	if !ok {
		return nil, fmt.Errorf("field %s: type %v has no JSON form: its pointers have no end", path, t)
	}
	t = target
	if _, ok := oapiMetaNames[t]; ok {
		return b.metaRef(t)
	}
	if name, ok := b.named[t]; ok {
		return oapiRef(name), nil
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		return &oapiSchema{Type: "string", Format: "date-time"}, nil
	case jsonfields.Implements(t, oapiJSONMarshaler):
		// A type that writes its own JSON may write anything.
		return &oapiSchema{PreserveUnknown: true}, nil
	case jsonfields.Implements(t, oapiTextMarshaler):
		return &oapiSchema{Type: "string"}, nil
	}
	if t.Name() == "" {
		return b.kindSchema(t, path) // only a named type can refer to itself
	}
	// A type that refers to itself (type Node struct{ Kids []Node }, type
	// Tree map[string]Tree) becomes a component of its own.
	if b.inProgress[t] {
		b.recursive[t] = true
		return oapiRef(b.componentName(t)), nil
	}
	b.inProgress[t] = true
	s, err := b.kindSchema(t, path)
	delete(b.inProgress, t)
	if err != nil || !b.recursive[t] {
		return s, err
	}
	b.schemas[b.named[t]] = s
	return oapiRef(b.named[t]), nil
}

// kindSchema is the schema of a type by its kind, for schemaOf.
func (b *openAPIBuilder) kindSchema(t reflect.Type, path string) (*oapiSchema, error) {
	switch t.Kind() {
	case reflect.Bool:
		return &oapiSchema{Type: "boolean"}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return &oapiSchema{Type: "integer", Format: "int32"}, nil
	case reflect.Int, reflect.Int64, reflect.Uint32:
		return &oapiSchema{Type: "integer", Format: "int64"}, nil
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return &oapiSchema{Type: "integer"}, nil
	case reflect.Float32:
		return &oapiSchema{Type: "number", Format: "float"}, nil
	case reflect.Float64:
		return &oapiSchema{Type: "number", Format: "double"}, nil
	case reflect.String:
		return &oapiSchema{Type: "string"}, nil
	case reflect.Interface:
		return &oapiSchema{PreserveUnknown: true}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !jsonfields.Implements(t.Elem(), oapiJSONMarshaler) && !jsonfields.Implements(t.Elem(), oapiTextMarshaler) {
			return &oapiSchema{Type: "string", Format: "byte"}, nil // base64
		}
		fallthrough
	case reflect.Array:
		items, err := b.schemaOf(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return &oapiSchema{Type: "array", Items: items}, nil
	case reflect.Map:
		// The map is an object both ways: kapi decodes what it serves.
		if k := t.Key(); !jsonfields.MapKeyEncodes(k) || !jsonfields.MapKeyDecodes(k) {
			return nil, fmt.Errorf("field %s: map key type %v cannot be a JSON object key", path, k)
		}
		values, err := b.schemaOf(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return &oapiSchema{Type: "object", AdditionalProperties: values}, nil
	case reflect.Struct:
		return b.structSchema(t, path)
	}
	return nil, fmt.Errorf("field %s: type %v has no JSON form", path, t)
}

// componentName names a user type that gets a component of its own after
// the group version and its Go name, with a number added when two types
// share a Go name.
func (b *openAPIBuilder) componentName(t reflect.Type) string {
	if name, ok := b.named[t]; ok {
		return name
	}
	// Generic instantiations have brackets and package paths in their names.
	base := b.modelName(strings.Map(func(c rune) rune {
		if c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || c == '.') {
			return c
		}
		return '_'
	}, t.Name()))
	name := base
	for i := 2; b.taken[name]; i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	b.named[t], b.taken[name] = name, true
	return name
}
