package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/actions"
)

// Resource is what the generator needs to know of one registered resource.
type Resource struct {
	Group, Version, Kind string // Group "" is the core group (/api/v1)
	Plural               string
	Namespaced           bool
	Type                 reflect.Type // the struct type (not a pointer), embeds kapi.TypeMeta and kapi.ObjectMeta
	Status               bool         // has the /status subresource
	// Schema, if set, is the objects' OpenAPI v3 schema (apiVersion,
	// kind and metadata are added), as a kind defined at run time has
	// it: Type is then not looked into.
	Schema map[string]any
}

// GroupVersion returns the JSON document served at /openapi/v3/apis/{group}/{version}
// (or /openapi/v3/api/v1 for the core group) for the given resources, all of that group/version.
// endpoints are the custom subresources of those resources and the kinds
// answered there and never stored.
func GroupVersion(group, version string, resources []Resource, endpoints ...actions.Endpoint) ([]byte, error) {
	if version == "" {
		return nil, fmt.Errorf("openapi: empty version")
	}
	b := &openAPIBuilder{
		group:      group,
		version:    version,
		schemas:    map[string]*oapiSchema{},
		paths:      map[string]*oapiPathItem{},
		named:      map[reflect.Type]string{},
		taken:      map[string]bool{},
		inProgress: map[reflect.Type]bool{},
		recursive:  map[reflect.Type]bool{},
	}
	rs := slices.Clone(resources)
	slices.SortFunc(rs, func(a, b Resource) int { return strings.Compare(a.Kind, b.Kind) })
	kinds, plurals := map[string]bool{}, map[string]bool{}
	for _, r := range rs {
		switch {
		case r.Group != group || r.Version != version:
			return nil, fmt.Errorf("openapi: resource %s of %s/%s in the document of %s/%s", r.Kind, r.Group, r.Version, group, version)
		case r.Kind == "" || r.Plural == "":
			return nil, fmt.Errorf("openapi: resource %q/%q needs a kind and a plural", r.Kind, r.Plural)
		case r.Schema == nil && (r.Type == nil || r.Type.Kind() != reflect.Struct):
			return nil, fmt.Errorf("openapi: resource %s: type %v is not a struct", r.Kind, r.Type)
		case kinds[r.Kind] || kinds[r.Kind+"List"] || plurals[r.Plural]:
			return nil, fmt.Errorf("openapi: resource %s (%s) registered twice", r.Kind, r.Plural)
		}
		kinds[r.Kind], kinds[r.Kind+"List"], plurals[r.Plural] = true, true, true
		// Known before any schema is built, so that a field of one resource's
		// type, or a type referring to itself, becomes a reference.
		if r.Schema == nil {
			b.named[r.Type] = b.modelName(r.Kind)
		}
		b.taken[b.modelName(r.Kind)], b.taken[b.modelName(r.Kind+"List")] = true, true
	}
	for _, r := range rs {
		if err := b.addResource(r); err != nil {
			return nil, err
		}
	}
	for _, e := range endpoints {
		if err := b.addEndpoint(e, rs); err != nil {
			return nil, err
		}
	}
	doc := oapiDocument{
		OpenAPI:    "3.0.0",
		Info:       oapiInfo{Title: "Kubernetes CRD Swagger", Version: "v0.1.0"},
		Paths:      b.paths,
		Components: oapiComponents{Schemas: map[string]any{}},
	}
	for name, sch := range b.schemas {
		doc.Components.Schemas[name] = sch
		if sch.raw != nil {
			merged, err := sch.merged()
			if err != nil {
				return nil, fmt.Errorf("openapi: %w", err)
			}
			doc.Components.Schemas[name] = merged
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// The document, as far as kapi fills it in. Struct fields keep the key order
// fixed; maps are written with sorted keys.

type oapiDocument struct {
	OpenAPI    string                   `json:"openapi"`
	Info       oapiInfo                 `json:"info"`
	Paths      map[string]*oapiPathItem `json:"paths"`
	Components oapiComponents           `json:"components"`
}

type oapiInfo struct {
	Title   string `json:"title"`
	Version string `json:"version"`
}

type oapiComponents struct {
	Schemas map[string]any `json:"schemas"` // *oapiSchema, or a schema given whole merged with one
}

type oapiPathItem struct {
	Get        *oapiOperation   `json:"get,omitempty"`
	Put        *oapiOperation   `json:"put,omitempty"`
	Post       *oapiOperation   `json:"post,omitempty"`
	Delete     *oapiOperation   `json:"delete,omitempty"`
	Patch      *oapiOperation   `json:"patch,omitempty"`
	Parameters []*oapiParameter `json:"parameters,omitempty"`
}

type oapiOperation struct {
	Tags        []string                 `json:"tags"`
	Description string                   `json:"description"`
	OperationID string                   `json:"operationId"`
	Parameters  []*oapiParameter         `json:"parameters,omitempty"`
	RequestBody *oapiRequestBody         `json:"requestBody,omitempty"`
	Responses   map[string]*oapiResponse `json:"responses"`
	Action      string                   `json:"x-kubernetes-action"`
	GVK         oapiGVK                  `json:"x-kubernetes-group-version-kind"`
}

// oapiGVK always writes group, even the core group's "", as kube-apiserver does.
type oapiGVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type oapiParameter struct {
	Name        string      `json:"name"`
	In          string      `json:"in"`
	Description string      `json:"description,omitempty"`
	Required    bool        `json:"required,omitempty"`
	Schema      *oapiSchema `json:"schema"`
}

type oapiRequestBody struct {
	Content  map[string]*oapiMediaType `json:"content"`
	Required bool                      `json:"required,omitempty"`
}

type oapiResponse struct {
	Description string                    `json:"description"`
	Content     map[string]*oapiMediaType `json:"content,omitempty"`
}

type oapiMediaType struct {
	Schema *oapiSchema `json:"schema"`
}

// oapiSchema is the subset of an OpenAPI v3 schema object, with Kubernetes'
// extensions, that reflection can produce.
type oapiSchema struct {
	Ref                  string                 `json:"$ref,omitempty"`
	Description          string                 `json:"description,omitempty"`
	Type                 string                 `json:"type,omitempty"`
	Format               string                 `json:"format,omitempty"`
	Default              any                    `json:"default,omitempty"`
	Enum                 []any                  `json:"enum,omitempty"`
	Minimum              json.Number            `json:"minimum,omitempty"`
	ExclusiveMinimum     bool                   `json:"exclusiveMinimum,omitempty"`
	Maximum              json.Number            `json:"maximum,omitempty"`
	ExclusiveMaximum     bool                   `json:"exclusiveMaximum,omitempty"`
	MinLength            *int64                 `json:"minLength,omitempty"`
	MaxLength            *int64                 `json:"maxLength,omitempty"`
	Pattern              string                 `json:"pattern,omitempty"`
	MinItems             *int64                 `json:"minItems,omitempty"`
	MaxItems             *int64                 `json:"maxItems,omitempty"`
	Required             []string               `json:"required,omitempty"`
	Items                *oapiSchema            `json:"items,omitempty"`
	Properties           map[string]*oapiSchema `json:"properties,omitempty"`
	AdditionalProperties *oapiSchema            `json:"additionalProperties,omitempty"`
	AllOf                []*oapiSchema          `json:"allOf,omitempty"`
	GVK                  []oapiGVK              `json:"x-kubernetes-group-version-kind,omitempty"`
	ListMapKeys          []string               `json:"x-kubernetes-list-map-keys,omitempty"`
	ListType             string                 `json:"x-kubernetes-list-type,omitempty"`
	MapType              string                 `json:"x-kubernetes-map-type,omitempty"`
	PatchMergeKey        string                 `json:"x-kubernetes-patch-merge-key,omitempty"`
	PatchStrategy        string                 `json:"x-kubernetes-patch-strategy,omitempty"`
	PreserveUnknown      bool                   `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	XValidations         []oapiValidationRule   `json:"x-kubernetes-validations,omitempty"`

	// raw is a schema given whole (Resource.Schema), written with the
	// fields above set over its own.
	raw map[string]any
}

// merged is a schema given whole with the members set on s over its own.
func (s *oapiSchema) merged() (map[string]any, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var set map[string]any
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, err
	}
	out := maps.Clone(s.raw)
	props, _ := out["properties"].(map[string]any)
	props = maps.Clone(props)
	if props == nil {
		props = map[string]any{}
	}
	for k, v := range set["properties"].(map[string]any) {
		props[k] = v
	}
	for k, v := range set {
		out[k] = v
	}
	out["properties"] = props
	return out, nil
}

const oapiSchemaRefPrefix = "#/components/schemas/"

// oapiMetaPrefix is where Kubernetes names its meta types, which kapi's meta
// types mirror field for field.
const oapiMetaPrefix = "io.k8s.apimachinery.pkg.apis.meta.v1."

func oapiRef(name string) *oapiSchema { return &oapiSchema{Ref: oapiSchemaRefPrefix + name} }

type openAPIBuilder struct {
	group, version string
	schemas        map[string]*oapiSchema
	paths          map[string]*oapiPathItem

	// named maps the Go types that are components of their own (the
	// resources, and user types that refer to themselves) to their names.
	named map[reflect.Type]string
	taken map[string]bool // the component names of named
	// inProgress holds the named types whose schema is being built, to
	// notice recursion; recursive marks those found to refer to themselves.
	inProgress, recursive map[reflect.Type]bool
}

// modelName names a schema the way kube-apiserver names a custom resource's:
// the reversed group, the version, the kind (com.example.v1.Widget). The core
// group has no name to reverse; its types are named like Kubernetes' own.
func (b *openAPIBuilder) modelName(kind string) string { return modelNameOf(b.group, b.version, kind) }

func modelNameOf(group, version, kind string) string {
	if group == "" {
		return "io.k8s.api.core." + version + "." + kind
	}
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + version + "." + kind
}

func (b *openAPIBuilder) addResource(r Resource) error {
	name, listName := b.modelName(r.Kind), b.modelName(r.Kind+"List")
	gvk := oapiGVK{Group: r.Group, Version: r.Version, Kind: r.Kind}
	s, err := b.objectSchema(r.Type, r.Schema, gvk)
	if err != nil {
		return err
	}
	b.schemas[name] = s
	listMeta, err := b.metaRef(reflect.TypeFor[kapi.ListMeta]())
	if err != nil {
		return err
	}
	typeMeta := oapiMetaDescriptions[reflect.TypeFor[kapi.TypeMeta]()]
	b.schemas[listName] = &oapiSchema{
		Description: r.Kind + "List is a list of " + r.Kind,
		Type:        "object",
		Required:    []string{"items"},
		Properties: map[string]*oapiSchema{
			"apiVersion": {Description: typeMeta["apiVersion"], Type: "string"},
			"kind":       {Description: typeMeta["kind"], Type: "string"},
			"items": {
				Description: "List of " + r.Plural + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				Type:        "array",
				Items:       oapiRef(name),
			},
			"metadata": {
				Description: "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
				AllOf:       []*oapiSchema{listMeta},
			},
		},
		GVK: []oapiGVK{{Group: r.Group, Version: r.Version, Kind: r.Kind + "List"}},
	}

	return b.addPaths(r, name, listName, gvk)
}

// objectSchema is the schema of objects of type t (or whose schema is
// raw, given whole), with apiVersion, kind and metadata as every kind's.
func (b *openAPIBuilder) objectSchema(t reflect.Type, raw map[string]any, gvk oapiGVK) (*oapiSchema, error) {
	s, err := &oapiSchema{Type: "object"}, error(nil)
	if raw == nil {
		s, err = b.structSchema(t, "")
	}
	if err != nil {
		return nil, fmt.Errorf("openapi: resource %s: %w", gvk.Kind, err)
	}
	if s.Properties == nil {
		s.Properties = map[string]*oapiSchema{}
	}
	objectMeta, err := b.metaRef(reflect.TypeFor[kapi.ObjectMeta]())
	if err != nil {
		return nil, err
	}
	typeMeta := oapiMetaDescriptions[reflect.TypeFor[kapi.TypeMeta]()]
	s.Properties["apiVersion"] = &oapiSchema{Description: typeMeta["apiVersion"], Type: "string"}
	s.Properties["kind"] = &oapiSchema{Description: typeMeta["kind"], Type: "string"}
	s.Properties["metadata"] = &oapiSchema{
		Description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		AllOf:       []*oapiSchema{objectMeta},
	}
	s.Required = slices.DeleteFunc(s.Required, func(n string) bool {
		return n == "apiVersion" || n == "kind" || n == "metadata"
	})
	if len(s.Required) == 0 {
		s.Required = nil
	}
	s.GVK = []oapiGVK{gvk}
	s.raw = raw
	return s, nil
}
