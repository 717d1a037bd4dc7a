package apiserver

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
)

// This file derives the OpenAPI v3 documents of /openapi/v3/apis/{group}/{version}
// from the registered Go types. The documents have the shape kube-apiserver
// serves for a CustomResourceDefinition's group version, because that is what
// clients read: kubectl looks for a PATCH operation carrying the resource's
// x-kubernetes-group-version-kind and a fieldValidation query parameter before
// it sends fieldValidation=Strict, and `kubectl explain` finds the resource's
// schema by its x-kubernetes-group-version-kind. The output is deterministic
// (same registration, same bytes), so a hash of it can key caches.

// openAPIResource is what the generator needs to know of one registered resource.
type openAPIResource struct {
	Group, Version, Kind string // Group "" is the core group (/api/v1)
	Plural               string
	Namespaced           bool
	Type                 reflect.Type // the struct type (not a pointer), embeds kapi.TypeMeta and kapi.ObjectMeta
	Status               bool         // has the /status subresource
}

// openAPIGroupVersion returns the JSON document served at /openapi/v3/apis/{group}/{version}
// (or /openapi/v3/api/v1 for the core group) for the given resources, all of that group/version.
func openAPIGroupVersion(group, version string, resources []openAPIResource) ([]byte, error) {
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
	slices.SortFunc(rs, func(a, b openAPIResource) int { return strings.Compare(a.Kind, b.Kind) })
	kinds, plurals := map[string]bool{}, map[string]bool{}
	for _, r := range rs {
		switch {
		case r.Group != group || r.Version != version:
			return nil, fmt.Errorf("openapi: resource %s of %s/%s in the document of %s/%s", r.Kind, r.Group, r.Version, group, version)
		case r.Kind == "" || r.Plural == "":
			return nil, fmt.Errorf("openapi: resource %q/%q needs a kind and a plural", r.Kind, r.Plural)
		case r.Type == nil || r.Type.Kind() != reflect.Struct:
			return nil, fmt.Errorf("openapi: resource %s: type %v is not a struct", r.Kind, r.Type)
		case kinds[r.Kind] || kinds[r.Kind+"List"] || plurals[r.Plural]:
			return nil, fmt.Errorf("openapi: resource %s (%s) registered twice", r.Kind, r.Plural)
		}
		kinds[r.Kind], kinds[r.Kind+"List"], plurals[r.Plural] = true, true, true
		// Known before any schema is built, so that a field of one resource's
		// type, or a type referring to itself, becomes a reference.
		b.named[r.Type] = b.modelName(r.Kind)
		b.taken[b.modelName(r.Kind)], b.taken[b.modelName(r.Kind+"List")] = true, true
	}
	for _, r := range rs {
		if err := b.addResource(r); err != nil {
			return nil, err
		}
	}
	doc := oapiDocument{
		OpenAPI:    "3.0.0",
		Info:       oapiInfo{Title: "Kubernetes CRD Swagger", Version: "v0.1.0"},
		Paths:      b.paths,
		Components: oapiComponents{Schemas: b.schemas},
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
	Schemas map[string]*oapiSchema `json:"schemas"`
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
func (b *openAPIBuilder) modelName(kind string) string {
	if b.group == "" {
		return "io.k8s.api.core." + b.version + "." + kind
	}
	parts := strings.Split(b.group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + b.version + "." + kind
}

func (b *openAPIBuilder) addResource(r openAPIResource) error {
	name, listName := b.modelName(r.Kind), b.modelName(r.Kind+"List")
	gvk := oapiGVK{Group: r.Group, Version: r.Version, Kind: r.Kind}

	s, err := b.structSchema(r.Type, "")
	if err != nil {
		return fmt.Errorf("openapi: resource %s: %w", r.Kind, err)
	}
	if s.Properties == nil {
		s.Properties = map[string]*oapiSchema{}
	}
	objectMeta, err := b.metaRef(reflect.TypeFor[kapi.ObjectMeta]())
	if err != nil {
		return err
	}
	listMeta, err := b.metaRef(reflect.TypeFor[kapi.ListMeta]())
	if err != nil {
		return err
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
	b.schemas[name] = s

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

// Paths and operations.

// addPaths adds the operations kube-apiserver lists for a custom resource:
// list, create and deletecollection on the collection (and list across
// namespaces for a namespaced resource), get, replace, patch and delete on an
// item, and get, replace and patch on its status.
func (b *openAPIBuilder) addPaths(r openAPIResource, name, listName string, gvk oapiGVK) error {
	prefix := "/apis/" + r.Group + "/" + r.Version
	if r.Group == "" {
		prefix = "/api/" + r.Version
	}
	group := oapiOperationID(oapiGroupName(r.Group), true)
	op := func(verb, rest, subresource, action, description string, params []*oapiParameter) *oapiOperation {
		id := verb + group + oapiOperationID(r.Version, true) + oapiOperationID(rest, true) + oapiOperationID(subresource, true)
		return &oapiOperation{
			Tags:        []string{oapiTag(r.Group, r.Version)},
			Description: description,
			OperationID: id,
			Parameters:  params,
			Responses:   map[string]*oapiResponse{"401": {Description: "Unauthorized"}},
			Action:      action,
			GVK:         gvk,
		}
	}
	respond := func(o *oapiOperation, code, description, schemaName string) *oapiOperation {
		o.Responses[code] = &oapiResponse{Description: description, Content: oapiContent(schemaName, "application/json", "application/yaml")}
		return o
	}
	withBody := func(o *oapiOperation, schemaName string, required bool, mediaTypes ...string) *oapiOperation {
		o.RequestBody = &oapiRequestBody{Content: oapiContent(schemaName, mediaTypes...), Required: required}
		return o
	}

	status := oapiMetaPrefix + "Status"
	deleteOptions := oapiMetaPrefix + "DeleteOptions"
	patch := oapiMetaPrefix + "Patch"
	if _, err := b.metaRef(reflect.TypeFor[kapi.Status]()); err != nil {
		return err
	}
	b.schemas[deleteOptions] = oapiDeleteOptionsSchema()
	b.schemas[oapiMetaPrefix+"Preconditions"] = oapiPreconditionsSchema()
	b.schemas[patch] = &oapiSchema{
		Description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
		Type:        "object",
	}

	scope, namespaced := "", ""
	pathParams := []*oapiParameter{}
	if r.Namespaced {
		scope, namespaced = "/namespaces/{namespace}", "Namespaced"
		pathParams = append(pathParams, &oapiParameter{
			Name: "namespace", In: "path", Required: true,
			Description: "object name and auth scope, such as for teams and projects",
			Schema:      &oapiSchema{Type: "string"},
		})
		b.paths[prefix+"/"+r.Plural] = &oapiPathItem{
			Get: respond(op("list", r.Kind+"ForAllNamespaces", "", "list", "list objects of kind "+r.Kind, oapiListParams()),
				"200", "OK", listName),
			Parameters: []*oapiParameter{oapiPrettyParam()},
		}
	}
	collection := prefix + scope + "/" + r.Plural
	b.paths[collection] = &oapiPathItem{
		Get: respond(op("list", namespaced+r.Kind, "", "list", "list objects of kind "+r.Kind, oapiListParams()),
			"200", "OK", listName),
		Post: withBody(
			respond(respond(respond(op("create", namespaced+r.Kind, "", "post", "create "+oapiArticle(r.Kind)+r.Kind, oapiWriteParams(false)),
				"200", "OK", name), "201", "Created", name), "202", "Accepted", name),
			name, true, "application/json", "application/yaml"),
		Delete: withBody(
			respond(op("delete", "Collection"+namespaced+r.Kind, "", "deletecollection", "delete collection of "+r.Kind, oapiDeleteCollectionParams()),
				"200", "OK", status),
			deleteOptions, false, "application/json", "application/yaml"),
		Parameters: append(slices.Clone(pathParams), oapiPrettyParam()),
	}

	nameParam := &oapiParameter{
		Name: "name", In: "path", Required: true,
		Description: "name of the " + r.Kind,
		Schema:      &oapiSchema{Type: "string"},
	}
	itemParams := append([]*oapiParameter{nameParam}, pathParams...)
	itemParams = append(itemParams, oapiPrettyParam())
	// The item and its subresources have the same operations but for delete.
	itemOps := func(subresource string, withDelete bool) *oapiPathItem {
		of := ""
		if subresource != "" {
			of = " " + subresource + " of"
		}
		item := &oapiPathItem{
			Get: respond(op("read", namespaced+r.Kind, subresource, "get", "read"+of+" the specified "+r.Kind, oapiGetParams()),
				"200", "OK", name),
			Put: withBody(
				respond(respond(op("replace", namespaced+r.Kind, subresource, "put", "replace"+of+" the specified "+r.Kind, oapiWriteParams(false)),
					"200", "OK", name), "201", "Created", name),
				name, true, "application/json", "application/yaml"),
			Patch: withBody(
				respond(op("patch", namespaced+r.Kind, subresource, "patch", "partially update"+of+" the specified "+r.Kind, oapiWriteParams(true)),
					"200", "OK", name),
				patch, true, oapiPatchMediaTypes...),
			Parameters: slices.Clone(itemParams),
		}
		if withDelete {
			item.Delete = withBody(
				respond(respond(op("delete", namespaced+r.Kind, subresource, "delete", "delete "+oapiArticle(r.Kind)+r.Kind, oapiDeleteParams()),
					"200", "OK", status), "202", "Accepted", status),
				deleteOptions, false, "application/json", "application/yaml")
		}
		return item
	}
	b.paths[collection+"/{name}"] = itemOps("", true)
	if r.Status {
		b.paths[collection+"/{name}/status"] = itemOps("status", false)
	}
	return nil
}

// oapiPatchMediaTypes are the patch types kapi accepts for every resource.
// kubectl's client-side apply sends a strategic merge patch when the
// document lists it, computed from the patch extensions of the schema.
var oapiPatchMediaTypes = []string{
	"application/apply-patch+yaml",
	"application/json-patch+json",
	"application/merge-patch+json",
	"application/strategic-merge-patch+json",
}

func oapiContent(schemaName string, mediaTypes ...string) map[string]*oapiMediaType {
	content := make(map[string]*oapiMediaType, len(mediaTypes))
	for _, mt := range mediaTypes {
		content[mt] = &oapiMediaType{Schema: oapiRef(schemaName)}
	}
	return content
}

// oapiOperationID makes a word of an operation id the way kube-apiserver
// does: letters, digits and underscores kept, the letter after anything else
// capitalised, and the first one if upper (example.com → ExampleCom).
func oapiOperationID(s string, upper bool) string {
	var sb strings.Builder
	for i, c := range s {
		if unicode.IsLetter(c) || c == '_' || (i != 0 && unicode.IsDigit(c)) {
			if upper {
				c = unicode.ToUpper(c)
				upper = false
			}
			sb.WriteRune(c)
		} else {
			upper = true
		}
	}
	return sb.String()
}

// oapiTag is kube-apiserver's tag of a group version: exampleCom_v1, core_v1.
func oapiTag(group, version string) string {
	return oapiOperationID(oapiGroupName(group), false) + "_" + oapiOperationID(version, false)
}

// oapiGroupName is how kube-apiserver names a group in tags and operation
// ids: without ".k8s.io", and "core" for the core group.
func oapiGroupName(group string) string {
	if g := strings.TrimSuffix(group, ".k8s.io"); g != "" {
		return g
	}
	return "core"
}

// oapiArticle is "a " or "an " before a kind, "" before a plural-looking one.
func oapiArticle(kind string) string {
	switch {
	case strings.HasSuffix(kind, "s") && !strings.HasSuffix(kind, "ss"):
		return ""
	case strings.ContainsRune("aeiouAEIOU", rune(kind[0])):
		return "an "
	}
	return "a "
}

// Query parameters, each list sorted by name as kube-apiserver lists them.

func oapiQueryParam(name, typ, description string) *oapiParameter {
	return &oapiParameter{Name: name, In: "query", Description: description, Schema: &oapiSchema{Type: typ}}
}

func oapiPrettyParam() *oapiParameter {
	return oapiQueryParam("pretty", "string", "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).")
}

const (
	oapiDryRunDescription            = "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed"
	oapiGracePeriodDescription       = "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used."
	oapiOrphanDependentsDescription  = "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both."
	oapiPropagationPolicyDescription = "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground."
	oapiResourceVersionDescription   = "resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"
	oapiRVMatchDescription           = "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"
)

func oapiGetParams() []*oapiParameter {
	return []*oapiParameter{oapiQueryParam("resourceVersion", "string", oapiResourceVersionDescription)}
}

// oapiWriteParams are the parameters of create, replace and patch. kubectl
// sends fieldValidation only to operations that list it.
func oapiWriteParams(patch bool) []*oapiParameter {
	params := []*oapiParameter{
		oapiQueryParam("dryRun", "string", oapiDryRunDescription),
		oapiQueryParam("fieldManager", "string", "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. It is required for apply requests (application/apply-patch) and optional for the other patch types."),
		oapiQueryParam("fieldValidation", "string", "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: unknown fields are silently dropped and the last of duplicate fields wins. - Warn (the default): a warning is sent for each unknown and each duplicate field; the request still succeeds. - Strict: the request fails with a BadRequest error listing every unknown and duplicate field."),
	}
	if patch {
		params = append(params, oapiQueryParam("force", "boolean", "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests."))
	}
	return params
}

func oapiDeleteParams() []*oapiParameter {
	return []*oapiParameter{
		oapiQueryParam("dryRun", "string", oapiDryRunDescription),
		oapiQueryParam("gracePeriodSeconds", "integer", oapiGracePeriodDescription),
		oapiQueryParam("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean", oapiIgnoreStoreReadErrorDescription),
		oapiQueryParam("orphanDependents", "boolean", oapiOrphanDependentsDescription),
		oapiQueryParam("propagationPolicy", "string", oapiPropagationPolicyDescription),
	}
}

func oapiListParams() []*oapiParameter {
	return []*oapiParameter{
		oapiQueryParam("allowWatchBookmarks", "boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored."),
		oapiQueryParam("continue", "string", "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue). If the continue value is no longer valid, the server responds with 410 ResourceExpired.\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications."),
		oapiQueryParam("fieldSelector", "string", "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
		oapiQueryParam("labelSelector", "string", "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
		oapiQueryParam("limit", "integer", "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. This field is not supported if watch is true."),
		oapiQueryParam("resourceVersion", "string", oapiResourceVersionDescription),
		oapiQueryParam("resourceVersionMatch", "string", oapiRVMatchDescription),
		oapiQueryParam("sendInitialEvents", "boolean", "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic \"Bookmark\" event will be sent, marked with the `\"k8s.io/initial-events-end\": \"true\"` annotation. Afterwards, the watch stream will proceed as usual. It requires `resourceVersionMatch=NotOlderThan`."),
		oapiQueryParam("timeoutSeconds", "integer", "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity."),
		oapiQueryParam("watch", "boolean", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion."),
	}
}

// oapiDeleteCollectionParams are those of a list that is not a watch, and
// those of a delete.
func oapiDeleteCollectionParams() []*oapiParameter {
	params := slices.DeleteFunc(oapiListParams(), func(p *oapiParameter) bool {
		return p.Name == "watch" || p.Name == "allowWatchBookmarks"
	})
	params = append(params, oapiDeleteParams()...)
	slices.SortStableFunc(params, func(a, b *oapiParameter) int { return strings.Compare(a.Name, b.Name) })
	return params
}

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
		// The Kubernetes convention: a field is optional when it may be left
		// out of the JSON, or is a pointer.
		// A validate tag's required or optional says otherwise.
		if declared != nil && *declared || declared == nil && !f.OmitEmpty && !f.OmitZero && !f.Optional && f.Type.Kind() != reflect.Pointer && !oapiMetaOptional[t] {
			s.Required = append(s.Required, f.Name)
		}
	}
	if t == reflect.TypeFor[kapi.OwnerReference]() {
		s.MapType = "atomic"
	}
	return s, nil
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

// Kubernetes' meta types, as components named as Kubernetes names them.

var oapiMetaNames = map[reflect.Type]string{
	reflect.TypeFor[kapi.ObjectMeta]():         "ObjectMeta",
	reflect.TypeFor[kapi.ListMeta]():           "ListMeta",
	reflect.TypeFor[kapi.Time]():               "Time",
	reflect.TypeFor[kapi.MicroTime]():          "MicroTime",
	reflect.TypeFor[kapi.OwnerReference]():     "OwnerReference",
	reflect.TypeFor[kapi.ManagedFieldsEntry](): "ManagedFieldsEntry",
	reflect.TypeFor[kapi.FieldsV1]():           "FieldsV1",
	reflect.TypeFor[kapi.Status]():             "Status",
	reflect.TypeFor[kapi.StatusDetails]():      "StatusDetails",
	reflect.TypeFor[kapi.StatusCause]():        "StatusCause",
	reflect.TypeFor[kapi.Condition]():          "Condition",
}

// metaRef is a reference to the component of a kapi meta type, which it
// builds on first use.
func (b *openAPIBuilder) metaRef(t reflect.Type) (*oapiSchema, error) {
	name := oapiMetaPrefix + oapiMetaNames[t]
	if _, ok := b.schemas[name]; ok {
		return oapiRef(name), nil
	}
	var s *oapiSchema
	switch t {
	case reflect.TypeFor[kapi.Time](), reflect.TypeFor[kapi.MicroTime]():
		s = &oapiSchema{Type: "string", Format: "date-time"}
	case reflect.TypeFor[kapi.FieldsV1]():
		s = &oapiSchema{Type: "object"}
	default:
		b.schemas[name] = nil // taken, while its fields are built
		var err error
		if s, err = b.structSchema(t, ""); err != nil {
			return nil, fmt.Errorf("%v: %w", t, err)
		}
	}
	s.Description = oapiMetaDescriptions[t][""]
	if t == reflect.TypeFor[kapi.Status]() {
		s.GVK = []oapiGVK{{Version: "v1", Kind: "Status"}}
		s.Properties["metadata"].Default = map[string]any{}
	}
	b.schemas[name] = s
	return oapiRef(name), nil
}

// oapiMetaOptional are the meta types none of whose fields are required, as
// in Kubernetes (kapi.Status's metadata has no omitempty).
var oapiMetaOptional = map[reflect.Type]bool{
	reflect.TypeFor[kapi.Status](): true,
}

// oapiMetaListTypes are Kubernetes' list types of the meta types' lists.
var oapiMetaListTypes = map[reflect.Type]map[string]string{
	reflect.TypeFor[kapi.ObjectMeta]():    {"finalizers": "set", "ownerReferences": "map", "managedFields": "atomic"},
	reflect.TypeFor[kapi.StatusDetails](): {"causes": "atomic"},
}

// oapiMetaDescriptions describe the meta types ("") and their fields, for
// kubectl explain.
var oapiMetaDescriptions = map[reflect.Type]map[string]string{
	reflect.TypeFor[kapi.TypeMeta](): {
		"apiVersion": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
		"kind":       "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
	},
	reflect.TypeFor[kapi.ObjectMeta](): {
		"":                           "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
		"name":                       "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
		"generateName":               "GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided. If this field is used, the name returned to the client will be different than the name passed. The value will be combined with a unique suffix.",
		"namespace":                  "Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the \"default\" namespace. Not all objects are required to be scoped to a namespace - the value of this field for those objects will be empty. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces",
		"uid":                        "UID is the unique in time and space value for this object. It is typically generated by the server on successful creation of a resource and is not allowed to change on PUT operations. Populated by the system. Read-only. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids",
		"resourceVersion":            "An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. May be used for optimistic concurrency, change detection, and the watch operation on a resource or set of resources. Clients must treat these values as opaque and passed unmodified back to the server. Populated by the system. Read-only. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#concurrency-control-and-consistency",
		"generation":                 "A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.",
		"creationTimestamp":          "CreationTimestamp is a timestamp representing the server time when this object was created. It is represented in RFC3339 form and is in UTC. Populated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		"deletionTimestamp":          "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. This field is set by the server when a graceful deletion is requested by the user, and is not directly settable by a client. Populated by the system when a graceful deletion is requested. Read-only. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		"deletionGracePeriodSeconds": "Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set. May only be shortened. Read-only.",
		"labels":                     "Map of string keys and values that can be used to organize and categorize (scope and select) objects. May match selectors of replication controllers and services. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels",
		"annotations":                "Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata. They are not queryable and should be preserved when modifying objects. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations",
		"ownerReferences":            "List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected. If this object is managed by a controller, then an entry in this list will point to this controller, with the controller field set to true. There cannot be more than one managing controller.",
		"finalizers":                 "Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list. If the deletionTimestamp of the object is non-nil, entries in this list can only be removed. Finalizers may be processed and removed in any order.",
		"managedFields":              "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow. This is mostly for internal housekeeping, and users typically shouldn't need to set or understand this field. A workflow can be the user's name, a controller's name, or the name of a specific apply path like \"ci-cd\". The set of fields is always in the version that the workflow used when modifying the object.",
	},
	reflect.TypeFor[kapi.ListMeta](): {
		"":                   "ListMeta describes metadata that synthetic resources must have, including lists and various status objects. A resource may have only one of {ObjectMeta, ListMeta}.",
		"resourceVersion":    "String that identifies the server's internal version of this object that can be used by clients to determine when objects have changed. Value must be treated as opaque by clients and passed unmodified back to the server. Populated by the system. Read-only. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#concurrency-control-and-consistency",
		"continue":           "continue may be set if the user set a limit on the number of items returned, and indicates that the server has more data available. The value is opaque and may be used to issue another request to the endpoint that served this list to retrieve the next set of available objects. Continuing a consistent list may not be possible if the server configuration has changed or more than a few minutes have passed.",
		"remainingItemCount": "remainingItemCount is the number of subsequent items in the list which are not included in this list response. If the list request contained label or field selectors, then the number of remaining items is unknown and the field will be left unset and omitted during serialization. This field is an estimate.",
	},
	reflect.TypeFor[kapi.MicroTime](): {
		"": "MicroTime is version of Time with microsecond level precision.",
	},
	reflect.TypeFor[kapi.Time](): {
		"": "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON. Wrappers are provided for many of the factory methods that the time package offers.",
	},
	reflect.TypeFor[kapi.FieldsV1](): {
		"": "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.\n\nEach key is either a '.' representing the field itself, and will always map to an empty set, or a string representing a sub-field or item. The string will follow one of these four formats: 'f:<name>', where <name> is the name of a field in a struct, or key in a map 'v:<value>', where <value> is the exact json formatted value of a list item 'i:<index>', where <index> is position of a item in a list 'k:<keys>', where <keys> is a map of  a list item's key fields to their unique values If a key maps to an empty Fields value, the field that key represents is part of the set.\n\nThe exact format is defined in sigs.k8s.io/structured-merge-diff",
	},
	reflect.TypeFor[kapi.OwnerReference](): {
		"":                   "OwnerReference contains enough information to let you identify an owning object. An owning object must be in the same namespace as the dependent, or be cluster-scoped, so there is no namespace field.",
		"apiVersion":         "API version of the referent.",
		"kind":               "Kind of the referent. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
		"name":               "Name of the referent. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
		"uid":                "UID of the referent. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids",
		"controller":         "If true, this reference points to the managing controller.",
		"blockOwnerDeletion": "If true, AND if the owner has the \"foregroundDeletion\" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed. Defaults to false.",
	},
	reflect.TypeFor[kapi.ManagedFieldsEntry](): {
		"":            "ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.",
		"manager":     "Manager is an identifier of the workflow managing these fields.",
		"operation":   "Operation is the type of operation which lead to this ManagedFieldsEntry being created. The only valid values for this field are 'Apply' and 'Update'.",
		"apiVersion":  "APIVersion defines the version of this resource that this field set applies to. The format is \"group/version\" just like the top-level APIVersion field. It is necessary to track the version of a field set because it cannot be automatically converted.",
		"time":        "Time is the timestamp of when the ManagedFields entry was added. The timestamp will also be updated if a field is added, the manager changes any of the owned fields value or removes a field. The timestamp does not update when a field is removed from the entry because another manager took it over.",
		"fieldsType":  "FieldsType is the discriminator for the different fields format and version. There is currently only one possible value: \"FieldsV1\"",
		"fieldsV1":    "FieldsV1 holds the first JSON version format as described in the \"FieldsV1\" type.",
		"subresource": "Subresource is the name of the subresource used to update that object, or empty string if the object was updated through the main resource. The value of this field is used to distinguish between managers, even if they share the same name.",
	},
	reflect.TypeFor[kapi.Status](): {
		"":         "Status is a return value for calls that don't return other objects.",
		"metadata": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
		"status":   "Status of the operation. One of: \"Success\" or \"Failure\". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status",
		"message":  "A human-readable description of the status of this operation.",
		"reason":   "A machine-readable description of why this operation is in the \"Failure\" status. If this value is empty there is no information available. A Reason clarifies an HTTP status code but does not override it.",
		"details":  "Extended data associated with the reason.  Each reason may define its own extended details. This field is optional and the data returned is not guaranteed to conform to any schema except that defined by the reason type.",
		"code":     "Suggested HTTP return code for this status, 0 if not set.",
	},
	reflect.TypeFor[kapi.StatusDetails](): {
		"":                  "StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response. The Reason field of a Status object defines what attributes will be set. Clients must ignore fields that do not match the defined type of each attribute, and should assume that any attribute may be empty, invalid, or under defined.",
		"name":              "The name attribute of the resource associated with the status StatusReason (when there is a single name which can be described).",
		"group":             "The group attribute of the resource associated with the status StatusReason.",
		"kind":              "The kind attribute of the resource associated with the status StatusReason. On some operations may differ from the requested resource Kind. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
		"uid":               "UID of the resource. (when there is a single resource which can be described). More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids",
		"causes":            "The Causes array includes more details associated with the StatusReason failure. Not all StatusReasons may provide detailed causes.",
		"retryAfterSeconds": "If specified, the time in seconds before the operation should be retried. Some errors may indicate the client must take an alternate action - for those errors this field may indicate how long to wait before taking the alternate action.",
	},
	reflect.TypeFor[kapi.StatusCause](): {
		"":        "StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.",
		"reason":  "A machine-readable description of the cause of the error. If this value is empty there is no information available.",
		"message": "A human-readable description of the cause of the error.  This field may be presented as-is to a reader.",
		"field":   "The field of the resource that has caused this error, as named by its JSON serialization. May include dot and postfix notation for nested attributes. Arrays are zero-indexed.\n\nExamples:\n  \"name\" - the field \"name\" on the current resource\n  \"items[0].name\" - the field \"name\" on the first array entry in \"items\"",
	},
	reflect.TypeFor[kapi.Condition](): {
		"":                   "Condition contains details for one aspect of the current state of this API Resource.",
		"type":               "type of condition in CamelCase or in foo.example.com/CamelCase.",
		"status":             "status of the condition, one of True, False, Unknown.",
		"observedGeneration": "observedGeneration represents the .metadata.generation that the condition was set based upon. For instance, if .metadata.generation is currently 12, but the .status.conditions[x].observedGeneration is 9, the condition is out of date with respect to the current state of the instance.",
		"lastTransitionTime": "lastTransitionTime is the last time the condition transitioned from one status to another. This should be when the underlying condition changed.  If that is not known, then using the time when the API field changed is acceptable.",
		"reason":             "reason contains a programmatic identifier indicating the reason for the condition's last transition. Producers of specific condition types may define expected values and meanings for this field, and whether the values are considered a guaranteed API. The value should be a CamelCase string. This field may not be empty.",
		"message":            "message is a human readable message indicating details about the transition. This may be an empty string.",
	},
}

// oapiIgnoreStoreReadErrorDescription is Kubernetes' description of the
// option.
const oapiIgnoreStoreReadErrorDescription = "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it"

func oapiDeleteOptionsSchema() *oapiSchema {
	typeMeta := oapiMetaDescriptions[reflect.TypeFor[kapi.TypeMeta]()]
	return &oapiSchema{
		Description: "DeleteOptions may be provided when deleting an API object.",
		Type:        "object",
		Properties: map[string]*oapiSchema{
			"apiVersion":         {Description: typeMeta["apiVersion"], Type: "string"},
			"kind":               {Description: typeMeta["kind"], Type: "string"},
			"dryRun":             {Description: oapiDryRunDescription, Type: "array", Items: &oapiSchema{Type: "string"}, ListType: "atomic"},
			"gracePeriodSeconds": {Description: oapiGracePeriodDescription, Type: "integer", Format: "int64"},
			"ignoreStoreReadErrorWithClusterBreakingPotential": {Description: oapiIgnoreStoreReadErrorDescription, Type: "boolean"},
			"orphanDependents": {Description: oapiOrphanDependentsDescription, Type: "boolean"},
			"preconditions": {
				Description: "Must be fulfilled before a deletion is carried out. If not possible, a 409 Conflict status will be returned.",
				AllOf:       []*oapiSchema{oapiRef(oapiMetaPrefix + "Preconditions")},
			},
			"propagationPolicy": {Description: oapiPropagationPolicyDescription, Type: "string"},
		},
		GVK: []oapiGVK{{Version: "v1", Kind: "DeleteOptions"}},
	}
}

func oapiPreconditionsSchema() *oapiSchema {
	return &oapiSchema{
		Description: "Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.",
		Type:        "object",
		Properties: map[string]*oapiSchema{
			"resourceVersion": {Description: "Specifies the target ResourceVersion", Type: "string"},
			"uid":             {Description: "Specifies the target UID.", Type: "string"},
		},
	}
}
